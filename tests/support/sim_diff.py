"""Our forecast beside Karpenter's answer for one world, in the terms users read a forecast in.

Both sides become an :class:`Outcome`: the NodeClaims (NodePool, the workloads of its pods, the
instance types it carries, the launch's capacity type, types and cheapest offering, its price
range) and the pods left pending. Replicas of one workload are interchangeable, so a NodeClaim
names its pods' workloads, not the pods: Karpenter breaks equal-count zone ties at random, so which
replica lands where is not part of the contract, how many of each is. ``compare`` lists every
difference as one line; :data:`support.sim_disagreements.DOCUMENTED` says which are explained.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from karpenter_gitops.karpenter.scheduling import Options, World, simulate
from karpenter_gitops.karpenter.scheduling.pods import Pod
from karpenter_gitops.karpenter.scheduling.rounds import MAX_ROUNDS

PRICE_DIGITS = 6


@dataclass(frozen=True, order=True)
class Claim:
    node_pool: str
    workloads: tuple[tuple[str, int], ...]  # (namespace/Kind/name, pods)
    options: tuple[str, ...]  # the instance types the NodeClaim carries (sorted names)
    capacity_type: str | None
    launch_types: tuple[str, ...]  # what the launch sends to CreateFleet (sorted names)
    cheapest: tuple[str, float] | None  # (type, price) of the cheapest override
    price_range: tuple[float, float]
    option_prices: Mapping[str, float | None] = field(default_factory=dict, compare=False)  # Karpenter's answer only

    def show(self) -> str:
        pods = ", ".join(f"{n}×{w.split('/')[-1]}" for w, n in self.workloads)
        cheapest = f"{self.cheapest[0]} ${self.cheapest[1]}" if self.cheapest else "no launch"
        return (
            f"{self.node_pool}: [{pods}] {self.capacity_type} {cheapest} (range {self.price_range[0]}–{self.price_range[1]}), "
            f"{len(self.options)} options, {len(self.launch_types)} launched"
        )


@dataclass(frozen=True)
class Outcome:
    claims: tuple[Claim, ...]  # sorted
    pending: frozenset[str]  # pods Karpenter tries and cannot place (namespace/name)
    ignored: frozenset[str]  # pods the provisioner refuses to consider

    @property
    def hourly(self) -> tuple[float, float]:
        return (round(sum(c.price_range[0] for c in self.claims), 4), round(sum(c.price_range[1] for c in self.claims), 4))

    def nodes_by_pool(self) -> Counter[str]:
        return Counter(c.node_pool for c in self.claims)


def _workloads(pods: Iterable[str], by_uid: Mapping[str, Pod]) -> tuple[tuple[str, int], ...]:
    counts = Counter(f"{by_uid[uid].namespace}/{by_uid[uid].template.workload}" for uid in pods)
    return tuple(sorted(counts.items()))


def _money(value: float) -> float:
    return round(value, PRICE_DIGITS)


def theirs(answer: Mapping[str, Any], world: World) -> Outcome:
    by_uid = {pod.uid: pod for pod in world.pods}
    claims = []
    for claim in answer["nodeClaims"]:
        launch = claim.get("launch") or {}
        offers = launch.get("offerings") or []
        prices = [o["price"] for o in offers]
        cheapest = launch.get("cheapest")
        capacity_type = launch.get("capacityType") if not launch.get("error") else None
        if capacity_type is None or not prices:
            low = high = 0.0
        else:
            low = min(prices)
            high = low if capacity_type == "on-demand" else max(prices)
        claims.append(Claim(
            claim["nodePool"], _workloads(claim["pods"], by_uid), tuple(sorted(o["name"] for o in claim["instanceTypes"])),
            capacity_type, tuple(sorted(launch.get("instanceTypes") or ())),
            (cheapest["instanceType"], _money(cheapest["price"])) if cheapest and capacity_type else None, (_money(low), _money(high)),
            {o["name"]: o.get("price") for o in claim["instanceTypes"]},
        ))  # fmt: skip
    pending = frozenset(u["pod"] for u in answer["unschedulable"] if not u.get("ignored"))
    ignored = frozenset(u["pod"] for u in answer["unschedulable"] if u.get("ignored"))
    return Outcome(tuple(sorted(claims)), pending, ignored)


def ours(world: World, options: Options = Options(), max_rounds: int = 1) -> Outcome:
    """Our forecast of ``world``: one Solve and its launches unless ``max_rounds`` says more."""
    by_uid = {pod.uid: pod for pod in world.pods}
    forecast = simulate(world, options, max_rounds)
    claims = []
    for pool in forecast.pools:
        for node in pool.nodes:
            launch = node.launch
            cheapest = launch.cheapest
            low, high = node.hourly
            claims.append(Claim(
                node.node_pool, _workloads(node.pods, by_uid), tuple(sorted(node.options)),
                launch.capacity_type if not launch.error else None, tuple(sorted(launch.instance_types)),
                (cheapest.instance_type, _money(cheapest.price)) if cheapest else None, (_money(low), _money(high)),
            ))  # fmt: skip
    pending = frozenset(uid for u in forecast.unschedulable for uid in u.pods)
    ignored = frozenset(uid for u in forecast.ignored for uid in u.pods)
    return Outcome(tuple(sorted(claims)), pending, ignored)


def _final(outcome: Outcome) -> Outcome:
    """What ends up running, per NodePool: each NodeClaim by the type and capacity type it launched as (and its
    price), without the pods on it (Karpenter re-packs them each round; the kube-scheduler binds them in the end)."""
    claims = (Claim(c.node_pool, (), (), c.capacity_type, (), c.cheapest, c.price_range) for c in outcome.claims)
    return replace(outcome, claims=tuple(sorted(claims)))


def final_theirs(answer: Mapping[str, Any], world: World) -> Outcome:
    """Karpenter's rounds (a world sent with ``rounds``): every NodeClaim an earlier pass launched, and the last pass's."""
    launched = [c for r in answer.get("rounds") or () for c in r["nodeClaims"] if (c.get("launch") or {}).get("cheapest")]
    return _final(theirs({**answer, "nodeClaims": [*launched, *answer["nodeClaims"]]}, world))


def final_ours(world: World, options: Options = Options()) -> Outcome:
    return _final(ours(world, options, MAX_ROUNDS))


MAX_INSTANCE_TYPES = 600  # what a NodeClaim carries (Karpenter's MaxInstanceTypes)
CUT_TIE = "NodeClaim options differ only among types priced at the 600-type cut"


def _tied_at_cut(mine: Claim, karpenter: Claim) -> str | None:
    """Both claims are cut at 600 types and every type only Karpenter's carries costs what its 600th
    does: equal prices at the cut, which Karpenter's unstable sort orders arbitrarily. The line says so."""
    if len(mine.options) != MAX_INSTANCE_TYPES or len(karpenter.options) != MAX_INSTANCE_TYPES:
        return None
    if replace(mine, options=karpenter.options) != karpenter:
        return None
    cut = max((p for p in karpenter.option_prices.values() if p is not None), default=None)
    only_theirs = set(karpenter.options) - set(mine.options)
    if cut is None or any(karpenter.option_prices.get(name) != cut for name in only_theirs):
        return None
    return (
        f"{CUT_TIE} (${cut}): {karpenter.node_pool} [{', '.join(w for w, _ in karpenter.workloads)}], "
        f"ours also {sorted(set(mine.options) - set(karpenter.options))}, Karpenter's also {sorted(only_theirs)}"
    )


