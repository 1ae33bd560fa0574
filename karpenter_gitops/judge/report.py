"""The report of one judgement: findings, waivers and counts, with the ``validate`` JSON contract."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Finding, Severity, Waiver
from karpenter_gitops.core.outcome import Outcome


@dataclass(frozen=True)
class Subject:
    """An object a run judged, by kind, name and file: what a report in JUnit XML has one test case for,
    whether or not it has findings."""

    kind: str
    name: str
    file: str | None = None

    @property
    def sort_key(self) -> tuple[str, str, str]:
        return (self.file or "", self.kind, self.name)

    @classmethod
    def each_of(cls, objects: Iterable[Any]) -> tuple[Subject, ...]:
        """The subjects of loaded objects (an EC2NodeClass, NodePool, NodeOverlay or CapacityBuffer)."""
        return tuple(cls(obj.kind, obj.name, obj.source.file) for obj in objects)


@dataclass(frozen=True)
class Report:
    """The findings of a run, with what was checked, noted, waived and against which release."""

    findings: tuple[Finding, ...]
    objects: int
    notes: tuple[str, ...] = ()
    policy: bool = False  # a `--policy` run: waiver files applied
    waivers: tuple[Waiver, ...] = ()  # the active waivers (the inline ones that waive a finding among them)
    waived: Mapping[Finding, Waiver] = field(default_factory=dict)
    release: versions.Release = versions.DEFAULT  # the release the findings were judged against
    skipped: int = 0  # files passed over as no Kubernetes YAML (Inputs.skipped)
    subjects: tuple[Subject, ...] = ()  # the objects judged (as many as ``objects``), findings or not

    @property
    def waiving(self) -> bool:
        """Whether waivers apply to this run's findings (``--policy``, or an object's inline waiver): its findings
        then carry waiver fields, and its active waivers are listed."""
        return self.policy or bool(self.waivers)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity and f not in self.waived)

    @property
    def errors(self) -> int:
        return self.count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        return self.count(Severity.WARNING)

    @property
    def exit_code(self) -> Outcome:
        return self.tally().exit_code

    def tally(self) -> Tally:
        waived = len([f for f in self.findings if f in self.waived])
        return Tally(self.errors, self.warnings, self.objects, self.skipped, self.waiving, self.waivers, waived)

    def to_json(self) -> dict:
        return {"findings": [self.finding_json(f) for f in self.findings], **self.tally().to_json()}

    def finding_json(self, finding: Finding) -> dict:
        """One finding as the JSON contract has it: with its waiver, where waivers apply (:attr:`waiving`)."""
        if not self.waiving:
            return finding.to_json()
        waiver = self.waived.get(finding)
        return {**finding.to_json(), "waived": waiver is not None, "waiver": waiver and waiver.to_json()}


@dataclass(frozen=True)
class Tally:
    """A report's counts, and its active waivers where waivers apply: its JSON summary. A run whose findings
    are printed as they are judged (``validate``'s stream) adds up the tallies of its parts."""

    errors: int = 0
    warnings: int = 0
    objects: int = 0
    skipped: int = 0
    policy: bool = False  # waivers apply (Report.waiving): the summary lists them and counts what they waived
    waivers: tuple[Waiver, ...] = ()
    waived: int = 0

    @property
    def exit_code(self) -> Outcome:
        """FINDINGS when an error finding is not waived; warnings and notes never fail a run."""
        return Outcome.FINDINGS if self.errors else Outcome.OK

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.errors + other.errors,
            self.warnings + other.warnings,
            self.objects + other.objects,
            self.skipped + other.skipped,
            self.policy or other.policy,
            tuple(dict.fromkeys(self.waivers + other.waivers)),  # the files' waivers are every part's; inline ones, each its own
            self.waived + other.waived,
        )

    def to_json(self) -> dict:
        summary = {"errors": self.errors, "warnings": self.warnings, "objects": self.objects}
        if self.skipped:
            summary["skippedFiles"] = self.skipped
        if not self.policy:
            return {"summary": summary}
        return {"waivers": [w.to_json() for w in self.waivers], "summary": {**summary, "waived": self.waived}}
