"""Reading YAML: the one module that turns YAML text into values, or into nodes that know their lines.

Everything here runs on libyaml, PyYAML's C parser (its pure-Python twin where the C one is not
built). :func:`documents` and :func:`document` build values; :func:`nodes` composes the node trees
that findings are located in. The one other YAML reader is ruamel's round-trip parser in
``app/bump.py``, whose in-place edits must keep the stack file's comments and layout.

Values are built straight from libyaml's parse events. PyYAML's C loader parses in C, then builds
every value through Python machinery (a node per value, a resolver pass, generator-based
constructors) that costs twice the parse. Manifests are plain data, so we build dicts, lists and
scalars directly from the events: in C (``_yaml_values.c``) for text without anchors, aliases, tags
or merge keys, which is nearly every manifest, and otherwise here, one document at a time as
PyYAML hands the events over. Either way they are the values PyYAML's safe loader gives
(YAML 1.1 scalars, as kubectl's Go YAML reads them: ``yes`` is true, ``1_000`` is 1000,
``2024-01-01`` is a date) by asking PyYAML's own resolver and constructors, once per distinct
plain scalar. Equal short scalars share one object, which also keeps a large run's memory down.
What we refuse, PyYAML's safe loader also refuses, with its messages, plus:

* a key given twice in one mapping, ``<<`` included (kubectl and Pulumi's Go YAML reject the file;
  keys a merge ``<<: *anchor`` brings in may still be overridden, as YAML allows). Files other
  tools read before us (a kubeconfig, a NodeConfig in userData) are read with
  ``unique_keys=False``: the last value wins, as in those tools;
* aliases that expand to more than :data:`MAX_ALIAS_NODES` values (and ten times the document),
  as Go YAML refuses them (a "billion laughs" bomb expands a few hundred bytes into billions of
  values for whoever walks them), an alias inside the value it names, and nesting deeper than
  :data:`MAX_DEPTH`.

Collection tags other than ``!!map`` and ``!!seq`` (``!!set``, ``!!omap``...) are refused: they
have no JSON form, so neither kubectl nor the API server can take them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any, cast

import yaml
from yaml import MappingNode, Mark, Node, ScalarNode, SequenceNode, YAMLError
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

try:
    from karpenter_gitops.core import _yaml_values
except ImportError:  # built where libyaml's header is found (pyproject.toml); without it, every document is _build's
    _yaml_values = None  # type: ignore[assignment]  # mypy types an optional module as always there; documents() asks

__all__ = [
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "Mark",
    "MappingNode",
    "Node",
    "ScalarNode",
    "SequenceNode",
    "YAMLError",
    "document",
    "documents",
    "native_build",
    "nodes",
    "problem",
]

# As Go YAML (kubectl, Pulumi): aliasing is excessive past this many values, and ten times the document.
MAX_ALIAS_NODES = 400_000
# Karpenter objects and stack files nest about a dozen levels; far deeper is a mistake or an attack.
MAX_DEPTH = 64

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_COLLECTION_TAGS = {None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}
_SCALAR_TAGS = frozenset(
    tag for tag in SafeConstructor.yaml_constructors if tag and not tag.endswith((":map", ":seq", ":omap", ":pairs", ":set"))
)
_SHARED_LENGTH = 256  # scalars up to this length are resolved once and shared; longer ones are mostly unique
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_CHUNK = 1 << 16  # what a file is read in, as PyYAML's parsers read it
# A byte order mark that begins a line after the first: YAML 1.2 lets one open any document of a stream (files
# joined by `cat`, a template saved by an editor that writes it), and kubectl reads them. libyaml skips it but
# counts it as a column, so the document's first key sits deeper than the next and the document breaks.
# Nowhere else may one stand at a line's start (no YAML content holds a BOM), so each is dropped there.
_INNER_BOM = re.compile("(?<=\n)\ufeff")
_INNER_BOM_BYTES = re.compile(b"(?<=\n)\xef\xbb\xbf")


class _Merge:
    """The ``<<`` key of a merge."""


MERGE = _Merge()


class _Frame:
    """A mapping or sequence being built."""

    __slots__ = ("value", "is_map", "key", "key_mark", "merges", "anchor", "mark", "nodes")

    def __init__(self, value: Any, is_map: bool, anchor: str | None, mark: Any) -> None:
        self.value, self.is_map, self.anchor, self.mark = value, is_map, anchor, mark
        self.key: Any = _NO_KEY
        self.key_mark = None
        self.merges: list[Any] | None = None
        self.nodes = 1


_NO_KEY = object()


class _Scalars:
    """Plain and quoted scalars → values, resolved once per distinct text."""

    def __init__(self) -> None:
        self.plain: dict[str, Any] = {}
        self.quoted: dict[str, str] = {}
        self.constructor = SafeConstructor()

    def value(self, event: yaml.ScalarEvent) -> Any:
        text, tag = event.value, event.tag
        if tag is None or tag == "!":
            if event.implicit[0]:
                found = self.plain.get(text, _NO_KEY)
                return self.resolved(text, event) if found is _NO_KEY else found
            if len(text) > _SHARED_LENGTH:
                return text
            return self.quoted.setdefault(text, text)
        return self._construct(tag, text, event)

    def resolved(self, text: str, event: yaml.ScalarEvent | None = None) -> Any:
        """A plain scalar's value, remembered when it is short (the native reader asks this too, without an event)."""
        found = self._construct(self._resolve(text), text, event)
        if len(text) <= _SHARED_LENGTH:
            self.plain[text] = found
        return found

    @staticmethod
    def _resolve(text: str) -> str:
        """The tag PyYAML's resolver gives a plain scalar (its table, keyed by first character)."""
        table: dict[str | None, list[tuple[str, re.Pattern[str]]]] = Resolver.yaml_implicit_resolvers
        for tag, pattern in (*table.get(text[0] if text else "", []), *table.get(None, [])):
            if pattern.match(text):
                return tag
        return _STR

    def _construct(self, tag: str, text: str, event: yaml.ScalarEvent | None) -> Any:
        if tag == _STR:
            return text
        if tag == _MERGE:
            return MERGE
        if tag not in _SCALAR_TAGS:
            raise _no_constructor(tag, event)
        construct = SafeConstructor.yaml_constructors[tag]
        # libyaml's marks (yaml._yaml.Mark) stand in for yaml.error.Mark, as in the nodes PyYAML's C loader
        # builds; the stubs name only the latter.
        start, end = cast("tuple[Mark | None, Mark | None]", (event.start_mark, event.end_mark) if event else (None, None))
        return construct(self.constructor, yaml.ScalarNode(tag, text, start, end))


