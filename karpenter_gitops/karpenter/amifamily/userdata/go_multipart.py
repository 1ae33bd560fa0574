"""MIME userData as Karpenter's Go readers read it (AL2 and AL2023).

For AL2 and AL2023 Karpenter parses MIME userData itself before merging its bootstrap part (Go's
net/mail, mime.ParseMediaType and mime/multipart, in karpenter-provider-aws's bootstrap package;
unchanged from 1.0 to 1.15). This module reads the text the way those readers do, so an archive
Karpenter refuses is reported with the error it prints (:class:`GoError`), and one it reads is split
into the parts it passes on (:func:`karpenter_read`). Custom userData is not parsed by Karpenter;
cloud-init reads it (:func:`karpenter_gitops.karpenter.amifamily.userdata.mime.read`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from karpenter_gitops.core.name_validation import go_quote

_TOKEN = frozenset("!#$%&'*+-.^_`{|}~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_FIELD = _TOKEN - set("{}")  # bytes of a header field name (textproto's validHeaderFieldByte)
_BLANKS = (" ", "\t")


class GoError(Exception):
    """An error as Karpenter's Go readers print it; ``content`` is what a part had yielded before it."""

    def __init__(self, message: str, content: str | None = None):
        super().__init__(message)
        self.content = content


class Refused(GoError):
    """A refusal of the archive's own headers, which the two readers word differently."""

    def __init__(self, stage: str, detail: str):
        super().__init__(detail)
        self.stage = stage


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

    def continued(self, validate: Callable[[str], None] | None = None) -> str | None:
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


def media_type(value: str) -> tuple[str, dict[str, str]]:
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
    quoted: list[str] = []
    i = 1
    while i < len(rest):
        char = rest[i]
        if char == '"':
            return key.lower(), "".join(quoted), rest[i + 1 :]
        if char == "\\" and i + 1 < len(rest) and rest[i + 1] in '()<>@,;:\\"/[]?=':
            quoted.append(rest[i + 1])
            i += 2
            continue
        if char in "\r\n":
            return None
        quoted.append(char)
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
    lines = _Lines(body)
    parts: list[GoPart] = []
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
        raise Refused("mail", str(err)) from None
    try:
        media, params = media_type((headers.get("Content-Type") or [""])[0])
    except GoError as err:
        raise Refused("content-type", str(err)) from None
    if not media.startswith("multipart/"):
        raise Refused("not-multipart", "")
    return tuple(_multipart(text[lines.pos :], params.get("boundary", "")))
