"""Editing a stack file for a bump: only the moved values change, byte for byte."""

from __future__ import annotations

import pytest

from karpenter_gitops.app.bump import (
    PinChange,
    rewrite_stack,
    stack_diff,
)
from karpenter_gitops.core.errors import InputError

STACK = """\
# Top comment, kept.
config:
    aws:region:   us-west-2      # odd spacing, kept
    karpenter-gitops:nodeClasses:
        # default: the EKS-optimized release
        default:
            amiSelectorTerms:
            - alias: "al2023@v20250201"   # quoted, indentless list
            role: KarpenterNodeRole-demo
        gpu:
            amiSelectorTerms: [ {alias: 'bottlerocket@1.32.0'} ]
        payments:
            amiFamily: AL2023
            amiSelectorTerms:
              - id: ami-0c9a000000000f001   # last week's build
              # a comment between items goes with them
              - id: ami-0c9a000000000f009

            # a comment after the list, kept
            role: KarpenterNodeRole-demo
        flow:
            amiSelectorTerms: [{id: ami-1}]   # flow list, kept flow
"""

EXPECTED = """\
# Top comment, kept.
config:
    aws:region:   us-west-2      # odd spacing, kept
    karpenter-gitops:nodeClasses:
        # default: the EKS-optimized release
        default:
            amiSelectorTerms:
            - alias: "al2023@v20250212"   # quoted, indentless list
            role: KarpenterNodeRole-demo
        gpu:
            amiSelectorTerms: [ {alias: 'bottlerocket@1.33.0'} ]
        payments:
            amiFamily: AL2023
            amiSelectorTerms:
              - id: ami-0c9a000000000f002
              - id: ami-0c9a000000000f003

            # a comment after the list, kept
            role: KarpenterNodeRole-demo
        flow:
            amiSelectorTerms: [{id: ami-2}, {id: ami-3}]   # flow list, kept flow
"""


def change(node_class: str, *new: dict) -> PinChange:
    return PinChange(node_class, (), tuple(new), "test", ())


CHANGES = [
    change("default", {"alias": "al2023@v20250212"}),
    change("gpu", {"alias": "bottlerocket@1.33.0"}),
    change("payments", {"id": "ami-0c9a000000000f002"}, {"id": "ami-0c9a000000000f003"}),
    change("flow", {"id": "ami-2"}, {"id": "ami-3"}),
]


def test_only_the_moved_values_change():
    assert rewrite_stack(STACK, CHANGES, "Pulumi.t.yaml") == EXPECTED


def test_no_change_is_the_identical_text():
    assert rewrite_stack(STACK, [], "Pulumi.t.yaml") is STACK
    assert stack_diff(STACK, STACK, "Pulumi.t.yaml") == ""


def test_block_items_written_in_flow_keep_that_style():
    text = "config:\n  karpenter-gitops:nodeClasses:\n    a:\n      amiSelectorTerms:\n        - {id: ami-1}\n"
    edited = rewrite_stack(text, [change("a", {"id": "ami-2"}, {"id": "ami-3"})], "t.yaml")
    assert edited.endswith("      amiSelectorTerms:\n        - {id: ami-2}\n        - {id: ami-3}\n")


def test_the_diff_shows_only_the_moved_lines():
    diff = stack_diff(STACK, EXPECTED, "stacks/Pulumi.t.yaml")
    assert diff.startswith("--- a/stacks/Pulumi.t.yaml\n+++ b/stacks/Pulumi.t.yaml\n")
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    assert len(removed) == 6  # alias, alias, two ids and the comment between them, the flow list


def test_an_alias_written_as_a_block_scalar_is_refused():
    text = (
        "config:\n  karpenter-gitops:nodeClasses:\n    a:\n      amiSelectorTerms:\n        - alias: >-\n            al2023@v1\n"
    )
    with pytest.raises(InputError, match="edit it by hand"):
        rewrite_stack(text, [change("a", {"alias": "al2023@v2"})], "t.yaml")
