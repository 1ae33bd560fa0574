"""The differential test's own parts, without Karpenter: seeded worlds repeat, and the comparison sees differences."""

from __future__ import annotations

from support.sim_diff import compare, ours, theirs
from support.sim_disagreements import Tally, judge
from support.sim_worlds import generate

from karpenter_gitops.karpenter.scheduling import simulate


def test_a_seed_is_a_reproduction():
    assert generate(7).world.to_json() == generate(7).world.to_json()
    assert generate(7).world.to_json() != generate(8).world.to_json()


def test_our_forecast_read_as_karpenters_answer_agrees_and_a_changed_one_does_not():
    """Our outcome turned into Karpenter's answer shape compares equal; moving a pod, repricing a launch
    or dropping a NodeClaim each shows as a difference no entry explains."""
    case = next(c for c in map(generate, range(50)) if len(ours(c.world).claims) >= 2)
    mine = ours(case.world)
    forecast = simulate(case.world, max_rounds=1)
    nodes = [n for p in forecast.pools for n in p.nodes]
    answer = {
        "nodeClaims": [{"nodePool": n.node_pool, "pods": list(n.pods), "instanceTypes": [{"name": o} for o in n.options],
                        "launch": {"capacityType": n.launch.capacity_type, "instanceTypes": list(n.launch.instance_types),
                                   "offerings": [c.to_json() for c in n.launch.candidates],
                                   "cheapest": n.launch.cheapest.to_json() if n.launch.cheapest else None,
                                   **({"error": n.launch.error} if n.launch.error else {})}} for n in nodes],
        "unschedulable": [{"pod": uid} for u in forecast.unschedulable for uid in u.pods]
        + [{"pod": uid, "ignored": True} for u in forecast.ignored for uid in u.pods],
    }  # fmt: skip
    assert compare(mine, theirs(answer, case.world)) == []
    dropped = {**answer, "nodeClaims": answer["nodeClaims"][1:]}
    differences = compare(mine, theirs(dropped, case.world))
    assert any(line.startswith("NodeClaim only in ours") for line in differences)
    assert any(line.startswith("NodeClaims per pool") for line in differences)
    verdict = judge("changed", case.world, mine, theirs(dropped, case.world), differences)
    assert not verdict.explained and "NodeClaim only in ours" in verdict.explain()
    tally = Tally()
    tally.add(case.world, verdict)
    assert "1 differ undocumented" in tally.table()[0]


def test_a_launch_only_karpenters_fails_is_the_daemon_orders_and_nothing_else_is():
    """The daemon-overhead order explains a NodeClaim that Karpenter's launch fails (minValues) and ours launches,
    pool, pods and options alike; a different pod set, or a world without DaemonSets, is not explained."""
    from dataclasses import replace

    case = next(c for c in map(generate, range(60)) if c.world.daemon_sets and ours(c.world).claims)
    mine = ours(case.world)
    failed = tuple(replace(c, capacity_type=None, launch_types=(), cheapest=None, price_range=(0.0, 0.0)) for c in mine.claims)
    karpenter = replace(mine, claims=failed)
    verdict = judge("launch failed", case.world, mine, karpenter, compare(mine, karpenter))
    assert verdict.explained and verdict.entries == ("daemon-overhead-order",)
    moved = replace(karpenter, claims=(replace(failed[0], workloads=(("default/Deployment/other", 1),)), *failed[1:]))
    assert not judge("moved", case.world, mine, moved, compare(mine, moved)).explained
    no_daemons = replace(case.world, daemon_sets=())
    assert not judge("no daemons", no_daemons, mine, karpenter, compare(mine, karpenter)).explained
