"""One walk over an object that prepares it as the API server does and judges its CEL rules on the way, each
sub-value's outcome remembered.

:func:`~karpenter_gitops.rules.crd.openapi.prepare` (nulls dropped, defaults filled) and the CEL rules of
:class:`~karpenter_gitops.rules.crd.validation_rules.RuleTree` each walked every object once, and each rule's
verdict was looked up by the ``repr`` of its prepared value. The objects of one repository repeat whole
sub-values (the same requirements, budgets, selector terms, block devices in every NodePool or
EC2NodeClass), and what a sub-value prepares into and which of the rules at and below it fail depend on
that value alone. So each schema node remembers, per value it was given (told by its ``repr``, as the YAML
and JSON readers build values: dicts, lists and scalars, whose ``repr`` tells key order and number types
apart), the value prepared and the rules' verdicts with their paths relative to it; a value seen before is
neither walked nor judged again. A node whose values do not repeat (an object's metadata, with its name)
stops remembering after :data:`_TRIAL` values, so only what repeats pays for the ``repr``.

Prepared values are shared between the objects that hold them: they are read (by the schema validator and
the CEL runtime), never changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from karpenter_gitops.rules.crd.openapi import as_json
from karpenter_gitops.rules.crd.validation_rules import Program, RuleTree, bound, evaluate

_SCALARS = frozenset({str, int, float, bool, type(None)})
_TRIAL = 64  # values a node remembers before it keeps remembering only if some repeated
_REPEATS = 8  # of those, at least this many repeats
# What is kept per CRD (all nodes together), counted in characters of the values' repr (what a value prepared takes
# is of that order): past it, every node starts over. About 10 MB of keys: a repository's values repeat well within it.
_REMEMBERED = 10_000_000
_ENTRY = 100  # what an entry counts for beside its key
_SELF = re.compile(r"\bself\b")
_FIELD = re.compile(r"\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_]|\s*\()")
_ABSENT = object()

# A sub-value's outcome: its prepared value, the failing rules at and below it as (path relative to it, rule id,
# message), and the transition rules not run (relative path, rule); paths relative to the value start with "."
# or "[" (our format: ``.a.b[0][key]``), or are "" for the value itself.
Walked = tuple[Any, tuple[tuple[str, str, str], ...], tuple[tuple[str, str], ...]]


def fields_read(rule: str) -> tuple[str, ...] | None:
    """The fields of ``self`` a rule reads, when it reads ``self`` only through them (``self.a``, ``has(self.b)``),
    so that its verdict on an object is its verdict on those fields; None when it may read more (``self`` alone,
    ``self.all(...)``, ``self['a']``). Read from the text: a string that spells ``self`` makes it None, or adds
    a field, which only makes the verdict's key finer."""
    fields: dict[str, None] = {}
    for found in _SELF.finditer(rule):
        field = _FIELD.match(rule, found.end())
        if field is None:
            return None
        fields[field.group(1)] = None
    return tuple(fields)


class _Node:
    """A structural-schema node as the walk needs it, with the CEL rules the schema carries there."""

    __slots__ = (
        "additional",
        "defaults",
        "hits",
        "items",
        "judged",
        "kept",
        "not_nullable",
        "own_transitions",
        "plain",
        "properties",
        "rules",
        "tried",
        "transitions",
    )

    def __init__(self, schema: Mapping[str, Any], tree: RuleTree | None) -> None:
        properties = schema.get("properties") or {}
        below = tree.properties if tree is not None else {}
        self.properties = {key: _Node(child, below.get(key)) for key, child in properties.items()}
        additional = schema.get("additionalProperties")
        self.additional = _Node(additional, tree.entries if tree else None) if isinstance(additional, dict) else None
        items = schema.get("items")
        self.items = _Node(items, tree.items if tree else None) if isinstance(items, dict) else None
        self.defaults = tuple((key, child["default"]) for key, child in properties.items() if "default" in child)
        self.not_nullable = frozenset(key for key, child in properties.items() if not child.get("nullable"))
        rules = tree.rules if tree is not None else ()
        # (program, the CRD's message, the fields of self it reads or None) of each rule but transition rules
        self.rules: tuple[tuple[Program, str | None, tuple[str, ...] | None], ...] = tuple(
            (program, message, fields_read(program.rule)) for program, message in rules if not program.transition
        )
        self.judged: dict[tuple[int, str], tuple[str, str] | None] = {}  # see Walk._verdicts
        self.transitions = tree.transitions if tree is not None else ()
        self.own_transitions = tuple(("", rule) for rule in self.transitions)  # as Walked holds them, the value's own
        self.plain = not (self.rules or self.transitions)  # a scalar here is kept as it is
        self.kept: dict[str, Walked] | None = {}  # None: this node's values do not repeat
        self.tried = self.hits = 0

    def nodes(self) -> list[_Node]:
        """This node and every node below it."""
        found, pending = [], [self]
        while pending:
            node = pending.pop()
            found.append(node)
            pending.extend(node.properties.values())
            pending.extend(child for child in (node.additional, node.items) if child is not None)
        return found


