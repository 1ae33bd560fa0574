"""What a comment the bot posts may hold, judged on the parsed markdown (markdown-it-py, CommonMark with
GitHub's tables and strikethrough), independently of how the renderer decides what to quote.

A comment is ours when every link, image, piece of HTML, heading, emphasis and fence in it is one the
templates write, and when no text outside code holds what GitHub acts on after parsing (a URL, a
mention, an issue reference, an emoji shortcode other than our own, a commit hash, a math span).
:func:`hostile_payloads` lists markup a pull request might bring; :func:`check` asserts none of it is
read as anything but text in code.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import strategies as st
from markdown_it import MarkdownIt

from karpenter_gitops.output import pr_comment

_PARSER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])

# Markup a hostile manifest, AWS account or cluster might carry, each distinctive enough that finding it
# in the text of a comment (outside code) means it was shown as something other than data.
MARKUP = (
    "[x](https://evil.example/p)",
    "![i](https://evil.example/i.png)",
    "<img src=x onerror=alert(1)>",
    "<a href=//evil>",
    "**approved**",
    "__approved__",
    "*ok*",
    "_ok_",
    "~~struck~~",
    ":white_check_mark:",
    ":+1:",
    "@octocat",
    "@org/team",
    "#1234",
    "owner/repo#5",
    "https://evil.example",
    "www.evil.example",
    "admin@evil.example",
    "<https://evil>",
    "`tick`",
    "``",
    "```",
    "| :x: **approved** |",
    "&lt;b&gt;",
    "&amp;",
    "$\\textcolor{green}{ok}$",
    "$$x$$",
    "[ref]: https://evil.example",
    "[^1]",
    "# heading",
    "> quote",
    "<!-- x -->",
    "</details>",
    "<details open>",
    "%%{init: {'theme': 'dark'}}%%",
    '"]; click A "https://evil"',
)
# Hostile too, but harmless as text where they land mid-line; the structure of the parsed comment says
# whether they started anything (a list, a task box, a thematic break, an indented block, an emoji), and
# the text whether GitHub links them (a reference or a hash stands alone, not inside a longer word).
OTHER = (
    "\\",
    "GH-77",
    "deadbeef1234567",
    "[ref]",
    "- [x] done",
    "[x] done",
    "1. item",
    "---",
    "===",
    "x:rocket",
    "    indented",
    "\u202eevil",
    "ü☃",
    "\t",
    "a\nb",
)
PAYLOAD = st.sampled_from(MARKUP + OTHER)
# A value as a manifest, AWS or a cluster might hold it: some ordinary text around one or two payloads.
HOSTILE_VALUE = st.builds(
    lambda before, payloads, after: before + "".join(payloads) + after,
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6),
    st.lists(PAYLOAD, min_size=1, max_size=2),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6),
)

# Our own emphasis and emoji: bold labels of the summary, the verdict's icon, the scissors of a cut; an emoji
# anywhere else (a value's ``:white_check_mark:`` in a sentence) is not ours.
_OUR_EMOJI = re.compile(r"^(Karpenter (preview|verify): )(:x:|:white_check_mark:|:hourglass:) |^:scissors: ")
_OUR_STRONG = {"Objects", "Predicted Ready", "AMIs", "First choice", "Node impact", "Monthly cost", "Pulumi", "Notes"}
_OUR_HEADINGS = re.compile(
    r"(Karpenter (preview|verify): |Blocking errors \(\d+\)$|Node impact$|AMI changes$|Cost forecast: \d+ pod|Stack )"
)
_OUR_FENCES = {"diff", "mermaid", "text"}
_OUR_TAGS = {"details", "summary", "code"}
_BLOCKS = {
    "paragraph_open",
    "paragraph_close",
    "heading_open",
    "heading_close",
    "bullet_list_open",
    "bullet_list_close",
    "list_item_open",
    "list_item_close",
    "blockquote_open",
    "blockquote_close",
    "hr",
    "fence",
    "html_block",
    "inline",
    "table_open",
    "table_close",
    "thead_open",
    "thead_close",
    "tbody_open",
    "tbody_close",
    "tr_open",
    "tr_close",
    "th_open",
    "th_close",
    "td_open",
    "td_close",
}
_INLINES = {"text", "code_inline", "softbreak", "strong_open", "strong_close", "em_open", "em_close"}

# What GitHub acts on in text that is not code, after CommonMark: autolinks, mentions, references, emoji, math.
_ACTED_ON = [
    re.compile(r"(?i)(https?|ftp)://|\bwww\.|mailto:|xmpp:"),
    re.compile(r"(?<![A-Za-z0-9])@[A-Za-z0-9]"),
    re.compile(r"#[0-9A-Za-z]|(?i:\bGH-\d)"),
    re.compile(r"\$(?!\d)"),
    re.compile(r"\[\^|^\[[ xX]\]"),
    re.compile(r"(?<![A-Za-z0-9])(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{7,}(?![A-Za-z0-9])"),
]
_EMOJI = re.compile(r":[A-Za-z0-9_+-]+:")


def _acted_on(text: str) -> list[str]:
    return [m.group() for pattern in [*_ACTED_ON, _EMOJI] for m in pattern.finditer(text)]


class _Html(HTMLParser):
    """The tags, comments and text (outside ``<code>``) of an HTML block."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.comments, self.text, self._in_code = [], [], [], 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(attrs)))
        self._in_code += tag == "code"

    def handle_endtag(self, tag):
        self._in_code -= tag == "code"

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        if not self._in_code:
            self.text.append(data)


