"""A team's own Pulumi project, run by the real CLI with the pack as a user runs them: its program builds the
components with the arguments spelled as its stack file spells them, and keeps its waivers beside it.

The project lives in a temporary directory outside the tree; the engine starts the pack in the pack's own
directory, so a relative waiver path in the stack config proves the pack finds the project.
"""

from __future__ import annotations

import json

import pytest
from conftest import scratch_project
from support.pulumi_cli import PulumiProject, stack_text
from test_pulumi_cli import policy_pack

pytestmark = pytest.mark.real

# The team's program: a class and its pools, each pool its own NodePool beside the class (as the docs show
# it), the arguments in camelCase (ARGS: more of them, or a misspelt one).
PROGRAM = """
import pulumi
from karpenter_gitops_pulumi import NodeClass, NodeClassArgs, NodePool

settings = pulumi.Config("karpenter-gitops")
node_class = NodeClass("%(name)s", NodeClassArgs(spec=settings.require_object("nodeClasses")["%(name)s"], pinAmis=False%(args)s))
for pool, spec in settings.require_object("nodePools").items():
    NodePool(pool, {"spec": spec, "nodeClass": node_class})
"""
WAIVER = {
    "waivers": [
        {"rule": "policy/detailed-monitoring", "object": "team", "reason": "metrics come from the agent", "expires": "2999-01-01"}
    ]
}


@pytest.fixture
def team(tmp_path, api_server, pulumi_cli, kubernetes_provider, default_aws):
    """The team's project: its program, one stack of class ``team`` and pool ``team-pool``, a pack config
    making an advisory policy mandatory, and a waiver file under ``policies/``."""
    directory = tmp_path / "team-infra"
    directory.mkdir()
    scratch_project(directory, "e2e", stack_text("team"))
    (directory / "policies").mkdir()
    (directory / "policies" / "waivers.yaml").write_text(json.dumps(WAIVER))
    (directory / "pack-config.json").write_text(json.dumps({"policy-detailed-monitoring": "mandatory"}))
    return PulumiProject.create(directory, "e2e", pulumi=pulumi_cli, kubeconfig=api_server.kubeconfig)


def program(team: PulumiProject, args: str = "", taint: str = "") -> None:
    (team.directory / "__main__.py").write_text(PROGRAM % {"name": "team", "args": args})
    if taint:
        stack_file = team.directory / "stacks" / "Pulumi.e2e.yaml"
        stack_file.write_text(
            stack_file.read_text().replace("expireAfter: 720h", f"expireAfter: 720h\n          taints: [{taint}]")
        )


def preview(team: PulumiProject):
    result = team.run("preview", "--policy-pack", policy_pack(), "--policy-pack-config", "pack-config.json", check=False)
    output = result.stdout + result.stderr
    assert "Traceback (most recent call last)" not in output, output[-3000:]
    return result.returncode, output


def test_a_relative_waiver_path_in_the_stack_config_waives_the_finding_and_camel_case_args_are_taken(team):
    program(team, args=", createNodeRole=False, nodeOverlays={}")
    code, output = preview(team)
    assert code != 0 and "policy-detailed-monitoring" in output and "mandatory" in output, output[-3000:]

    team.run("config", "set", "karpenter-gitops:waivers", "policies/waivers.yaml")
    code, output = preview(team)
    assert code == 0, output[-3000:]
    assert "policy-detailed-monitoring" not in output

    team.run("config", "set", "karpenter-gitops:waivers", "policies/waivers.yml")
    code, output = preview(team)
    assert code != 0 and "policies/waivers.yml' does not exist" in output, output[-3000:]


def test_a_misspelt_argument_fails_the_preview_with_a_did_you_mean(team):
    program(team, args=", nodePool={}")
    code, output = preview(team)
    assert code != 0
    assert "NodeClass 'team': NodeClassArgs has no argument 'nodePool' (hint: did you mean 'nodePools'?)" in output, output[
        -3000:
    ]


def test_a_standalone_pool_with_a_mistyped_taint_effect_fails_the_preview(team):
    program(team, taint="{key: gpu, effect: NoSchedul}")
    code, output = preview(team)
    assert code != 0
    assert 'NodePool team-pool: spec.template.spec.taints[0].effect: Unsupported value: "NoSchedul"' in output, output[-3000:]
