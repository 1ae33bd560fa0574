"""MIME multi-part userData, read twice: as cloud-init reads it and as Karpenter's Go reader does.

Karpenter treats userData as MIME when, after trimming, it starts with ``MIME-Version:`` or
``Content-Type:``. For AL2 and AL2023 it parses the archive itself before merging its own part
(:func:`karpenter_read`, :func:`karpenter_refusal`: Go's net/mail, mime and mime/multipart, with
Karpenter's error words); what it refuses makes no launch template. Custom userData it passes on
unread, so :func:`read` judges it with Python's email parser, which is what cloud-init uses; the
family checks also read the parts' content through it.
"""

from __future__ import annotations

import email
import re
from dataclasses import dataclass
from email import errors as defects

from karpenter_gitops.core.names import go_quote
from karpenter_gitops.core.text import closest
from karpenter_gitops.families.userdata.problems import MIME, MIME_IGNORED, Problem

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


# --- Karpenter's own reader ------------------------------------------------------------------------
#
# For AL2 and AL2023 Karpenter parses MIME userData itself before merging its bootstrap part (Go's
# net/mail, mime.ParseMediaType and mime/multipart, in karpenter-provider-aws's bootstrap package;
# unchanged from 1.0 to 1.15). What follows reads the text the way those readers do, so an archive
# Karpenter refuses is reported with the error it prints, and one it reads is split into the parts it
# passes on. Custom userData is not parsed by Karpenter; cloud-init reads it (``read`` above).

