"""Karpenter's provisioning rounds: Solve, launch, Solve again with the launched NodeClaims in flight, to the fixpoint.

Allocatable of the types relied on (tests/karpenter/scheduling/test_scheduler.py): m5.large 2 cpu capacity,
m5.xlarge 4, m5.2xlarge 8, m5.4xlarge 16.
"""

from __future__ import annotations

from support.sim_worlds import od_spot_split
from support.simulation import on_demand, pods, pool, tolerate, types, world

from karpenter_gitops.core import labels
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.existing import ExistingNode, StateNode, daemon_requests
from karpenter_gitops.karpenter.scheduling.forecast import simulate
from karpenter_gitops.karpenter.scheduling.launch import ICE, Launch
from karpenter_gitops.karpenter.scheduling.matching import HOSTNAME, LabelSelector, Taint
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm, DaemonSet
from karpenter_gitops.karpenter.scheduling.preferences import PodState
from karpenter_gitops.karpenter.scheduling.rounds import in_flight, launched, provision
from karpenter_gitops.karpenter.scheduling.scheduler import Options, Scheduler

M5 = ("m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
ONE_PER_NODE = (AffinityTerm(HOSTNAME, LabelSelector((("app", "web"),))),)


def limited(cpu: str = "20", **pool_fields):
    """Three 1-cpu pods, one per node, on a pool limited to ``cpu``: the first NodeClaim holds 16 cpu (its
    largest option, m5.4xlarge), the second the 4 left (m5.xlarge), the third finds no type within 0."""
    return world(pods(3, anti_affinity=ONE_PER_NODE), pool("default", *on_demand(), limits={"cpu": cpu}, **pool_fields),
                 instance_types_=types(M5))  # fmt: skip


def placed(forecast):
    return sorted((n.round, n.name, n.instance_type, len(n.pods)) for p in forecast.pools for n in p.nodes)


def test_one_solve_turns_a_pod_away_that_the_next_round_places():
    once = simulate(limited(), max_rounds=1)
    assert [u.message for u in once.unschedulable] == [
        "all available instance types exceed limits for nodepool (NodePool=default)"
    ]
    forecast = simulate(limited())
    assert forecast.unschedulable == ()
    # both launch as m5.large (2 cpu each), so 16 cpu are left: the third pod gets a NodeClaim in round 2
    assert placed(forecast) == [(1, "r01-default-0001", "m5.large", 1), (1, "r01-default-0002", "m5.large", 1),
                                (2, "r02-default-0001", "m5.large", 1)]  # fmt: skip
    assert [(r.number, dict(r.node_claims), r.pending) for r in forecast.rounds] == [
        (1, {"default": 2}, 1), (2, {"default": 1}, 0), (3, {}, 0)]  # fmt: skip
    assert forecast.settled
    assert forecast.to_json()["rounds"][0] == {"round": 1, "nodeClaims": {"default": 2}, "podsPending": 1}


def test_a_pod_is_nominated_to_the_nodeclaim_of_its_first_placement():
    # Karpenter's Nominated event is deduplicated per pod, so the one a pod shows names its first nomination:
    # the third pod, turned away in round 1, is nominated in round 2 to the NodeClaim made for it there
    forecast = simulate(limited())
    nominated = sorted((n.name, n.nominated) for p in forecast.pools for n in p.nodes)
    assert nominated == [("r01-default-0001", ("default/web-0",)), ("r01-default-0002", ("default/web-1",)),
                         ("r02-default-0001", ("default/web-2",))]  # fmt: skip
    assert forecast.to_json()["nodePools"][0]["nodeClaims"][2]["nominated"] == ["default/web-2"]


def test_a_pod_keeps_its_first_nomination_when_a_later_solve_packs_it_elsewhere():
    # od-spot-split takes three rounds; each Solve packs the pods afresh onto the in-flight NodeClaims, so the
    # last Solve's pods of a NodeClaim are not the ones first nominated to it, while both hold all ten once
    forecast = simulate(od_spot_split(1).world)
    nodes = {n.name: n for p in forecast.pools for n in p.nodes}
    assert nodes["r01-node-spot-0001"].nominated == ("default/workload-split-0",)
    assert nodes["r01-node-spot-0001"].pods == ("default/workload-split-1",)
    assert sorted(uid for n in nodes.values() for uid in n.nominated) == sorted(uid for n in nodes.values() for uid in n.pods)
    assert len({uid for n in nodes.values() for uid in n.nominated}) == 10


def test_the_limits_are_charged_at_the_launched_capacity_and_a_pod_that_never_fits_says_why():
    # 5 cpu: the first NodeClaim launches as m5.large (2 cpu), the next may hold up to 3 (m5.large again), then 1 is
    # left, which no type fits: the third pod stays pending whatever the rounds, with Karpenter's reason
    forecast = simulate(limited("5"))
    assert [len(n.pods) for p in forecast.pools for n in p.nodes] == [1, 1]
    assert [u.message for u in forecast.unschedulable] == [
        "all available instance types exceed limits for nodepool (NodePool=default)"
    ]
    assert forecast.rounds[-1].node_claims == {} and forecast.settled


def test_the_next_round_fills_the_launched_nodes_first():
    # one 8-cpu pod makes a NodeClaim that launches as m5.2xlarge (7910m allocatable); six 1-cpu pods of a
    # second round would need a NodeClaim of their own, but the in-flight node takes them all
    run = provision(world([*pods(1, "big", cpu="6"), *pods(1, "small", cpu="1")], instance_types_=types(M5)))
    assert run.rounds == 2 and run.settled
    assert [item.launch.cheapest.instance_type for item in run.launched] == ["m5.2xlarge"]
    assert [sorted(p.uid for p in node.pods) for node in run.last.existing] == [["default/big-0", "default/small-0"]]
    assert run.last.node_claims == ()


def test_the_bound_stops_the_loop_and_says_so():
    forecast = simulate(limited(), max_rounds=2)
    assert forecast.settled is False and len(forecast.rounds) == 2
    assert sum(len(n.pods) for p in forecast.pools for n in p.nodes) == 3  # the last Solve's NodeClaim keeps its pod


def test_an_in_flight_node_carries_its_type_zone_capacity_type_and_pool():
    solution = Scheduler(limited()).solve(limited().pods)
    item = launched(solution.node_claims[0], Options(), 1, "r01-default-0001")
    node = item.node
    assert node is not None and node.name == "r01-default-0001" and node.node_pool == "default"
    assert node.labels[labels.INSTANCE_TYPE] == "m5.large" and node.labels[labels.CAPACITY_TYPE] == "on-demand"
    assert node.labels[labels.ZONE] == item.launch.cheapest.zone
    assert node.labels["karpenter.sh/nodepool"] == "default" and node.labels[labels.TENANCY] == "default"
    assert node.capacity[resources.CPU] == 2000 and node.allocatable[resources.CPU] == 1930
    assert all(value for value in node.capacity.values())  # zero resources are left out, as the provider leaves them


def test_a_launch_that_fails_makes_no_node():
    claim = Scheduler(limited()).solve(limited().pods).node_claims[0]
    assert in_flight("r01-default-0001", claim, Launch(None, error=ICE)) is None


def test_an_existing_node_takes_only_what_tolerates_fits_and_matches_it():
    node = StateNode("n1", "default", {labels.ZONE: "us-west-2a", "team": "a"}, (Taint("dedicated", "x", "NoSchedule"),),
                        resources.vector({"cpu": "2", "memory": "8Gi", "pods": "29"}),
                        resources.vector({"cpu": "1930m", "memory": "6Gi", "pods": "29"}))  # fmt: skip
    daemon = DaemonSet("agent", pods(1, "agent", cpu="500m", tolerations=(tolerate("dedicated", "x"),))[0].template)
    assert daemon_requests(node, (daemon,))["cpu"] == 500  # it tolerates the taint: it lands there
    existing = ExistingNode(node, (daemon,))
    scheduler = Scheduler(world(()))
    fitting = pods(1, "fit", cpu="1", tolerations=(tolerate("dedicated", "x"),))[0]
    untolerated = pods(1, "plain", cpu="100m")[0]
    too_big = pods(1, "big", cpu="1500m", tolerations=(tolerate("dedicated", "x"),))[0]
    elsewhere = pods(1, "b", cpu="100m", tolerations=(tolerate("dedicated", "x"),), node_selector={"team": "b"})[0]
    undefined = pods(1, "c", cpu="100m", tolerations=(tolerate("dedicated", "x"),), node_selector={"tier": "web"})[0]

    def data(pod):
        return scheduler.pod_data(pod.template, PodState.initial(pod.template, Options().preference_policy))

    assert not existing.never_takes(fitting, data(fitting))
    assert existing.never_takes(untolerated, data(untolerated))
    assert existing.never_takes(too_big, data(too_big))  # 1930m − 500m of daemons leaves 1430m
    assert existing.never_takes(elsewhere, data(elsewhere))
    assert existing.never_takes(undefined, data(undefined))  # a label the node lacks is never there


def test_blueprint_od_spot_split_runs_all_ten_pods_over_three_rounds():
    """aws-samples/karpenter-blueprints' od-spot-split: 10 pods of 512m spread over five ``capacity-spread``
    domains, one on-demand pool (domain 1) and one spot pool (2–5), each limited to 1000 cpu / 500Gi. One
    Solve places 4 and turns 6 away ("all available instance types exceed limits"): every new NodeClaim
    holds its largest option's memory against the 500Gi. Karpenter launches those four as one small type
    each and places the rest in two more rounds, as its own scheduler does (tests/real/test_simulation_differential.py)."""
    world_ = od_spot_split(1).world
    once = simulate(world_, max_rounds=1)
    assert sum(len(u.pods) for u in once.unschedulable) == 6
    assert all("all available instance types exceed limits" in u.message for u in once.unschedulable)
    forecast = simulate(world_)
    assert forecast.unschedulable == () and sum(p.pods for p in forecast.pools) == 10
    assert forecast.settled and [r.pending for r in forecast.rounds] == [6, 2, 0, 0]
    assert {p.node_pool: p.pods for p in forecast.pools} == {"node-od": 2, "node-spot": 8}
    assert {n.launch.capacity_type for p in forecast.pools for n in p.nodes if p.node_pool == "node-spot"} == {"spot"}
