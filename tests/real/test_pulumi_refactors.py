"""A team moves a class and its pool between the two forms a program declares them in: in code at the top
of the program (``NodeClass`` / ``NodePool``) and in the stack file (``Fleet``). With the real CLI, the
real engine and the real Kubernetes provider against the real API server, each move is a no-op: no
create, no delete, and the live objects keep their uid (Karpenter would drain the nodes of a deleted
pool)."""

from __future__ import annotations

import pytest
from conftest import scratch_project
from support.api_server import live
from support.pulumi_cli import PulumiProject, stack_text, step_ops

pytestmark = pytest.mark.real

# The program of a team that declares the classes in code or hands the stack file to Fleet; FORM says which.
PROGRAM = """\
import os

import pulumi

from karpenter_gitops_pulumi import ClusterArgs, Fleet, FleetArgs, NodeClass, NodeClassArgs, NodePool, NodePoolArgs

settings = pulumi.Config("karpenter-gitops")
block = settings.require_object("cluster")
cluster = ClusterArgs(kubernetes_version=block["kubernetesVersion"], karpenter_version=block["karpenterVersion"])
classes, pools = settings.require_object("nodeClasses"), settings.require_object("nodePools")
if os.environ["FORM"] == "code":
    for name, spec in classes.items():
        node_class = NodeClass(name, NodeClassArgs(spec=spec, node_pools=pools, cluster=cluster))
        for pool, pool_spec in pools.items():
            NodePool(pool, NodePoolArgs(spec=pool_spec, node_class=node_class))
else:
    Fleet(pulumi.get_stack(), FleetArgs(node_classes=classes, node_pools=pools, cluster=cluster))
"""


@pytest.fixture
def stack(tmp_path, api_server, pulumi_cli, kubernetes_provider, default_aws) -> PulumiProject:
    scratch_project(tmp_path, "team", stack_text("moved"))
    (tmp_path / "__main__.py").write_text(PROGRAM)
    return PulumiProject.create(tmp_path, "team", pulumi=pulumi_cli, kubeconfig=api_server.kubeconfig)


def uids(api_server) -> tuple[str, str]:
    return live(api_server, "ec2nodeclasses", "moved")["metadata"]["uid"], live(api_server, "nodepools", "moved-pool")[
        "metadata"
    ]["uid"]


@pytest.mark.parametrize("forms", [("code", "fleet"), ("fleet", "code")], ids=["code to stack file", "stack file to code"])
def test_moving_a_class_and_its_pool_between_code_and_the_stack_file_changes_nothing_live(stack, api_server, forms):
    before, after = forms
    stack.up(env={"FORM": before})
    created = uids(api_server)

    planned = stack.preview(env={"FORM": after})
    moved = {step["op"] for step in planned["steps"] if step["urn"].rsplit("::", 1)[1] != "team"}
    assert moved <= {"same"}, planned["steps"]  # no create, no delete, no replace but the Fleet's own
    assert step_ops(planned).get("team", "same") == {"fleet": "create", "code": "delete"}[after]
    done = stack.up(env={"FORM": after})
    assert "6 unchanged" in done.stdout and {"fleet": "+ 1 created", "code": "- 1 deleted"}[after] in done.stdout
    assert uids(api_server) == created
    assert {urn.rsplit("::", 1)[1] for urn in stack.resources()} >= {"moved-ec2nodeclass", "moved-pool-nodepool"}
