"""Outside text in markdown: inert text as written, everything else as inline code, in every place a
comment puts it (a list item's start, mid-sentence, a table cell, a quote, an HTML summary), judged by
parsing the result (``support.markdown_oracle``), not by how the renderer decided."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from support.markdown_oracle import HOSTILE_VALUE, PAYLOAD, check

from karpenter_gitops.core.text import visible
from karpenter_gitops.output.markdown import EMPTY, PROSE_LIMIT, VALUE_LIMIT, OutsideText, code_span, inert, table

_CODE = MarkdownIt("commonmark").enable("table")
ANY_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
VALUES = st.one_of(HOSTILE_VALUE, ANY_TEXT, st.lists(PAYLOAD, min_size=1, max_size=6).map(" ".join))


def _codes(markdown: str) -> list[str]:
    """The content of every code span, as CommonMark reads it."""
    return [
        child.content
        for token in _CODE.parse(markdown)
        if token.type == "inline"
        for child in token.children
        if child.type == "code_inline"
    ]


def _comment(quoted: OutsideText, value: str, message: str) -> str:
    """Every place a comment writes outside text, with ``value`` and a sentence of ours quoting ``message``."""
    sentence = f"instance profile '{message}' has no role"
    rows = [[quoted.code(value, cell=True), quoted.prose(value, cell=True), quoted.prose(sentence, cell=True), "ours"]]
    return "\n".join(
        [
            "<!-- karpenter-gitops-preview -->",
            "### Karpenter preview: :x: 1 blocking problem(s)",
            "",
            f"**Objects** vs {quoted.code(value)}: 1 added.",
            f"- {quoted.prose(value) or EMPTY}",
            f"- {quoted.code('EC2NodeClass/' + value)} {quoted.prose(value)}: {quoted.prose(sentence)} [{quoted.code(value)}]",
            f"- {quoted.code(value)}: {quoted.prose(value)} ({quoted.prose(message)}) → {quoted.prose(message)}.",
            "",
            table(["object", "value", "message", "note"], rows),
            "",
            f"> {quoted.prose(value) or EMPTY}",
            "",
            f"<details><summary>~ {quoted.html(value)} (changed, +1 −1)</summary>",
            "",
            "```diff",
            "+x",
            "```",
            "",
            "</details>",
            quoted.cut_details("this comment"),
        ]
    )


@settings(max_examples=150, deadline=None)
@given(value=VALUES, message=VALUES)
def test_nothing_outside_becomes_markup_wherever_it_lands(value, message):
    check(_comment(OutsideText(), value, message))


@settings(max_examples=30, deadline=None)
@given(value=VALUES, message=VALUES)
def test_in_the_full_report_too_where_nothing_is_cut(value, message):
    check(_comment(OutsideText(cut=False), value * 20, message * 20))


@settings(max_examples=100, deadline=None)
@given(value=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30) | HOSTILE_VALUE)
def test_a_value_is_one_code_span_holding_it_exactly(value):
    """Backticks in the value, at its edges, spaces around it: CommonMark reads back the value as shown."""
    assert _codes(f"x {OutsideText(cut=False).code(value)} y") == [visible(value)]


@settings(max_examples=100, deadline=None)
@given(words=st.lists(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9.,;'()/=%-]{0,8}", fullmatch=True), min_size=1, max_size=8))
def test_inert_text_reads_as_written(words):
    text = " ".join(words)
    if re.fullmatch(r"[-+=]+|\d{1,9}[.)]", words[0]) or not all(inert(word) for word in words):
        return  # a list marker where a line may start, or a hash or an emoji: code, tested above
    assert OutsideText().prose(text) == text


def test_the_issue_examples_are_code_and_ordinary_messages_unchanged():
    quoted = OutsideText()
    assert quoted.prose("'[x](https://evil.example/p)' is not a al2023 AMI version") == (
        "`'[x](https://evil.example/p)'` is not a al2023 AMI version"
    )
    assert quoted.prose("no node launches (use 'Profile | :white_check_mark: **approved** |')") == (
        "no node launches (use `'Profile | :white_check_mark: **approved** |'`)"
    )
    for ordinary in (
        "instance profile 'PaymentsNodeProfile-v2' has no role; nodes would get no credentials",
        "spec.amiSelectorTerms[0].alias: Too long: may not be more than 30 bytes",
        "m5.large at $0.00096/h on-demand",
    ):
        assert quoted.prose(ordinary) == ordinary
    # An underscore makes emphasis only at a word's edge, yet a word holding one reads as a value: code.
    assert quoted.prose("image amazon-eks-node-al2023-x86_64-standard-1.32 and 0_ok_0") == (
        "image `amazon-eks-node-al2023-x86_64-standard-1.32` and `0_ok_0`"
    )


def test_what_github_would_act_on_is_code_even_in_plain_words():
    quoted = OutsideText()
    assert quoted.prose("see www.example.com or GH-12") == "see `www.example.com` or `GH-12`"
    assert quoted.prose("commit deadbeef1234 broke it") == "commit `deadbeef1234` broke it"
    assert quoted.prose("ask @octocat about #12") == "ask `@octocat` about `#12`"
    assert quoted.prose("costs $0.5 not $x") == "costs $0.5 not `$x`"
    assert quoted.prose("taint dedicated=gpu:NoSchedule is lost") == "taint dedicated=gpu:NoSchedule is lost"
    assert quoted.prose("lost: dedicated=gpu:NoSchedule") == "lost: `dedicated=gpu:NoSchedule`"  # a colon after it: an emoji
    assert quoted.prose("- 1. at a line's start") == "`-` 1. at a line's start"


def test_code_spans_take_the_shortest_fence_the_value_lacks():
    assert code_span("a`b") == "``a`b``"
    assert code_span("``") == "` `` `"
    assert code_span(" a ") == "`  a  `"
    assert code_span("   ") == "`   `"
    assert code_span("") == "(empty)"


def test_a_long_value_is_cut_and_kept_whole_in_a_fold():
    quoted = OutsideText()
    shown = quoted.code("n" * (VALUE_LIMIT + 10))
    assert shown == f"`{'n' * VALUE_LIMIT}`… (cut, 1 below)"
    shown = quoted.prose("word " * PROSE_LIMIT)
    assert shown.endswith("… (cut, 2 below)") and len(shown) < PROSE_LIMIT + 40
    details = quoted.cut_details("the errors")
    assert "<summary>Full text of 2 value(s) cut in the errors</summary>" in details
    assert f"\n1: {'n' * (VALUE_LIMIT + 10)}\n" in details and "\n2: word word" in details
    assert OutsideText().cut_details("x") == ""
    check(f"- {shown}\n{details}")


def test_a_cell_ends_before_a_backslash_and_pipe_which_github_would_split():
    quoted = OutsideText(cut=False)
    assert quoted.code("a|b", cell=True) == "`a\\|b`"
    assert quoted.code("a\\|b", cell=True) == "`a`… (cut, 1 below)"
    assert "1: a\\|b" in quoted.cut_details("the table")
