"""The README's install lines, run as written by a newcomer: in a fresh virtualenv of this Python with the pip it
comes with (Python 3.11's is 23.2, which refuses ``name @ git+file://``), from a ``file://`` URL of a clone, then
the installed console script on a repository of their own.

The clone is of the files as they are (the tests' own commit need not exist yet); the dependencies come from the
test virtualenv (on PYTHONPATH, as tests/test_install.py has them), so only the build's own requirement
(setuptools) is fetched, as ``make dist`` fetches it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
from conftest import LEFT_OUT, PROJECT, USERS_NODES, dependency_site

README = (PROJECT / "README.md").read_text(encoding="utf-8")
pytestmark = [pytest.mark.packaging, pytest.mark.slow]


def _install_block() -> list[str]:
    section = README[README.index("## Install into your own repository") : README.index("## A 5-minute tour")]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def _pip_lines() -> list[str]:
    return [line for line in _install_block() if line.startswith("pip install")]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> str:
    """A Git repository of the project's files with a ``main`` branch, as a user's clone or mirror is; its URL."""
    root = tmp_path_factory.mktemp("clone") / "karpenter-gitops"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns(*LEFT_OUT))
    git = ["git", "-C", str(root), "-c", "user.name=newcomer", "-c", "user.email=newcomer@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "the project"], check=True)
    return root.as_uri()


def test_the_readme_installs_with_plain_url_lines_and_upgrades_pip_where_a_form_needs_it():
    pip_lines = _pip_lines()
    assert 'pip install "git+$REPO@main"' in pip_lines
    for line in pip_lines:
        assert "@ git+" not in line or line.startswith("pip install -U pip && "), line


def test_the_first_pip_line_works_with_the_pip_a_fresh_virtualenv_has(clone, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "PYTHONPATH": str(dependency_site(tmp_path / "dependencies")),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "REPO": clone,
    }
    bundled = subprocess.run(["pip", "--version"], env=env, capture_output=True, text=True, check=True).stdout
    line = _pip_lines()[0]
    done = subprocess.run(["bash", "-c", line], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{bundled}{line}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"

    repository = tmp_path / "infra"
    (repository / "karpenter").mkdir(parents=True)
    (repository / "karpenter" / "nodes.yaml").write_text(USERS_NODES.replace("IDENTITY", "instanceProfile: KarpenterNodeProfile"))
    run = subprocess.run(
        [venv / "bin" / "karpenter-gitops", "validate", "karpenter/"],
        cwd=repository,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == "2 object(s) checked against Karpenter 1.15: 0 error(s), 0 warning(s)"