def documents(stream: Any, *, unique_keys: bool = True) -> Iterator[Any]:
    """Each document of ``stream`` (text, bytes or a file read in chunks).

    Built in C from libyaml's events where the native reader is built and the documents are plain
    (:mod:`._yaml_values`); otherwise, and wherever that reader gives up, by :func:`_build` as libyaml's events
    come through PyYAML, one document at a time.
    """
    scalars = _Scalars()
    stream = _inner_byte_order_marks_dropped(_whole(stream) if hasattr(stream, "read") else stream)
    if _yaml_values is not None:
        found = _yaml_values.documents(
            stream, scalars.plain, scalars.quoted, scalars.resolved, MERGE, MAX_DEPTH, _SHARED_LENGTH, unique_keys
        )
        if found is not None:
            yield from found
            return
    parser = _Loader(stream)
    try:
        yield from _build(parser, scalars, unique_keys)
    finally:
        parser.dispose()


def _whole(stream: Any) -> str | bytes:
    """All a file gives, in the chunks a parser would ask for: the native reader may read it twice."""
    chunks = []
    while chunk := stream.read(_CHUNK):
        chunks.append(chunk)
    return "".join(chunks) if chunks and isinstance(chunks[0], str) else b"".join(chunks)


def _inner_byte_order_marks_dropped(data: str | bytes) -> str | bytes:
    """``data`` without the byte order marks that open its later lines (the first one libyaml reads itself)."""
    if isinstance(data, str):
        return _INNER_BOM.sub("", data) if "\ufeff" in data else data
    return _INNER_BOM_BYTES.sub(b"", data) if b"\xef\xbb\xbf" in data else data


def document(text: str, *, unique_keys: bool = True) -> Any:
    """The one document of ``text`` (None when it has none); a second document is refused, as by PyYAML's ``safe_load``."""
    found = list(documents(text, unique_keys=unique_keys))
    if len(found) > 1:
        raise ComposerError("expected a single document in the stream", None, "but found another document", None)
    return found[0] if found else None


def nodes(text: str) -> list[Node]:
    """The node tree of each document of ``text``: every node carries its start and end marks (0-based line and column)."""
    return list(yaml.compose_all(_inner_byte_order_marks_dropped(text), Loader=_Loader))


def problem(error: YAMLError) -> tuple[str, int | None]:
    """What is wrong with the YAML, and its 1-based line when the parser knows it."""
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        return error.problem or error.context or "malformed YAML", mark.line + 1 if mark else None
    return str(error), None


def native_build() -> str:
    """Which native code reads YAML in this process: libyaml's version under PyYAML (or PyYAML's pure Python
    parser), and the C reader by its file's size and modification time (or its absence). A cache of what was
    read keys on it: a rebuilt C reader changes no Python module, yet may build other values."""
    parser = f"libyaml {yaml._yaml.get_version_string()}" if yaml.__with_libyaml__ else "PyYAML's Python parser"
    if _yaml_values is None:
        return f"{parser}; no C reader"
    built = os.stat(_yaml_values.__file__)
    return f"{parser}; C reader {os.path.basename(_yaml_values.__file__)} {built.st_size} {built.st_mtime_ns}"


