"""NodeOverlays applied as Karpenter's overlay controller applies them.

The cases restate facts of sigs.k8s.io/karpenter's own tests (pkg/controllers/nodeoverlay/suite_test.go
and cloudprovider's AdjustedPrice table, v1.14.1; unchanged in v1.15.0) with instance types and
offerings of our own.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirements, ValueSet
from karpenter_gitops.karpenter.nodeoverlay.applied import (
    CONFLICT_MESSAGE,
    CONFLICT_REASON,
    NODEPOOL_LABEL,
    InstanceType,
    Offering,
    Overlay,
    PoolTypes,
    adjusted_price,
    apply,
    first_choice,
    ordered,
)


def reqs(*entries: tuple) -> Requirements:
    """(key, operator, *values) tuples as requirements."""
    return Requirements((key, ValueSet.of(op, values)) for key, op, *values in entries)


def instance_type(name: str, arch: str = "amd64", offerings: tuple[Offering, ...] | None = None) -> InstanceType:
    offerings = offerings or (Offering("on-demand", "zone-a", 1.0), Offering("spot", "zone-a", 0.4))
    zones = {o.zone for o in offerings}
    capacity_types = {o.capacity_type for o in offerings}
    return InstanceType(
        name,
        Requirements(
            [
                (labels.INSTANCE_TYPE, ValueSet(False, frozenset({name}))),
                (labels.ARCH, ValueSet(False, frozenset({arch}))),
                (labels.OS, ValueSet(False, frozenset({"linux"}))),
                (labels.ZONE, ValueSet(False, frozenset(zones))),
                (labels.CAPACITY_TYPE, ValueSet(False, frozenset(capacity_types))),
                (labels.GPU_COUNT, ValueSet(False)),
            ]
        ),
        offerings,
    )


def overlay(name: str, *requirements: tuple, weight: int = 10, price=None, adjust=None, capacity=None) -> Overlay:
    return Overlay(name, reqs(*requirements), weight, price, adjust, capacity)


SMALL, DEFAULT, GPU = instance_type("small"), instance_type("default"), instance_type("gpu", "arm64")
POOL = PoolTypes("general", (SMALL, DEFAULT, GPU))


def condition(outcome, name):
    found = outcome.conditions[name]
    return found.status, found.reason


def price_of(outcome, pool, type_name, capacity_type="on-demand", zone="zone-a"):
    it = outcome.pools[pool][type_name]
    return next(o.price for o in it.offerings if o.key == (capacity_type, zone))


# --- order -------------------------------------------------------------------------------------


def test_order_is_weight_first_then_the_later_name():
    names = [
        o.name
        for o in ordered([overlay("b", weight=10), overlay("a", weight=10), overlay("z", weight=1), overlay("c", weight=50)])
    ]
    assert names == ["c", "b", "a", "z"]


def test_no_weight_counts_as_zero_and_comes_last():
    assert [o.name for o in ordered([overlay("none", weight=0), overlay("one", weight=1)])] == ["one", "none"]


# --- conflicts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("first,second", [({"price": "1.03"}, {"price": "23"}), ({"adjust": "+54"}, {"adjust": "-2"})])
def test_same_weight_prices_on_one_offering_conflict_and_the_earlier_name_is_rejected(first, second):
    a = overlay("overlay-a", (labels.INSTANCE_TYPE, "In", "default", "small"), **first)
    b = overlay("overlay-b", (labels.INSTANCE_TYPE, "In", "default", "gpu"), **second)
    outcome = apply([a, b], [POOL])
    assert condition(outcome, "overlay-a") == ("False", CONFLICT_REASON)
    assert outcome.conditions["overlay-a"].message == CONFLICT_MESSAGE
    assert condition(outcome, "overlay-b") == ("True", "ValidationSucceeded")
    assert outcome.conflicts["overlay-a"].other == "overlay-b" and outcome.conflicts["overlay-a"].instance_type == "default"
    # rejected whole: not even the type only overlay-a selects (small) is repriced
    assert price_of(outcome, "general", "small") == 1.0


def test_identical_prices_still_conflict():
    a = overlay("overlay-a", (labels.INSTANCE_TYPE, "In", "default"), price="100")
    b = overlay("overlay-b", (labels.INSTANCE_TYPE, "In", "default"), price="100")
    assert condition(apply([a, b], [POOL]), "overlay-a") == ("False", CONFLICT_REASON)


def test_disjoint_requirements_do_not_conflict():
    a = overlay("overlay-a", (labels.INSTANCE_TYPE, "In", "default"), price="54")
    b = overlay("overlay-b", (labels.INSTANCE_TYPE, "NotIn", "default"), price="23")
    outcome = apply([a, b], [POOL])
    assert not outcome.conflicts
    assert price_of(outcome, "general", "default") == 54 and price_of(outcome, "general", "small") == 23


def test_different_weights_never_conflict_and_the_heavier_price_wins():
    light = overlay("overlay-a", (labels.INSTANCE_TYPE, "In", "default"), weight=10, price="34")
    heavy = overlay("overlay-b", (labels.INSTANCE_TYPE, "In", "default", "gpu"), weight=20, price="2")
    outcome = apply([light, heavy], [POOL])
    assert not outcome.conflicts
    assert price_of(outcome, "general", "default") == 2


def test_arch_and_capacity_type_overlays_conflict_on_the_offerings_both_touch():
    arm = overlay("overlay-a", (labels.ARCH, "In", "arm64"), price="1.03")
    any_capacity = overlay("overlay-b", (labels.CAPACITY_TYPE, "Exists"), price="23")
    outcome = apply([arm, any_capacity], [POOL])
    assert condition(outcome, "overlay-a") == ("False", CONFLICT_REASON)
    assert condition(outcome, "overlay-b")[0] == "True"


def test_offerings_decide_zone_and_capacity_type_conflicts():
    offerings = (
        Offering("spot", "zone-1", 1.02),
        Offering("on-demand", "zone-2", 2.02),
        Offering("spot", "zone-3", 3.02),
    )
    pool = PoolTypes("general", (instance_type("default", offerings=offerings),))
    zones = overlay("overlay-a", (labels.ZONE, "In", "zone-1", "zone-4"), price="1.03")
    spot = overlay("overlay-b", (labels.CAPACITY_TYPE, "In", "spot"), price="23")
    assert condition(apply([zones, spot], [pool]), "overlay-a")[0] == "False"  # both price spot in zone-1
    elsewhere = overlay("overlay-a", (labels.ZONE, "In", "zone-2", "zone-4"), price="1.03")
    outcome = apply([elsewhere, spot], [pool])
    assert not outcome.conflicts
    assert price_of(outcome, "general", "default", "on-demand", "zone-2") == 1.03
    assert price_of(outcome, "general", "default", "spot", "zone-3") == 23


def test_a_price_overlay_and_a_capacity_overlay_of_equal_weight_do_not_conflict():
    price = overlay("overlay-a", (labels.INSTANCE_TYPE, "In", "default"), price="5")
    capacity = overlay("overlay-b", (labels.INSTANCE_TYPE, "In", "default"), capacity={"smarter-devices/fuse": "1"})
    outcome = apply([price, capacity], [POOL])
    assert not outcome.conflicts
    assert outcome.pools["general"]["default"].capacity == {"smarter-devices/fuse": "1"}
    assert price_of(outcome, "general", "default") == 5


def test_capacity_conflicts_on_a_shared_key_even_with_the_same_quantity():
    a = overlay("overlay-a", (labels.INSTANCE_TYPE, "In", "default", "small"), capacity={"smarter-devices/fuse": "54"})
    b = overlay("overlay-b", (labels.INSTANCE_TYPE, "In", "default", "gpu"), capacity={"smarter-devices/fuse": "54"})
    outcome = apply([a, b], [POOL])
    assert condition(outcome, "overlay-a") == ("False", CONFLICT_REASON)
    assert outcome.conflicts["overlay-a"].field == "spec.capacity"


def test_capacity_is_compared_with_the_last_overlay_applied_only():
    """Three overlays of one weight: the middle one sets another key, and the last clashes only with it."""
    good = overlay("good-overlay-1", (labels.INSTANCE_TYPE, "In", "default"), capacity={"smarter-devices/fuse": "1"})
    second = overlay("conflicting-overlay-2", (labels.INSTANCE_TYPE, "In", "default"), capacity={"hugepages-1Gi": "3Gi"})
    first = overlay("conflicting-overlay-1", (labels.INSTANCE_TYPE, "In", "default", "small"), capacity={"hugepages-1Gi": "2Gi"})
    outcome = apply([first, good, second], [POOL])
    assert {name for name, c in outcome.conditions.items() if c.status == "False"} == {"conflicting-overlay-1"}
    assert outcome.pools["general"]["default"].capacity == {"smarter-devices/fuse": "1", "hugepages-1Gi": "3Gi"}


def test_an_empty_capacity_map_still_becomes_the_last_capacity_overlay():
    """Karpenter records an empty (but present) capacity as the last one applied, so a later clash goes unseen."""
    first = overlay("z-first", (labels.INSTANCE_TYPE, "In", "default"), capacity={"example.com/x": "1"})
    empty = overlay("y-empty", (labels.INSTANCE_TYPE, "In", "default"), capacity={})
    last = overlay("x-last", (labels.INSTANCE_TYPE, "In", "default"), capacity={"example.com/x": "2"})
    assert not apply([first, empty, last], [POOL]).conflicts
    outcome = apply([first, last], [POOL])
    assert set(outcome.conflicts) == {"x-last"}
    assert outcome.pools["general"]["default"].capacity == {"example.com/x": "1"}


def test_capacity_merges_per_key_with_the_heavier_overlay_winning_a_key():
    heavy = overlay("heavy", (labels.INSTANCE_TYPE, "In", "default"), weight=20, capacity={"example.com/a": "1"})
    light = overlay(
        "light", (labels.INSTANCE_TYPE, "In", "default"), weight=10, capacity={"example.com/a": "5", "example.com/b": "2"}
    )
    outcome = apply([light, heavy], [POOL])
    assert outcome.pools["general"]["default"].capacity == {"example.com/a": "1", "example.com/b": "2"}
    assert {(c.resource, c.overlay) for c in outcome.capacity_changes["general"]} == {
        ("example.com/a", "heavy"),
        ("example.com/b", "light"),
    }


def test_before_1_9_the_lighter_overlay_overwrote_a_capacity_key():
    heavy = overlay("heavy", (labels.INSTANCE_TYPE, "In", "default"), weight=20, capacity={"example.com/a": "1"})
    light = overlay("light", (labels.INSTANCE_TYPE, "In", "default"), weight=10, capacity={"example.com/a": "5"})
    outcome = apply([heavy, light], [POOL], heaviest_capacity=False)
    assert outcome.pools["general"]["default"].capacity == {"example.com/a": "5"}


def test_a_conflict_in_one_pool_rejects_the_overlay_for_every_pool():
    other = PoolTypes("other", (instance_type("default"), instance_type("small")))
    a = overlay("overlay-a", (labels.INSTANCE_TYPE, "In", "default", "small", "gpu"), price="382")
    b = overlay("overlay-b", (labels.INSTANCE_TYPE, "In", "small"), (NODEPOOL_LABEL, "In", "other"), price="100")
    outcome = apply([a, b], [POOL, other])
    assert condition(outcome, "overlay-a")[0] == "False"
    assert price_of(outcome, "general", "default") == 1.0  # not applied in the pool without the clash either


# --- matching -----------------------------------------------------------------------------------


def test_nodepool_name_and_template_labels_are_matchable_other_custom_labels_are_not():
    labelled = PoolTypes("team", (instance_type("default"),), {"team": "payments"})
    by_pool = overlay("by-pool", (NODEPOOL_LABEL, "In", "team"), adjust="+1000")
    by_label = overlay("by-label", ("team", "In", "payments"), weight=5, adjust="+1")
    unknown = overlay("unknown", ("example.com/other", "In", "x"), weight=1, price="9")
    outcome = apply([by_pool, by_label, unknown], [POOL, labelled])
    assert price_of(outcome, "team", "default") == 1001.0
    assert price_of(outcome, "general", "default") == 1.0
    assert outcome.matched["unknown"] == frozenset()
    assert outcome.matched["by-label"] == {("team", "default")}


def test_absence_operators_match_types_without_the_label():
    outcome = apply([overlay("no-gpu", (labels.GPU_COUNT, "DoesNotExist"), price="3")], [POOL])
    assert price_of(outcome, "general", "small") == 3


def test_a_price_overlay_changes_only_the_offerings_it_selects():
    outcome = apply([overlay("od", (labels.CAPACITY_TYPE, "In", "on-demand"), adjust="+1000")], [POOL])
    assert price_of(outcome, "general", "default") == 1001.0
    assert price_of(outcome, "general", "default", "spot") == 0.4


# --- prices -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change,base,expected",
    [
        ("-10%", 10.0, 9.0),
        ("+10%", 10.0, 11.0),
        ("-50%", 10.0, 5.0),
        ("+100%", 10.0, 20.0),
        ("-100%", 10.0, 0.0),
        ("-200%", 10.0, 0.0),
        ("-25%", 1.5, 1.125),
        ("80.0", 82781.0, 80.0),
        ("", 82781.0, 82781.0),
        ("+1000", 1.02, 1001.02),
        ("-0.5", 0.25, 0.0),
    ],
)
def test_adjusted_price(change, base, expected):
    assert math.isclose(adjusted_price(base, change), expected)


def test_an_unknown_price_stays_unknown_unless_replaced():
    assert adjusted_price(None, "-10%") is None and adjusted_price(None, "+1") is None
    assert adjusted_price(None, "0.5") == 0.5


# --- first choice -------------------------------------------------------------------------------


def test_first_choice_is_the_cheapest_available_offering_the_pool_admits():
    cheap_spot = instance_type("a", offerings=(Offering("on-demand", "zone-a", 1.0), Offering("spot", "zone-a", 0.1)))
    cheap_od = instance_type(
        "b", offerings=(Offering("on-demand", "zone-a", 0.5), Offering("spot", "zone-b", 0.05, available=False))
    )
    assert first_choice([cheap_spot, cheap_od], Requirements()).instance_types == ("a",)
    on_demand = reqs((labels.CAPACITY_TYPE, "In", "on-demand"))
    choice = first_choice([cheap_spot, cheap_od], on_demand)
    assert choice.instance_types == ("b",) and choice.price == 0.5 and choice.capacity_type == "on-demand"


def test_first_choice_keeps_ties_and_says_when_spot_is_unknown():
    a = instance_type("a", offerings=(Offering("on-demand", "zone-a", 0.0), Offering("spot", "zone-a", None)))
    b = instance_type("b", offerings=(Offering("on-demand", "zone-a", 0.0),))
    choice = first_choice([b, a], Requirements())
    assert choice.instance_types == ("a", "b") and choice.unknown_spot


# --- properties ---------------------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "d", "e"])
CHANGES = st.one_of(
    st.builds(lambda p: f"{p:.2f}", st.floats(0, 5)),
    st.builds(lambda sign, p: f"{sign}{p:.2f}", st.sampled_from("+-"), st.floats(0, 5)),
    st.builds(lambda sign, p: f"{sign}{p}%", st.sampled_from("+-"), st.integers(0, 99)),
)
REQUIREMENTS = st.sampled_from(
    [
        (labels.INSTANCE_TYPE, "In", "default"),
        (labels.INSTANCE_TYPE, "In", "small", "gpu"),
        (labels.ARCH, "In", "arm64"),
        (labels.CAPACITY_TYPE, "In", "spot"),
        (labels.CAPACITY_TYPE, "Exists"),
        (labels.ZONE, "NotIn", "zone-b"),
    ]
)


@st.composite
def overlay_sets(draw):
    names = draw(st.lists(NAMES, min_size=1, max_size=5, unique=True))
    found = []
    for name in names:
        capacity = draw(st.dictionaries(st.sampled_from(["x/a", "x/b"]), st.sampled_from(["1", "2"]), max_size=2))
        change = draw(st.one_of(st.none(), CHANGES))
        absolute = change is not None and change[0] not in "+-"
        found.append(
            overlay(
                name,
                draw(REQUIREMENTS),
                weight=draw(st.sampled_from([0, 1, 10])),
                price=change if absolute else None,
                adjust=None if absolute else change,
                capacity=capacity,
            )
        )
    return found


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(overlay_sets(), st.randoms())
def test_the_outcome_does_not_depend_on_the_order_overlays_are_listed(overlays, random):
    shuffled = list(overlays)
    random.shuffle(shuffled)
    assert apply(overlays, [POOL]) == apply(shuffled, [POOL])


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(overlay_sets())
def test_conflicts_only_between_equal_weights_and_no_price_below_zero(overlays):
    outcome = apply(overlays, [POOL])
    weights = {o.name: o.weight for o in overlays}
    for name, conflict in outcome.conflicts.items():
        assert weights[conflict.other] == weights[name] and conflict.other != name
    for pool in outcome.pools.values():
        for it in pool.values():
            assert all(o.price is None or o.price >= 0 for o in it.offerings)
    if len(set(weights.values())) == len(weights):
        assert not outcome.conflicts


def test_only_an_accepted_overlay_naming_types_alone_with_a_price_prices_unpriced_types():
    from karpenter_gitops.karpenter.nodeoverlay.applied import base_prices
    from karpenter_gitops.load.into_inputs import load_documents

    def doc(name, requirements, **spec):
        return {
            "apiVersion": "karpenter.sh/v1alpha1",
            "kind": "NodeOverlay",
            "metadata": {"name": name},
            "spec": {"requirements": requirements, **spec},
        }

    by_name = [{"key": labels.INSTANCE_TYPE, "operator": "In", "values": ["r9g.large", "r9g.xlarge"]}]
    found = load_documents(
        [
            (
                "o.yaml",
                [
                    doc("a", by_name, price="0.2"),
                    doc("b", [{"key": labels.INSTANCE_TYPE, "operator": "In", "values": ["r9g.large"]}], price="0.1"),
                    doc("adjusts", by_name, priceAdjustment="-10%"),
                    doc("two-requirements", [*by_name, {"key": labels.ARCH, "operator": "In", "values": ["arm64"]}], price="9"),
                    doc("not-in", [{"key": labels.INSTANCE_TYPE, "operator": "NotIn", "values": ["r9g.medium"]}], price="9"),
                    doc("rejected", [{"key": labels.INSTANCE_TYPE, "operator": "In", "values": ["r9g.medium"]}], price="9"),
                ],
            )
        ]
    ).node_overlays
    accepted = {"a", "b", "adjusts", "two-requirements", "not-in"}
    assert base_prices(found, accepted) == {"r9g.large": 0.1, "r9g.xlarge": 0.2}  # b sorts after a


def test_base_capacity_counts_gpus_by_maker_neuron_devices_and_cores_and_efa():
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    from karpenter_gitops.karpenter.nodeoverlay.applied import base_capacity

    g5 = base_capacity(INSTANCE_TYPES["g5.48xlarge"])
    assert (g5["nvidia.com/gpu"], g5["amd.com/gpu"], g5["vpc.amazonaws.com/efa"]) == ("8", "0", "1")
    inf2 = base_capacity(INSTANCE_TYPES["inf2.48xlarge"])
    assert (inf2["aws.amazon.com/neuron"], inf2["aws.amazon.com/neuroncore"]) == ("12", "24")
    assert base_capacity(INSTANCE_TYPES["g5.48xlarge"], efa_only_interfaces=0)["vpc.amazonaws.com/efa"] == "0"
    assert set(base_capacity(INSTANCE_TYPES["m5.large"]).values()) == {"0"}
