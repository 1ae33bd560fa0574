"""The reconciliation provider's methods called directly, with scripted AWS answers."""

from __future__ import annotations

import copy

import pytest
from pulumi.runtime import Settings, configure
from pulumi.runtime.rpc import UNKNOWN
from support import fake_reconcile
from support.pulumi_mocks import failure_path
from support.pulumi_specs import SPEC, SPOT_POOL

from karpenter_gitops.app import stack
from karpenter_gitops_pulumi import reconciliation
from karpenter_gitops_pulumi.reconciliation import (
    ReconciliationError,
    ReconciliationProvider,
    TransientReconciliationError,
)

POOL = SPOT_POOL | {"disruption": {"consolidateAfter": "0s"}}


def props(spec=SPEC, pools=None, cluster=None) -> dict:
    return {
        "nodeClassName": "default",
        "spec": copy.deepcopy(spec),
        "nodePoolSpecs": copy.deepcopy({"general": POOL} if pools is None else pools),
        "cluster": cluster or {"name": "dev", "kubernetesVersion": "1.32"},
    }


@pytest.fixture(autouse=True)
def engine_less_runtime():
    """As in the provider host: no engine connection, so pulumi.log writes to stderr."""
    configure(Settings(project="karpenter-gitops", stack="stack"))


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch):
    monkeypatch.setattr(stack, "reconcile", fake_reconcile.reconcile)
    monkeypatch.setattr(stack, "AwsSession", fake_reconcile.Session)
    monkeypatch.setattr(fake_reconcile, "WORLD", dict(fake_reconcile.WORLD))


provider = ReconciliationProvider()


def test_check_reports_property_path_and_rule_id():
    bad = props(spec=SPEC | {"amiSelectorTerms": [{"alias": "x" * 31}]})
    failures = provider.check({}, bad).failures
    assert ("spec.amiSelectorTerms[0].alias", "schema/size") in [
        (failure_path(f.reason), f.reason.split(" [")[1].split("]")[0]) for f in failures
    ]


def test_check_points_into_the_pool_that_is_wrong():
    pool = copy.deepcopy(POOL)
    pool["weight"] = 101
    failures = provider.check({}, props(pools={"general": pool})).failures
    assert [failure_path(f.reason) for f in failures] == ['nodePoolSpecs["general"].weight']
    assert failures[0].reason.startswith('nodePoolSpecs["general"].weight is 101: ')  # the value, named
    assert [f.property for f in failures] == [""]  # the engine's look-up of a path would print "value {<nil>}"
    assert "[schema/range]" in failures[0].reason


def test_check_never_quotes_a_value_of_specs_from_secret_stack_config():
    pool = copy.deepcopy(POOL) | {"weight": 101}
    shown = provider.check({}, props(pools={"general": pool})).failures[0].reason
    hidden = provider.check({}, props(pools={"general": pool}) | {reconciliation.SECRET_SPECS: True}).failures[0].reason
    assert shown.startswith('nodePoolSpecs["general"].weight is 101: ')
    assert hidden.startswith('nodePoolSpecs["general"].weight: Invalid value')  # the rule's own message, as before


def test_check_does_not_judge_values_unknown_during_preview():
    unknown_profile = SPEC | {"instanceProfile": UNKNOWN}
    del unknown_profile["role"]
    assert provider.check({}, props(spec=unknown_profile)).failures == []
    assert provider.check({}, props(spec=UNKNOWN)).failures == []
    assert provider.check({}, props(cluster=UNKNOWN)).failures == []
    # a known error next to an unknown value is still reported
    mixed = unknown_profile | {"amiSelectorTerms": [{"alias": "x" * 31}]}
    assert {failure_path(f.reason) for f in provider.check({}, props(spec=mixed)).failures} == {"spec.amiSelectorTerms[0].alias"}


def test_check_reports_a_bad_cluster_block():
    failures = provider.check({}, props(cluster={"karpenterVersion": "banana"})).failures
    assert [f.property for f in failures] == ["cluster"]


def test_create_outputs_the_plan_of_the_class_and_its_pools():
    result = provider.create(props())
    assert result.id == "default"
    outs = result.outs
    assert [a["id"] for a in outs["amis"]] == ["ami-0aaa"]
    assert outs["amis"][0]["requirements"] == [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]
    assert outs["instanceProfile"] == "dev_default"
    assert {c["type"]: c["status"] for c in outs["conditions"]}["Ready"] == "True"
    assert outs["nodePools"]["general"]["instanceTypes"] == {"m5.large": "ami-0aaa"}
    assert outs["spec"] == SPEC  # inputs are kept so diff() sees them as olds
    assert set(reconciliation.OUTPUT_KEYS) <= outs.keys()


