"""Hygiene policies, per-stack policy settings and waivers, through `validate(..., policy=True)`."""

from __future__ import annotations

import copy
import datetime as dt
import re

import pytest
import yaml

from karpenter_gitops.core import inputs
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.inputs import Waiver
from karpenter_gitops.judge import validate
from karpenter_gitops.load import into_inputs, waiver_files
from karpenter_gitops.rules import policy, registry
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

TODAY = dt.date(2026, 3, 1)


def stack(node_class_patch=None, **settings) -> dict:
    """A stack document with the base objects and ``karpenter-gitops:<key>`` settings."""
    node_class = {**copy.deepcopy(BASE_NODECLASS["spec"]), **(node_class_patch or {})}
    doc = {
        "karpenter-gitops:nodeClasses": {"default": node_class},
        "karpenter-gitops:nodePools": {"general": copy.deepcopy(BASE_NODEPOOL["spec"])},
    }
    doc.update({f"karpenter-gitops:{key}": value for key, value in settings.items()})
    return {"config": doc}


def load(doc) -> inputs.Inputs:
    return into_inputs.load_documents([("Pulumi.test.yaml", [doc])])


def by_rule(report, rule_id):
    return [f for f in report.findings if f.rule == rule_id]


LATEST = {"amiSelectorTerms": [{"alias": "al2023@latest"}]}


def test_policy_rules_run_only_when_asked():
    inputs = load(stack({"metadataOptions": {"httpTokens": "optional"}}))
    assert not by_rule(validate(inputs), "policy/imdsv2-required")
    assert by_rule(validate(inputs, policy=True), "policy/imdsv2-required")


def test_production_raises_latest_alias_to_an_error():
    assert by_rule(validate(load(stack(LATEST)), policy=True), "nodeclass/alias-latest")[0].severity.value == "warning"
    report = validate(load(stack(LATEST, policy={"production": True})), policy=True)
    assert by_rule(report, "nodeclass/alias-latest")[0].severity.value == "error"
    assert report.errors >= 1


def test_stack_overrides_severity_and_disables_rules():
    settings = {"rules": {"nodeclass/alias-latest": {"severity": "info"}, "policy/detailed-monitoring": {"enabled": False}}}
    report = validate(load(stack(LATEST, policy={"production": True, **settings})), policy=True)
    assert by_rule(report, "nodeclass/alias-latest")[0].severity.value == "info"
    assert not by_rule(report, "policy/detailed-monitoring")


def test_limits_come_from_the_stack():
    hop = {"metadataOptions": {"httpPutResponseHopLimit": 2}}
    assert by_rule(validate(load(stack(hop)), policy=True), "policy/imds-hop-limit")
    assert not by_rule(validate(load(stack(hop, policy={"maxHopLimit": 2})), policy=True), "policy/imds-hop-limit")
    pool = load(stack(policy={"maxExpireAfter": "168h"}))
    assert (
        "maxExpireAfter is 168h (set by the stack in Pulumi.test.yaml)"
        in by_rule(validate(pool, policy=True), "policy/expire-after-bounded")[0].message
    )


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"rules": {"policy/hop-limit": {"severity": "error"}}}, "unknown rule id 'policy/hop-limit'"),
        ({"rules": {"schema/unknown-field": {"enabled": False}}}, "mirrors Karpenter's own validation"),
        ({"production": "yes"}, "expected true or false"),
        ({"maxHopLimt": 1}, "did you mean 'maxHopLimit'"),
        ({"maxExpireAfter": "30d"}, "a duration like 720h"),
        ({"rules": {"policy/ami-owner": {"severity": "fatal"}}}, "expected one of error, warning, info"),
    ],
)
def test_malformed_policy_settings_are_input_errors(settings, expected):
    with pytest.raises(InputError, match=expected) as err:
        load(stack(policy=settings))
    assert err.value.file == "Pulumi.test.yaml"


def test_catalogue_names_registered_rules_and_production_severities_are_stricter():
    for rule_ids in policy.CATALOGUE.values():
        assert all(rule_id in registry.RULES for rule_id in rule_ids)
    order = [Severity.INFO, Severity.WARNING, Severity.ERROR]
    raised = [r for r in registry.RULES.values() if r.production is not None]
    assert {r.id for r in raised} == {"nodeclass/alias-latest", "policy/detailed-monitoring"}
    assert all(order.index(r.production) > order.index(r.severity) for r in raised)


