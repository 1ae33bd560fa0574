"""MIME multi-part userData, read twice: as cloud-init reads it and as Karpenter's Go reader does.

Karpenter treats userData as MIME when, after trimming, it starts with ``MIME-Version:`` or
``Content-Type:``. For AL2 and AL2023 it parses the archive itself before merging its own part
(:func:`~karpenter_gitops.karpenter.amifamily.userdata.go_multipart.karpenter_read`, :func:`karpenter_refusal`: Go's net/mail, mime and mime/multipart, with
Karpenter's error words); what it refuses makes no launch template. Custom userData it passes on
unread, so :func:`read` judges it with Python's email parser, which is what cloud-init uses; the
family checks also read the parts' content through it.
"""

from __future__ import annotations

import email
import re
from dataclasses import dataclass
from email import errors as defects

from karpenter_gitops.core.text import closest
from karpenter_gitops.karpenter.amifamily.userdata.go_multipart import GoError, Refused, karpenter_read, media_type
from karpenter_gitops.karpenter.amifamily.userdata.problems import MIME, MIME_IGNORED, Problem

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
            f'delimiter lines are written as --"{boundary}"; the quotes belong only in the boundary '
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


# How each reader words a refusal: AL2's EKS bootstrap (copyCustomUserDataParts) and AL2023's nodeadm
# (mime.NewArchive), both behind the launch-template provider's "creating launch template, ".
_WORDS = {
    "AL2": {
        "mail": "parsing custom user data input unreadable user data {}",
        "content-type": "parsing custom user data input user data does not define a content-type header {}",
        "not-multipart": "parsing custom user data input user data is not in multipart MIME format",
        "parts": "parsing custom user data input {}",
    },
    "AL2023": {
        "mail": "parsing custom UserData, {}",
        "content-type": "parsing custom UserData, archive doesn't have Content-Type header, {}",
        "not-multipart": "parsing custom UserData, archive is not in multipart format, %!w(<nil>)",
        "parts": "parsing custom UserData, parsing content, {}",
    },
}
_WHY = {
    "mail": "the archive's own headers must be 'Name: value' lines followed by one empty line",
    "content-type": 'the archive needs a Content-Type header Go can parse, e.g. multipart/mixed; boundary="BOUNDARY"',
    "not-multipart": "Karpenter merges only multipart MIME archives (a single-part script needs no MIME headers at all)",
    "parts": "a part's headers must be 'Name: value' lines followed by an empty line, and the archive must end "
    "with the closing delimiter line",
}


def _shortened(content: str) -> str:
    """A part's content as nodeadm's error quotes it whole, cut to its first line so the finding stays one line."""
    first = content.split("\n", 1)[0]
    return content if first == content and len(content) <= 60 else f"{first[:60]}…"


def karpenter_refusal(text: str, family: str) -> Problem | None:
    """Karpenter's error when its ``family`` reader ("AL2" or "AL2023") cannot read MIME ``text``."""
    if not is_mime(text):
        return None
    try:
        karpenter_read(text)
    except Refused as err:
        stage, detail = err.stage, str(err)
    except GoError as err:
        detail = str(err) if err.content is None or family == "AL2" else f"{_shortened(err.content)}, {err}"
        stage = "parts"
    else:
        return None
    message = "creating launch template, " + _WORDS[family][stage].format(detail)
    hint = f"Karpenter cannot merge this userData, so no launch template is made and no node launches: {_WHY[stage]}; "
    return Problem(MIME, message, hint + _LAYOUT)


