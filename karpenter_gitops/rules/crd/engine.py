"""Judge objects with the real Karpenter CRDs, as the API server would.

The user gives the CRD files of their release (e.g. the ``crds/`` folder of the Karpenter Helm
chart). For ``EC2NodeClass`` and ``NodePool`` we take the served ``v1`` ``openAPIV3Schema`` and:

* do what the API server does before validating: drop ``status`` (a subresource), drop nulls of
  non-nullable fields and fill ``default`` values;
* validate the structural schema with jsonschema-rs; unknown fields are errors, as
  ``kubectl apply --validate=strict`` reports them; ``x-kubernetes-list-type: set`` means unique
  items; of the formats only ``date-time`` is checked (int32/int64 ranges are not); ObjectMeta,
  which the CRD leaves open, gets the API server's ``metadata.name`` check;
* evaluate every ``x-kubernetes-validations`` rule with cel-expr-python, ``self`` bound to the node that
  carries the rule, unless the schema already found errors the API server treats as blocking.

Violations are observed under the three ids of :mod:`karpenter_gitops.rules.crd.declared`; the
schema part is :mod:`.openapi`, the CEL part :mod:`.validation_rules`; :mod:`.walk` prepares an object and
runs its rules in one walk, remembering what repeats from object to object.

Transition rules (those reading ``oldSelf``) need the live object; they are listed in
:attr:`Outcome.skipped`, never counted as passing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from karpenter_gitops.core.findings import Observation, Violation
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.model import (
    CAPACITYBUFFER,
    EC2NODECLASS,
    EC2NODECLASS_API,
    NODEOVERLAY,
    NODEPOOL,
    NODEPOOL_API,
)
from karpenter_gitops.core.name_validation import SUBDOMAIN_FORMAT
from karpenter_gitops.rules.crd.declared import SCHEMA
from karpenter_gitops.rules.crd.openapi import SchemaValidator, dotted, to_json_schema
from karpenter_gitops.rules.crd.validation_rules import rule_tree
from karpenter_gitops.rules.crd.walk import Walk

SERVED_VERSION = "v1"
API_OF_KIND = {EC2NODECLASS: EC2NODECLASS_API, NODEPOOL: NODEPOOL_API}
# Schema errors after which the API server does not run CEL rules (apiextensions hasBlockingErr).
_BLOCKING = frozenset({"type", "required", "enum", "maxLength", "maxItems", "maxProperties", "additionalProperties"})
# ObjectMeta is validated by the API server, not the CRD (whose schema says only "object").
_DNS_SUBDOMAIN = f"^{SUBDOMAIN_FORMAT}$"
_OBJECT_META = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string", "maxLength": 253, "pattern": _DNS_SUBDOMAIN}},
}


@dataclass(frozen=True)
class Skipped:
    """CEL rules not evaluated, and why (never counted as passing); ``*`` stands for all of them."""

    path: str
    rule: str
    reason: str


TRANSITION = "transition rule: needs the live object (oldSelf)"
_TRANSITIONS_KEPT = 1_000  # distinct sets of transition rules an object holds, kept per CRD (see Crd._skipped)
BLOCKED = "the object has schema errors, and then the API server skips CEL rules too"


@dataclass(frozen=True)
class Outcome:
    observations: tuple[Observation, ...]
    skipped: tuple[Skipped, ...] = ()


class Crd:
    """The served v1 schema of one kind, ready to check manifests (rules compiled once)."""

    def __init__(self, kind: str, schema: Mapping[str, Any], source: str, status_subresource: bool) -> None:
        self.kind, self.schema, self.source = kind, schema, source
        self.status_subresource = status_subresource
        converted = to_json_schema(schema)
        converted.setdefault("properties", {})["metadata"] = _OBJECT_META
        self.validator = SchemaValidator(schema, converted)
        self.rules = rule_tree(schema)  # compiled once per CRD
        self._walk = Walk(schema, self.rules)  # prepares and judges, remembering each sub-value's outcome
        self._transitions: dict[tuple[tuple[str, str], ...], tuple[Skipped, ...]] = {}  # see _skipped

    def check(self, manifest: Mapping[str, Any]) -> Outcome:
        """Judge one full manifest (apiVersion, kind, metadata, spec)."""
        if self.status_subresource and "status" in manifest:  # the API server ignores status outside its subresource
            manifest = {key: value for key, value in manifest.items() if key != "status"}
        obj, failed, transitions = self._walk.outcome(manifest)
        api = API_OF_KIND[self.kind]
        schema_errors = list(self.validator.errors(obj))
        if not (schema_errors or failed) and obj.get("apiVersion") == api:  # most objects: nothing to word
            return Outcome((), self._skipped(transitions))
        name = _name_of(manifest)
        findings, blocking = [], False
        if obj.get("apiVersion") != api:
            message = f"apiVersion {obj.get('apiVersion')!r} is not served; this CRD serves {api!r}"
            findings.append(self._observe(SCHEMA, name, "apiVersion", message))
            blocking = True
        for keyword, parts, message in schema_errors:
            blocking = blocking or keyword in _BLOCKING
            findings.append(self._observe(SCHEMA, name, dotted(self.schema, parts), message))
        if blocking:
            return Outcome(tuple(findings), (Skipped("", "*", BLOCKED),))
        findings.extend(self._observe(rule_id, name, _from_root(path), message) for path, rule_id, message in failed)
        return Outcome(tuple(findings), self._skipped(transitions))

    def _skipped(self, transitions: tuple[tuple[str, str], ...]) -> tuple[Skipped, ...]:
        """The transition rules an object holds, as the same tuple for every object that holds the same ones (the
        objects of a kind mostly do): :meth:`Crds.check_inputs` notes each tuple once."""
        if not transitions:
            return ()
        found = self._transitions.get(transitions)
        if found is None:
            if len(self._transitions) >= _TRANSITIONS_KEPT:
                self._transitions.clear()
            found = self._transitions[transitions] = tuple(
                Skipped(_from_root(path), rule, TRANSITION) for path, rule in transitions
            )
        return found

    def _observe(self, rule: str, name: str, path: str, message: str) -> Observation:
        return Observation(rule, self.kind, name, Violation(path, message))


def _from_root(path: str) -> str:
    """A path relative to the object (``.spec.a``, ``[key]``, ``""``) in our format (``spec.a``)."""
    return path[1:] if path.startswith(".") else path


def _name_of(manifest: Mapping[str, Any]) -> str:
    metadata = manifest.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) and name else "<unnamed>"


# How check_inputs maps the check over the objects, outcomes in their order: one by one here; the app
# layer passes a map that uses both cores on large runs (the check is pure).
Spread = Callable[[Callable[[Any], "Outcome | None"], Sequence[Any]], list["Outcome | None"]]


def _one_by_one(check: Callable[[Any], Outcome | None], objects: Sequence[Any]) -> list[Outcome | None]:
    return [check(obj) for obj in objects]


@dataclass(frozen=True)
class Crds:
    """The CRDs found under the paths the user gave, by kind."""

    by_kind: Mapping[str, Crd]

    def check(self, manifest: Mapping[str, Any]) -> Outcome | None:
        """Judge a manifest with its kind's CRD; ``None`` when no CRD of that kind was given."""
        crd = self.by_kind.get(manifest.get("kind"))
        return crd.check(manifest) if crd else None

    def check_inputs(
        self, inputs: Inputs, spread: Spread = _one_by_one, known: Mapping[tuple[str, int], Outcome] | None = None
    ) -> CrdCheck:
        """The CRDs' verdict on every loaded object. ``spread`` maps the check over the objects and gives
        the outcomes in their order (the caller may use both cores). ``known`` are the outcomes of objects
        checked before, by the file and document they are the whole of (see :meth:`check`): an object's
        manifest is kept pickled, and unpickling it costs as much as checking it.

        A transition rule is noted once per kind and path, not once per object: it never runs offline.
        """
        observations: list[Observation] = []
        notes: dict[str, dict[str, None]] = {}  # per kind, ordered and without repeats
        objects = inputs.objects
        if known:
            outcomes = [known.get((obj.source.file, obj.source.document)) or self.check(obj.raw) for obj in objects]
        else:
            outcomes = spread(lambda obj: self.check(obj.raw), objects)
        noted: dict[tuple[str, int], tuple[Skipped, ...]] = {}  # (kind, id) of the skipped tuples noted (held: ids stay theirs)
        for obj, outcome in zip(objects, outcomes, strict=True):
            if outcome is None:
                continue
            observations.extend(replace(observation, source=obj.source) for observation in outcome.observations)
            if (obj.kind, id(outcome.skipped)) in noted:
                continue
            noted[(obj.kind, id(outcome.skipped))] = outcome.skipped
            for skipped in outcome.skipped:
                if skipped.reason == BLOCKED:
                    note = f"{obj.kind}/{obj.name}: CRD CEL rules not checked: {BLOCKED}"
                else:
                    note = f"{obj.kind}: CRD rule at {skipped.path} not checked ({skipped.reason}): {skipped.rule}"
                notes.setdefault(obj.kind, {})[note] = None
        unchecked = frozenset(obj.kind for obj in objects) - self.by_kind.keys()
        return CrdCheck(tuple(observations), unchecked, {kind: tuple(found) for kind, found in notes.items()})


