"""The world as JSON for Karpenter's own scheduler (the karpenter-scheduler harness), and NodePools as loaded."""

from __future__ import annotations

import json

from support.simulation import on_demand, pods, pool, types, world

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirements, ValueSet
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.matching import LabelSelector, Taint
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm, Spread
from karpenter_gitops.karpenter.scheduling.world import NodePoolSpec
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules.examples import BASE_NODEPOOL, merge_patch


def test_the_world_serialises_to_the_harness_shape():
    spread = (Spread(labels.ZONE, 1, selector=LabelSelector((("app", "web"),))),)
    tainted = pool("batch", *on_demand(), taints=[Taint("dedicated", "batch", "NoSchedule")], limits={"cpu": "100"}, weight=10)
    data = json.loads(
        json.dumps(
            world(
                pods(2, spreads=spread, anti_affinity=(AffinityTerm("kubernetes.io/hostname"),)),
                tainted,
                instance_types_=types(["m5.large"]),
            ).to_json()
        )
    )
    kinds = [o["kind"] for o in data["objects"]]
    assert kinds == ["NodePool", "Pod", "Pod"]
    pool_json, pod_json = data["objects"][0], data["objects"][1]
    assert pool_json["spec"]["limits"] == {"cpu": "100"} and pool_json["spec"]["weight"] == 10
    assert pool_json["spec"]["template"]["spec"]["taints"] == [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}]
    assert pod_json["metadata"] == {"name": "web-0", "namespace": "default", "labels": {"app": "web"}}
    assert pod_json["spec"]["containers"] == [{"name": "main", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]
    assert pod_json["spec"]["topologySpreadConstraints"][0]["labelSelector"] == {"matchLabels": {"app": "web"}}
    assert pod_json["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == [
        {"topologyKey": "kubernetes.io/hostname"}
    ]
    (m5,) = data["instanceTypes"]["default"]
    assert m5["name"] == "m5.large" and m5["capacity"]["memory"] == "7577Mi"
    assert m5["overhead"]["kubeReserved"] == {"cpu": "70m", "ephemeral-storage": "1Gi", "memory": "574Mi"}
    assert {"key": labels.INSTANCE_TYPE, "operator": "In", "values": ["m5.large"]} in m5["requirements"]
    assert {"key": labels.GPU_COUNT, "operator": "DoesNotExist"} in m5["requirements"]
    assert m5["offerings"][0] == {"zone": "us-west-2a", "capacityType": "on-demand", "price": 0.096, "available": True}


def test_a_loaded_nodepool_keeps_its_requirements_labels_taints_and_limits():
    manifest = merge_patch(
        BASE_NODEPOOL,
        {
            "spec": {
                "weight": 30,
                "limits": {"cpu": "1000", "memory": "1000Gi"},
                "template": {
                    "metadata": {"labels": {"team": "a"}},
                    "spec": {
                        "taints": [{"key": "team", "value": "a", "effect": "NoSchedule"}],
                        "requirements": [{"key": labels.FAMILY, "operator": "In", "values": ["m5", "c5"], "minValues": 2}],
                    },
                },
            }
        },
    )
    (loaded,) = load_documents([("pool.yaml", [manifest])]).node_pools
    spec = NodePoolSpec.from_node_pool(loaded)
    assert (spec.weight, spec.taints, spec.labels) == (30, (Taint("team", "a", "NoSchedule"),), {"team": "a"})
    assert spec.requirements[labels.FAMILY] == ValueSet(False, frozenset({"m5", "c5"}), min_values=2)
    assert spec.node_requirements["team"] == ValueSet(False, frozenset({"a"}))
    assert spec.limits == resources.vector({"cpu": "1000", "memory": "1000Gi"})
    assert spec.to_json()["spec"]["weight"] == 30  # the manifest as written


def test_a_nodepool_without_a_manifest_writes_its_requirements():
    spec = NodePoolSpec(
        "p", "c", Requirements([(labels.GENERATION, ValueSet.of("Gt", ("4",))), (labels.CPU, ValueSet.of("Lt", ("17",)))])
    )
    assert spec.to_json()["spec"]["template"]["spec"]["requirements"] == [
        {"key": labels.CPU, "operator": "Lt", "values": ["17"]},
        {"key": labels.GENERATION, "operator": "Gt", "values": ["4"]},
    ]
