"""The README's install path: the wheel `make dist` builds, pip-installed into a fresh virtualenv,
then its console script run on a user's repository in a temporary directory.

pip installs it offline (`--no-index --find-links` the wheel's directory) with the dependencies
already on PYTHONPATH (the test virtualenv's packages less this project: conftest.dependency_site),
so a dependency the wheel declares and the index would not find fails the install here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import USERS_NODES, dependency_site

pytestmark = pytest.mark.packaging


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A fresh virtualenv (with pip, from the interpreter itself) holding the installed wheel."""
    root = tmp_path_factory.mktemp("installed")
    venv = root / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "HOME": str(root),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "PYTHONPATH": str(dependency_site(root / "dependencies")),
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    done = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "install", "--no-index", "--find-links", str(wheel.parent), "karpenter-gitops"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Successfully installed karpenter-gitops-" in done.stdout, done.stdout
    return venv, env


@pytest.fixture
def users_repository(tmp_path) -> Path:
    repository = tmp_path / "infra"
    (repository / "karpenter").mkdir(parents=True)
    (repository / ".github" / "workflows").mkdir(parents=True)
    (repository / ".github" / "workflows" / "ci.yml").write_text("on: push\njobs: {}\n")
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    return repository


def _validate(installed, repository: Path, *args: str) -> subprocess.CompletedProcess:
    venv, env = installed
    return subprocess.run(
        [venv / "bin" / "karpenter-gitops", "validate", *args],
        cwd=repository,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_installed_console_script_finds_a_mistake_in_a_users_repository(installed, users_repository):
    (users_repository / "karpenter" / "nodes.yaml").write_text(
        USERS_NODES.replace("IDENTITY", "instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile")
    )
    run = _validate(installed, users_repository, "karpenter/")

    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.splitlines()[0] == "EC2NodeClass/default  (karpenter/nodes.yaml)"
    assert "[nodeclass/instance-profile-arn]" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


def test_the_installed_console_script_passes_a_sound_repository(installed, users_repository):
    (users_repository / "karpenter" / "nodes.yaml").write_text(
        USERS_NODES.replace("IDENTITY", "instanceProfile: KarpenterNodeProfile")
    )
    run = _validate(installed, users_repository, "karpenter/", "--karpenter-version", "1.14")

    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == "2 object(s) checked against Karpenter 1.14: 0 error(s), 0 warning(s)"


def test_the_installed_package_is_the_wheel_not_this_checkout(installed, tmp_path):
    venv, env = installed
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import karpenter_gitops; print(karpenter_gitops.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(venv)), where