def _build(parser: Any, scalars: _Scalars, unique_keys: bool) -> Iterator[Any]:
    stack: list[_Frame] = []
    anchors: dict[str, tuple[Any, int]] = {}
    root: Any = None
    repeated = written = 0  # values aliases repeat, and values the document spells out
    plain = scalars.plain
    for event in iter(parser.get_event, None):
        kind = type(event)
        written += 1
        if kind is yaml.ScalarEvent:
            value, size = _NO_KEY, 1
            if event.tag is None and event.implicit[0]:  # a plain scalar: most are seen before
                value = plain.get(event.value, _NO_KEY)
            if value is _NO_KEY:
                value = scalars.value(event)
            if event.anchor is not None:
                _anchor(anchors, event.anchor, value, 1, event)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if event.tag not in _COLLECTION_TAGS:
                raise _no_constructor(event.tag, event)
            if len(stack) >= MAX_DEPTH:
                raise ConstructorError(None, None, f"nested more than {MAX_DEPTH} levels deep", event.start_mark)
            is_map = kind is yaml.MappingStartEvent
            stack.append(_Frame({} if is_map else [], is_map, event.anchor, event.start_mark))
            continue
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            frame = stack.pop()
            value, size = (_merged(frame) if frame.merges else frame.value), frame.nodes
            if frame.anchor is not None:
                _anchor(anchors, frame.anchor, value, size, event, frame.mark)
        elif kind is yaml.AliasEvent:
            if any(frame.anchor == event.anchor for frame in stack):
                raise ComposerError(None, None, "a YAML alias refers to a value that contains it", event.start_mark)
            try:
                value, size = anchors[event.anchor]
            except KeyError:
                raise ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark) from None
            repeated += size
            if repeated > MAX_ALIAS_NODES and repeated > 10 * written:
                raise ComposerError(None, None, f"YAML aliases expand to more than {MAX_ALIAS_NODES:,} values", event.start_mark)
        elif kind is yaml.DocumentStartEvent:
            anchors.clear()
            root, repeated, written = None, 0, 0
            continue
        elif kind is yaml.DocumentEndEvent:
            yield root
            continue
        else:  # stream start and end
            continue
        parent = stack[-1] if stack else None
        if value is MERGE and (parent is None or not parent.is_map or parent.key is not _NO_KEY):
            raise _no_constructor(_MERGE, event)  # `<<` means a merge only as a key
        if parent is None:
            root = value
            continue
        parent.nodes += size
        if not parent.is_map:
            parent.value.append(value)
        elif parent.key is _NO_KEY:
            parent.key, parent.key_mark = value, event.start_mark
        elif type(parent.key) is str and parent.key not in parent.value:  # the common case: a new key
            parent.value[parent.key], parent.key = value, _NO_KEY
        else:
            _put(parent, value, unique_keys)


def _put(frame: _Frame, value: Any, unique_keys: bool) -> None:
    key, frame.key = frame.key, _NO_KEY
    if key is MERGE:
        if frame.merges is None:
            frame.merges = []
        elif unique_keys:  # Go YAML rejects a second `<<` as it rejects any repeated key
            raise ConstructorError("while constructing a mapping", frame.mark, "duplicate key '<<'", frame.key_mark)
        frame.merges.append(_merge_sources(value, frame))
        return
    mapping = frame.value
    try:
        duplicate = key in mapping
    except TypeError:
        raise ConstructorError("while constructing a mapping", frame.mark, "found unhashable key", frame.key_mark) from None
    if duplicate and unique_keys:
        raise ConstructorError("while constructing a mapping", frame.mark, f"duplicate key {key!r}", frame.key_mark)
    mapping[key] = value


def _merge_sources(value: Any, frame: _Frame) -> list[dict[Any, Any]]:
    """The mappings ``<<`` brings in, in the order their keys are laid down (the first one listed wins)."""
    sources = [value] if isinstance(value, dict) else value if isinstance(value, list) else None
    if sources is None or not all(isinstance(source, dict) for source in sources):
        found = "a list with other items" if isinstance(value, list) else type(value).__name__
        raise ConstructorError(
            "while constructing a mapping",
            frame.mark,
            f"expected a mapping or list of mappings for merging, but found {found}",
            frame.key_mark,
        )
    return sources[::-1]


def _merged(frame: _Frame) -> dict[Any, Any]:
    """Merged keys first (the last mapping listed first, as Go YAML and PyYAML before 6.0.4 lay them down), then
    the mapping's own, which win."""
    result: dict[Any, Any] = {}
    for sources in frame.merges or ():
        for source in sources:
            result.update(source)
    result.update(frame.value)
    return result


def _anchor(anchors: dict[str, tuple[Any, int]], name: str, value: Any, size: int, event: Any, mark: Any = None) -> None:
    if name in anchors:
        raise ComposerError(None, None, f"found duplicate anchor {name!r}", mark or event.start_mark)
    anchors[name] = (value, size)


def _no_constructor(tag: str, event: Any) -> ConstructorError:
    return ConstructorError(None, None, f"could not determine a constructor for the tag {tag!r}", event and event.start_mark)
