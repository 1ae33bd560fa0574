"""The one table of documented differences between our provisioning simulation and Karpenter's
scheduler (tests/real/test_simulation_differential.py), each with its reason and the Go code path
that decides it (``module@version:file:line``).

A difference that no entry explains is a bug of ours. An entry applies only to worlds that use what
it is about; it explains a difference line of its kind, or (where Karpenter's own answer varies from
run to run) the whole outcome when a re-run of Karpenter gives exactly ours.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from karpenter_gitops.karpenter.scheduling import World
from support.sim_diff import CUT_TIE, Outcome, compare
from support.sim_worlds import zonal

CORE = "sigs.k8s.io/karpenter@v1.15.0"
# Where Karpenter's answer varies, ours may be its rarer one (seed 17: about 1 run in 6), so it is asked up to
# 60 more times (a miss then is about 1 in 30,000); the asking stops at the first run that agrees.
RERUNS = 60


@dataclass(frozen=True)
class Documented:
    id: str
    reason: str
    go: str  # where Karpenter decides it: module@version:file:line
    applies: Callable[[World], bool]  # the world uses what the entry is about
    explains: Callable[[str], bool] = lambda line: False  # a difference line it explains by itself
    varies: bool = False  # Karpenter's own answer varies from run to run: explained when a re-run gives ours
    # the two outcomes differ only in the way the entry describes (checked on the whole outcomes, no re-run needed)
    outcomes: Callable[[Outcome, Outcome], bool] = lambda mine, karpenter: False


def _zonal_world(world: World) -> bool:
    return any(zonal(pod.template) for pod in world.pods)


ZONE_TIES = Documented(
    "zone-ties",
    "A pod spreading or (anti-)affining by zone takes, among equally counted zones, whichever Karpenter's map "
    "iteration returns first, so Karpenter's own answer changes from run to run (which replicas share a "
    "NodeClaim, which NodePool's zones still fit); ours takes the first zone by name. Explained only when one "
    f"of up to {RERUNS} more runs of Karpenter on the same world gives exactly our outcome.",
    f"{CORE}:pkg/controllers/provisioning/scheduling/topologygroup.go:258-292 (spread), :365-386 (affinity bootstrap)",
    _zonal_world,
    varies=True,
)


def _only_karpenters_launch_failed(mine: Outcome, karpenter: Outcome) -> bool:
    """The NodeClaims are the same (pool, pods, options) and each that differs launched in ours and failed at launch in
    Karpenter's (minValues unmet once the larger daemon overhead drops types): the order's other outcome."""
    if (mine.pending, mine.ignored) != (karpenter.pending, karpenter.ignored):
        return False
    only_mine = sorted((Counter(mine.claims) - Counter(karpenter.claims)).elements())
    only_theirs = sorted((Counter(karpenter.claims) - Counter(mine.claims)).elements())
    key = lambda c: (c.node_pool, c.workloads, c.options)  # noqa: E731
    return (
        bool(only_mine)
        and sorted(map(key, only_mine)) == sorted(map(key, only_theirs))
        and all(c.capacity_type is None for c in only_theirs)
        and all(c.capacity_type for c in only_mine)
    )


DAEMON_ORDER = Documented(
    "daemon-overhead-order",
    "A NodeClaim's requests get the 'least' daemon overhead of its remaining overhead groups, folded in the order of a "
    "map's values; a group without daemons has an empty overhead, which the fold treats as unset, so when it comes "
    "first the next group's overhead is taken whole. The requests then decide the launch filters (a type that fits "
    "only without that overhead drops out, and minValues may fail at launch), differently from run to run. Ours folds "
    "the groups with daemons first. Explained when the only differences are NodeClaims (same pool, pods and "
    "options) that ours launches and Karpenter's fails to launch, or when one of up to "
    f"{RERUNS} more runs of Karpenter on the same world gives exactly our outcome.",
    f"{CORE}:pkg/controllers/provisioning/scheduling/nodeclaim.go:407-431 (addDaemonRequests), "
    f"{CORE}:pkg/controllers/provisioning/scheduling/scheduler.go:1030 (the groups, lo.Values of a map)",
    lambda world: bool(world.daemon_sets),
    varies=True,
    outcomes=_only_karpenters_launch_failed,
)
CUT_TIES = Documented(
    "truncation-ties",
    "A NodeClaim carries its 600 cheapest options; among types priced exactly at the cut, which survive depends on "
    "Karpenter's unstable sort.Slice over an order built from map iteration. Explained when both sides cut at 600 "
    "and every type only Karpenter's carries costs the 600th price.",
    f"{CORE}:pkg/cloudprovider/types.go:396-415 (OrderByPrice), "
    f"{CORE}:pkg/controllers/provisioning/scheduling/scheduler.go:448-466 (TruncateInstanceTypes)",
    lambda world: True,
    lambda line: line.startswith(CUT_TIE),
)
DOCUMENTED: tuple[Documented, ...] = (ZONE_TIES, DAEMON_ORDER, CUT_TIES)


@dataclass(frozen=True)
class Verdict:
    name: str
    differences: tuple[str, ...]
    entries: tuple[str, ...]
    unexplained: tuple[str, ...]
    mine: Outcome
    karpenter: Outcome

    @property
    def explained(self) -> bool:
        return not self.unexplained

    def explain(self) -> str:
        claims = "\n".join(f"  ours:        {c.show()}" for c in self.mine.claims)
        claims += "\n" + "\n".join(f"  Karpenter's: {c.show()}" for c in self.karpenter.claims)
        return (
            f"{self.name}: {len(self.unexplained)} difference(s) no entry of tests/support/sim_disagreements.py explains:\n  "
            + "\n  ".join(self.unexplained)
            + f"\nNodeClaims:\n{claims}"
        )


@dataclass
class Tally:
    """Worlds, pods and NodeClaims compared, and how each world came out, for the table at the end of a run."""

    counts: Counter = field(default_factory=Counter)

    def add(self, world: World, verdict: Verdict) -> None:
        outcome = "agree" if not verdict.differences else "documented" if verdict.explained else "differ"
        self.counts[outcome] += 1
        self.counts["pods"] += len(world.pods)
        self.counts["nodeClaims"] += len(verdict.karpenter.claims)
        for entry in verdict.entries:
            self.counts[("entry", entry)] += 1

    def table(self) -> list[str]:
        worlds = self.counts["agree"] + self.counts["documented"] + self.counts["differ"]
        lines = [
            f"{worlds} worlds, {self.counts['pods']} pods, {self.counts['nodeClaims']} NodeClaims of Karpenter's: "
            f"{self.counts['agree']} agree exactly, {self.counts['documented']} differ as documented, "
            f"{self.counts['differ']} differ undocumented"
        ]
        for entry in DOCUMENTED:
            lines.append(f"  entry {entry.id}: {self.counts[('entry', entry.id)]} world(s)")
        return lines


TALLY = Tally()


def judge(
    name: str, world: World, mine: Outcome, karpenter: Outcome, differences: list[str], rerun: Callable[[], Outcome] | None = None
) -> Verdict:
    """Which entries explain the differences and what is left unexplained. ``rerun`` asks Karpenter again
    (where Karpenter's answer varies from run to run, ours must be one of its answers)."""
    applying = [entry for entry in DOCUMENTED if entry.applies(world)]
    used: set[str] = set()
    unexplained = []
    for line in differences:
        entry = next((e for e in applying if e.explains(line)), None)
        if entry is None:
            unexplained.append(line)
        else:
            used.add(entry.id)
    if unexplained:
        shaped = next((entry for entry in applying if entry.outcomes(mine, karpenter)), None)
        if shaped is not None:
            used.add(shaped.id)
            unexplained = []
    varying = [entry for entry in applying if entry.varies]  # credited to the first that applies
    if unexplained and rerun is not None and varying:
        for _ in range(RERUNS):
            if not compare(mine, rerun()):
                used.add(varying[0].id)
                unexplained = []
                break
    return Verdict(name, tuple(differences), tuple(sorted(used)), tuple(unexplained), mine, karpenter)
