"""Karpenter's own provisioning scheduler (v1.15.0, the karpenter-scheduler `make tools` builds) on
hand-worked worlds: each answer here was worked out from Karpenter's rules first, so these tests
judge the harness (that it runs the scheduler the way one provisioning pass does) before the
differential tests use it to judge our simulation.

The catalogue: m5.large and m5.xlarge with the AWS provider's figures for AL2023 (allocatable cpu
1930m / 3920m, pods 29 / 58, pod-eni 9 / 18), on-demand in three zones; the EC2 tests below check
those figures against the AWS provider's own computation from moto's DescribeInstanceTypes.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import scheduler as ks
from support.scheduler import instance_type, node_pool, pod, requirement

pytestmark = pytest.mark.real

ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
M5_LARGE = instance_type(
    "m5.large",
    2,
    7577,
    29,
    on_demand=0.096,
    kube_reserved={"cpu": "70m", "memory": "574Mi"},
    extended={"vpc.amazonaws.com/pod-eni": "9"},
)
M5_XLARGE = instance_type(
    "m5.xlarge",
    4,
    15155,
    58,
    on_demand=0.192,
    kube_reserved={"cpu": "80m", "memory": "893Mi"},
    extended={"vpc.amazonaws.com/pod-eni": "18"},
)
BOTH = requirement("node.kubernetes.io/instance-type", "In", "m5.large", "m5.xlarge")


@pytest.fixture(scope="module")
def program():
    return ks.binary()


def world(*objects, types=(M5_LARGE, M5_XLARGE), **extra):
    return {"objects": list(objects), "instanceTypes": {"default": list(types)}, **extra}


def claims_of(answer):
    return [(c["nodePool"], [o["name"] for o in c["instanceTypes"]], c["pods"]) for c in answer["nodeClaims"]]


def test_three_one_cpu_pods_share_the_largest_type_not_two_small_ones(program):
    """Packing keeps a NodeClaim while any option still fits: the second pod rules out m5.large
    (2 cpu > 1930m), the third still fits m5.xlarge, so one m5.xlarge rather than two m5.large."""
    answer = ks.schedule(
        world(node_pool("default", requirements=[BOTH]), *(pod(f"p{i}", "1", "256Mi") for i in range(3))), program=program
    )
    assert claims_of(answer) == [("default", ["m5.xlarge"], ["default/p0", "default/p1", "default/p2"])]
    claim = answer["nodeClaims"][0]
    assert claim["requests"] == {"cpu": "3", "memory": "768Mi", "pods": "3"}
    assert claim["launch"]["capacityType"] == "on-demand"
    assert claim["launch"]["cheapest"]["instanceType"] == "m5.xlarge"
    assert claim["launch"]["cheapest"]["price"] == 0.192
    assert {o["zone"] for o in claim["launch"]["offerings"]} == set(ZONES)
    assert answer["unschedulable"] == []
    assert answer["release"] == {"karpenter": "v1.15.0", "karpenterProviderAWS": "v1.15.0"}


def test_one_pod_gets_every_fitting_type_cheapest_first(program):
    answer = ks.schedule(world(node_pool("default", requirements=[BOTH]), pod("solo", "1", "1Gi")), program=program)
    (claim,) = answer["nodeClaims"]
    assert claim["instanceTypes"] == [{"name": "m5.large", "price": 0.096}, {"name": "m5.xlarge", "price": 0.192}]
    instance_types = next(r for r in claim["requirements"] if r["key"] == "node.kubernetes.io/instance-type")
    assert instance_types == {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]}
    assert claim["launch"]["cheapest"]["instanceType"] == "m5.large"


def test_a_pod_that_tolerates_nothing_is_refused_by_a_tainted_pool(program):
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    answer = ks.schedule(world(node_pool("tainted", requirements=[BOTH], taints=[taint]), pod("plain")), program=program)
    assert answer["nodeClaims"] == []
    (refused,) = answer["unschedulable"]
    assert refused["pod"] == "default/plain"
    assert refused["error"] == "did not tolerate taint (taint=dedicated=gpu:NoSchedule)"
    assert any(
        e["object"] == "Pod/default/plain" and e["reason"] == "FailedScheduling" and refused["error"] in e["message"]
        for e in answer["events"]
    )


def test_a_tolerating_pod_uses_the_tainted_pool(program):
    taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    tolerant = pod("tolerant", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}])
    answer = ks.schedule(world(node_pool("tainted", requirements=[BOTH], taints=[taint]), tolerant), program=program)
    assert [c["nodePool"] for c in answer["nodeClaims"]] == ["tainted"]


def test_the_heavier_pool_wins_and_equal_weights_go_by_name_descending(program):
    """OrderByWeight: weight descending, then name descending: "b" before "a", "heavy" before both."""
    pools = [node_pool("a", requirements=[BOTH]), node_pool("b", requirements=[BOTH])]
    answer = ks.schedule(world(*pools, pod("p")), program=program)
    assert [p["name"] for p in answer["nodePools"]] == ["b", "a"]
    assert [c["nodePool"] for c in answer["nodeClaims"]] == ["b"]
    answer = ks.schedule(world(*pools, node_pool("heavy", requirements=[BOTH], weight=10), pod("p")), program=program)
    assert [(p["name"], p["weight"]) for p in answer["nodePools"]] == [("heavy", 10), ("b", 0), ("a", 0)]
    assert [c["nodePool"] for c in answer["nodeClaims"]] == ["heavy"]


def test_a_lighter_pool_takes_what_the_heavier_one_cannot(program):
    small_only = requirement("node.kubernetes.io/instance-type", "In", "m5.large")
    pools = [node_pool("small", requirements=[small_only], weight=50), node_pool("big", requirements=[BOTH])]
    answer = ks.schedule(world(*pools, pod("fits", "1"), pod("wide", "3")), program=program)
    assert sorted(claims_of(answer)) == [("big", ["m5.xlarge"], ["default/wide"]), ("small", ["m5.large"], ["default/fits"])]


def test_a_pool_at_its_cpu_limit_launches_no_more(program):
    """The first NodeClaim counts its largest option's capacity (4 cpu) against the limit of 4;
    the next one finds every type over the limit."""
    xlarge = requirement("node.kubernetes.io/instance-type", "In", "m5.xlarge")
    answer = ks.schedule(
        world(node_pool("limited", requirements=[xlarge], limits={"cpu": "4"}), *(pod(f"p{i}", "2") for i in range(3))),
        program=program,
    )
    assert claims_of(answer) == [("limited", ["m5.xlarge"], ["default/p0"])]
    assert [u["pod"] for u in answer["unschedulable"]] == ["default/p1", "default/p2"]
    assert all(
        "all available instance types exceed limits for nodepool" in u["error"] and "limited" in u["error"]
        for u in answer["unschedulable"]
    )


def test_zone_spread_puts_one_node_in_each_zone(program):
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    pods = [pod(f"web{i}", "1", labels={"app": "web"}, topologySpreadConstraints=spread) for i in range(3)]
    answer = ks.schedule(world(node_pool("default", requirements=[BOTH]), *pods), program=program)
    zones = []
    for claim in answer["nodeClaims"]:
        (zone,) = [r for r in claim["requirements"] if r["key"] == "topology.kubernetes.io/zone"]
        assert zone["operator"] == "In" and len(zone["values"]) == 1
        zones += zone["values"]
        assert len(claim["pods"]) == 1
    assert sorted(zones) == list(ZONES)


def test_hostname_anti_affinity_gives_each_pod_its_own_node(program):
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}
            ]
        }
    }
    pods = [pod(f"db{i}", "500m", labels={"app": "db"}, affinity=anti) for i in range(3)]
    answer = ks.schedule(world(node_pool("default", requirements=[BOTH]), *pods), program=program)
    assert sorted(c["pods"] for c in answer["nodeClaims"]) == [["default/db0"], ["default/db1"], ["default/db2"]]
    assert all(c["instanceTypes"][0]["name"] == "m5.large" for c in answer["nodeClaims"])


def test_daemonset_overhead_counts_on_every_node(program):
    """With a 1-cpu DaemonSet, m5.large (1930m) fits no 1-cpu pod, and m5.xlarge (3920m) two, not
    three: two NodeClaims, each asking for its pods plus the daemon."""
    answer = ks.schedule(
        world(
            node_pool("default", requirements=[BOTH]),
            ks.daemon_set("agent", "1", "128Mi"),
            *(pod(f"p{i}", "1", "256Mi") for i in range(3)),
        ),
        program=program,
    )
    assert sorted(claims_of(answer)) == [
        ("default", ["m5.xlarge"], ["default/p0", "default/p1"]),
        ("default", ["m5.xlarge"], ["default/p2"]),
    ]
    requests = sorted(c["requests"]["cpu"] for c in answer["nodeClaims"])
    assert requests == ["2", "3"]


def test_a_pod_too_big_for_every_type_says_so(program):
    answer = ks.schedule(world(node_pool("default", requirements=[BOTH]), pod("huge", "8")), program=program)
    (refused,) = answer["unschedulable"]
    assert refused["error"].startswith("no instance type has enough resources, requirements=")
    assert "karpenter.sh/nodepool In [default]" in refused["error"]
    assert refused["error"].endswith('resources={"cpu":"8","memory":"1Gi","pods":"1"}')


def test_a_pod_that_refuses_karpenter_nodes_is_ignored(program):
    refusing = pod(
        "outside",
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]}]
                }
            }
        },
    )
    answer = ks.schedule(world(node_pool("default", requirements=[BOTH]), refusing), program=program)
    (ignored,) = answer["unschedulable"]
    assert ignored["ignored"] and ignored["error"].startswith(
        "ignoring pod, configured to not run on a Karpenter provisioned node"
    )


def test_no_usable_pool_leaves_every_pod_pending_with_karpenters_words(program):
    invalid = node_pool("bad", requirements=[requirement("karpenter.sh/nodepool", "In", "x")])
    answer = ks.schedule(world(invalid, pod("p")), program=program)
    assert answer["nodePools"][0]["scheduling"] is False
    assert answer["nodePools"][0]["reason"].startswith("validation failed: ")
    assert answer["unschedulable"] == [{"pod": "default/p", "error": "no dynamic nodepools found"}]


def test_spot_is_launched_when_allowed_and_cheaper(program):
    types = [instance_type("m5.large", 2, 7577, 29, on_demand=0.096, spot=0.04, kube_reserved={"cpu": "70m", "memory": "574Mi"})]
    both_markets = requirement("karpenter.sh/capacity-type", "In", "spot", "on-demand")
    answer = ks.schedule(world(node_pool("default", requirements=[both_markets]), pod("p"), types=types), program=program)
    launch = answer["nodeClaims"][0]["launch"]
    assert launch["capacityType"] == "spot"
    assert launch["cheapest"] == {"instanceType": "m5.large", "zone": "us-east-1a", "price": 0.04}
    assert len(launch["offerings"]) == 3


def test_the_same_world_gives_the_same_answer(program):
    objects = [
        node_pool("default", requirements=[BOTH]),
        ks.daemon_set("agent", "200m", "128Mi"),
        *(pod(f"p{i}", f"{300 + 100 * (i % 4)}m", "512Mi") for i in range(12)),
    ]
    assert ks.schedule(world(*objects), program=program) == ks.schedule(world(*objects), program=program)


@pytest.mark.parametrize(
    ("world_", "says"),
    [
        ({"objects": []}, "give exactly one of instanceTypes"),
        ({"objects": [], "instanceTypes": {}, "extra": 1}, 'unknown field "extra"'),
        (
            {
                "objects": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containerz": []}}],
                "instanceTypes": {},
            },
            'unknown field "spec.containerz"',
        ),
        (
            {"objects": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}], "instanceTypes": {}},
            "kind Service is not one a world holds",
        ),
        (
            {"objects": [], "instanceTypes": {}, "flags": ["--min-values-policy=Sometimes"]},
            'invalid MIN_VALUES_POLICY "Sometimes"',
        ),
        (
            {"objects": [], "instanceTypes": {"default": [{"name": "x", "offerings": [{"zone": "a", "capacityType": "cheap"}]}]}},
            'capacityType "cheap"',
        ),
        (
            {
                "objects": [
                    pod(
                        "p",
                        affinity={
                            "nodeAffinity": {
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "x", "operator": "Gt"}]}]
                                }
                            }
                        },
                    )
                ],
                "instanceTypes": {},
            },
            'pod "default/p": a node affinity term the API server would refuse',
        ),
    ],
)
def test_an_unusable_world_is_one_line_and_exit_2(program, world_, says):
    with pytest.raises(ks.SchedulerRefused) as refused:
        ks.schedule(world_, program=program)
    assert refused.value.code == 2
    assert says in refused.value.message and "\n" not in refused.value.message


def test_a_nodes_limit_binds_only_through_existing_nodes_within_one_pass(program):
    """New NodeClaims subtract their options' capacity, which never carries ``nodes``: within one
    Solve a ``nodes: 1`` limit lets three NodeClaims through (the provisioner's Create checks the
    cluster's usage afterwards)."""
    xlarge = requirement("node.kubernetes.io/instance-type", "In", "m5.xlarge")
    answer = ks.schedule(
        world(node_pool("one-node", requirements=[xlarge], limits={"nodes": "1"}), *(pod(f"p{i}", "3") for i in range(3))),
        program=program,
    )
    assert sorted(c["pods"] for c in answer["nodeClaims"]) == [["default/p0"], ["default/p1"], ["default/p2"]]
    assert answer["unschedulable"] == []


def test_a_pod_joins_the_least_filled_nodeclaim_not_the_first(program):
    """Before each pod the NodeClaims are sorted by pod count: d (400m) would fit beside a and b
    (3900m of 3920m), but the NodeClaim holding only c is tried first."""
    xlarge = requirement("node.kubernetes.io/instance-type", "In", "m5.xlarge")
    answer = ks.schedule(
        world(
            node_pool("default", requirements=[xlarge]), pod("a", "2000m"), pod("b", "1500m"), pod("c", "1500m"), pod("d", "400m")
        ),
        program=program,
    )
    assert sorted(c["pods"] for c in answer["nodeClaims"]) == [["default/a", "default/b"], ["default/c", "default/d"]]


def test_min_values_strict_refuses_and_best_effort_relaxes(program):
    two_types = {**BOTH, "minValues": 2}
    objects = (node_pool("mv", requirements=[two_types]), pod("big", "3"))
    strict = ks.schedule(world(*objects), program=program)
    assert strict["nodeClaims"] == []
    assert strict["unschedulable"][0]["error"].startswith(
        "minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type]), requirements="
    )
    relaxed = ks.schedule(world(*objects, flags=["--min-values-policy=BestEffort"]), program=program)
    (claim,) = relaxed["nodeClaims"]
    assert claim["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"] == "true"
    assert {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.xlarge"], "minValues": 1} in claim[
        "requirements"
    ]


def test_a_prefer_no_schedule_taint_is_tolerated_after_relaxation(program):
    soft = {"key": "team", "value": "a", "effect": "PreferNoSchedule"}
    answer = ks.schedule(world(node_pool("soft", requirements=[BOTH], taints=[soft]), pod("p")), program=program)
    assert claims_of(answer) == [("soft", ["m5.large", "m5.xlarge"], ["default/p"])]


def test_an_existing_node_takes_what_fits_and_counts_against_the_limit(program):
    """A running m5.xlarge with 2 of its 3920m used takes one more 1-cpu pod; the next needs a new
    NodeClaim, and the node's 4 cpu leave 2 of the pool's limit of 6: only m5.large fits under it."""
    labels = {
        "karpenter.sh/nodepool": "default",
        "node.kubernetes.io/instance-type": "m5.xlarge",
        "topology.kubernetes.io/zone": "us-east-1a",
        "karpenter.sh/capacity-type": "on-demand",
        "kubernetes.io/hostname": "node-a",
        "karpenter.sh/registered": "true",
        "karpenter.sh/initialized": "true",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
    }
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-a", "labels": labels},
        "spec": {"providerID": "aws:///us-east-1a/i-0a"},
        "status": {
            "capacity": {"cpu": "4", "memory": "15155Mi", "pods": "58"},
            "allocatable": {"cpu": "3920m", "memory": "14162Mi", "pods": "58"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    running = {**pod("running", "2"), "status": {"phase": "Running"}}
    running["spec"]["nodeName"] = "node-a"
    answer = ks.schedule(
        world(node_pool("default", requirements=[BOTH], limits={"cpu": "6"}), node, running, pod("p0", "1"), pod("p1", "1")),
        program=program,
    )
    assert answer["existingNodes"] == [{"name": "node-a", "pods": ["default/p0"]}]
    assert claims_of(answer) == [("default", ["m5.large"], ["default/p1"])]


def test_a_price_overlay_reorders_the_options_only_with_its_gate(program):
    overlay = {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": "cheap-xlarge"},
        "spec": {"requirements": [requirement("node.kubernetes.io/instance-type", "In", "m5.xlarge")], "priceAdjustment": "-90%"},
    }
    objects = (node_pool("default", requirements=[BOTH]), overlay, pod("p"))
    off = ks.schedule(world(*objects), program=program)
    assert [o["name"] for o in off["nodeClaims"][0]["instanceTypes"]] == ["m5.large", "m5.xlarge"]
    assert off["nodeOverlays"] == [
        {
            "name": "cheap-xlarge",
            "validationSucceeded": False,
            "reason": "NotEvaluated",
            "message": "the NodeOverlay feature gate is off",
        }
    ]
    on = ks.schedule(world(*objects, flags=["--feature-gates=NodeOverlay=true"]), program=program)
    (claim,) = on["nodeClaims"]
    assert [o["name"] for o in claim["instanceTypes"]] == ["m5.xlarge", "m5.large"]
    assert claim["instanceTypes"][0]["price"] == pytest.approx(0.0192)
    assert claim["annotations"]["karpenter.sh/price-overlay-applied"] == "true"
    assert claim["launch"]["cheapest"]["instanceType"] == "m5.xlarge"
    assert on["nodeOverlays"] == [{"name": "cheap-xlarge", "validationSucceeded": True}]


def test_a_full_reservation_defers_the_next_pod_rather_than_falling_back(program):
    """The provisioner schedules with reserved-capacity fallback disabled: once this pass has taken
    the one reserved m5.large, a second pod that could use it is deferred, not sent to on-demand."""
    reserved = {
        **M5_LARGE,
        "offerings": [
            *M5_LARGE["offerings"],
            {
                "zone": "us-east-1a",
                "capacityType": "reserved",
                "price": 0.096 / 10_000_000,
                "reservationId": "cr-1",
                "reservationCapacity": 1,
            },
        ],
    }
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "db"}}}
            ]
        }
    }
    pods = [pod(f"db{i}", "500m", labels={"app": "db"}, affinity=anti) for i in range(2)]
    answer = ks.schedule(world(node_pool("default"), *pods, types=[reserved]), program=program)
    (claim,) = answer["nodeClaims"]
    assert claim["pods"] == ["default/db0"]
    assert {"key": "karpenter.k8s.aws/capacity-reservation-id", "operator": "In", "values": ["cr-1"]} in claim["requirements"]
    assert claim["launch"]["capacityType"] == "reserved"
    assert claim["launch"]["cheapest"]["reservationId"] == "cr-1"
    assert answer["unschedulable"] == [
        {
            "pod": "default/db1",
            "deferred": True,
            "error": "one or more instance types with compatible reserved offerings are available, but could not be reserved",
        }
    ]