def _github_cells(row: str) -> int:
    """The cells GitHub (cmark-gfm) finds in a table row: a backslash and any ASCII punctuation is one
    escaped pair, so ``\\\\|`` ends a cell where markdown-it would not."""
    body = row.strip()[1:]  # every row we write starts with a pipe
    pipes, last, at = 0, -1, 0
    while at < len(body):
        if (
            body[at] == "\\"
            and at + 1 < len(body)
            and body[at + 1].isascii()
            and not body[at + 1].isalnum()
            and not body[at + 1].isspace()
        ):
            at += 2
            continue
        if body[at] == "|":
            pipes, last = pipes + 1, at
        at += 1
    return pipes + (0 if last == len(body) - 1 else 1)


def _tables(markdown: str) -> list[list[str]]:
    lines, tables = markdown.split("\n"), []
    for at, line in enumerate(lines[:-1]):
        if line.startswith("| ") and re.fullmatch(r"\|(---\|)+", lines[at + 1]):
            rows = [line]
            for following in lines[at + 2 :]:
                if not following.startswith("| "):
                    break
                rows.append(following)
            tables.append(rows)
    return tables


def check(markdown: str) -> None:
    """Assert ``markdown`` says only what our templates say, and shows every payload (if at all) as code."""
    env: dict = {}
    tokens = _PARSER.parse(markdown, env)
    assert not env.get("references"), f"a link reference definition: {env['references']}"
    texts, heading, strong, emphasis = [], False, False, False
    for token in tokens:
        assert token.type in _BLOCKS, (token.type, token.content[:200])
        if token.type == "heading_open":
            heading = True
        elif token.type == "heading_close":
            heading = False
        elif token.type == "fence":
            assert token.info in _OUR_FENCES, token.info
            if token.info == "mermaid":
                _check_mermaid(token.content)
        elif token.type == "html_block":
            _check_html(token.content, texts)
        elif token.type == "inline":
            if heading:
                assert _OUR_HEADINGS.match(token.content), token.content[:200]
            inline_text = []
            for child in token.children:
                assert child.type in _INLINES, (child.type, token.content[:300])
                if child.type in ("strong_open", "em_open", "strong_close", "em_close"):
                    strong = child.type == "strong_open" if child.type.startswith("strong") else strong
                    emphasis = child.type == "em_open" if child.type.startswith("em") else emphasis
                elif child.type == "text":
                    content = _OUR_EMOJI.sub(r"\1", child.content) if child is token.children[0] or emphasis else child.content
                    assert not strong or content in _OUR_STRONG, content[:200]
                    assert not emphasis or child.content.startswith(":scissors: diff cut:"), child.content
                    inline_text.append(content)
                elif child.type == "code_inline":
                    inline_text.append("\x00")  # code ends the text around it: nothing joins across it
            texts.append("".join(inline_text))
    for text in texts:
        assert not _acted_on(text), (_acted_on(text), text[:300])
        for payload in MARKUP:
            assert payload not in text, (payload, text[:300])
    for rows in _tables(markdown):
        assert {_github_cells(row) for row in rows} == {_github_cells(rows[0])}, rows[:3]


def _check_html(content: str, texts: list[str]) -> None:
    parsed = _Html()
    parsed.feed(content)
    assert {tag for tag, _ in parsed.tags} <= _OUR_TAGS, parsed.tags
    assert all(attrs in ((), (("open", None),)) for _, attrs in parsed.tags), parsed.tags
    assert parsed.comments in ([], [pr_comment.MARKER[4:-3]]), parsed.comments
    texts.append("\x00".join(parsed.text))


_MERMAID_LINE = re.compile(
    r'```mermaid|```|xychart-beta|    title "[^"]*"|    x-axis \[("[A-Za-z0-9._/ -]*"(, )?)*\]|    y-axis "\$ per hour" 0 --> [0-9.]+'
    r"|    bar \[([0-9.]+(, )?)*\]"
)


def _check_mermaid(content: str) -> None:
    for line in content.rstrip("\n").split("\n"):
        assert _MERMAID_LINE.fullmatch(line), line