def compare(mine: Outcome, karpenter: Outcome) -> list[str]:
    """One line per difference; empty when the two agree on everything users read."""
    differences = []
    if mine.pending != karpenter.pending:
        if mine.pending - karpenter.pending:
            differences.append(f"pending only in ours: {sorted(mine.pending - karpenter.pending)}")
        if karpenter.pending - mine.pending:
            differences.append(f"pending only in Karpenter's: {sorted(karpenter.pending - mine.pending)}")
    if mine.ignored != karpenter.ignored:
        differences.append(f"ignored: ours {sorted(mine.ignored)}, Karpenter's {sorted(karpenter.ignored)}")
    if mine.nodes_by_pool() != karpenter.nodes_by_pool():
        differences.append(
            f"NodeClaims per pool: ours {dict(sorted(mine.nodes_by_pool().items()))}, "
            f"Karpenter's {dict(sorted(karpenter.nodes_by_pool().items()))}"
        )
    only_mine = Counter(mine.claims) - Counter(karpenter.claims)
    only_theirs = Counter(karpenter.claims) - Counter(mine.claims)
    for claim in sorted(only_mine.elements()):
        other = next((c for c in only_theirs.elements() if _tied_at_cut(claim, c)), None)
        if other is not None:
            differences.append(_tied_at_cut(claim, other))
            only_mine[claim] -= 1
            only_theirs[other] -= 1
    for claim in sorted(only_mine.elements()):
        differences.append(f"NodeClaim only in ours: {claim.show()}")
    for claim in sorted(only_theirs.elements()):
        differences.append(f"NodeClaim only in Karpenter's: {claim.show()}")
    if mine.hourly != karpenter.hourly:
        differences.append(f"$/h: ours {mine.hourly}, Karpenter's {karpenter.hourly}")
    return differences
