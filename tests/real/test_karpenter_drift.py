"""Karpenter's own controller (1.15.0) marks a launched NodeClaim Drifted once its NodePool changes, for the
reason preview names offline: the issue's capacity-type switch (RequirementsDrifted) and a template
change (NodePoolDrifted).

The NodeClaim is created as Karpenter's provisioner would (its NodePool's label and hash annotations)
and launched by the controller on the embedded AWS; no Node registers (there is no kubelet), which the
drift check does not need: it reads a launched NodeClaim and its NodePool. The provider's own check can
mark the fresh claim SecurityGroupDrift (the embedded AWS's instance does not show the groups Karpenter
asked for); the core's reasons come first in Karpenter's order, so the change's reason replaces it.
"""

from __future__ import annotations

import time

import pytest
from support.karpenter import SETTLE_WITHIN, running_karpenter
from support.preview_objects import node_class, node_pool

from karpenter_gitops.adapters.aws.embedded_world import load_world
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.karpenter.disruption import drift
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules.examples import merge_patch

pytestmark = pytest.mark.real
NODECLAIMS = ("karpenter.sh", "v1", "nodeclaims")
NODEPOOLS = ("karpenter.sh", "v1", "nodepools")
HASH, HASH_VERSION = "karpenter.sh/nodepool-hash", "karpenter.sh/nodepool-hash-version"


def _until(what: str, check, cluster, within: float = SETTLE_WITHIN):
    deadline = time.monotonic() + within
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"{what} not within {within:.0f} s:\n{cluster.controller.tail()}"
        time.sleep(0.5)


def _condition(claim: dict, kind: str) -> dict | None:
    return next((c for c in claim.get("status", {}).get("conditions", []) if c["type"] == kind), None)


def _launched_claim(cluster, pool: dict) -> dict:
    """A NodeClaim of ``pool`` as the provisioner makes one, once the controller has launched it."""
    objects = cluster._objects()

    def hashed() -> dict[str, str]:
        annotations = objects.get_cluster_custom_object(*NODEPOOLS, "general")["metadata"].get("annotations") or {}
        return {key: value for key, value in annotations.items() if key in (HASH, HASH_VERSION)}

    annotations = _until("the NodePool's hash", hashed, cluster)
    spec = pool["spec"]["template"]["spec"]
    claim = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {"name": "general-drift", "labels": {"karpenter.sh/nodepool": "general"}, "annotations": annotations},
        "spec": {
            "nodeClassRef": spec["nodeClassRef"],
            "requirements": [
                *spec["requirements"],
                {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]},
            ],
            "expireAfter": "720h",
        },
    }
    objects.create_cluster_custom_object(*NODECLAIMS, claim)

    def launched() -> dict | None:
        current = objects.get_cluster_custom_object(*NODECLAIMS, "general-drift")
        condition = _condition(current, "Launched")
        return current if condition and condition["status"] == "True" else None

    return _until("the NodeClaim launched", launched, cluster)


def _drifted_for(cluster, reason: str) -> bool:
    objects = cluster._objects()

    def drifted() -> bool:
        condition = _condition(objects.get_cluster_custom_object(*NODECLAIMS, "general-drift"), "Drifted")
        return bool(condition and condition["status"] == "True" and condition["reason"] == reason)

    return _until(f"Drifted=True ({reason})", drifted, cluster)


def _preview_reasons(base_docs: list[dict], head_docs: list[dict]) -> list[str]:
    base: Inputs = load_documents([("base.yaml", base_docs)])
    head: Inputs = load_documents([("head.yaml", head_docs)])
    return [d.reason for pool in drift.forecast(base, head).pools for d in pool.drifts]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}, "RequirementsDrifted"),
        ({"taints": [{"key": "example.com/dedicated", "effect": "NoSchedule"}]}, "NodePoolDrifted"),
    ],
    ids=["capacity-type", "taint"],
)
def test_the_controller_marks_the_nodeclaim_drifted_for_the_reason_preview_names(change, reason, api_server, embedded_server):
    nc, pool = node_class(), node_pool()
    with running_karpenter(load_world(None), api=api_server, server=embedded_server) as cluster:
        cluster.apply([pool, nc])
        cluster.settled_classes(["default"])
        try:
            _launched_claim(cluster, pool)
            head = merge_patch(pool, {"spec": {"template": {"spec": change}}})
            cluster._objects().patch_cluster_custom_object(*NODEPOOLS, "general", {"spec": head["spec"]})
            assert _drifted_for(cluster, reason)
            assert _preview_reasons([nc, pool], [nc, head]) == [reason]
        finally:  # the cluster's clean-up deletes pools and classes; the claim is this test's
            cluster._objects().delete_collection_cluster_custom_object(*NODECLAIMS)
