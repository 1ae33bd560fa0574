"""Fold Pulumi's own preview into the PR comment: steps per resource and policy events.

Two documented shapes are read, never the Pulumi SDK (github.com/pulumi/pulumi defines them: the
preview digest in ``pkg/backend/display/json.go``, the engine events in ``sdk/go/common/apitype/events.go``):

* ``pulumi preview --json``: one object with ``steps`` (``op``, ``urn``, ``diffReasons``,
  ``replaceReasons``, ``detailedDiff``) and ``diagnostics``; policy events are not in it;
* ``pulumi preview --event-log FILE``: newline-delimited engine events, of which
  ``resourcePreEvent`` (and ``resOutputsEvent``), ``policyEvent``, ``diagnosticEvent`` and
  ``summaryEvent`` are used;
* ``pulumi stack export``: the stack's state (``deployment.resources``, each with ``type``, ``id`` and
  ``outputs``), for the Karpenter objects a program declares, in code or not.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from karpenter_gitops.core.errors import InputError

# The children the Pulumi components (karpenter_gitops_pulumi) make per object: type, name suffix, Karpenter kind.
KARPENTER_CHILDREN = (
    ("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "-ec2nodeclass", "EC2NodeClass"),
    ("kubernetes:karpenter.sh/v1:NodePool", "-nodepool", "NodePool"),
    ("pulumi-python:dynamic/karpenter-gitops:Reconciliation", "-reconciliation", "EC2NodeClass"),
)
HIDDEN_OPS = frozenset({"same", "read", "refresh", "discard", "discard-replaced", "remove-pending-replace"})
COUNTED_OPS = ("create", "update", "replace", "delete")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m|<\{%[^%]*%\}>")  # ANSI codes and Pulumi's <{%fg 1%}> directives


def plain(text: str) -> str:
    return _COLOUR.sub("", text).strip()


@dataclass(frozen=True)
class PulumiStep:
    op: str
    urn: str
    type: str
    reasons: tuple[str, ...] = ()  # property paths behind an update or replace

    @property
    def name(self) -> str:
        return self.urn.rpartition("::")[2]

    @property
    def karpenter_object(self) -> tuple[str, str] | None:
        """(kind, name) of the Karpenter object this step changes, from the child names the Pulumi components
        give (``<name>-ec2nodeclass``, ``<name>-nodepool``, and ``<name>-reconciliation``, whose update is the
        class's images resolving anew); None for any other resource."""
        for resource_type, suffix, kind in KARPENTER_CHILDREN:
            if self.type == resource_type and self.name.endswith(suffix) and len(self.name) > len(suffix):
                return kind, self.name[: -len(suffix)]
        return None

    def to_json(self) -> dict:
        return {"op": self.op, "urn": self.urn, "type": self.type, "name": self.name, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class PolicyEvent:
    pack: str
    policy: str
    level: str  # advisory | mandatory | remediate | disabled
    message: str
    urn: str = ""

    @property
    def blocking(self) -> bool:
        return self.level == "mandatory"

    def to_json(self) -> dict:
        return {
            "policyPack": self.pack,
            "policy": self.policy,
            "enforcementLevel": self.level,
            "message": self.message,
            "urn": self.urn,
        }


@dataclass(frozen=True)
class Diagnostic:
    severity: str
    message: str
    urn: str = ""

    def to_json(self) -> dict:
        return {"severity": self.severity, "message": self.message, "urn": self.urn}


@dataclass(frozen=True)
class PulumiPreview:
    steps: tuple[PulumiStep, ...] = ()
    policy_events: tuple[PolicyEvent, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    summary: Mapping[str, int] = field(default_factory=dict)  # summaryEvent.resourceChanges, when given

    @property
    def counts(self) -> dict[str, int]:
        """create/update/replace/delete counts: the engine's summary when there is one, else the steps'."""
        source = self.summary or Counter(counted_op(step.op) for step in self.steps)
        return {op: int(source.get(op, 0)) for op in COUNTED_OPS}

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity == "error")

    def to_json(self) -> dict:
        return {
            "counts": self.counts,
            "steps": [s.to_json() for s in self.steps],
            "policyEvents": [p.to_json() for p in self.policy_events],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def counted_op(op: str) -> str:
    return "replace" if op in ("create-replacement", "delete-replaced") else op


def _type_of(urn: str) -> str:
    """The resource type from a URN: ``urn:pulumi:stack::project::parent$type::name``."""
    parts = urn.split("::")
    return parts[2].rpartition("$")[2] if len(parts) >= 4 else ""


def _step(op: str, urn: str, type_: str | None, reasons: Iterable[str]) -> PulumiStep:
    return PulumiStep(op, urn, type_ or _type_of(urn), tuple(sorted(set(reasons))))


def _sorted(preview_steps: Mapping[str, PulumiStep]) -> tuple[PulumiStep, ...]:
    return tuple(sorted(preview_steps.values(), key=lambda s: (s.type, s.name, s.urn)))


def parse_preview_json(text: str, source: str) -> PulumiPreview:
    """The output of ``pulumi preview --json``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"not the JSON of `pulumi preview --json`: {err.msg} (line {err.lineno})", source) from None
    if not isinstance(data, Mapping) or not isinstance(data.get("steps", []), list):
        raise InputError("not the JSON of `pulumi preview --json` (no 'steps' list)", source)
    try:
        return _preview_from(data)
    except (AttributeError, TypeError, ValueError) as err:
        raise InputError(f"not the JSON of `pulumi preview --json`: unexpected shape ({err})", source) from None


def _preview_from(data: Mapping) -> PulumiPreview:
    steps = {}
    for step in data.get("steps") or ():
        op, urn = step.get("op", ""), step.get("urn", "")
        if op in HIDDEN_OPS or not urn:
            continue
        reasons = [*(step.get("diffReasons") or ()), *(step.get("replaceReasons") or ()), *(step.get("detailedDiff") or {})]
        state = step.get("newState") or step.get("oldState") or {}
        steps[urn] = _step(op, urn, step.get("type") or state.get("type"), reasons)
    diagnostics = tuple(
        Diagnostic(d.get("severity", "info"), plain(d.get("message", "")), d.get("urn", ""))
        for d in data.get("diagnostics") or ()
        if plain(d.get("message", ""))
    )
    return PulumiPreview(_sorted(steps), (), diagnostics, _summary(data.get("changeSummary")))


def _summary(changes: object) -> dict[str, int]:
    """The engine's per-operation counts; a count that is not a number is a wrong file, found here."""
    return {str(op): int(n) for op, n in dict(changes or {}).items()}


def parse_event_log(text: str, source: str) -> PulumiPreview:
    """The newline-delimited engine events of ``pulumi preview --event-log FILE``."""
    steps: dict[str, PulumiStep] = {}
    policies, diagnostics, summary = [], [], {}
    number = 0
    try:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as err:
                raise InputError(f"not a Pulumi engine event: {err.msg}", source, number) from None
            if "resourcePreEvent" in event or "resOutputsEvent" in event:
                metadata = (event.get("resourcePreEvent") or event.get("resOutputsEvent") or {}).get("metadata") or {}
                op, urn = metadata.get("op", ""), metadata.get("urn", "")
                if op not in HIDDEN_OPS and urn:
                    reasons = [*(metadata.get("diffs") or ()), *(metadata.get("detailedDiff") or {})]
                    steps.setdefault(urn, _step(op, urn, metadata.get("type"), reasons))
            elif "policyEvent" in event:
                p = event["policyEvent"]
                policies.append(
                    PolicyEvent(
                        p.get("policyPackName", ""),
                        p.get("policyName", ""),
                        p.get("enforcementLevel", ""),
                        plain(p.get("message", "")),
                        p.get("resourceUrn", ""),
                    )
                )
            elif "diagnosticEvent" in event:
                d = event["diagnosticEvent"]
                if not d.get("ephemeral") and plain(d.get("message", "")):
                    diagnostics.append(Diagnostic(d.get("severity", "info"), plain(d.get("message", "")), d.get("urn", "")))
            elif "summaryEvent" in event:
                summary = _summary(event["summaryEvent"].get("resourceChanges"))
    except (AttributeError, TypeError, ValueError) as err:
        raise InputError(f"not a Pulumi engine event: unexpected shape ({err})", source, number) from None
    return PulumiPreview(_sorted(steps), tuple(policies), tuple(diagnostics), summary)


def merge(previews: Iterable[PulumiPreview]) -> PulumiPreview | None:
    """One view of several sources (a --json file and an event log of the same preview)."""
    previews = list(previews)
    if not previews:
        return None
    steps: dict[str, PulumiStep] = {}
    for preview in previews:
        for step in preview.steps:
            steps.setdefault(step.urn, step)
    return PulumiPreview(
        _sorted(steps),
        tuple(dict.fromkeys(p for preview in previews for p in preview.policy_events)),
        tuple(dict.fromkeys(d for preview in previews for d in preview.diagnostics)),
        next((preview.summary for preview in previews if preview.summary), {}),
    )


KARPENTER_GROUPS = ("kubernetes:karpenter.k8s.aws/", "kubernetes:karpenter.sh/")


def parse_stack_export(text: str, source: str) -> frozenset[tuple[str, str]]:
    """(kind, name) of every Karpenter object the stack's state holds (``pulumi stack export``): the ones its
    program declares, from the stack file or in code. Cluster-scoped, so a custom resource's id is its name;
    nothing else of the state is read (its secrets stay ciphertext)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"not the JSON of `pulumi stack export`: {err.msg} (line {err.lineno})", source) from None
    deployment = data.get("deployment") if isinstance(data, Mapping) else None
    resources = deployment.get("resources") if isinstance(deployment, Mapping) else ()
    resources = [] if resources is None else resources  # a stack that was never updated has none
    if not isinstance(resources, list):
        raise InputError("not the JSON of `pulumi stack export` (no 'deployment' with a 'resources' list)", source)
    found = set()
    for resource in resources:
        type_ = resource.get("type", "") if isinstance(resource, Mapping) else ""
        if isinstance(type_, str) and type_.startswith(KARPENTER_GROUPS) and isinstance(resource.get("id"), str):
            found.add((type_.rpartition(":")[2], resource["id"]))
    return frozenset(found)
