"""One finding per object, field and cause: a rule of ours that explains what the CRD already refuses at the
same path is told once, as the CRD's refusal (which no setting may weaken) with our hint."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.inputs import PolicySettings, RuleSetting
from karpenter_gitops.judge import once, validate
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules.registry import RULES

# The shape of Karpenter's own examples/v1/windows-custom-userdata.yaml: a group written with its version.
WINDOWS_POOL = yaml.safe_load("""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: windows2022}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/os, operator: In, values: [windows]}
      nodeClassRef: {group: karpenter.k8s.aws/v1, kind: EC2NodeClass, name: windows2022}
""")
GROUP = "spec.template.spec.nodeClassRef.group"


def _at_group(settings: PolicySettings | None = None) -> list[Finding]:
    inputs = load_documents([("windows-custom-userdata.yaml", [WINDOWS_POOL])])
    if settings is not None:
        inputs = dataclasses.replace(inputs, policy=settings)
    return [f for f in validate(inputs).findings if f.path == GROUP]


def test_a_group_with_its_version_is_one_finding_the_crds_refusal_with_our_hint():
    (finding,) = _at_group()
    assert (finding.rule, finding.layer, finding.severity) == ("schema/pattern", "api-server", Severity.ERROR)
    assert finding.hint == "drop the version: group takes no '/v1'"


def test_with_our_rule_switched_off_the_refusal_stays_with_its_own_fix():
    (finding,) = _at_group(PolicySettings(rules={"nodepool/node-class-ref-kind": RuleSetting(enabled=False)}))
    assert finding.rule == "schema/pattern" and finding.hint == RULES["schema/pattern"].fix


def test_a_selector_the_class_lacks_is_the_missing_field_not_also_a_selector_that_matches_nothing():
    missing = Finding(
        "schema/required",
        Severity.ERROR,
        "EC2NodeClass",
        "default",
        "spec.subnetSelectorTerms",
        "Required value",
        "nc.yaml",
        "add 'subnetSelectorTerms'",
    )
    nothing = Finding(
        "live/selector-matches-nothing",
        Severity.ERROR,
        "EC2NodeClass",
        "default",
        "spec.subnetSelectorTerms",
        "the subnet selector matches no subnet",
        "nc.yaml",
        RULES["live/selector-matches-nothing"].fix,
    )
    elsewhere = dataclasses.replace(nothing, name="other")
    assert once([missing, nothing, elsewhere]) == [missing, elsewhere]
    assert once([missing, nothing])[0].hint == "add 'subnetSelectorTerms'"  # the live rule's generic fix says less


def test_equal_findings_are_one():
    finding = Finding("schema/pattern", Severity.ERROR, "NodePool", "a", GROUP, "m", "f.yaml")
    assert once([finding, dataclasses.replace(finding, line=3)]) == [finding]


@pytest.mark.parametrize("rule", [r for r in RULES.values() if r.restates], ids=lambda r: r.id)
def test_a_rule_restates_only_refusals_at_least_as_severe_that_never_restate_it(rule):
    for restated in rule.restates:
        other = RULES[restated]
        assert other.layer != "karpenter-gitops" and rule.id not in other.restates
        assert list(Severity).index(other.severity) <= list(Severity).index(rule.severity)
