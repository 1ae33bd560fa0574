"""Hostile stack files through ``pulumi preview`` with the real CLI: the Pulumi front door.

The CLI reads the stack file, our program reads its config, the components judge it and the
dynamic provider checks it; whatever the file holds, the user sees the engine's report and error
lines, never a Python traceback. Each example is a whole CLI run (seconds), so `make test` runs a
handful; `make fuzz` more.
"""

from __future__ import annotations

import pytest
from conftest import scratch_project
from hypothesis import given, settings
from support.hostile import PROFILE, STACK, TEXT_EDITS, as_text
from support.pulumi_cli import PulumiProject

from karpenter_gitops.adapters.aws.embedded import embedded_aws

pytestmark = pytest.mark.real
CONTROLLER = "karpenter-gitops:controller"


@pytest.fixture(scope="module")
def project(tmp_path_factory, api_server, pulumi_cli, kubernetes_provider):
    directory = scratch_project(tmp_path_factory.mktemp("hostile"), "fuzz", "config: {}\n")
    return PulumiProject.create(directory, "fuzz", pulumi=pulumi_cli, kubeconfig=api_server.kubeconfig)


def without_controller(stack):
    """The controller block registers pulumi_aws resources, whose plugin cannot be built here."""
    config = stack.get("config") if isinstance(stack, dict) else None
    if isinstance(config, dict):
        config.pop(CONTROLLER, None)
    return stack


@settings(PROFILE, max_examples=max(4, PROFILE.max_examples // 10))
@given(stack=STACK.map(without_controller), edit=TEXT_EDITS)
def test_pulumi_preview_of_a_hostile_stack_file_reports_without_a_traceback(project, embedded_server, stack, edit):
    (project.directory / "stacks" / "Pulumi.fuzz.yaml").write_text(as_text([stack], edit))
    with embedded_aws(server=embedded_server):
        result = project.run("preview", check=False)
    shown = result.stdout + result.stderr
    assert "Traceback (most recent call last)" not in shown, shown[-4000:]
    assert "Program failed with an unhandled exception" not in shown, shown[-4000:]
    if result.returncode != 0:
        assert "error:" in shown, shown[-4000:]
