"""The provisioning simulation on small worlds, each worked by hand (allocatable per test_nodes.py).

Allocatable (AL2023 defaults) of the types these tests rely on:
  c6g.large  1930m, 3055Mi   (4096 − 64 = 4032; − ceil(302.4) = 3729Mi; − 574 − 100)   $0.068
  c5.large   1930m, 3114Mi   (4096 − ceil(307.2) = 3788Mi; − 574 − 100)                $0.085
  m5.large   1930m, 6903Mi                                                            $0.096
  m6g.xlarge 3920m, 14103Mi  (16384 − 64 = 16320; − 1224 = 15096; − 893 − 100)        $0.154
  m5.xlarge  3920m, 14162Mi                                                           $0.192
  m5.2xlarge 7910m (8000 − 60 − 10 − 10 − 10), 58 pods                                 $0.384
  m5.4xlarge 15890m (16000 − 60 − 10 − 10 − 30), 234 pods                              $0.768
"""

from __future__ import annotations

from support.simulation import ZONES, on_demand, pods, pool, template, tolerate, types, world

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirement, Requirements, ValueSet
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.forecast import simulate
from karpenter_gitops.karpenter.scheduling.matching import LabelSelector, Taint
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm, Container, DaemonSet, HostPort, PodTemplate, Spread, replicas
from karpenter_gitops.karpenter.scheduling.scheduler import BEST_EFFORT, Options
from karpenter_gitops.karpenter.scheduling.world import NodePoolSpec

