"""The report of one judgement: findings, waivers and counts, with the ``validate`` JSON contract."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.inputs import Waiver


@dataclass(frozen=True)
class Report:
    """The findings of a run, with what was checked, noted, waived and against which release."""

    findings: tuple[Finding, ...]
    objects: int
    notes: tuple[str, ...] = ()
    policy: bool = False  # a `--policy` run: findings carry waiver fields, active waivers are listed
    waivers: tuple[Waiver, ...] = ()  # the active waivers
    waived: Mapping[Finding, Waiver] = field(default_factory=dict)
    release: versions.Release = versions.DEFAULT  # the release the findings were judged against
    skipped: int = 0  # files passed over as no Kubernetes YAML (Inputs.skipped)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity and f not in self.waived)

    @property
    def errors(self) -> int:
        return self.count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        return self.count(Severity.WARNING)

    def to_json(self) -> dict:
        summary = {"errors": self.errors, "warnings": self.warnings, "objects": self.objects}
        if self.skipped:
            summary["skippedFiles"] = self.skipped
        if not self.policy:
            return {"findings": [f.to_json() for f in self.findings], "summary": summary}
        findings = []
        for finding in self.findings:
            waiver = self.waived.get(finding)
            findings.append({**finding.to_json(), "waived": waiver is not None, "waiver": waiver and waiver.to_json()})
        return {
            "findings": findings,
            "waivers": [w.to_json() for w in self.waivers],
            "summary": {**summary, "waived": len([f for f in self.findings if f in self.waived])},
        }
