"""Node-impact forecast (pure) and the Kubernetes adapter against a fake API server on 127.0.0.1."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
from support.fake_kube import kubeconfig_for

from karpenter_gitops.adapters import kube
from karpenter_gitops.core import versions
from karpenter_gitops.core.cluster import FleetNode
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.karpenter.amifamily.resolver import NodePoolMapping
from karpenter_gitops.karpenter.disruption import drift
from karpenter_gitops.karpenter.status.prediction import NodePoolPlan, Plan
from karpenter_gitops.load import into_inputs
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL


def inputs(nodeclass_spec: dict | None = None, nodepool_spec: dict | None = None):
    nc, np = copy.deepcopy(BASE_NODECLASS), copy.deepcopy(BASE_NODEPOOL)
    nc["spec"].update(nodeclass_spec or {})
    np["spec"].update(nodepool_spec or {})
    return into_inputs.load_documents([("test.yaml", [nc, np])])


def plan_with(instance_types: dict[str, str]) -> Plan:
    mapping = NodePoolMapping("general", "default", instance_types)
    return Plan(node_classes={}, node_pools={"general": NodePoolPlan("default", mapping=mapping)})


def node(name: str, instance_type: str, image: str, **labels) -> FleetNode:
    return FleetNode(
        name,
        "general",
        instance_type,
        image,
        {
            "karpenter.sh/nodepool": "general",
            "node.kubernetes.io/instance-type": instance_type,
            "karpenter.sh/capacity-type": "on-demand",
            **labels,
        },
    )


# --- the forecast ----------------------------------------------------------------------------


def test_ami_moves_group_instance_types_by_old_and_new_image():
    base = plan_with({"m5.large": "ami-a", "m5.xlarge": "ami-a", "m7g.large": "ami-b"})
    head = plan_with({"m5.large": "ami-c", "m5.xlarge": "ami-c", "m7g.large": "ami-b", "c5.large": "ami-c"})
    assert drift.ami_moves(base, head) == (
        drift.AMIMove("general", None, "ami-c", ("c5.large",)),
        drift.AMIMove("general", "ami-a", "ami-c", ("m5.large", "m5.xlarge")),
    )
    assert drift.summarise_types(["m5.large", "m5.xlarge", "c5.large"]) == "c5.large, m5.* (2)"


def test_with_a_fleet_each_node_counts_once_under_the_first_reason():
    base, head = inputs(), inputs()
    fleet = [
        node("a", "m5.large", "ami-old"),  # AMI drift
        node("b", "m5.large", "ami-new"),  # current
        node("c", "m5.large", "ami-new", **{"karpenter.sh/capacity-type": "spot"}),  # requirements drift
    ]
    result = drift.forecast(base, head, plan_with({"m5.large": "ami-old"}), plan_with({"m5.large": "ami-new"}), fleet)
    (pool,) = result.pools
    assert pool.nodes == 3 and pool.drifted == {"AMIDrift": 1, "RequirementsDrifted": 1}
    assert pool.waves == 2  # 10% of 3 rounds up to 1 node per wave
    assert pool.drifted_nodes == ("a", "c")  # by name, for the replacement: the current node b stays
    named = [replace(n, node_name=f"ip-{n.name}") for n in fleet]
    (pool,) = drift.forecast(base, head, plan_with({"m5.large": "ami-old"}), plan_with({"m5.large": "ami-new"}), named).pools
    assert pool.drifted_nodes == ("ip-a", "ip-c")  # the Node a NodeClaim became is what the pods are bound to


def test_without_a_fleet_whole_pool_drift_is_expressed_as_budget_waves():
    result = drift.forecast(inputs(), inputs({"userData": "echo hi"}))
    (pool,) = result.pools
    assert [d.describe() for d in pool.drifts] == ["NodeClassDrift: every node (EC2NodeClass default spec.userData)"]
    assert pool.nodes is None and pool.waves == 10  # every node at 10% per wave
    assert pool.budget.pace() == "~10 waves of 10%"


def requirements(*entries: tuple[str, str, list[str]]) -> dict:
    base = copy.deepcopy(BASE_NODEPOOL["spec"])
    base["template"]["spec"]["requirements"] = [{"key": k, "operator": op, "values": v} for k, op, v in entries]
    return base


def test_offline_the_issue_change_names_the_pool_the_nodes_and_the_unknown_ami_drift():
    """The issue's change: on-demand → spot and al2023@latest → a pinned alias, no cluster, no AWS."""
    base = inputs(
        {"amiSelectorTerms": [{"alias": "al2023@latest"}]}, requirements(("karpenter.sh/capacity-type", "In", ["on-demand"]))
    )
    head = inputs(
        {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}, requirements(("karpenter.sh/capacity-type", "In", ["spot"]))
    )
    (pool,) = drift.forecast(base, head).pools
    assert [(d.reason, d.nodes, d.unknown) for d in pool.drifts] == [
        ("RequirementsDrifted", "nodes with karpenter.sh/capacity-type=on-demand", False),
        ("AMIDrift", "nodes not on the image the new selection gives their instance type: unknown offline", True),
    ]
    assert pool.waves is None  # not every node drifts for sure: no wave count without a node count