def test_secret_finding_names_the_line_but_not_the_secret():
    user_data = "#!/bin/bash\necho ok\nexport AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"
    (finding,) = by_rule(validate(load(stack({"userData": user_data})), policy=True), "policy/userdata-secrets")
    assert "line 3" in finding.message and "AKIA" not in finding.message


# --- waivers ------------------------------------------------------------------------------

HOP = {"metadataOptions": {"httpPutResponseHopLimit": 2}}


def waiver(expires=dt.date(2026, 6, 30), **fields) -> Waiver:
    return Waiver(
        **{"rule": "policy/imds-hop-limit", "object": "def*", "reason": "CUDA needs IMDS", "expires": expires, **fields}
    )


def test_active_waiver_marks_the_finding_and_stops_it_counting():
    report = validate(load(stack(HOP)), policy=True, waivers=[waiver()], today=TODAY)
    (finding,) = by_rule(report, "policy/imds-hop-limit")
    assert report.waived[finding].object == "def*"
    assert report.warnings == len([f for f in report.findings if f.severity.value == "warning"]) - 1
    body = report.to_json()
    assert body["waivers"] == [waiver().to_json()]
    entry = next(f for f in body["findings"] if f["rule"] == "policy/imds-hop-limit")
    assert entry["waived"] is True and entry["waiver"]["reason"] == "CUDA needs IMDS"
    assert all(f["waived"] is False and f["waiver"] is None for f in body["findings"] if f is not entry)


def test_waiver_holds_through_its_expiry_day_and_is_reported_after():
    on_the_day = validate(load(stack(HOP)), policy=True, waivers=[waiver(expires=TODAY)], today=TODAY)
    assert not by_rule(on_the_day, policy.WAIVER_EXPIRED) and on_the_day.waived
    after = validate(load(stack(HOP)), policy=True, waivers=[waiver(expires=TODAY)], today=TODAY + dt.timedelta(days=1))
    (expired,) = by_rule(after, policy.WAIVER_EXPIRED)
    assert expired.severity.value == "warning" and "expired on 2026-03-01" in expired.message
    assert not after.waived and after.waivers == () and by_rule(after, "policy/imds-hop-limit")


def test_waiver_matches_rule_kind_and_name_glob():
    finding = by_rule(validate(load(stack(HOP)), policy=True), "policy/imds-hop-limit")[0]
    assert waiver(object="*").covers(finding)
    assert not waiver(object="gpu-*").covers(finding)
    assert not waiver(kind="NodePool").covers(finding)
    assert not waiver(rule="policy/ami-owner").covers(finding)


def test_stack_config_waivers_apply():
    entry = {"rule": "policy/imds-hop-limit", "object": "default", "reason": "r", "expires": "2026-12-31"}
    report = validate(load(stack(HOP, waivers=[entry])), policy=True, today=TODAY)
    assert report.waived and report.waivers[0].entry == "karpenter-gitops:waivers[0]"


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (
            {"rule": "policy/hop-limit", "object": "x", "reason": "r", "expires": "2026-01-01"},
            "waivers[0]: unknown rule id 'policy/hop-limit'",
        ),
        ({"rule": "policy/ami-owner", "object": "x", "expires": "2026-01-01"}, "waivers[0]: missing reason"),
        ({"rule": "policy/ami-owner", "object": "x", "reason": "r", "expires": "next year"}, "not an ISO date"),
        (
            {"rule": "policy/ami-owner", "object": "x", "reason": "r", "expires": "2026-01-01", "owner": "me"},
            "unknown field 'owner'",
        ),
        ({"rule": policy.WAIVER_EXPIRED, "object": "x", "reason": "r", "expires": "2026-01-01"}, "cannot be waived"),
        # a list where a kind belongs (found by tests/fuzz: a traceback before)
        (
            {"rule": "policy/ami-owner", "object": "x", "reason": "r", "expires": "2026-01-01", "kind": [None]},
            "waivers[0]: kind [None] is not one of",
        ),
    ],
)
def test_malformed_waivers_are_input_errors_naming_the_entry(tmp_path, entry, expected):
    path = tmp_path / "waivers.yaml"
    path.write_text(yaml.safe_dump({"waivers": [entry]}))
    with pytest.raises(InputError, match=re.escape(expected)):
        waiver_files.read_file(path)
