"""Offline validation: run every applicable rule of the registry over loaded inputs."""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops import versions
from karpenter_gitops.config import Inputs
from karpenter_gitops.findings import Finding, Severity
from karpenter_gitops.rules import registry


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    objects: int
    notes: tuple[str, ...] = ()

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def errors(self) -> int:
        return self.count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        return self.count(Severity.WARNING)

    def to_json(self) -> dict:
        return {
            "findings": [f.to_json() for f in self.findings],
            "summary": {"errors": self.errors, "warnings": self.warnings, "objects": self.objects},
        }


def check_object(obj, context: registry.Context) -> list[Finding]:
    """Findings of every rule that applies to one object (used by the CLI and the provider)."""
    found = []
    for rule in registry.applicable(obj.kind, context.version):
        for violation in rule.check(obj, context):
            found.append(
                Finding(
                    rule.id,
                    rule.severity,
                    obj.kind,
                    obj.name,
                    violation.path,
                    violation.message,
                    obj.source.file,
                    violation.hint or rule.fix,
                )
            )
    return found


def validate(inputs: Inputs, version: versions.Version = versions.DEFAULT) -> Report:
    context = registry.Context(version=version, inputs=inputs)
    findings = list(inputs.findings)
    for obj in inputs.objects:
        findings.extend(check_object(obj, context))
    findings.sort(key=lambda f: f.sort_key)
    return Report(tuple(findings), len(inputs.objects), inputs.notes)