@dataclass(frozen=True)
class CrdCheck:
    """What the CRDs found on some objects: observations, the kinds no CRD was given for, and notes on
    the rules not checked, per kind in the objects' order. The checks of a run's two halves (the first
    half's files, then the rest) join into the one run's (:meth:`joined`)."""

    observations: tuple[Observation, ...]
    unchecked: frozenset[str]
    object_notes: Mapping[str, tuple[str, ...]]

    def joined(self, later: CrdCheck) -> CrdCheck:
        notes = {
            kind: tuple(dict.fromkeys((*self.object_notes.get(kind, ()), *later.object_notes.get(kind, ()))))
            for kind in _KINDS_IN_ORDER
            if kind in self.object_notes or kind in later.object_notes
        }
        return CrdCheck(self.observations + later.observations, self.unchecked | later.unchecked, notes)

    @property
    def notes(self) -> list[str]:
        """Kinds not checked, then the rules not checked, in the order of the objects (Inputs.objects)."""
        missing = [f"no {kind} CRD given; {kind} objects were not checked against a CRD" for kind in sorted(self.unchecked)]
        return missing + [note for kind in _KINDS_IN_ORDER for note in self.object_notes.get(kind, ())]


#: The kinds in the order :attr:`Inputs.objects` lists their objects.
_KINDS_IN_ORDER = (EC2NODECLASS, NODEPOOL, NODEOVERLAY, CAPACITYBUFFER)
