"""RequirementsDrifted: Karpenter's check on one NodeClaim, and which nodes a change drifts with no cluster at hand
(both compared with Karpenter's own code node by node in tests/real/test_drift_conformance.py)."""

from __future__ import annotations

import pytest

from karpenter_gitops.karpenter.disruption.requirement_drift import label_drifts, requirements_drift
from karpenter_gitops.load import into_inputs
from karpenter_gitops.rules.examples import BASE_NODEPOOL, merge_patch

CAPACITY, CATEGORY, CPU = "karpenter.sh/capacity-type", "karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-cpu"


def pool(*requirements: dict, labels: dict | None = None):
    patch = {"spec": {"template": {"spec": {"requirements": list(requirements)}, "metadata": {"labels": labels or {}}}}}
    return into_inputs.load_documents([("p.yaml", [merge_patch(BASE_NODEPOOL, patch)])]).node_pools[0]


def req(key: str, operator: str, *values: str) -> dict:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


NODE = {CAPACITY: "on-demand", CATEGORY: "m", CPU: "4", "kubernetes.io/arch": "amd64"}


@pytest.mark.parametrize(
    ("requirements", "drifted"),
    [
        ([req(CAPACITY, "In", "on-demand")], None),
        (
            [req(CAPACITY, "In", "spot")],
            "key karpenter.sh/capacity-type, karpenter.sh/capacity-type In [spot] not in "
            "karpenter.sh/capacity-type In [on-demand]",
        ),
        ([req("example.com/team", "Exists")], 'label "example.com/team" does not have known values'),  # no key allowed undefined
        ([req("example.com/team", "DoesNotExist")], None),
        (
            [req(CPU, "Gt", "8")],
            "key karpenter.k8s.aws/instance-cpu, karpenter.k8s.aws/instance-cpu Exists >=9 not in "
            "karpenter.k8s.aws/instance-cpu In [4]",
        ),
    ],
)
def test_karpenters_check_on_one_nodeclaim(requirements, drifted):
    assert requirements_drift(pool(*requirements), NODE) == drifted


def test_template_labels_are_not_requirements_here():
    assert requirements_drift(pool(req(CAPACITY, "In", "on-demand"), labels={"team": "a"}), NODE) is None


@pytest.mark.parametrize(
    ("base", "head", "nodes"),
    [
        ([req(CAPACITY, "In", "on-demand")], [req(CAPACITY, "In", "spot")], ["nodes with karpenter.sh/capacity-type=on-demand"]),
        ([req(CAPACITY, "In", "on-demand", "spot")], [req(CAPACITY, "In", "spot", "on-demand")], []),
        (
            [req(CATEGORY, "In", "c", "m", "r")],
            [req(CATEGORY, "NotIn", "m")],
            ["nodes with karpenter.k8s.aws/instance-category=m"],
        ),
        ([], [req(CATEGORY, "In", "c", "m")], ["nodes with karpenter.k8s.aws/instance-category outside [c, m]"]),
        ([], [req(CPU, "Gt", "3")], ["nodes with karpenter.k8s.aws/instance-cpu < 4"]),
        ([req(CPU, "Gt", "7")], [req(CPU, "Gt", "3")], []),  # the head only widens
        ([req(CPU, "Gt", "1")], [req(CPU, "NotIn", "4", "1")], ["nodes with karpenter.k8s.aws/instance-cpu=4"]),
        (
            [],
            [req("example.com/team", "In", "a")],
            ["every node (its nodes do not carry example.com/team, which the head requires)"],
        ),
        ([req("example.com/team", "In", "a")], [req("example.com/team", "In", "a")], []),
        ([], [req(CAPACITY, "Exists")], []),  # every node carries a capacity type
        ([], [req("kubernetes.io/arch", "In", "amd64", "arm64")], []),  # every architecture there is
        ([], [req("kubernetes.io/arch", "In", "arm64")], ["nodes with kubernetes.io/arch=amd64"]),
        ([], [req(CAPACITY, "In", "spot")], ["nodes with karpenter.sh/capacity-type=on-demand, reserved"]),
    ],
)
def test_offline_which_nodes_a_change_drifts(base, head, nodes):
    assert [d.nodes() for d in label_drifts(pool(*base), pool(*head))] == nodes


def test_a_template_label_fixes_the_value_its_nodes_carry():
    base = pool(labels={"tier": "web"})
    (drift,) = label_drifts(base, pool(req("tier", "In", "batch")))
    assert drift.nodes() == "nodes with tier=web" and drift.covers({"tier": "web"})
