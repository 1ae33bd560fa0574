"""Offline validation: run every applicable rule of the registry over loaded inputs.

With ``policy=True`` the hygiene policies run too and waivers apply: a finding an active waiver
covers stays in the report, marked waived, but no longer counts; an expired waiver is an error.
The stack's policy settings (severity overrides, disabled rules) apply in both modes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Finding, Severity, Violation
from karpenter_gitops.load.config import Inputs
from karpenter_gitops.load.waivers import Waiver
from karpenter_gitops.load.waivers import apply as apply_waivers
from karpenter_gitops.rules import registry, transitions


@dataclass(frozen=True)
class Report:
    findings: tuple[Finding, ...]
    objects: int
    notes: tuple[str, ...] = ()
    policy: bool = False  # a `--policy` run: findings carry waiver fields, active waivers are listed
    waivers: tuple[Waiver, ...] = ()  # the active waivers
    waived: Mapping[Finding, Waiver] = field(default_factory=dict)
    version: versions.Version = versions.DEFAULT  # the release the findings were judged against

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


def _findings(rule: registry.Rule, obj, violations: Iterable[Violation], inputs: Inputs) -> list[Finding]:
    severity = inputs.policy.severity(rule)
    return [
        Finding(rule.id, severity, obj.kind, obj.name, v.path, v.message, obj.source.file, v.hint or rule.fix, obj.source)
        for v in violations
    ]


def rule_findings(rule: registry.Rule, obj, context: registry.Context) -> list[Finding]:
    """Findings of one checked rule on one object, at the severity the stack's settings give it."""
    return _findings(rule, obj, rule.check(obj, context), context.inputs)


def check_object(obj, context: registry.Context, policy: bool = False) -> list[Finding]:
    """Findings of every enabled rule that applies to one object (used by the CLI and the provider)."""
    found = []
    for rule in registry.applicable(obj.kind, context.version, policy):
        if context.inputs.policy.enabled(rule.id):
            found.extend(rule_findings(rule, obj, context))
    return found


def check_transitions(base: Inputs, head: Inputs, version: versions.Version) -> tuple[Finding, ...]:
    """Findings of the transition rules on each object in both ``base`` (stored) and ``head`` (its update).

    The head's policy settings apply, as for the other rules; findings name the head's file.
    """
    context = registry.Context(version=version, inputs=head)
    stored = {(obj.kind, obj.name): obj for obj in base.objects}
    found = []
    for new in head.objects:
        old = stored.get((new.kind, new.name))
        if old is None:
            continue
        for transition in transitions.applicable(new.kind, version):
            if head.policy.enabled(transition.rule.id):
                found.extend(_findings(transition.rule, new, transition.check(old, new, context), head))
    return tuple(sorted(found, key=lambda f: f.sort_key))


def validate(
    inputs: Inputs,
    version: versions.Version = versions.DEFAULT,
    *,
    policy: bool = False,
    waivers: Iterable[Waiver] = (),
    today: dt.date | None = None,
) -> Report:
    """Judge ``inputs``; with ``policy``, also the hygiene rules and the stack's plus ``waivers``.

    ``today`` decides which waivers have expired (default: the local date).
    """
    context = registry.Context(version=version, inputs=inputs)
    findings = list(inputs.findings)
    for obj in inputs.objects:
        findings.extend(check_object(obj, context, policy))
    if not policy:
        findings.sort(key=lambda f: f.sort_key)
        return Report(tuple(findings), len(inputs.objects), inputs.notes, version=version)
    outcome = apply_waivers(findings, (*inputs.waivers, *waivers), today or dt.date.today())
    findings.extend(outcome.expired)
    findings.sort(key=lambda f: f.sort_key)
    return Report(tuple(findings), len(inputs.objects), inputs.notes, True, outcome.active, outcome.waived, version)