# --- instance types from EC2's answers, through the AWS provider's own code ----------------------------

TYPES = ["m5.large", "m5.xlarge"]
SUBNETS = [{"id": f"subnet-{i}", "zone": zone, "zoneID": f"use1-az{i + 1}"} for i, zone in enumerate(ZONES)]


def node_class(**spec):
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": "default"},
        "spec": {
            "role": "KarpenterNodeRole",
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            **spec,
        },
        "status": {"subnets": SUBNETS},
    }


@pytest.fixture(scope="module")
def ec2_answers():
    """What the embedded AWS (moto) answers for two types, as boto3 returns it."""
    import boto3
    import moto

    with moto.mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-1")
        return {
            "region": "us-east-1",
            "instanceTypes": ec2.describe_instance_types(InstanceTypes=TYPES)["InstanceTypes"],
            "instanceTypeOfferings": ec2.describe_instance_type_offerings(
                LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": TYPES}]
            )["InstanceTypeOfferings"],
            "spotPriceHistory": ec2.describe_spot_price_history(InstanceTypes=TYPES)["SpotPriceHistory"],
        }


def test_the_aws_provider_computes_the_allocatable_of_the_hand_made_catalogue(program, ec2_answers):
    """moto's m5.large and m5.xlarge through Karpenter's NewInstanceType (AL2023, default kubelet):
    the capacity and overhead the catalogue above was written with, zone ids from the subnets, the
    static on-demand price and moto's spot price."""
    answer = ks.schedule(
        {"objects": [node_class(), node_pool("default")], "ec2": ec2_answers, "reportInstanceTypes": True}, program=program
    )
    (pool,) = answer["nodePools"]
    resolved = {it["name"]: it for it in pool["instanceTypes"]}
    assert sorted(resolved) == TYPES
    for made in (M5_LARGE, M5_XLARGE):
        it = resolved[made["name"]]
        # The AWS provider lists every extended resource it knows, at zero where the type has none.
        assert {k: v for k, v in it["capacity"].items() if v != "0"} == made["capacity"]
        assert it["overhead"]["kubeReserved"] == {**made["overhead"]["kubeReserved"], "ephemeral-storage": "1Gi"}
        # 10% of 20Gi, which Kubernetes' quantity prints in decimal exponent form.
        assert it["overhead"]["evictionThreshold"] == {"memory": "100Mi", "ephemeral-storage": "2.147483648e+09"}
        assert it["overhead"]["systemReserved"] == {}
    allocatable = {k: v for k, v in resolved["m5.large"]["allocatable"].items() if v != "0"}
    assert allocatable == {
        "cpu": "1930m",
        "memory": "6903Mi",
        "pods": "29",
        "ephemeral-storage": "17Gi",
        "vpc.amazonaws.com/pod-eni": "9",
    }
    large = resolved["m5.large"]
    available = {(o["zone"], o["zoneId"], o["capacityType"], o["price"]) for o in large["offerings"] if o["available"]}
    assert available == {
        *((s["zone"], s["zoneID"], "on-demand", 0.096) for s in SUBNETS),
        *((s["zone"], s["zoneID"], "spot", 0.00001) for s in SUBNETS),
    }
    # Every zone the type is offered in gets offerings; those without a subnet of the class are unavailable.
    assert {o["zone"] for o in large["offerings"] if not o["available"]} == {"us-east-1d", "us-east-1f"}
    requirements = {r["key"]: r for r in large["requirements"]}
    assert requirements["karpenter.k8s.aws/instance-family"]["values"] == ["m5"]
    assert requirements["topology.k8s.aws/zone-id"]["values"] == ["use1-az1", "use1-az2", "use1-az3"]
    assert requirements["karpenter.k8s.aws/instance-gpu-count"]["operator"] == "DoesNotExist"
    assert answer["pricing"] == {"onDemand": "static", "spot": "spotPriceHistory"}