def test_selector_changes_are_unknown_offline_and_resolved_with_aws():
    head = inputs(
        {
            "subnetSelectorTerms": [{"id": "subnet-1"}],
            "securityGroupSelectorTerms": [{"id": "sg-1"}],
            "capacityReservationSelectorTerms": [{"id": "cr-1"}],
        }
    )
    reasons = {d.reason: d for d in drift.forecast(inputs(), head).pools[0].drifts}
    assert set(reasons) == {"SecurityGroupDrift", "SubnetDrift", "CapacityReservationDrift"}
    assert all(d.unknown for d in reasons.values())
    older = drift.forecast(inputs(), head, release=versions.Release((1, 2))).pools[0].drifts
    assert "CapacityReservationDrift" not in {d.reason for d in older}  # Karpenter 1.2 has no such reason


def test_a_fleet_is_judged_by_karpenters_requirement_check_not_only_intersection():
    """A head requirement on a custom key its nodes lack drifts them (Compatible allows no undefined key)."""
    head = inputs(
        nodepool_spec=requirements(("karpenter.sh/capacity-type", "In", ["on-demand"]), ("example.com/team", "Exists", []))
    )
    (pool,) = drift.forecast(inputs(), head, fleet=[node("a", "m5.large", "ami-1")]).pools
    assert pool.drifted == {"RequirementsDrifted": 1}
    assert pool.drifts[0].nodes.startswith("every node (its nodes do not carry example.com/team")


def test_unchanged_pools_are_not_in_the_forecast():
    assert drift.forecast(inputs(), inputs()).pools == ()


# --- the Kubernetes adapter ------------------------------------------------------------------


def test_read_state_joins_nodeclaims_with_node_labels(fake_cluster):
    (fleet_node,) = kube.read_state(fake_cluster).fleet
    assert fleet_node.name == "general-abc12" and fleet_node.node_pool == "general"
    assert fleet_node.instance_type == "m5.large" and fleet_node.image_id == "ami-0a23000000000a001"
    assert fleet_node.labels["kubernetes.io/arch"] == "amd64"


def test_unreachable_cluster_is_reported_not_raised_as_input_error(tmp_path):
    import socket

    with socket.socket() as probe:  # held, not listening, so no other process can take the port meanwhile
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        with pytest.raises(kube.ClusterUnavailable, match="cannot reach"):
            kube.read_state(kubeconfig_for(tmp_path / "kubeconfig", f"http://127.0.0.1:{port}"))


def test_unusable_kubeconfig_is_an_input_error(tmp_path):
    broken = tmp_path / "kubeconfig"
    broken.write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
    with pytest.raises(InputError, match="unusable kubeconfig"):
        kube.read_state(broken)
    with pytest.raises(InputError, match="no such kubeconfig"):
        kube.read_state(tmp_path / "missing")


@pytest.mark.parametrize("text", ["just a line of text\n", "- a\n- list\n", ""])
def test_a_file_that_is_no_kubeconfig_says_so(tmp_path, text):
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    with pytest.raises(InputError, match="not a kubeconfig: the file is not a YAML mapping"):
        kube.read_state(path)


def test_a_cluster_without_the_nodeoverlay_crd_is_read_without_overlays(fake_cluster, monkeypatch):
    """Karpenter before 1.7 serves no NodeOverlay: verify reads the rest, it does not call the cluster unreachable."""
    from support.fake_kube import FakeKubernetes

    empty = {"kind": "List", "items": []}
    routes = {
        **FakeKubernetes.routes,
        "/apis/karpenter.k8s.aws/v1/ec2nodeclasses": empty,
        "/apis/karpenter.sh/v1/nodepools": empty,
    }
    monkeypatch.setattr(FakeKubernetes, "routes", routes)
    live = kube.read_cluster(fake_cluster)
    assert live.objects == {} and live.schemas == {} and [node.name for node in live.state.fleet] == ["general-abc12"]


def test_a_server_whose_pages_never_end_is_said_not_read_forever(fake_cluster, monkeypatch):
    from support.fake_kube import NODECLAIMS, FakeKubernetes

    endless = {**NODECLAIMS, "metadata": {"continue": "the-same-page"}}
    monkeypatch.setattr(FakeKubernetes, "routes", {**FakeKubernetes.routes, "/apis/karpenter.sh/v1/nodeclaims": endless})
    with pytest.raises(kube.ClusterUnavailable, match="same continue token twice while listing nodeclaims: its pages never end"):
        kube.read_state(fake_cluster)
