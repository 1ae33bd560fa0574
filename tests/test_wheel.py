"""The wheel: what it installs, and that its policy pack serves from another project's virtualenv.
(tests/real/test_installed.py runs a Pulumi project of a user's on it with the real CLI.)"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import PROJECT, USERS_NODES, install_wheel
from support.pulumi_plugins import AnalyzerHost

pytestmark = pytest.mark.packaging


def test_the_wheel_installs_our_packages_and_the_pack_directory_and_no_generic_names(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"karpenter_gitops", "karpenter_gitops_pulumi", "karpenter_gitops_policies"}
    assert "karpenter_gitops_pulumi/reconciliation.py" in names and not any("/engine/" in name for name in names)
    pack = {name.split("/", 1)[1] for name in names if name.startswith("karpenter_gitops_policies/")}
    assert pack == {"PulumiPolicy.yaml", "__init__.py", "__main__.py", "pack.py", "waivers.yaml"}


def test_the_wheel_ships_karpenters_static_prices_for_plan(wheel):
    assert "karpenter_gitops/adapters/aws/on_demand_prices.json" in zipfile.ZipFile(wheel).namelist()


def test_the_wheel_ships_the_native_yaml_reader_built(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(name.startswith("karpenter_gitops/core/_yaml_values.") and name.endswith(".so") for name in names)


def _named_wheels() -> dict[str, list[str]]:
    """The wheel files the README and the docs tell a reader to install, by page."""
    pages = [PROJECT / "README.md", *(PROJECT / "docs").rglob("*.md")]
    named = {
        str(page.relative_to(PROJECT)): re.findall(r"karpenter_gitops-\S*?\.whl", page.read_text(encoding="utf-8"))
        for page in pages
    }
    return {page: names for page, names in named.items() if names}


def test_the_wheel_the_readme_names_is_the_one_the_build_makes(wheel):
    """``make dist`` builds a wheel for one Python and platform (it carries the C reader); the pages name it so."""
    python, _, platform = wheel.stem.split("-")[-3:]
    assert python.startswith("cp") and platform != "any", wheel.name
    named = _named_wheels()
    assert "README.md" in named
    assert {page: [n for n in names if not fnmatch.fnmatch(wheel.name, n)] for page, names in named.items()} == {
        page: [] for page in named
    }


def test_installed_in_another_virtualenv_the_printed_pack_serves_from_that_virtualenv(wheel, tmp_path):
    venv, site = install_wheel(wheel, tmp_path / "app-venv")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = "from karpenter_gitops.cli import main; raise SystemExit(main(['policy-pack']))"
    done = subprocess.run(
        [venv / "bin" / "python", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    pack = Path(done.stdout.strip())
    assert pack.parent == tmp_path / "cache" / "karpenter-gitops" / "policy-pack"
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import karpenter_gitops_policies as p; print(p.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(site))
    host = AnalyzerHost(pack)  # started as the engine starts it: the pack's virtualenv, the pack as working directory
    try:
        assert host.process.args[0] == str(venv / "bin" / "python")
        assert host.info().name == "karpenter-gitops"
    finally:
        host.close()


def test_installed_the_sarif_log_names_each_rules_page_under_the_projects_documentation_url(wheel, tmp_path):
    """The rules' helpUri and the tool's informationUri come from pyproject.toml's [project.urls], through the
    installed distribution's metadata (a clone kept elsewhere names its own address there)."""
    venv, _ = install_wheel(wheel, tmp_path / "app-venv")
    (tmp_path / "nodes.yaml").write_text(
        USERS_NODES.replace("IDENTITY", "instanceProfile: arn:aws:iam::123456789012:instance-profile/P")
    )
    command = "from karpenter_gitops.cli import main; raise SystemExit(main(['validate', 'nodes.yaml', '--format', 'sarif']))"
    env = {**os.environ, "KARPENTER_GITOPS_VERDICT_CACHE": "off"}
    done = subprocess.run(
        [venv / "bin" / "python", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, done.stderr

    urls = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["urls"]
    driver = json.loads(done.stdout)["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == urls["Repository"]
    assert driver["rules"] and all(
        rule["helpUri"] == f"{urls['Documentation']}/reference/rules/{rule['id']}.md" for rule in driver["rules"]
    )
