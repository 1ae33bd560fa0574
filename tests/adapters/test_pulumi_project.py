"""How a policy pack finds the Pulumi project the engine runs: above the working directory of its parent."""

from __future__ import annotations

import os
import subprocess
import sys


def test_a_child_finds_the_project_its_parent_works_in(tmp_path):
    """As a pack started in its own directory by a language host working in the project."""
    project = tmp_path / "team-infra"
    pack = tmp_path / "pack"
    (project / "stacks").mkdir(parents=True)
    pack.mkdir()
    (project / "Pulumi.yaml").write_text("name: team-infra\n")
    child = "from karpenter_gitops.adapters import pulumi_project; print(pulumi_project.engine_project())"
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}], cwd={str(pack)!r}, check=True)"
    done = subprocess.run(
        [sys.executable, "-c", parent], cwd=project / "stacks", capture_output=True, text=True, check=True, env=os.environ
    )
    assert done.stdout.strip() == str(project)