def test_diff_reports_a_newer_ami_with_its_reason(capsys):
    olds = provider.create(props()).outs
    assert provider.diff("default", olds, props()).changes is False
    fake_reconcile.WORLD["free_ips"] = 7  # subnet usage alone is not a change
    assert provider.diff("default", olds, props()).changes is False
    fake_reconcile.WORLD["ami"] = "ami-0bbb"
    assert provider.diff("default", olds, props()).changes is True
    assert "amis: ['ami-0aaa'] -> ['ami-0bbb']" in capsys.readouterr().err


def test_diff_reports_a_profile_that_disappeared(capsys):
    olds = provider.create(props()).outs
    fake_reconcile.WORLD["profile_exists"] = False
    assert provider.diff("default", olds, props()).changes is True
    assert "InstanceProfileReady=False (InstanceProfileNotFound)" in capsys.readouterr().err


def test_diff_on_changed_inputs_survives_an_aws_outage_and_renames_replace():
    olds = provider.create(props())
    fake_reconcile.WORLD["transient"] = True
    changed = props(spec=SPEC | {"tags": {"team": "a"}})
    assert provider.diff("default", olds.outs, changed).changes is True
    renamed = props() | {"nodeClassName": "other"}
    assert provider.diff("default", olds.outs, renamed).replaces == ["nodeClassName"]


def test_a_change_that_up_would_refuse_fails_the_preview_with_the_same_line():
    olds = provider.create(props()).outs
    fake_reconcile.WORLD["profile_exists"] = False  # the new spec names a profile AWS does not have
    changed = props(spec=SPEC | {"tags": {"team": "a"}})
    with pytest.raises(ReconciliationError) as at_update:
        provider.update("default", olds, changed)
    with pytest.raises(ReconciliationError) as at_preview:  # the engine calls diff, not update, in a preview
        provider.diff("default", olds, changed)
    assert str(at_preview.value) == str(at_update.value)
    assert str(at_preview.value).startswith("EC2NodeClass default would not become Ready: InstanceProfileReady=False")


@pytest.mark.parametrize("world", [{"credentials": False}, {"transient": True}], ids=["no credentials", "aws outage"])
def test_a_change_that_cannot_be_reconciled_now_is_left_to_the_update(world, capsys):
    olds = provider.create(props()).outs
    fake_reconcile.WORLD.update(world)
    assert provider.diff("default", olds, props(spec=SPEC | {"tags": {"team": "a"}})).changes is True
    assert "could not reconcile the change now, the update will" in capsys.readouterr().err


def test_a_change_with_values_not_known_yet_is_judged_by_the_update():
    olds = provider.create(props()).outs
    fake_reconcile.WORLD["profile_exists"] = False
    assert provider.diff("default", olds, props(spec=SPEC | {"role": UNKNOWN})).changes is True


def test_diff_during_an_aws_outage_assumes_no_change(capsys):
    olds = provider.create(props()).outs
    fake_reconcile.WORLD["transient"] = True
    assert provider.diff("default", olds, props()).changes is False
    assert "could not re-resolve" in capsys.readouterr().err


def test_update_during_an_aws_outage_raises_transient_and_returns_nothing():
    olds = provider.create(props()).outs
    fake_reconcile.WORLD["transient"] = True
    with pytest.raises(TransientReconciliationError, match="transient AWS failure, nothing changed"):
        provider.update("default", olds, props())


def test_update_returns_fresh_outputs_not_an_empty_dict():
    olds = provider.create(props()).outs
    fake_reconcile.WORLD["ami"] = "ami-0bbb"
    outs = provider.update("default", olds, props()).outs
    assert [a["id"] for a in outs["amis"]] == ["ami-0bbb"]


def test_a_class_that_would_not_be_ready_fails_with_one_line():
    fake_reconcile.WORLD["profile_exists"] = False
    with pytest.raises(ReconciliationError) as err:
        provider.create(props())
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("EC2NodeClass default would not become Ready: InstanceProfileReady=False")


def test_read_refreshes_and_keeps_last_known_good_when_aws_fails():
    olds = provider.create(props()).outs
    fake_reconcile.WORLD["ami"] = "ami-0bbb"
    assert [a["id"] for a in provider.read("default", olds).outs["amis"]] == ["ami-0bbb"]
    fake_reconcile.WORLD["transient"] = True
    assert provider.read("default", olds).outs == olds


def test_delete_touches_nothing():
    fake_reconcile.WORLD["transient"] = True  # would raise if AWS were called
    assert provider.delete("default", props()) is None


