"""An object's karpenter-gitops.io/ignore annotation, read: one RULE-ID: REASON per line, each entry a waiver of
that object alone, or, when it waives nothing, a violation saying why (never an error that stops the run)."""

from __future__ import annotations

import pytest

from karpenter_gitops.core.findings import IGNORE_ANNOTATION, InlineWaiver
from karpenter_gitops.load.inline_waivers import PATH, read


def _read(value):
    return read({"name": "gpu", "annotations": {IGNORE_ANNOTATION: value}}, "EC2NodeClass", "gpu", "deploy/gpu.yaml")


def test_one_waiver_per_line_each_of_the_object_alone():
    waivers, misread = _read(
        "policy/imds-hop-limit: CUDA images read the region from IMDS, see PLAT-123: until Q3\n\n"
        "  policy/detailed-monitoring:   the node exporter covers it  \n"
    )
    assert misread == []
    assert waivers == (
        InlineWaiver(
            "policy/imds-hop-limit",
            "gpu",
            "CUDA images read the region from IMDS, see PLAT-123: until Q3",  # commas and colons belong to the reason
            kind="EC2NodeClass",
            file="deploy/gpu.yaml",
            entry=f"{PATH}, line 1",
        ),
        InlineWaiver(
            "policy/detailed-monitoring",
            "gpu",
            "the node exporter covers it",
            kind="EC2NodeClass",
            file="deploy/gpu.yaml",
            entry=f"{PATH}, line 3",
        ),
    )


def test_a_single_entry_is_the_annotation():
    waivers, _ = _read("policy/imds-hop-limit: PLAT-123")
    assert [w.entry for w in waivers] == [PATH]


@pytest.mark.parametrize(
    ("value", "said", "hint"),
    [
        (
            "policy/imds-hop-limit",
            "the annotation: policy/imds-hop-limit is waived without a reason",
            'say why after a colon: "policy/imds-hop-limit: <reason>"',
        ),
        ("policy/imds-hop-limit:   ", "is waived without a reason", "say why after a colon"),
        (
            "policy/imds-hop-limt: PLAT-1",
            "unknown rule id 'policy/imds-hop-limt', so it waives nothing",
            "did you mean 'policy/imds-hop-limit'?",
        ),
        ("a reason without a rule", "unknown rule id 'a reason without a rule'", "`karpenter-gitops rules` lists the rule ids"),
        (
            "cel/ami-alias-single-term: the API server would refuse it anyway",
            "mirrors Karpenter's own validation, so it cannot be waived",
            "fix the object instead",
        ),
        ("policy/waiver-expired: no", "policy/waiver-expired cannot be waived", "renew or delete the expired waiver"),
        ("manifest/ignore-annotation: no", "manifest/ignore-annotation cannot be waived", "fix the annotation"),
    ],
)
def test_an_entry_that_waives_nothing_says_why(value, said, hint):
    waivers, misread = _read(value)
    assert waivers == ()
    [violation] = misread
    assert violation.path == PATH and said in violation.message and violation.hint.startswith(hint)


def test_good_entries_hold_beside_a_bad_one():
    waivers, misread = _read("policy/imds-hop-limit: PLAT-1\npolicy/ebs-encrypted\n")
    assert [w.rule for w in waivers] == ["policy/imds-hop-limit"]
    assert [v.message.split(":")[0] for v in misread] == ["line 2"]


@pytest.mark.parametrize("value", [["policy/imds-hop-limit: x"], {"policy/imds-hop-limit": "x"}, 5, True])
def test_an_annotation_that_is_not_text_waives_nothing(value):
    assert _read(value)[0] == ()
    assert _read(value)[1][0].message == "the annotation is not text, so it waives nothing"


@pytest.mark.parametrize("metadata", [None, "gpu", {"name": "gpu"}, {"annotations": None}, {"annotations": ["x"]}])
def test_no_annotation_no_waiver(metadata):
    assert read(metadata, "EC2NodeClass", "gpu", "f.yaml") == ((), [])


def test_a_flood_of_bad_entries_is_said_ten_times_then_counted():
    """Each entry said costs a did-you-mean over every rule id: thousands of lines must not take minutes."""
    lines = "".join(f"policy/imds-hop-{n}: r\n" for n in range(5000))
    waivers, misread = _read(lines + "policy/imds-hop-limit: PLAT-1\n")
    assert [w.rule for w in waivers] == ["policy/imds-hop-limit"]
    assert len(misread) == 11 and misread[-1].message == "4990 more entries waive nothing"