class Walk:
    """The walk of one CRD's served schema: :meth:`outcome` of a whole object. Remembers per process."""

    def __init__(self, schema: Mapping[str, Any], tree: RuleTree | None) -> None:
        self.root = _Node(schema, tree)
        self._nodes = self.root.nodes()
        self._kept = 0

    def outcome(self, value: Any) -> Walked:
        """``value`` prepared, and the failing rules and transition rules at and below it (paths relative to it)."""
        return self._outcome(self.root, value)

    def _outcome(self, node: _Node, value: Any) -> Walked:
        kept = node.kept
        if kept is None:
            return self._walked(node, value)
        key = repr(value)
        found = kept.get(key)
        if found is not None:
            node.hits += 1
            return found
        found = kept[key] = self._walked(node, value)
        node.tried += 1
        self._kept += len(key) + _ENTRY
        if node.tried == _TRIAL and node.hits < _REPEATS:
            node.kept = None  # its values do not repeat: walk them, do not keep them
            self._kept = max(0, self._kept - sum(len(dropped) + _ENTRY for dropped in kept))
        elif self._kept >= _REMEMBERED:
            self._forget()
        return found

    def _forget(self) -> None:
        for node in self._nodes:
            if node.kept:
                node.kept = {}
            node.judged.clear()
        self._kept = 0

    def _walked(self, node: _Node, value: Any) -> Walked:
        kind = type(value)
        failed: list[tuple[str, str, str]] = []
        skipped: list[tuple[str, str]] = list(node.own_transitions)
        if kind is dict:
            prepared: Any = {}
            properties, additional, not_nullable = node.properties, node.additional, node.not_nullable
            for key, child in value.items():
                if type(key) is not str:  # YAML keys such as 1 or true: JSON's words for them
                    return self._walked(node, as_json(value))
                if child is None:
                    if key not in not_nullable:
                        prepared[key] = None
                    continue
                below = properties.get(key, additional)
                if type(child) in _SCALARS and (below is None or below.plain):
                    prepared[key] = child
                    continue
                if below is None:
                    prepared[key] = as_json(child)
                    continue
                prepared[key], failed_below, skipped_below = self._outcome(below, child)
                if failed_below or skipped_below:
                    step = f".{key}" if key in properties else f"[{key}]"
                    if failed_below:
                        failed.extend((step + path, rule, message) for path, rule, message in failed_below)
                    if skipped_below:
                        skipped.extend((step + path, rule) for path, rule in skipped_below)
            for key, default in node.defaults:
                if key not in prepared:
                    prepared[key], failed_below, skipped_below = self._child(properties[key], default)
                    failed.extend((f".{key}{path}", rule, message) for path, rule, message in failed_below)
                    skipped.extend((f".{key}{path}", rule) for path, rule in skipped_below)
        elif kind is list:
            items = node.items
            if items is None:
                prepared = as_json(value)
            else:
                prepared = []
                for index, child in enumerate(value):
                    item, failed_below, skipped_below = self._child(items, child)
                    prepared.append(item)
                    if failed_below or skipped_below:
                        failed.extend((f"[{index}]{path}", rule, message) for path, rule, message in failed_below)
                        skipped.extend((f"[{index}]{path}", rule) for path, rule in skipped_below)
        elif kind in _SCALARS:
            prepared = value
        else:  # a date, or a mapping or sequence of another type: what kubectl would send
            return self._walked(node, as_json(value))
        if node.rules and prepared is not None:
            failed[:0] = [("", *verdict) for verdict in self._verdicts(node, prepared) if verdict is not None]
        return prepared, tuple(failed) if failed else (), tuple(skipped) if skipped else ()

    def _verdicts(self, node: _Node, value: Any) -> list[tuple[str, str] | None]:
        """Each rule of ``node`` on ``value``: None where it holds. A rule that reads only some fields of an object
        is judged once per distinct value of those fields (a NodePool's spec is new in every NodePool, the
        ``replicas``, ``limits`` and ``weight`` its rules read are not); the others are run."""
        verdicts: list[tuple[str, str] | None] = []
        activation = None
        for index, (program, message, fields) in enumerate(node.rules):
            key = None
            if fields is not None and type(value) is dict:
                key = (index, repr([value.get(field, _ABSENT) for field in fields]))
                if key in node.judged:
                    verdicts.append(node.judged[key])
                    continue
            if activation is None:
                activation = bound(value)
            verdict = evaluate(program, message, value, activation)
            verdicts.append(verdict)
            if key is not None:
                node.judged[key] = verdict
                self._kept += len(key[1]) + _ENTRY
        return verdicts

    def _child(self, node: _Node, value: Any) -> Walked:
        """A value below a dict or list: walked and remembered, unless a scalar no rule reads (kept as it is)."""
        if value is None or (node.plain and type(value) in _SCALARS):
            return value, (), ()
        return self._outcome(node, value)
