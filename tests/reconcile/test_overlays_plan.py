"""``plan`` applies NodeOverlays on the embedded AWS (us-west-2, every moto instance type) as Karpenter would."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.plan_objects import node_class, node_pool

from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.core.versions import Kubernetes
from karpenter_gitops.load import into_inputs
from karpenter_gitops.reconcile import reconcile
from karpenter_gitops.rules import live
from karpenter_gitops.rules.examples import BASE_NODEOVERLAY

GATED = Cluster(feature_gates=frozenset({"NodeOverlay"}))
M5 = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5", "t3"]}
ON_DEMAND = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}


def overlay(name: str, requirements: list[dict], **spec) -> dict:
    doc = copy.deepcopy(BASE_NODEOVERLAY)
    doc["metadata"]["name"] = name
    doc["spec"] = {"requirements": requirements, **spec}
    return doc


def plan_of(aws, cache, docs, cluster=GATED, release=(1, 14)):
    inputs = dataclasses.replace(into_inputs.load_documents([("test.yaml", docs)], release), cluster=cluster)
    return reconcile(inputs, release=release, kubernetes=Kubernetes(1, 32), aws=aws.session(), cache_dir=cache)


def base(*overlays: dict) -> list[dict]:
    return [node_class(), node_pool([M5, ON_DEMAND]), *overlays]


def test_a_discount_moves_the_first_choice_and_lists_the_repriced_types(default_aws, catalogue_cache):
    discount = overlay(
        "m5-discount", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}], priceAdjustment="-99%"
    )
    plan = plan_of(default_aws, catalogue_cache, base(discount))
    pool = plan.node_pools["general"].overlays
    assert pool.before.instance_types == ("t3.nano",) and pool.before.price == pytest.approx(0.0052)
    assert pool.after.instance_types == ("m5.large",) and pool.after.price == pytest.approx(0.00096)
    rows = {row.instance_type: row for row in pool.price_rows}
    assert set(rows) == {t for t in plan.node_pools["general"].mapping.instance_types if t.startswith("m5.")}
    assert rows["m5.large"].before == 0.096 and rows["m5.large"].after == pytest.approx(0.00096)
    assert rows["m5.large"].capacity_type == "on-demand" and rows["m5.large"].overlay == "m5-discount"
    assert plan.node_overlays.conditions["m5-discount"].status == "True"
    data = plan.to_json()
    assert data["nodePools"]["general"]["overlays"]["firstChoice"]["withOverlays"]["instanceTypes"] == ["m5.large"]
    assert data["nodeOverlays"]["overlays"]["m5-discount"]["conditions"] == [
        {"type": "Ready", "status": "True", "reason": "Ready", "message": ""},
        {"type": "ValidationSucceeded", "status": "True", "reason": "ValidationSucceeded", "message": ""},
    ]


def test_same_weight_overlays_conflict_and_the_rejected_one_is_an_error(default_aws, catalogue_cache):
    family = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}
    size = {"key": "karpenter.k8s.aws/instance-size", "operator": "In", "values": ["large"]}
    docs = base(overlay("a-cheap", [family], price="0.01", weight=10), overlay("b-cheap", [size], price="0.02", weight=10))
    plan = plan_of(default_aws, catalogue_cache, docs)
    rejected = plan.node_overlays.conditions["a-cheap"]
    assert (rejected.status, rejected.reason, rejected.message) == ("False", "Conflict", "conflict with another overlay")
    assert plan.node_overlays.conditions["b-cheap"].status == "True"
    assert plan.to_json()["nodeOverlays"]["overlays"]["a-cheap"]["conditions"][0] == {
        "type": "Ready",
        "status": "False",
        "reason": "UnhealthyDependents",
        "message": "ValidationSucceeded=False",
    }
    conflict = next(f for f in plan.findings if f.rule == live.OVERLAY_CONFLICT)
    assert conflict.name == "a-cheap" and conflict.layer == "karpenter" and "b-cheap" in conflict.hint
    assert plan.exit_code == 1
    prices = {row.instance_type: row.after for row in plan.node_pools["general"].overlays.price_rows}
    assert prices == {t: 0.02 for t in prices} and "m5.large" in prices  # b-cheap alone, on every large type


def test_a_conflict_validate_already_reported_is_said_once(default_aws, catalogue_cache):
    family = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}
    docs = base(overlay("a-cheap", [family], price="0.01", weight=10), overlay("b-cheap", [family], price="0.02", weight=10))
    plan = plan_of(default_aws, catalogue_cache, docs)
    said = [(f.rule, f.name) for f in plan.findings if f.kind == "NodeOverlay" and f.severity.value == "error"]
    assert said == [("nodeoverlay/same-weight-price", "a-cheap")]
    assert plan.node_overlays.conditions["a-cheap"].reason == "Conflict"  # the prediction still shows it


def test_an_overlay_matching_nothing_any_pool_launches_is_a_warning(default_aws, catalogue_cache):
    nothing = overlay("p5-only", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5"]}], price="1")
    plan = plan_of(default_aws, catalogue_cache, base(nothing))
    found = [f for f in plan.findings if f.rule == live.OVERLAY_MATCHES_NOTHING]
    assert [f.name for f in found] == ["p5-only"] and found[0].severity.value == "warning"
    assert plan.node_pools["general"].overlays.price_rows == ()


def test_with_the_gate_off_overlays_are_not_applied_and_the_plan_says_so_once(default_aws, catalogue_cache):
    discount = overlay("m5-discount", [M5], priceAdjustment="-50%")
    plan = plan_of(default_aws, catalogue_cache, base(discount), cluster=Cluster())
    assert "feature gate is off" in plan.node_overlays.not_applied
    assert plan.node_pools["general"].overlays is None and plan.node_overlays.conditions == {}
    assert not [f for f in plan.findings if f.rule.startswith("live/overlay")]


def test_an_overlay_the_api_server_refuses_is_not_applied(default_aws, catalogue_cache):
    both = overlay("both", [M5], price="1", priceAdjustment="-10%")
    plan = plan_of(default_aws, catalogue_cache, base(both))
    assert plan.node_overlays.refused == ("both",) and "both" not in plan.node_overlays.conditions
    assert plan.node_pools["general"].overlays.price_rows == ()


def test_without_overlays_the_plan_json_keeps_its_keys(default_aws, catalogue_cache):
    data = plan_of(default_aws, catalogue_cache, base()).to_json()
    assert "nodeOverlays" not in data and "overlays" not in data["nodePools"]["general"]


def test_the_text_plan_shows_repricing_first_choice_and_conditions(default_aws, catalogue_cache):
    from karpenter_gitops.output.plan_text import print_plan
    from karpenter_gitops.output.terminal import Terminal

    docs = base(
        overlay(
            "m5-discount",
            [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}],
            priceAdjustment="-99%",
        ),
        overlay("a-clash", [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}], price="1"),
    )
    terminal = Terminal(record=True, width=200)
    print_plan(plan_of(default_aws, catalogue_cache, docs), terminal)
    text = terminal.console.export_text()
    assert "m5.2xlarge on-demand (3 zone(s)): $0.384/h → $0.00384/h by m5-discount (-99%)" in text
    assert "first choice: t3.nano at $0.0052/h on-demand → m5.large at $0.00096/h on-demand with the overlays" in text
    assert "a-clash: ValidationSucceeded=False Conflict: conflict with another overlay (m5-discount also sets" in text
    assert "static table for us-east-1" in text


KEYS = st.sampled_from(
    [
        "karpenter.k8s.aws/instance-family",
        "karpenter.k8s.aws/instance-cpu",
        "karpenter.sh/capacity-type",
        "topology.kubernetes.io/zone",
        "karpenter.sh/nodepool",
        "team",
        "example.com/unset",
        "kubernetes.io/hostname",
    ]
)
OPERATORS = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte", "Near"])
VALUES = st.lists(st.sampled_from(["m5", "t3", "4", "-1", "x", "spot", "on-demand", "us-west-2a", "general", ""]), max_size=3)
HOSTILE_OVERLAY = st.fixed_dictionaries(
    {"requirements": st.lists(st.fixed_dictionaries({"key": KEYS, "operator": OPERATORS, "values": VALUES}), max_size=3)},
    optional={
        "weight": st.one_of(st.none(), st.integers(-5, 20000), st.just("10")),
        "price": st.sampled_from(["0.5", "0", "1e3", "-1", "abc", 3]),
        "priceAdjustment": st.sampled_from(["-10%", "+0.5", "-100%", "-150%", "+.5", "10%", "-0.01"]),
        "capacity": st.dictionaries(
            st.sampled_from(["example.com/a", "cpu", "pods"]), st.sampled_from([1, "2", "3Gi", "x"]), max_size=2
        ),
    },
)


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(HOSTILE_OVERLAY, min_size=1, max_size=4))
def test_hostile_overlays_are_refused_or_judged_never_a_traceback(default_aws, catalogue_cache, specs):
    docs = [overlay(f"o{index}", spec.pop("requirements"), **spec) for index, spec in enumerate(copy.deepcopy(specs))]
    pool = node_pool([M5, ON_DEMAND])
    pool["spec"]["template"]["metadata"] = {"labels": {"team": "web"}}
    plan = plan_of(default_aws, catalogue_cache, [node_class(), pool, *docs])
    judged = plan.node_overlays
    names = {doc["metadata"]["name"] for doc in docs}
    assert set(judged.refused) | set(judged.conditions) == names and not set(judged.refused) & set(judged.conditions)
    rejected = {n: c.reason for n, c in judged.conditions.items() if c.status == "False"}
    assert {n for n, reason in rejected.items() if reason == "Conflict"} == set(judged.conflicts)
    assert set(rejected.values()) <= {"Conflict", "RuntimeValidation"}
    rows = plan.node_pools["general"].overlays.price_rows
    assert all(row.after is None or row.after >= 0 for row in rows)
    json.dumps(plan.to_json())


@pytest.mark.parametrize("release,priced", [((1, 14), True), ((1, 13), False)])
def test_from_1_14_an_overlay_naming_an_unpriced_type_gives_it_its_price(default_aws, catalogue_cache, release, priced):
    """r9g is not in Karpenter's price table: without a price Karpenter never launches it; from 1.14 an overlay
    naming the type alone with an absolute price prices it."""
    r9g = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["r9g"]}
    named = overlay(
        "r9g-price", [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["r9g.2xlarge"]}], price="0.3"
    )
    arm = node_class(amiSelectorTerms=[{"alias": "al2023@v20250201"}])
    plan = plan_of(default_aws, catalogue_cache, [arm, node_pool([r9g, ON_DEMAND]), named], release=release)
    pool = plan.node_pools["general"]
    assert "r9g.2xlarge" in pool.mapping.instance_types and pool.overlays.before is None
    if priced:
        assert plan.node_overlays.base_prices == {"r9g.2xlarge": 0.3}
        assert pool.overlays.after.instance_types == ("r9g.2xlarge",) and pool.overlays.after.price == 0.3
    else:
        assert plan.node_overlays.base_prices == {} and pool.overlays.after is None


def test_no_matches_nothing_warning_while_a_pool_waits_for_its_class(default_aws, catalogue_cache):
    waiting = node_pool([M5], class_name="not-in-the-input")
    waiting["metadata"]["name"] = "waiting"
    waiting["spec"]["template"]["metadata"] = {"labels": {"team": "batch"}}
    for_waiting = overlay("batch-only", [{"key": "team", "operator": "In", "values": ["batch"]}], price="0.01")
    plan = plan_of(default_aws, catalogue_cache, [*base(for_waiting), waiting])
    assert plan.node_pools["waiting"].awaiting and plan.node_pools["waiting"].overlays is None
    assert not [f for f in plan.findings if f.rule == live.OVERLAY_MATCHES_NOTHING]


def test_capacity_changes_show_the_type_own_value_before(default_aws, catalogue_cache):
    g5 = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}
    gpus = overlay("g5-slices", [g5], capacity={"nvidia.com/gpu": 4, "example.com/fuse": 1})
    alias = node_class(amiSelectorTerms=[{"alias": "al2023@v20250201"}])
    plan = plan_of(default_aws, catalogue_cache, [alias, node_pool([g5, ON_DEMAND]), gpus])
    changes = {
        (c.instance_type, c.resource): (c.before, c.quantity) for c in plan.node_pools["general"].overlays.capacity_changes
    }
    assert changes[("g5.xlarge", "nvidia.com/gpu")] == ("1", "4")
    assert changes[("g5.xlarge", "example.com/fuse")] == (None, "1")


@pytest.mark.parametrize("release,cluster,stalls", [((1, 12), GATED, True), ((1, 13), GATED, False), ((1, 12), Cluster(), False)])
def test_before_1_13_a_pool_without_subnets_stalls_every_pool_with_the_gate_on(
    default_aws, catalogue_cache, release, cluster, stalls
):
    broken = node_class(subnetSelectorTerms=[{"tags": {"karpenter.sh/discovery": "nowhere"}}])
    broken["metadata"]["name"] = "broken"
    orphan = node_pool([M5], class_name="broken")
    orphan["metadata"]["name"] = "orphan"
    docs = [*base(overlay("m5-discount", [M5], priceAdjustment="-50%")), broken, orphan]
    plan = plan_of(default_aws, catalogue_cache, docs, cluster=cluster, release=release)
    found = [f for f in plan.findings if f.rule == live.OVERLAY_EVALUATION_STALLED]
    if stalls:
        assert [(f.kind, f.name, f.layer) for f in found] == [("NodePool", "orphan", "karpenter")]
        assert "EC2NodeClass broken has no subnets" in found[0].message and "nothing launches" in found[0].message
        assert "NodePool(s) orphan" in plan.node_overlays.not_applied and plan.node_pools["general"].overlays is None
    else:
        assert found == []


def test_an_overlay_karpenter_refuses_at_runtime_is_predicted_runtime_validation_and_not_applied(default_aws, catalogue_cache):
    long_key = {"key": "example.com/" + "a" * 64, "operator": "Exists"}
    wildcard = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5*"]}
    plan = plan_of(default_aws, catalogue_cache, base(overlay("sloppy", [M5, wildcard, long_key], price="0.001")))
    condition = plan.node_overlays.conditions["sloppy"]
    assert (condition.status, condition.reason) == ("False", "RuntimeValidation")
    messages = condition.message.split("; ")
    assert messages[0].startswith("invalid value: invalid value m5* for key karpenter.k8s.aws/instance-family")
    assert "is not a qualified name" in messages[1] and len(messages) == 2
    assert plan.node_pools["general"].overlays.price_rows == ()
