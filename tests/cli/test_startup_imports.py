"""A command imports only what it runs: start-up is what a pre-commit hook pays per file.

Timings live in ``benchmarks/startup.py``; here, what each start loads, which cannot drift
silently: a heavy library imported at the top of a shared module would show up in every command.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import PROJECT
from support.upstream import crds

HEAVY = ("jsonschema", "jsonschema_rs", "cel_expr_python", "google", "boto3", "botocore", "moto", "kubernetes", "rich")

PROBE = """
import json, sys
from karpenter_gitops.cli import main
main(sys.argv[1:])
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=PROJECT, capture_output=True, text=True, timeout=60)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_help_loads_no_command_no_use_case_and_no_heavy_library():
    modules = loaded("--help")
    assert not [m for m in modules if m.endswith("_command")]
    assert not [m for m in modules if m.startswith(("karpenter_gitops.app", "karpenter_gitops.rules", "karpenter_gitops.load"))]
    assert not [m for m in modules if m.split(".")[0] in (*HEAVY, "yaml")]


def test_a_command_loads_no_other_command():
    assert {m for m in loaded("rules", "nodeclass/instance-profile-arn") if m.endswith("_command")} == {
        "karpenter_gitops.cli.rules_command"
    }


@pytest.mark.parametrize("argv", [["validate", "examples/manifests/platform.yaml"], ["rules"]])
def test_offline_commands_load_no_heavy_library(argv):
    modules = loaded(*argv)
    assert "karpenter_gitops.app.validate" in modules or argv[0] != "validate"
    assert sorted({m.split(".")[0] for m in modules} & set(HEAVY)) == []


def test_validate_loads_no_simulation():
    """The families describe their nodes for the simulation, but ``validate`` never simulates: the
    scheduler's modules were a sixth of its start-up."""
    assert not [
        m for m in loaded("validate", "examples/manifests/platform.yaml") if m.startswith("karpenter_gitops.karpenter.scheduling")
    ]


def test_crd_checks_load_their_engine_only_when_given_crds():
    assert "karpenter_gitops.rules.crd.engine" not in loaded("validate", "examples/manifests/platform.yaml")
    assert {"karpenter_gitops.rules.crd.engine", "cel_expr_python"} <= loaded(
        "validate", "--crd", str(crds("v1.14.1")), "examples/manifests/platform.yaml"
    )
