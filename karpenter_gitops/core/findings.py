"""Findings: what a rule reports about one object, in the CLI's JSON contract."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # model imports schema, which imports this module
    from karpenter_gitops.core.model import Source


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Violation:
    """What a check yields: where in the object and why; the engine adds rule and object."""

    path: str
    message: str
    hint: str | None = None


@dataclass(frozen=True)
class Finding:
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

    def to_json(self) -> dict:
        data = {
            "rule": self.rule,
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
    def sort_key(self) -> tuple:
        return (self.file or "", self.kind, self.name, self.path, self.rule, self.message)
