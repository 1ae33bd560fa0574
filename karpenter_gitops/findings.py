"""Findings: what a rule reports about one object, in the CLI's JSON contract."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


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
        if self.hint:
            data["hint"] = self.hint
        return data

    @property
    def sort_key(self) -> tuple:
        return (self.file or "", self.kind, self.name, self.path, self.rule, self.message)