M5 = ("m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
APP = LabelSelector((("app", "web"),))
NODE_CLAIM_REQUIREMENTS = (
    "karpenter.k8s.aws/ec2nodeclass In [default], karpenter.sh/capacity-type In [on-demand], "
    "karpenter.sh/initialized In [true], karpenter.sh/nodepool In [default], karpenter.sh/registered In [true]"
)


def nodes(forecast):
    """(NodePool, instance type, capacity type, zones, pod count) per NodeClaim, sorted."""
    return sorted(
        (n.node_pool, n.instance_type, n.launch.capacity_type, n.zones, len(n.pods)) for p in forecast.pools for n in p.nodes
    )


def unschedulable(forecast):
    return {pod: u.message for u in forecast.unschedulable for pod in u.pods}


def test_one_pod_gets_the_cheapest_type_that_fits():
    forecast = simulate(world(pods(1)))
    # every type fits 1 cpu / 1Gi; g5 and metal are exotic; the cheapest on-demand offering is c6g.large in any zone
    assert nodes(forecast) == [("default", "c6g.large", "on-demand", ZONES, 1)]
    assert forecast.hourly == (0.068, 0.068)
    assert round(forecast.monthly[0], 2) == 49.64  # 0.068 × 730


def test_a_nodeclaim_packs_until_its_largest_type_is_full():
    # the largest m5 (m5.4xlarge, 15890m) takes all ten 1-cpu pods; the cheapest type holding 10 cpu is m5.4xlarge
    assert nodes(simulate(world(pods(10), instance_types_=types(M5)))) == [("default", "m5.4xlarge", "on-demand", ZONES, 10)]
    # without it m5.2xlarge (7910m) is the largest: 7 pods, then a second claim whose 3 pods fit m5.xlarge (3920m)
    forecast = simulate(world(pods(10), instance_types_=types(M5[:3])))
    assert nodes(forecast) == [("default", "m5.2xlarge", "on-demand", ZONES, 7), ("default", "m5.xlarge", "on-demand", ZONES, 3)]
    assert forecast.hourly[0] == 0.384 + 0.192


def test_nodepools_by_weight_then_name_descending():
    heavy = pool("heavy", *on_demand(), weight=50)
    light = pool("light", *on_demand(), weight=10)
    assert {n[0] for n in nodes(simulate(world(pods(2), light, heavy)))} == {"heavy"}
    alpha, zeta = pool("alpha", *on_demand()), pool("zeta", *on_demand())
    assert {n[0] for n in nodes(simulate(world(pods(2), alpha, zeta)))} == {"zeta"}


def test_taints_block_pods_that_do_not_tolerate_them():
    tainted = pool("gpu", *on_demand(), taints=[Taint("dedicated", "gpu", "NoSchedule")])
    forecast = simulate(world(pods(1), tainted))
    assert unschedulable(forecast) == {"default/web-0": "did not tolerate taint (taint=dedicated=gpu:NoSchedule)"}
    assert forecast.unschedulable[0].reasons[0].kind == "taints" and forecast.unschedulable[0].reasons[0].node_pool == "gpu"
    assert len(nodes(simulate(world(pods(1, tolerations=(tolerate("dedicated", "gpu"),)), tainted)))) == 1


def test_a_prefer_no_schedule_taint_is_tolerated_after_relaxation():
    soft = pool("soft", *on_demand(), taints=[Taint("spot-only", "", "PreferNoSchedule")])
    assert len(nodes(simulate(world(pods(1), soft)))) == 1


def test_requirements_that_no_nodepool_allows():
    amd64 = pool("default", *on_demand(Requirement(labels.ARCH, "In", ("amd64",))))
    forecast = simulate(world(pods(1, node_selector={labels.ARCH: "arm64"}), amd64))
    assert unschedulable(forecast)["default/web-0"] == (
        "incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]"
    )
    custom = simulate(world(pods(1, node_selector={"team": "a"})))
    assert unschedulable(custom)["default/web-0"] == 'incompatible requirements, label "team" does not have known values'


def test_a_pod_too_big_for_every_type():
    forecast = simulate(world(pods(1, cpu="100")))
    assert unschedulable(forecast)["default/web-0"] == (
        f'no instance type has enough resources, requirements={NODE_CLAIM_REQUIREMENTS}, resources={{"cpu":"100","memory":"1Gi","pods":"1"}}'
    )
    assert forecast.unschedulable[0].reasons[0].kind == "resources"


def test_nodepool_limits_filter_by_capacity_and_subtract_the_largest_option():
    # limit 4 cpu: m5.large (2) and m5.xlarge (4) fit it; the first claim subtracts the larger, 4 → 0 left
    # the claim packs 3 pods (m5.xlarge: 3920m); the 4th finds no type within 0 cpu
    limited = pool("default", *on_demand(), limits={"cpu": "4"})
    forecast = simulate(world(pods(5), limited, instance_types_=types(M5)))
    assert nodes(forecast) == [("default", "m5.xlarge", "on-demand", ZONES, 3)]
    assert set(unschedulable(forecast).values()) == {"all available instance types exceed limits for nodepool (NodePool=default)"}


def test_zone_spread_puts_one_claim_in_each_zone():
    # maxSkew 1: zones a, b, c get the first three pods (ties to the smallest name), then the claims fill evenly;
    # two 1-cpu pods need 2000m: the cheapest is m6g.xlarge (3920m)
    spread = (Spread(labels.ZONE, 1, selector=APP),)
    forecast = simulate(world(pods(6, spreads=spread)))
    assert nodes(forecast) == [("default", "m6g.xlarge", "on-demand", (zone,), 2) for zone in ZONES]


def test_hostname_anti_affinity_gives_each_pod_its_own_node():
    forecast = simulate(world(pods(3, anti_affinity=(AffinityTerm("kubernetes.io/hostname", APP),))))
    assert nodes(forecast) == [("default", "c6g.large", "on-demand", ZONES, 1)] * 3


def test_a_hostname_spread_caps_pods_per_node():
    forecast = simulate(world(pods(5, cpu="100m", spreads=(Spread("kubernetes.io/hostname", 2, selector=APP),))))
    assert sorted(n[4] for n in nodes(forecast)) == [1, 2, 2]


def test_daemonset_overhead_counts_on_every_node():
    # a 1-cpu daemon on every node: 1000m + 1000m > c6g.large's 1930m; the cheapest with 2000m is m6g.xlarge
    daemon = DaemonSet(
        "agent",
        PodTemplate(
            "kube-system",
            "DaemonSet/agent",
            template().source,
            {"app": "agent"},
            (Container("agent", {"cpu": "1", "memory": "512Mi"}),),
        ),
    )
    forecast = simulate(world(pods(1), daemon_sets=[daemon]))
    assert nodes(forecast) == [("default", "m6g.xlarge", "on-demand", ZONES, 1)]
    assert resources.show(forecast.pools[0].nodes[0].daemon_overhead) == '{"cpu":"1","memory":"512Mi","pods":"1"}'


def test_min_values_the_types_cannot_meet_leave_the_pool_unusable():
    # instance-family In [m5, c5] with minValues 3: two families can never make three
    families = ValueSet(False, frozenset({"m5", "c5"}), min_values=3)
    pool_ = NodePoolSpec("default", "default", Requirements.of(on_demand()) & Requirements([(labels.FAMILY, families)]))
    forecast = simulate(world(pods(1), pool_))
    assert forecast.pools[0].unusable == (
        "skipping, nodepool requirements filtered out all instance types "
        "(minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family]))"
    )
    assert unschedulable(forecast)["default/web-0"] == "nodepool requirements filtered out all available instance types"
    # BestEffort lowers minValues to what the types give (2 families) instead
    assert len(nodes(simulate(world(pods(1), pool_), Options(min_values_policy=BEST_EFFORT)))) == 1


def test_preferences_relax_one_at_a_time():
    nowhere = (Requirement(labels.ZONE, "In", ("nowhere-1a",)),)
    preferred = simulate(world(pods(1, preferred_terms=((10, nowhere),))))
    assert len(nodes(preferred)) == 1
    # two required terms: the first (no such zone) is dropped, the second (amd64) holds: the cheapest amd64 type is
    # c5.large ($0.085; 4096 − ceil(307.2) = 3788Mi − 574 − 100 = 3114Mi ≥ 1Gi)
    amd64 = (Requirement(labels.ARCH, "In", ("amd64",)),)
    relaxed = simulate(world(pods(1, required_terms=(nowhere, amd64))))
    assert nodes(relaxed) == [("default", "c5.large", "on-demand", ZONES, 1)]
    # a single required term is never dropped
    assert "default/web-0" in unschedulable(simulate(world(pods(1, required_terms=(nowhere,)))))


def test_spot_is_chosen_whenever_a_spot_offering_survives():
    both = pool("default", Requirement(labels.CAPACITY_TYPE, "In", ("on-demand", "spot")))
    # spot prices unknown: priced at on-demand (Karpenter before its first spot update); spot wins, within the cheapest OD
    assert nodes(simulate(world(pods(1), both))) == [("default", "c6g.large", "spot", ZONES, 1)]
    # spot prices known: the candidates are every spot offering no dearer than the cheapest on-demand one ($0.068)
    spot = {("c6g.large", "us-west-2a"): 0.02, ("m5.large", "us-west-2b"): 0.05, ("m5.xlarge", "us-west-2c"): 0.09}
    forecast = simulate(world(pods(1), both, instance_types_=types(spot=spot)))
    node = forecast.pools[0].nodes[0]
    assert (node.launch.capacity_type, node.hourly) == ("spot", (0.02, 0.05))
    assert [(c.instance_type, c.zone) for c in node.launch.candidates] == [
        ("c6g.large", "us-west-2a"),
        ("m5.large", "us-west-2b"),
    ]


def test_the_least_filled_nodeclaim_takes_the_next_pod():
    # two 4-cpu pods that repel each other make claims A and B (one pod each); then three 1-cpu pods:
    # the 1st goes to A (equal counts keep their order), the 2nd to B (1 pod < 2), the 3rd to B again
    # (equal counts, and B now comes first) — Karpenter re-sorts its claims by pod count before every pod
    big = pods(2, "big", cpu="4", anti_affinity=(AffinityTerm("kubernetes.io/hostname", LabelSelector((("app", "big"),))),))
    small = pods(3, "small", cpu="1")
    # (one Solve: the next round packs the same pods onto the launched nodes first-fit, by name)
    forecast = simulate(world([*big, *small], instance_types_=types(["m5.4xlarge"])), max_rounds=1)
    placements = sorted(sorted(n.pods) for p in forecast.pools for n in p.nodes)
    assert placements == [["default/big-0", "default/small-0"], ["default/big-1", "default/small-1", "default/small-2"]]


def test_host_ports_keep_pods_apart():
    ported = PodTemplate(
        "default",
        "Deployment/edge",
        template().source,
        {"app": "edge"},
        (Container("edge", {"cpu": "100m"}, host_ports=(HostPort(80),)),),
    )
    forecast = simulate(world(replicas(ported, 2)))
    assert [len(n.pods) for p in forecast.pools for n in p.nodes] == [1, 1]


def test_required_pod_affinity_follows_the_first_pod_into_its_zone():
    together = (AffinityTerm(labels.ZONE, APP),)
    forecast = simulate(world(pods(4, cpu="1", affinity=together)))
    assert {n.zones for p in forecast.pools for n in p.nodes} == {
        ("us-west-2a",)
    }  # bootstrapped in the first zone, then followed


def test_a_spot_only_pool_cannot_take_an_on_demand_pod():
    spot_only = pool("spot", Requirement(labels.CAPACITY_TYPE, "In", ("spot",)))
    forecast = simulate(world(pods(1, node_selector={labels.CAPACITY_TYPE: "on-demand"}), spot_only))
    assert unschedulable(forecast)["default/web-0"] == (
        "incompatible requirements, key karpenter.sh/capacity-type, karpenter.sh/capacity-type In [on-demand] not in "
        "karpenter.sh/capacity-type In [spot]"
    )
