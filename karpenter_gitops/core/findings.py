"""What rules see and what the judge reports, in the CLI's JSON contract.

Three steps, three types: a check yields a :class:`Violation` (where and why); whoever ran the
check wraps it with the rule id and the object into an :class:`Observation` (loading, the rules,
the reconciliation and the CRD engine all do); the judge alone turns an observation into a
:class:`Finding`, deciding its severity, whether the rule is enabled, and whether it is waived.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Any


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Source:
    """Where an object came from: a manifest file (and document) or a stack config key."""

    file: str
    document: int | None = None
    line: int | None = None
    stack_key: str | None = None

    @property
    def scope(self) -> str:
        """Objects that see each other: one stack file is one cluster; manifests share one scope."""
        return self.file if self.stack_key else ""


@dataclass(frozen=True)
class Violation:
    """What a check yields: where in the object and why."""

    path: str
    message: str
    hint: str | None = None


@dataclass(frozen=True)
class Observation:
    """A violation of one rule by one object, not judged yet (no severity, not waived)."""

    rule: str
    kind: str
    name: str
    violation: Violation
    source: Source | None = None

    @property
    def file(self) -> str | None:
        return self.source.file if self.source else None


@dataclass(frozen=True)
class Finding:
    """A judged observation. Made only by :mod:`karpenter_gitops.judge`."""

    rule: str
    severity: Severity
    kind: str
    name: str
    path: str
    message: str
    file: str | None = None
    hint: str | None = None
    #: Where the finding's object sits in its file, so its line can be found; not part of the contract.
    source: Source | None = field(default=None, compare=False, repr=False)
    #: 1-based line of ``path`` in ``file``, once located. Neither it nor ``source`` takes part in
    #: equality, so a finding stays the same finding (e.g. as a key of waived findings) once located.
    line: int | None = field(default=None, compare=False)
    #: Who refuses what was found: "api-server" (the CRD's schema and CEL), "karpenter" (its controller)
    #: or "karpenter-gitops" (this project's stricter rules and policies).
    layer: str = field(default="karpenter-gitops", compare=False)
    #: The waiver the finding's own object carries for it (its ``karpenter-gitops.io/ignore`` annotation), set
    #: by the judge where the finding is made, so it travels with the finding through every way a run is judged.
    inline_waiver: InlineWaiver | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "rule": self.rule,
            "layer": self.layer,
            "severity": self.severity.value,
            "kind": self.kind,
            "name": self.name,
            "path": self.path,
            "message": self.message,
        }
        if self.file:
            data["file"] = self.file
        if self.line:
            data["line"] = self.line
        if self.hint:
            data["hint"] = self.hint
        return data

    @property
    def sort_key(self) -> tuple[str, str, str, str, str, str]:
        return (self.file or "", self.kind, self.name, self.path, self.rule, self.message)


#: The annotation that waives a rule on the object that carries it: one ``RULE-ID: REASON`` per line.
IGNORE_ANNOTATION = "karpenter-gitops.io/ignore"


@dataclass(frozen=True)
class Waiver:
    """A reasoned, expiring exception to one rule for named objects (or a glob like ``gpu-*``)."""

    rule: str
    object: str
    reason: str
    expires: dt.date
    kind: str | None = None
    file: str | None = None
    entry: str = ""  # where in the file, e.g. "waivers[2]"

    def covers(self, finding: Finding) -> bool:
        return (
            finding.rule == self.rule
            and (self.kind is None or finding.kind == self.kind)
            and fnmatchcase(finding.name, self.object)
        )

    def expired(self, today: dt.date) -> bool:
        return today > self.expires

    @property
    def term(self) -> str:
        """How long it holds, as a report says it."""
        return f"until {self.expires.isoformat()}"

    def to_json(self) -> dict[str, Any]:
        data = {"rule": self.rule, "object": self.object, "reason": self.reason, "expires": self.expires.isoformat()}
        if self.kind:
            data["kind"] = self.kind
        if self.file:
            data["file"] = self.file
        data["entry"] = self.entry
        return data


@dataclass(frozen=True)
class InlineWaiver(Waiver):
    """A waiver written on the object itself, in its :data:`IGNORE_ANNOTATION`: it covers that one object (the
    findings the judge made on it carry it, see :attr:`Finding.inline_waiver`) and needs no expiry date, as it
    is reviewed with the object and goes when the annotation does. ``file`` is the object's own file."""

    expires: dt.date = dt.date.max

    @property
    def term(self) -> str:
        return f"inline ({IGNORE_ANNOTATION})"

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "expires": None, "inline": True}
