"""The wheel: what it installs, and that its policy pack serves from another project's virtualenv.

The wheel is built from a copy of the sources: setuptools reuses an existing ``build/`` directory,
which can hold modules that no longer exist.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from conftest import PROJECT

from karpenter_gitops_pulumi.plugins import AnalyzerHost

LEFT_OUT = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "out", "rendered")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    sources = work / "src"
    shutil.copytree(PROJECT, sources, ignore=shutil.ignore_patterns(*LEFT_OUT))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--disable-pip-version-check",
                           "-w", str(work / "dist"), str(sources)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (built,) = (work / "dist").glob("karpenter_gitops-*.whl")
    return built


def test_the_wheel_installs_our_packages_and_the_pack_directory_and_no_generic_names(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"karpenter_gitops", "karpenter_gitops_pulumi", "karpenter_gitops_policies"}
    assert {"karpenter_gitops_pulumi/reconciliation.py", "karpenter_gitops_pulumi/engine/__init__.py"} <= set(names)
    pack = {name.split("/", 1)[1] for name in names if name.startswith("karpenter_gitops_policies/")}
    assert pack == {"PulumiPolicy.yaml", "__init__.py", "__main__.py", "pack.py", "waivers.yaml"}


def test_installed_in_another_virtualenv_the_printed_pack_serves_from_that_virtualenv(wheel, tmp_path):
    venv = tmp_path / "app-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    zipfile.ZipFile(wheel).extractall(site)  # a pure-Python wheel installs by unpacking
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # pulumi & co. from the test venv
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = "from karpenter_gitops.cli import main; raise SystemExit(main(['policy-pack']))"
    done = subprocess.run([python, "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    pack = Path(done.stdout.strip())
    assert pack.parent == tmp_path / "cache" / "karpenter-gitops" / "policy-pack"
    where = subprocess.run([python, "-c", "import karpenter_gitops_policies as p; print(p.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(site))
    host = AnalyzerHost(pack)  # started as the engine starts it: the pack's virtualenv, the pack as working directory
    try:
        assert host.process.args[0] == str(venv / "bin" / "python")
        assert host.info().name == "karpenter-gitops"
    finally:
        host.close()