# Part types the node acts on (cloud-init's user-data formats, and nodeadm's NodeConfig on AL2023); for
# text/plain or no type at all cloud-init goes by the first line, as for single-part userData; a nested
# multipart part is walked into.
_CLOUD_INIT = frozenset({
    "text/x-shellscript", "text/x-shellscript-per-boot", "text/x-shellscript-per-instance",
    "text/x-shellscript-per-once", "text/cloud-config", "text/cloud-config-archive", "text/cloud-config-jsonp",
    "text/cloud-boothook", "text/x-include-url", "text/x-include-once-url", "text/part-handler", "text/jinja2",
    "text/upstart-job",
})  # fmt: skip
_BY_FIRST_LINE = ("", "text/plain", "text/x-not-multipart")
_CLOUD_INIT_STARTS = ("#!", "#cloud-config", "#cloud-boothook", "#include", "#part-handler", "#upstart-job", "## template: jinja")


def ignored_parts(text: str, family: str) -> list[Problem]:
    """Parts of MIME userData Karpenter reads and passes on, but that nothing on an AL2/AL2023 node acts on."""
    if not is_mime(text):
        return []
    try:
        parts = karpenter_read(text)
    except GoError:
        return []  # refused: karpenter_refusal reports it
    if not parts:
        return [_no_parts(text)]
    known = _CLOUD_INIT | ({NODECONFIG} if family == "AL2023" else set())
    problems = []
    for number, part in enumerate(parts, 1):
        if family == "AL2023" and (unparsable := _nodeadm_refusal(part.content_type)):
            problems.append(
                Problem(
                    MIME,
                    f"part {number}'s Content-Type {part.content_type!r} does not parse, and nodeadm reads the type of every "
                    f'part: nodeadm init stops with "{unparsable}" and the node never joins',
                    "write the type as type/subtype, then '; name=value' parameters (e.g. text/x-shellscript; charset=\"us-ascii\")",
                )
            )
            continue
        media = part.content_type.split(";", 1)[0].strip().lower()
        body = part.body.lstrip()
        typed = media in known or media.startswith("multipart/")
        if typed or (media in _BY_FIRST_LINE and body.startswith(_CLOUD_INIT_STARTS)):
            continue
        what = f"part {number} (Content-Type: {part.content_type or 'none'})"
        if media in _BY_FIRST_LINE and family == "AL2023" and "NodeConfig" in body:
            message = f"{what} holds a NodeConfig, but nodeadm reads only parts typed {NODECONFIG}: its settings are ignored"
            hint = f"give the part the header 'Content-Type: {NODECONFIG}'"
        elif media in _BY_FIRST_LINE:
            message = f"{what} starts with neither '#!' nor '#cloud-config', so cloud-init ignores its content"
            hint = "type the part (e.g. Content-Type: text/x-shellscript) or start a script with '#!'"
        else:
            message = f"{what}: the node runs no handler for {media}, so cloud-init ignores its content"
            close = closest(media, known)
            hint = f"did you mean {close}?" if close else f"use one of {', '.join(sorted(known))}"
        problems.append(Problem(MIME_IGNORED, message, hint))
    return problems


def _nodeadm_refusal(content_type: str) -> str | None:
    """The error nodeadm (AL2023) stops with on a part's Content-Type: it parses every non-empty one."""
    if not content_type:
        return None
    try:
        media_type(content_type)
    except GoError as err:
        return str(err)
    return None


def _no_parts(text: str) -> Problem:
    boundary = re.search(r'boundary="?([^";\s]+)', text, re.IGNORECASE)
    name = boundary.group(1) if boundary else "BOUNDARY"
    quoted = re.search(rf'^--"{re.escape(name)}"', text, re.MULTILINE)
    why = (
        f'delimiter lines are written as --"{name}"; the quotes belong only in the boundary parameter'
        if quoted
        else f"no line is exactly --{name}"
    )
    return Problem(
        MIME_IGNORED,
        f"Karpenter finds no part in this MIME archive ({why}), so none of its content reaches the node",
        _LAYOUT.replace("BOUNDARY", name),
    )


def karpenter_problems(text: str, family: str) -> list[Problem]:
    """What goes wrong with MIME userData Karpenter merges for ``family`` (AL2, AL2023): its refusal, else ignored parts."""
    refusal = karpenter_refusal(text, family)
    return [refusal] if refusal else ignored_parts(text, family)
