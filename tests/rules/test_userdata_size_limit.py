"""userdata/size-limit: the limit judged on the userData Karpenter sends, merged for the class's family."""

from __future__ import annotations

import pytest
from support.rule_helpers import findings, fired, node_class

from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.userdata.common import MAX_BYTES

RULE = "userdata/size-limit"


def _merged_to(size: int, family: str = "AL2023") -> str:
    """A script whose merged userData for ``family`` is exactly ``size`` bytes."""
    overhead = len(amifamily.by_name(family).render_userdata("#", (1, 15)).encode()) - 1
    return "#" * (size - overhead)


def _class(user_data: str, alias: str = "al2023@latest") -> dict:
    return node_class({"spec": {"amiSelectorTerms": [{"alias": alias}], "userData": user_data}})


@pytest.mark.parametrize(("size", "fires"), [(MAX_BYTES - 1, False), (MAX_BYTES, False), (MAX_BYTES + 1, True)])
@pytest.mark.parametrize(
    ("family", "alias"), [("AL2023", "al2023@latest"), ("AL2", "al2@latest"), ("Windows2022", "windows2022@latest")]
)
def test_the_boundary_as_ec2_counts_it(size, fires, family, alias):
    found = fired(findings(_class(_merged_to(size, family), alias), release=(1, 15)), RULE)
    assert len(found) == fires
    if fires:
        [(path, message)] = found
        assert path == "spec.userData"
        assert f"this {family} class is at least {MAX_BYTES + 1:,} bytes" in message
        assert f"EC2 accepts at most {MAX_BYTES:,}" in message


def test_the_finding_names_the_release_condition_and_the_excess():
    [finding] = [f for f in findings(_class(_merged_to(MAX_BYTES + 100)), release=(1, 15)) if f.rule == RULE]
    assert finding.message.endswith("Karpenter reports ValidationSucceeded=False, reason UserDataSizeLimitExceeded")
    assert finding.hint.startswith("cut at least 100 bytes")
    [older] = fired(findings(_class(_merged_to(MAX_BYTES + 100)), release=(1, 9)), RULE)
    assert "ValidationSucceeded" not in older[1]


def test_over_the_limit_as_written_is_left_to_userdata_size():
    rules = {f.rule for f in findings(_class("#" * (MAX_BYTES + 1)), release=(1, 15))}
    assert "userdata/size" in rules and RULE not in rules


def test_custom_is_measured_as_written_and_never_twice():
    custom = {"spec": {"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}], "userData": "#" * MAX_BYTES}}
    assert not [f for f in findings(node_class(custom), release=(1, 15)) if f.severity.value == "error"]


def test_bottlerocket_comments_are_not_counted():
    """Karpenter re-emits Bottlerocket's settings: a long comment never reaches EC2."""
    text = "# " + "x" * 16_300 + "\n[settings.kubernetes]\nmax-pods = 110\n"
    assert not fired(findings(_class(text, "bottlerocket@1.32.0"), release=(1, 15)), RULE)