def test_ec2_answers_and_the_hand_made_catalogue_schedule_alike(program, ec2_answers):
    pods = [pod(f"p{i}", "1", "256Mi") for i in range(3)]
    on_demand = requirement("karpenter.sh/capacity-type", "In", "on-demand")
    from_ec2 = ks.schedule(
        {"objects": [node_class(), node_pool("default", requirements=[on_demand]), *pods], "ec2": ec2_answers}, program=program
    )
    hand_made = ks.schedule(world(node_pool("default", requirements=[on_demand]), *pods), program=program)
    assert claims_of(from_ec2) == claims_of(hand_made) == [("default", ["m5.xlarge"], ["default/p0", "default/p1", "default/p2"])]


def test_kubelet_max_pods_and_reservations_reach_the_allocatable(program, ec2_answers):
    kubelet = {"maxPods": 20, "systemReserved": {"cpu": "100m", "memory": "100Mi"}, "evictionHard": {"memory.available": "5%"}}
    answer = ks.schedule(
        {"objects": [node_class(kubelet=kubelet), node_pool("default")], "ec2": ec2_answers, "reportInstanceTypes": True},
        program=program,
    )
    large = next(it for it in answer["nodePools"][0]["instanceTypes"] if it["name"] == "m5.large")
    assert large["capacity"]["pods"] == "20"
    # AL2023 keeps kube-reserved memory on the ENI-limited pod count (29), whatever maxPods says.
    assert large["overhead"]["kubeReserved"]["memory"] == "574Mi"
    assert large["overhead"]["systemReserved"] == {"cpu": "100m", "memory": "100Mi"}