_TOKEN = frozenset("!#$%&'*+-.^_`{|}~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_FIELD = _TOKEN - set("{}")  # bytes of a header field name (textproto's validHeaderFieldByte)
_BLANKS = (" ", "\t")


class GoError(Exception):
    """An error as Karpenter's Go readers print it; ``content`` is what a part had yielded before it."""

    def __init__(self, message: str, content: str | None = None):
        super().__init__(message)
        self.content = content


@dataclass(frozen=True)
class GoPart:
    """A part as Go's multipart reader yields it: its Content-Type header ('' when absent) and raw body."""

    content_type: str
    body: str


class _Lines:
    """bufio + textproto line reading over a whole string."""

    def __init__(self, text: str, pos: int = 0):
        self.text, self.pos = text, pos

    def peek(self) -> str:
        return self.text[self.pos : self.pos + 1]

    def line(self) -> str | None:
        """The next line without its \\n or \\r\\n (bufio ReadLine); None at the end."""
        if self.pos >= len(self.text):
            return None
        end = self.text.find("\n", self.pos)
        if end < 0:
            line, self.pos = self.text[self.pos :], len(self.text)
            return line
        line, self.pos = self.text[self.pos : end], end + 1
        return line[:-1] if line.endswith("\r") else line

    def continued(self, validate=None) -> str | None:
        """textproto's ReadContinuedLine: folded lines joined with a space, each trimmed of blanks."""
        first = self.line()
        if first is None or first == "":
            return first
        if validate is not None:
            validate(first)
        joined = first.strip(" \t")
        while self.peek() in _BLANKS:
            while self.peek() in _BLANKS:
                self.pos += 1
            more = self.line()
            joined += " " + (more.strip(" \t") if more is not None else "")
            if more is None:
                break
        return joined


def _canonical(key: str) -> str:
    if not key or any(c not in _FIELD for c in key):
        return key
    return "-".join(word[:1].upper() + word[1:].lower() for word in key.split("-"))


def _mail_headers(lines: _Lines) -> dict[str, list[str]]:
    """net/mail's readHeader: any line with a colon is a header until the first empty line."""
    headers: dict[str, list[str]] = {}
    if lines.peek() in _BLANKS:
        raise GoError("malformed initial line: " + (lines.line() or ""))
    while True:
        kv = lines.continued()
        if not kv:
            if kv is None and not headers:
                raise GoError("EOF")
            return headers
        key, colon, value = kv.partition(":")
        if not colon:
            raise GoError("malformed header line: " + kv)
        if key := _canonical(key):
            headers.setdefault(key, []).append(value.lstrip(" \t"))


def _missing_colon(line: str) -> None:
    if ":" not in line:
        raise GoError(f"malformed MIME header: missing colon: {go_quote(line)}")


def _part_headers(lines: _Lines) -> dict[str, list[str]] | None:
    """textproto's ReadMIMEHeader for a part; None when the text ends inside the headers (Go's io.EOF)."""
    headers: dict[str, list[str]] = {}
    if lines.peek() in _BLANKS:
        first = lines.line() or ""
        if len(first) > 80:
            raise GoError("multipart: message too large")
        raise GoError(f"malformed MIME header initial line: {go_quote(first)}")
    while True:
        kv = lines.continued(_missing_colon)
        if kv is None:
            return None
        if kv == "":
            return headers
        key, _, value = kv.partition(":")
        if not key or any(c not in _FIELD and c != " " for c in key):
            raise GoError(f"malformed MIME header line: {go_quote(kv)}")
        name = key if " " in key else _canonical(key)  # Go canonicalises the key in place, so errors quote it so
        if any(not (c == "\t" or " " <= c <= "~" or ord(c) > 0x7F) for c in value):
            raise GoError(f"malformed MIME header line: {go_quote(name + ':' + value)}")
        headers.setdefault(name, []).append(value.lstrip(" \t"))


def _media_type(value: str) -> tuple[str, dict[str, str]]:
    """mime.ParseMediaType, for what Karpenter reads of it: the type and plain parameters."""
    base, _, _ = value.partition(";")
    media = base.lower().strip()
    kind, rest = _token(media)
    if not kind:
        raise GoError("mime: no media type")
    if rest:
        if not rest.startswith("/"):
            raise GoError("mime: expected slash after first token")
        subtype, rest = _token(rest[1:])
        if not subtype:
            raise GoError("mime: expected token after slash")
        if rest:
            raise GoError("mime: unexpected content after media subtype")
    params: dict[str, str] = {}
    rest = value[len(base) :]
    while rest.lstrip():
        rest = rest.lstrip()
        parsed = _parameter(rest)
        if parsed is None:
            if rest.strip() == ";":
                break
            raise GoError("mime: invalid media parameter")
        key, val, rest = parsed
        if key in params and params[key] != val:
            raise GoError("mime: duplicate parameter name")
        params[key] = val
    return media, params


def _token(text: str) -> tuple[str, str]:
    end = next((i for i, c in enumerate(text) if c not in _TOKEN), len(text))
    return text[:end], text[end:]


def _parameter(text: str) -> tuple[str, str, str] | None:
    rest = text.lstrip()
    if not rest.startswith(";"):
        return None
    key, rest = _token(rest[1:].lstrip())
    rest = rest.lstrip()
    if not key or not rest.startswith("="):
        return None
    rest = rest[1:].lstrip()
    if not rest.startswith('"'):
        value, after = _token(rest)
        return (key.lower(), value, after) if value else None
    value, i = [], 1
    while i < len(rest):
        char = rest[i]
        if char == '"':
            return key.lower(), "".join(value), rest[i + 1 :]
        if char == "\\" and i + 1 < len(rest) and rest[i + 1] in '()<>@,;:\\"/[]?=':
            value.append(rest[i + 1])
            i += 2
            continue
        if char in "\r\n":
            return None
        value.append(char)
        i += 1
    return None


def _after(buf: str, prefix: str) -> int:
    """multipart's matchAfterPrefix at the end of the input: +1 a delimiter, -1 not one."""
    if len(buf) == len(prefix):
        return 1
    char = buf[len(prefix)]
    if char in " \t\r\n":
        return 1
    if char == "-" and len(buf) > len(prefix) + 1 and buf[len(prefix) + 1] == "-":
        return 1
    return -1


def _part_content(lines: _Lines, dash: str, nl_dash: str) -> str:
    """A part's content up to the next delimiter (multipart's scanUntilBoundary); 'unexpected EOF' without one."""
    start = lines.pos
    text, pos = lines.text, lines.pos
    if text.startswith(dash, pos) and _after(text[pos:], dash) == 1:
        return ""
    if dash.startswith(text[pos:]):
        raise GoError("unexpected EOF", "")
    while True:
        found = text.find(nl_dash, pos)
        if found < 0:
            tail = text.rfind(nl_dash[0], pos)
            end = tail if tail >= 0 and nl_dash.startswith(text[tail:]) else len(text)
            raise GoError("unexpected EOF", text[start:end])
        if _after(text[found:], nl_dash) == 1:
            lines.pos = found
            return text[start:found]
        pos = found + len(nl_dash)


def _multipart(body: str, boundary: str) -> list[GoPart]:
    """mime/multipart's NextPart loop as Karpenter drives it; the end of the text ends it quietly."""
    if not boundary:
        raise GoError("multipart: boundary is empty")
    nl, dash = "\r\n", "--" + boundary
    lines, parts = _Lines(body), []
    while True:
        expect_part = False
        while True:
            end = body.find("\n", lines.pos)
            if end < 0:  # the last line has no newline (or there is none): Go's NextPart ends with io.EOF
                return parts
            raw = body[lines.pos : end + 1]
            lines.pos += len(raw)
            after_dash = raw[len(dash) :].lstrip(" \t") if raw.startswith(dash) else None
            if after_dash is not None and not parts and after_dash == "\n":
                nl = "\n"  # the first delimiter line ends in \n alone: Go switches to \n lines
            if after_dash == nl:
                break
            if raw.startswith(dash + "--") and raw[len(dash) + 2 :].lstrip(" \t") in ("", nl):
                return parts
            if expect_part:
                raise GoError(f"multipart: expecting a new Part; got line {go_quote(raw)}")
            if not parts:
                continue
            if raw == nl:
                expect_part = True
                continue
            raise GoError(f"multipart: unexpected line in Next(): {go_quote(raw)}")
        headers = _part_headers(lines)
        if headers is None:
            return parts
        parts.append(GoPart((headers.get("Content-Type") or [""])[0], _part_content(lines, dash, nl + dash)))


def karpenter_read(text: str) -> tuple[GoPart, ...]:
    """The parts Karpenter's reader yields for MIME userData; GoError with its message when it refuses it."""
    lines = _Lines(text)
    try:
        headers = _mail_headers(lines)
    except GoError as err:
        raise _Refused("mail", str(err)) from None
    try:
        media, params = _media_type((headers.get("Content-Type") or [""])[0])
    except GoError as err:
        raise _Refused("content-type", str(err)) from None
    if not media.startswith("multipart/"):
        raise _Refused("not-multipart", "")
    return tuple(_multipart(text[lines.pos :], params.get("boundary", "")))


class _Refused(GoError):
    """A refusal of the archive's own headers, which the two readers word differently."""

    def __init__(self, stage: str, detail: str):
        super().__init__(detail)
        self.stage = stage


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
    "content-type": "the archive needs a Content-Type header Go can parse, e.g. multipart/mixed; boundary=\"BOUNDARY\"",
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
    except _Refused as err:
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
            problems.append(Problem(
                MIME,
                f"part {number}'s Content-Type {part.content_type!r} does not parse, and nodeadm reads the type of every "
                f"part: nodeadm init stops with \"{unparsable}\" and the node never joins",
                "write the type as type/subtype, then '; name=value' parameters (e.g. text/x-shellscript; charset=\"us-ascii\")",
            ))
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
        _media_type(content_type)
    except GoError as err:
        return str(err)
    return None


def _no_parts(text: str) -> Problem:
    boundary = re.search(r'boundary="?([^";\s]+)', text, re.IGNORECASE)
    name = boundary.group(1) if boundary else "BOUNDARY"
    quoted = re.search(rf'^--"{re.escape(name)}"', text, re.MULTILINE)
    why = (
        f'delimiter lines are written as --"{name}"; the quotes belong only in the boundary parameter'
        if quoted else f"no line is exactly --{name}"
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
