"""Our provisioning simulation against Karpenter's own scheduler (v1.15.0, the karpenter-scheduler
`make tools` builds), world by world: generated worlds (tests/support/sim_worlds.py, one per seed) and the
demo's NodePools with typical workloads, each fed to both on the same instance types, offerings and
prices. Compared: which pods stay pending, NodeClaims per NodePool, each NodeClaim's workloads,
instance-type options, launch capacity type, launched types, cheapest offering and price range,
and the total $/hour (tests/support/sim_diff.py). A difference is a bug of ours unless an entry of
tests/support/sim_disagreements.py explains it.

More seeds without make: ``KARPENTER_GITOPS_SIMULATION_SEEDS=200`` (seeds 0–199),
``=1000-1099`` or ``=7,42``. The agreement table is printed at the end of the run.

The provisioning rounds are compared the same way on 200 generated worlds, the demo stack and
karpenter-blueprints' od-spot-split: Karpenter's provisioner passes until nothing changes (the
program's ``rounds``), each pass's NodeClaims launched and fed back in flight, beside our rounds
(karpenter_gitops/karpenter/scheduling/rounds.py). Compared is what ends up running: per NodePool the
NodeClaims by launched type, capacity type and price, the pods left pending, the total $/hour.
"""

from __future__ import annotations

import os

import pytest
from support import real_tools as tools
from support import scheduler as ks
from support.sim_diff import compare, final_ours, final_theirs, ours, theirs
from support.sim_disagreements import TALLY, judge
from support.sim_worlds import demo, generate, od_spot_split

from karpenter_gitops.karpenter.scheduling.rounds import MAX_ROUNDS

pytestmark = pytest.mark.real
DEFAULT_SEEDS = 30
ROUNDS_SEEDS = 200


def seeds() -> list[int]:
    wanted = os.environ.get("KARPENTER_GITOPS_SIMULATION_SEEDS", "").strip()
    if not wanted:
        return list(range(DEFAULT_SEEDS))
    if "," in wanted:
        return [int(s) for s in wanted.split(",") if s.strip()]
    if "-" in wanted:
        first, last = wanted.split("-", 1)
        return list(range(int(first), int(last) + 1))
    return list(range(int(wanted)))


@pytest.fixture(scope="module")
def program():
    return ks.binary()


def check(name, world, program):
    """Both forecasts of ``world``; a difference no entry explains fails, naming every line of it."""
    document = world.to_json()

    def karpenters():
        return theirs(ks.schedule(document, program=program), world)

    mine, karpenter = ours(world), karpenters()
    verdict = judge(name, world, mine, karpenter, compare(mine, karpenter), rerun=karpenters)
    TALLY.add(world, verdict)
    assert verdict.explained, verdict.explain()


@pytest.mark.parametrize("seed", seeds())
def test_a_generated_world_forecasts_what_karpenter_schedules(program, seed):
    check(f"seed {seed}", generate(seed).world, program)


@pytest.mark.parametrize(("seed", "spot_known"), [(1, True), (2, True), (3, False)], ids=["spot-1", "spot-2", "no-spot-prices"])
def test_the_demo_stack_forecasts_what_karpenter_schedules(program, seed, spot_known):
    """The demo's three NodePools and classes (AL2023 with a 50Gi root volume, Bottlerocket, a custom
    AMI) over the full catalogue (1,386 types), with web, api, cache, batch, payments and GPU workloads
    and a DaemonSet; with seeded spot prices, and without (spot at on-demand, as before Karpenter's
    first spot price update)."""
    check(f"demo {seed}", demo(seed, spot_known).world, program)


def check_rounds(name, world, program):
    """What ends up running after both sides' rounds; a difference no entry explains fails."""
    document = {**world.to_json(), "rounds": MAX_ROUNDS}

    def karpenters():
        try:
            return final_theirs(ks.schedule(document, program=program), world)
        except ks.SchedulerRefused as refused:
            if 'unknown field "rounds"' in refused.message:
                tools.unavailable(f"karpenter-scheduler predates its rounds: {ks.HOW_TO_GET}")
            raise

    mine, karpenter = final_ours(world), karpenters()
    verdict = judge(name, world, mine, karpenter, compare(mine, karpenter), rerun=karpenters)
    TALLY.add(world, verdict)
    assert verdict.explained, verdict.explain()


@pytest.mark.parametrize("seed", range(ROUNDS_SEEDS))
def test_the_rounds_end_where_karpenters_do(program, seed):
    check_rounds(f"rounds, seed {seed}", generate(seed).world, program)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_demo_stack_rounds_end_where_karpenters_do(program, seed):
    check_rounds(f"rounds, demo {seed}", demo(seed).world, program)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_blueprint_od_spot_split_ends_where_karpenters_rounds_do(program, seed):
    """All ten pods run, on the NodeClaims Karpenter's own rounds launch (one Solve leaves six pending)."""
    check_rounds(f"rounds, od-spot-split {seed}", od_spot_split(seed).world, program)