def test_check_blocks_an_update_the_api_server_would_refuse():
    # Karpenter 1.6 keeps spec.role immutable (an oldSelf rule no offline check can see).
    cluster = {"name": "dev", "kubernetesVersion": "1.32", "karpenterVersion": "1.6"}
    olds = props(cluster=cluster)
    news = props(spec=SPEC | {"role": "KarpenterNodeRole-other"}, cluster=cluster)
    result = ReconciliationProvider().check(olds, news)
    assert [(failure_path(f.reason), "transition/role-immutable" in f.reason) for f in result.failures] == [("spec.role", True)]
    assert ReconciliationProvider().check({}, news).failures == []  # a create has nothing to compare with
    on_17 = {**cluster, "karpenterVersion": "1.7"}
    assert ReconciliationProvider().check(props(cluster=on_17), props(spec=news["spec"], cluster=on_17)).failures == []


def test_the_stacks_node_overlays_reach_the_reconciliation_as_they_reach_plan(monkeypatch):
    """`pulumi preview` shows what `plan` shows: the class's pools repriced by the stack's NodeOverlays. An
    overlay's own findings are its component's, not repeated by the reconciliation's check."""
    from karpenter_gitops.rules.examples import BASE_NODEOVERLAY

    seen = []
    monkeypatch.setattr(
        stack, "reconcile", lambda inputs, **rest: seen.append(inputs) or fake_reconcile.reconcile(inputs, **rest)
    )
    overlay = BASE_NODEOVERLAY["spec"] | {"priceAdjustment": "-10%"}
    with_overlay = props(cluster={"name": "dev", "kubernetesVersion": "1.32", "featureGates": {"NodeOverlay": True}}) | {
        "nodeOverlaySpecs": {"cheaper": overlay}
    }
    provider.create(with_overlay)
    assert [o.name for o in seen[0].node_overlays] == ["cheaper"]
    broken = with_overlay | {"nodeOverlaySpecs": {"cheaper": overlay | {"weight": -1}}}
    assert provider.check({}, broken).failures == []
    assert provider.diff("default", with_overlay, broken).changes


WEB = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {
        "replicas": 3.0,  # as the engine hands numbers over
        "template": {"spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}},
    },
}
HUGE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "huge", "namespace": "shop"},
    "spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": "900"}}}]},
}


@pytest.fixture
def simulated_forecaster(monkeypatch):
    seen = []
    monkeypatch.setattr(fake_reconcile, "FORECASTS", seen)
    monkeypatch.setattr(stack, "forecaster", fake_reconcile.forecaster)
    return seen


def test_workloads_add_the_forecast_of_the_class_pools_as_an_output(simulated_forecaster):
    outs = provider.create(props() | {"workloads": [WEB, HUGE]}).outs
    forecast = outs["forecast"]
    general = forecast["nodePools"]["general"]
    assert forecast["pods"] == 4 and general["pods"] == 3
    assert [(c["instanceType"], c["capacityType"], c["pods"]) for c in general["nodeClaims"]] == [("m5.xlarge", "spot", 3)]
    assert general["pricePerHour"] == {"low": 0.192, "high": 0.192} and general["pricePerMonth"]["low"] == round(0.192 * 730, 6)
    assert general["limitCost"]["cheapest"]["nodes"] == 4  # m5.large, 2 vCPU, under cpu 8
    assert general["limitCost"]["cheapest"]["capacityType"] == "spot"  # no spot prices: spot at on-demand
    ((huge),) = forecast["unschedulable"]
    assert huge["workload"] == "shop/Pod/huge" and huge["pods"] == 1 and huge["message"]
    assert [(r["nodePool"], r["kind"]) for r in huge["reasons"]] == [("general", "resources")]  # 900 cpu fits no type
    inputs, plan, workloads, sources = simulated_forecaster[0]
    assert sources == [stack.WORKLOADS] and workloads.pods[0].uid == "shop/web-0"  # replicas 3.0 read as 3
    assert outs["workloads"] == [WEB, HUGE]  # echoed, so diff() sees them as olds
    assert provider.diff("default", outs, props() | {"workloads": [WEB]}).changes


def test_without_workloads_no_output_key_changes(simulated_forecaster):
    outs = provider.create(props()).outs
    assert "forecast" not in outs and "workloads" not in outs and not simulated_forecaster
    assert not provider.diff("default", outs, props()).changes


def test_a_changed_forecast_is_a_change_with_its_reason(simulated_forecaster, monkeypatch, capsys):
    with_workloads = props() | {"workloads": [WEB]}
    olds = provider.create(with_workloads).outs
    assert not provider.diff("default", olds, with_workloads).changes
    olds["forecast"]["nodePools"]["general"]["nodeClaims"][0]["instanceType"] = "m5.large"
    olds["forecast"]["pricePerHour"] = {"low": 0.096, "high": 0.096}
    assert provider.diff("default", olds, with_workloads).changes
    assert "forecast for the workloads: $0.0960/h -> $0.1920/h" in capsys.readouterr().err
