"""Our provisioning simulation against Karpenter's own scheduler (v1.15.0, the karpenter-scheduler
`make tools` builds), world by world: generated worlds (tests/support/sim_worlds.py, one per seed) and the
demo's NodePools with typical workloads, each fed to both on the same instance types, offerings and
prices. Compared: which pods stay pending, NodeClaims per NodePool, each NodeClaim's workloads,
instance-type options, launch capacity type, launched types, cheapest offering and price range,
and the total $/hour (tests/support/sim_diff.py). A difference is a bug of ours unless an entry of
tests/support/sim_disagreements.py explains it.

More seeds without make: ``KARPENTER_GITOPS_SIMULATION_SEEDS=200`` (seeds 0–199),
``=1000-1099`` or ``=7,42``. The agreement table is printed at the end of the run.
"""

from __future__ import annotations

import os

import pytest
from support import scheduler as ks
from support.sim_diff import compare, ours, theirs
from support.sim_disagreements import TALLY, judge
from support.sim_worlds import demo, generate

pytestmark = pytest.mark.real
DEFAULT_SEEDS = 30


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
