"""MIME multi-part userData, checked for what Karpenter's Go reader (net/mail + mime/multipart) rejects.

Karpenter treats userData as MIME when, after trimming, it starts with ``MIME-Version:`` or
``Content-Type:``; the archive must then be multipart, or launch-template creation fails.
Python's email parser reads the same structure and records what is wrong as defects.
"""

from __future__ import annotations

import email
import re
from dataclasses import dataclass
from email import errors as defects

from karpenter_gitops.families.userdata.problems import MIME, Problem

NODECONFIG = "application/node.eks.aws"
_STARTS = ("MIME-Version:", "Content-Type:")
_LAYOUT = """lay it out like this (the empty lines matter):
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: text/x-shellscript; charset="us-ascii"

#!/bin/bash
...
--BOUNDARY--"""


@dataclass(frozen=True)
class Part:
    """One part of a MIME multi-part archive: its content type and text."""

    content_type: str | None  # lower-case media type; None when the userData is not MIME at all
    body: str


@dataclass(frozen=True)
class Archive:
    """A MIME multi-part userData archive and what is wrong with its framing."""

    parts: tuple[Part, ...]
    problems: tuple[Problem, ...] = ()


def is_mime(text: str) -> bool:
    return text.strip().startswith(_STARTS)


def read(text: str) -> Archive:
    """The parts of MIME userData, or the whole text as one part (content type None)."""
    if not is_mime(text):
        return Archive((Part(None, text),))
    message = email.message_from_string(text)
    problems = []
    if "MIME-Version" not in message:
        problems.append("there is no MIME-Version header; start the userData with 'MIME-Version: 1.0'")
    if _has(message, defects.MissingHeaderBodySeparatorDefect):
        problems.append("the headers are not followed by an empty line (Go's reader: 'malformed MIME header')")
    if message.get_content_maintype() != "multipart":
        problems.append(f"the archive is {message.get_content_type()}, but Karpenter only reads multipart MIME")
        return _archive((), problems)
    boundary = message.get_boundary()
    if boundary is None:
        problems.append("the multipart Content-Type has no boundary parameter")
        return _archive((), problems)
    quoted = re.search(rf'^--"{re.escape(boundary)}"(--)?[ \t]*\r?$', text, re.MULTILINE)
    if quoted:
        problems.append(
            f"delimiter lines are written as --\"{boundary}\"; the quotes belong only in the boundary "
            f"parameter, so no part is found and the content is lost (write --{boundary} and --{boundary}--)"
        )
    elif _has(message, defects.StartBoundaryNotFoundDefect):
        problems.append(f"no line --{boundary} starts a part, so the archive holds no content")
    leaves = [p for p in message.walk() if not p.is_multipart()] if message.is_multipart() else []
    # A last delimiter followed only by the end of the text leaves an empty part; Go reads that as the end.
    if leaves and not leaves[-1].keys() and not leaves[-1].get_payload():
        leaves.pop()
    elif _has(message, defects.CloseBoundaryNotFoundDefect):
        problems.append(f"the last part runs to the end of the text without a closing --{boundary}-- line")
    for number, part in enumerate(leaves, 1):
        if _has(part, defects.MissingHeaderBodySeparatorDefect):
            problems.append(f"part {number} has no empty line between its headers and its content")
    parts = tuple(Part(p.get_content_type() if "Content-Type" in p else "", _body(p)) for p in leaves)
    return _archive(parts, problems, boundary)


def _archive(parts: tuple[Part, ...], problems: list[str], boundary: str = "BOUNDARY") -> Archive:
    hint = _LAYOUT.replace("BOUNDARY", boundary)
    return Archive(parts, tuple(Problem(MIME, f"MIME userData: {p}", hint) for p in problems))


def _has(message: email.message.Message, defect: type) -> bool:
    return any(isinstance(d, defect) for d in message.defects)


def _body(part: email.message.Message) -> str:
    payload = part.get_payload(decode=True)
    return payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(part.get_payload())