_QUANTITY = st.sampled_from(["0", "1", "100m", "1Gi", "-1", "1e3", "abc", ""])
_POD_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "nodeSelector": st.dictionaries(
            st.sampled_from(["kubernetes.io/arch", "karpenter.sh/capacity-type", "team", "karpenter.sh/nodepool"]),
            st.sampled_from(["amd64", "spot", "a", ""]),
            max_size=2,
        ),
        "tolerations": st.lists(
            st.fixed_dictionaries({"key": st.sampled_from(["k", ""]), "operator": st.sampled_from(["Exists", "Equal"])}),
            max_size=2,
        ),
        "topologySpreadConstraints": st.lists(
            st.fixed_dictionaries(
                {
                    "maxSkew": st.integers(-1, 3),
                    "topologyKey": st.sampled_from(["topology.kubernetes.io/zone", "kubernetes.io/hostname", "x"]),
                    "whenUnsatisfiable": st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
                }
            ),
            max_size=2,
        ),
    },
)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    pods=st.lists(st.tuples(_QUANTITY, _QUANTITY, _POD_SPEC), max_size=4),
    limits=st.none() | st.dictionaries(st.sampled_from(["cpu", "memory", "nodes"]), _QUANTITY, max_size=2),
    weight=st.none() | st.integers(-5, 200),
)
def test_any_world_is_answered_or_refused_in_one_line(program, pods, limits, weight):
    """Hostile worlds (bad quantities, odd selectors, skews, limits, weights): an answer, or exit 2
    with one line, never a traceback."""
    objects = [node_pool("default", requirements=[BOTH], limits=limits, weight=weight)]
    objects += [pod(f"p{i}", cpu, memory, **spec) for i, (cpu, memory, spec) in enumerate(pods)]
    try:
        answer = ks.schedule(world(*objects), program=program)
    except ks.SchedulerRefused as refused:
        assert refused.code == 2 and "\n" not in refused.message, refused.message
    else:
        placed = [p for c in answer["nodeClaims"] for p in c["pods"]] + [u["pod"] for u in answer["unschedulable"]]
        assert sorted(placed) == sorted(f"default/p{i}" for i in range(len(pods)))
