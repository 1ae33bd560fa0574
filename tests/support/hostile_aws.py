"""Hostile AWS for the fuzz suite: embedded worlds whose AMI names and descriptions, tags, security
group names and SSM values carry terminal and markdown markup, unicode, control characters and 64 KiB strings,
and a proxy in front of them that refuses one operation with a hostile error message.

AWS allows ``[`` and ``]`` in AMI names and tags, and nothing AWS says is ours: every command must
show these values as AWS holds them, in every format, and never fail on them.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
from collections.abc import Iterator
from xml.sax.saxutils import escape as xml_escape

import yaml
from conftest import PROJECT
from hypothesis import strategies as st

from karpenter_gitops.core.text import visible
from support.fault_proxy import FaultProxy
from support.markdown_oracle import MARKUP as MARKDOWN

DEFAULT_WORLD = PROJECT / "karpenter_gitops" / "adapters" / "aws" / "worlds" / "default.yaml"

MARKUP = st.sampled_from(
    [
        "golden [x86] build",
        "golden [/x86]",
        "[bold]loud[/bold]",
        "[/]",
        "[/x]",
        "[link=https://example.com]click[/link]",
        "[red",
        "\\[escaped]",
        "trailing \\",
        ":smile: :thumbs_up:",
        "[bold red on white]x",
        "%s {0} ${x}",
        *MARKDOWN,  # what a PR comment must show as data: links, emphasis, HTML, mentions, emoji, backticks
    ]
)
UNICODE = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=16)
CONTROL = st.sampled_from(
    [
        "\x1b[31mred\x1b[0m",
        "\x1b]0;retitled\x07",
        "a\x00b",
        "line\nbreak",
        "carriage\rreturn",
        "\u202eevil.exe",
        "next\x85line",
        "del\x7f",
        "tab\there",
        "bell\x07",
        "\u2028separator",
    ]
)
HUGE = st.sampled_from(["[" * 65_536, "x" * 65_536, ("[bold]é\x1b" * 8_192)[:65_536]])
HOSTILE_TEXT = st.lists(st.one_of(MARKUP, UNICODE, CONTROL), min_size=1, max_size=4).map("".join) | HUGE

# What a hostile world changes, by the field it lands in.
FIELDS = ("available AMI name", "pending AMI name", "description", "tag", "security group name", "SSM value", "error message")
EC2_FIELDS = ("available AMI name", "pending AMI name", "description", "tag", "security group name")
# Operations a refusing AWS may refuse (with the hostile error message), or none.
REFUSED = (None, "DescribeImages", "DescribeSubnets", "DescribeSecurityGroups", "GetInstanceProfile", "GetParameter")
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_TAG_LIMIT, _GROUP_NAME_LIMIT = 256, 255  # what EC2 (and moto) accept; longer values are cut there


@st.composite
def hostile_worlds(draw) -> tuple[dict, dict[str, str], str | None]:
    """The default world with hostile values in every field a command shows, and which operation to refuse."""
    values = {field: draw(HOSTILE_TEXT) for field in FIELDS}
    for field in EC2_FIELDS:  # EC2 answers in XML, which cannot carry most C0 controls (\x85, \u202e, \n can)
        values[field] = _XML_INVALID.sub("?", values[field])
    world = copy.deepcopy(yaml.safe_load(DEFAULT_WORLD.read_text()))
    for image in world["images"]:
        if image["name"].startswith("payments-node-"):  # the payments team's own images: names, descriptions, tags
            pending = image.get("state") == "pending"
            image["name"] = "payments-node-" + values["pending AMI name" if pending else "available AMI name"]
            image["description"] = values["description"]
            image["tags"] = {**image.get("tags", {}), "note": values["tag"][:_TAG_LIMIT]}
    for index, group in enumerate(world["securityGroups"]):  # names are unique in a VPC
        group["name"] = f"{index}-{values['security group name']}"[:_GROUP_NAME_LIMIT]
    for subnet in world["subnets"]:
        subnet["tags"] = {**subnet.get("tags", {}), "owner": values["tag"][:_TAG_LIMIT]}
    recommended = next(name for name in world["ssmParameters"] if name.endswith("/recommended/image_id"))
    world["ssmParameters"][recommended] = values["SSM value"]
    return world, values, draw(st.sampled_from(REFUSED))


def world_text(world: dict) -> str:
    return yaml.safe_dump(world, allow_unicode=True, sort_keys=False, width=1 << 20)


# --- AWS refusing one operation, with a hostile message --------------------------------------------


def _operation(headers: dict[str, str], body: bytes) -> str:
    target = {k.lower(): v for k, v in headers.items()}.get("x-amz-target", "")
    if target:
        return target.rpartition(".")[2]  # JSON protocols (SSM): AmazonSSM.GetParameter
    found = re.search(rb"(?:^|&)Action=([A-Za-z]+)", body)  # query protocols (EC2, IAM)
    return found.group(1).decode() if found else ""


def _refusal(operation: str, message: str) -> tuple[int, list, bytes]:
    if operation == "GetParameter":
        return (
            400,
            [("Content-Type", "application/x-amz-json-1.1")],
            json.dumps({"__type": "ValidationException", "message": message}).encode(),
        )
    text = xml_escape(_XML_INVALID.sub("?", message))  # XML 1.0 cannot carry the other control characters
    if operation == "GetInstanceProfile":
        body = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>{text}</Message></Error>"
            f"<RequestId>fuzz</RequestId></ErrorResponse>"
        )
    else:
        body = (
            f"<Response><Errors><Error><Code>InvalidParameterValue</Code><Message>{text}</Message></Error></Errors>"
            f"<RequestID>fuzz</RequestID></Response>"
        )
    return 400, [("Content-Type", "text/xml")], body.encode()


class RefusingProxy(FaultProxy):
    """Forwards to the embedded AWS, except ``operation``, refused with ``message`` as AWS words a refusal."""

    def __init__(self, upstream: str, operation: str | None, message: str):
        super().__init__(upstream, fraction=0.0)
        self.operation, self.message = operation, message

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, list, bytes]:
        if self.operation and _operation(headers, body) == self.operation:
            return _refusal(self.operation, self.message)
        return super().answer(method, path, headers, body)


@contextlib.contextmanager
def endpoint(url: str) -> Iterator[None]:
    """``AWS_ENDPOINT_URL`` set to ``url`` for the block (inside the embedded world, which restores its own)."""
    saved = os.environ.get("AWS_ENDPOINT_URL")
    os.environ["AWS_ENDPOINT_URL"] = url
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("AWS_ENDPOINT_URL", None)
        else:
            os.environ["AWS_ENDPOINT_URL"] = saved


# --- what the output must show ------------------------------------------------------------------------

# What reaches a terminal raw only if the tool forgot to escape it (a newline ends our own lines).
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def squashed(text: str) -> str:
    """``text`` without whitespace: a terminal table wraps a long cell over lines, padded to its column."""
    return "".join(text.split())


def shows(text: str, value: str) -> bool:
    """Whether terminal ``text`` shows ``value`` as its source holds it (control characters visibly escaped)."""
    return squashed(visible(value)) in squashed(text)
