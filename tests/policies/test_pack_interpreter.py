"""The engine starts the pack with the interpreter its PulumiPolicy.yaml names (see tests/support/pulumi_plugins.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import yaml
from conftest import PROJECT
from support.pulumi_grpc import POLICIES
from support.pulumi_plugins import analyzer_command


def test_the_pack_runs_on_the_projects_virtualenv_where_it_is_installed():
    command = analyzer_command(POLICIES, "127.0.0.1:1")
    assert command[0] == str(POLICIES / "../.venv/bin/python") and command[1:4] == ["-u", "-m", "pulumi.policy"]
    assert (POLICIES / "../.venv").resolve() == (PROJECT / ".venv").resolve()
    probe = subprocess.run(
        [command[0], "-c", "import pulumi_policy, karpenter_gitops_policies.pack"], cwd=POLICIES, capture_output=True, text=True
    )
    assert probe.returncode == 0, probe.stderr


def test_without_a_virtualenv_the_engine_would_run_python3_from_path_which_lacks_the_pack(tmp_path):
    """The defect the runtime option fixes: a pack naming no virtualenv meets whatever python3 PATH holds."""
    pack = tmp_path / "policies"
    shutil.copytree(POLICIES, pack, ignore=shutil.ignore_patterns("__pycache__"))
    declared = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())
    (pack / "PulumiPolicy.yaml").write_text(yaml.safe_dump({**declared, "runtime": "python"}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys._base_executable)  # a plain interpreter, as on a user's PATH
    command = analyzer_command(pack, "127.0.0.1:1", path=str(bin_dir))
    assert command[0] == str(bin_dir / "python3")
    started = subprocess.run(
        command, cwd=pack, capture_output=True, text=True, timeout=60, env={**os.environ, "PATH": str(bin_dir)}
    )
    assert started.returncode != 0 and "No module named 'pulumi'" in started.stderr
