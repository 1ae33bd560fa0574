"""Waivers an object carries in its karpenter-gitops.io/ignore annotation, as the judge applies them: the
object's own findings of that rule are waived in every run (--policy or not) and fail nothing; what
Karpenter itself refuses stays, whatever the annotation says; the pack honours them as validate does."""

from __future__ import annotations

import datetime as dt
from typing import Any

from karpenter_gitops.app import analyze
from karpenter_gitops.core.findings import IGNORE_ANNOTATION, InlineWaiver, Severity, Waiver
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.judge import validate
from karpenter_gitops.judge.report import Report, Tally
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch

NO_EBS = "nodeclass/block-device-without-ebs"  # this project's own error: a block device with nothing to mount
HOP_LIMIT = "policy/imds-hop-limit"  # a house-style policy: reported with --policy


def node_class(name: str = "default", ignore: Any = None, **spec: Any) -> dict:
    patch: dict[str, Any] = {"metadata": {"name": name}, "spec": spec}
    if ignore is not None:
        patch["metadata"]["annotations"] = {IGNORE_ANNOTATION: ignore}
    return merge_patch(BASE_NODECLASS, patch)


NO_EBS_SPEC = {"blockDeviceMappings": [{"deviceName": "/dev/xvdb"}]}
HOP_SPEC = {"metadataOptions": {"httpPutResponseHopLimit": 2}}


def judged(*classes: dict, policy: bool = False, waivers: tuple[Waiver, ...] = ()) -> Report:
    inputs = load_documents([("nodes.yaml", [*classes, dict(BASE_NODEPOOL)])])
    return validate(inputs, policy=policy, waivers=waivers, today=dt.date(2026, 3, 1))


def of(report: Report, rule: str) -> list:
    return [f for f in report.findings if f.rule == rule]


def test_an_annotated_error_is_waived_without_policy_and_fails_nothing():
    bare = judged(node_class(**NO_EBS_SPEC))
    assert (bare.errors, bare.exit_code) == (1, Outcome.FINDINGS)
    report = judged(node_class(ignore=f"{NO_EBS}: instance-store volume, mounted by our userData", **NO_EBS_SPEC))
    [finding] = of(report, NO_EBS)
    waiver = report.waived[finding]
    assert isinstance(waiver, InlineWaiver) and waiver.reason == "instance-store volume, mounted by our userData"
    assert (report.errors, report.exit_code) == (0, Outcome.OK)
    assert report.waivers == (waiver,)
    assert report.to_json()["summary"] == {"errors": 0, "warnings": 0, "objects": 2, "waived": 1}
    assert report.finding_json(finding)["waiver"] == {
        "rule": NO_EBS,
        "object": "default",
        "reason": "instance-store volume, mounted by our userData",
        "expires": None,
        "kind": "EC2NodeClass",
        "file": "nodes.yaml",
        "entry": f"metadata.annotations[{IGNORE_ANNOTATION}]",
        "inline": True,
    }


def test_a_run_without_annotations_keeps_its_json_contract():
    assert "waived" not in judged(node_class(**NO_EBS_SPEC)).to_json()["summary"]


def test_it_covers_its_own_object_alone():
    report = judged(node_class("gpu", ignore=f"{NO_EBS}: instance store", **NO_EBS_SPEC), node_class("cpu", **NO_EBS_SPEC))
    assert {f.name: f in report.waived for f in of(report, NO_EBS)} == {"gpu": True, "cpu": False}
    assert report.errors == 1


def test_it_covers_its_rule_alone():
    report = judged(node_class(ignore=f"{HOP_LIMIT}: PLAT-1", **NO_EBS_SPEC))
    assert (report.errors, report.waived) == (1, {})


def test_a_house_policy_waived_inline_with_policy_beside_a_waiver_files():
    filed = Waiver("policy/detailed-monitoring", "*", "dashboards elsewhere", dt.date(2026, 12, 31), file="waivers.yaml")
    report = judged(
        node_class(ignore=f"{HOP_LIMIT}: CUDA images read IMDS until PLAT-123", **HOP_SPEC), policy=True, waivers=(filed,)
    )
    [hop] = of(report, HOP_LIMIT)
    assert isinstance(report.waived[hop], InlineWaiver)
    assert report.waived[of(report, "policy/detailed-monitoring")[0]] == filed
    assert report.waivers[0] == filed and isinstance(report.waivers[1], InlineWaiver)


def test_what_karpenter_refuses_stays_whatever_the_annotation_says():
    rule = registry.RULES["cel/ami-alias-single-term"]
    assert rule.origin == "karpenter"
    spec = rule.bad[0]["spec"]
    report = judged(node_class(ignore=f"{rule.id}: we know better", **spec), policy=True)
    assert of(report, rule.id) and not report.waived
    assert report.exit_code == Outcome.FINDINGS
    [said] = of(report, "manifest/ignore-annotation")
    assert said.severity is Severity.WARNING and "cannot be waived" in said.message


def test_an_entry_without_a_reason_is_a_warning_and_waives_nothing():
    report = judged(node_class(ignore=NO_EBS, **NO_EBS_SPEC))
    assert report.errors == 1 and not report.waived
    [said] = of(report, "manifest/ignore-annotation")
    assert said.hint == f'say why after a colon: "{NO_EBS}: <reason>"'


def test_parts_of_a_streamed_run_list_each_inline_waiver_once():
    filed = Waiver(HOP_LIMIT, "*", "r", dt.date(2030, 1, 1))
    first = InlineWaiver(NO_EBS, "a", "r", kind="EC2NodeClass", file="a.yaml")
    second = InlineWaiver(NO_EBS, "b", "r", kind="EC2NodeClass", file="b.yaml")
    total = Tally(policy=True, waivers=(filed, first)) + Tally(policy=True, waivers=(filed, second))
    assert total.waivers == (filed, first, second)


def test_the_policy_pack_honours_the_annotation():
    rule = registry.RULES[NO_EBS]
    resource = node_class(ignore=f"{NO_EBS}: instance store", **NO_EBS_SPEC)
    urn = "urn:pulumi:dev::infra::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::default"
    found = analyze.judge_rule(rule, analyze.load_resources([(urn, resource)]), analyze.settings(rule, {}, "pack"))
    assert [f.rule for f in found] == [NO_EBS]
    assert analyze.unwaived(found, ()) == []
