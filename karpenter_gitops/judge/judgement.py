"""How the judge decides, the same way for every front end.

Every front end (``validate``, ``plan``, ``preview``, the dynamic provider's ``check()``, the
CrossGuard pack) hands what it observed to a :class:`Judge`: the schema problems loading saw,
the violations of object and transition rules, what the reconciliation saw in AWS, what the
user's CRDs rejected, and expired waivers. The judge applies the same decisions to all of them:
whether the rule applies to the Karpenter release, whether hygiene policies are on, whether the
stack switched the rule off, and its severity (the stack's override, else the rule's production
severity in a production stack, else its own). Waivers are applied afterwards by :func:`validate`, but for
those an object carries in its annotation, which its findings carry from where they are made
(:func:`.waiving.carried`).

An object whose loading observed a blocking schema error (a wrong type, a missing required field,
a value outside an enum, too long or too many: ``obj.blocked``) gets its schema findings and none of
the rules that mirror the API server's CEL, as the API server runs no CEL rule on an object with a
blocking structural error (apiextensions ``hasBlockingErr``). Every other rule (this project's own, and
its mirrors of Karpenter's controller, which will judge the object once it is fixed) still runs, and
keeps what it finds where every field it read is well-formed (:mod:`.reads`), so one push shows every
mistake, as the API server shows every schema error at once; each finding names its layer. Transition
rules are CEL: none runs on a blocked object. Other objects' rules still see it.

A value holding a template placeholder (``${CLUSTER_NAME}``: ``obj.unrendered``) is not the value Karpenter will
see: nothing found at or below its path is reported, only the one ``manifest/not-rendered`` of its file.

One finding per object, field and cause (:func:`once`): where one of our rules explains a mistake the CRD
already refuses at the same path (``restates`` in its declaration), the refusal is reported, with our hint.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Any

from karpenter_gitops.core import typed_schema, versions
from karpenter_gitops.core.findings import Finding, Observation, Severity, Violation
from karpenter_gitops.core.inputs import Inputs, PolicySettings, Waiver
from karpenter_gitops.judge.reads import watched, well_formed
from karpenter_gitops.judge.report import Report, Subject
from karpenter_gitops.judge.waiving import apply as apply_waivers
from karpenter_gitops.judge.waiving import carried
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.manifest import NOT_RENDERED
from karpenter_gitops.rules.registry import RULES, Context, Rule, Stage


class Judge:
    """Judges observations for one Karpenter release under one set of policy settings."""

    def __init__(
        self, release: versions.Release = versions.DEFAULT, settings: PolicySettings | None = None, *, hygiene: bool = False
    ) -> None:
        self.release = release
        self.settings = settings or PolicySettings()
        self.hygiene = hygiene

    def severity(self, rule: Rule) -> Severity:
        """The stack's override, else the production severity in a production stack, else the rule's own."""
        setting = self.settings.rules.get(rule.id)
        if setting is not None and setting.severity is not None:
            return setting.severity
        if self.settings.production and rule.production is not None:
            return rule.production
        return rule.severity

    def enabled(self, rule: Rule) -> bool:
        setting = self.settings.rules.get(rule.id)
        return (setting is None or setting.enabled) and (self.hygiene or not rule.hygiene)

    def finding(self, observation: Observation) -> Finding | None:
        """The finding an observation makes, or None when its rule is off or does not apply."""
        rule = RULES[observation.rule]
        if not self.enabled(rule) or not rule.applies(observation.kind, self.release):
            return None
        violation = observation.violation
        return Finding(
            rule.id,
            self.severity(rule),
            observation.kind,
            observation.name,
            violation.path,
            violation.message,
            observation.file,
            violation.hint or rule.fix,
            observation.source,
            layer=rule.layer,
        )

    def findings(self, observations: Iterable[Observation]) -> list[Finding]:
        return [finding for finding in map(self.finding, observations) if finding is not None]

    def with_crd_findings(self, own: list[Finding], observations: Iterable[Observation]) -> list[Finding]:
        """``own`` findings and those the user's CRDs make (``--crd``), less each CRD finding that one of ``own``
        already says in the same words at its place or at a place inside it (the API server names a CEL rule's
        field, ours the item; ours carries the fix): one mistake, one finding."""
        said: dict[tuple[str | None, str, str, str], list[str]] = {}
        for finding in own:
            said.setdefault((finding.file, finding.kind, finding.name, finding.message), []).append(finding.path)
        return own + [
            finding
            for finding in self.findings(observations)
            if not any(
                _at_or_inside(path, finding.path)
                for path in said.get((finding.file, finding.kind, finding.name, finding.message), ())
            )
        ]

    def objects(self, inputs: Inputs, only: Rule | None = None, judged: Iterable[Any] | None = None) -> list[Finding]:
        """What loading observed, plus every enabled object rule on every object (or ``only`` one rule);
        with ``judged``, on those objects alone, the others of ``inputs`` being judged elsewhere."""
        context = Context(self.release, inputs, self.settings)
        observed = [o for o in inputs.observations if only is None or o.rule == only.id]
        rules_of: dict[str, list[Rule]] = {}  # per kind, decided once per run rather than once per object
        malformed = _malformed(inputs.observations)
        for obj in inputs.objects if judged is None else judged:
            rules = rules_of.get(obj.kind)
            if rules is None:
                rules = rules_of[obj.kind] = [
                    rule
                    for rule in registry.applicable(obj.kind, self.release, Stage.OBJECT, self.hygiene)
                    if self.enabled(rule) and (only is None or rule.id == only.id)
                ]
            broken = malformed.get((obj.source, obj.kind, obj.name), ()) if obj.blocked else ()
            for rule in rules:
                violations = _where_well_formed(rule, obj, context, broken) if obj.blocked else rule.check(obj, context)
                for violation in violations:
                    observed.append(Observation(rule.id, obj.kind, obj.name, violation, obj.source))
        return carried(once(self.findings(rendered(observed, inputs.objects))), inputs.objects)

    def transitions(self, base: Inputs, head: Inputs) -> list[Finding]:
        """The transition rules on each object present in both ``base`` (stored) and ``head`` (its update)."""
        context = Context(self.release, head, self.settings)
        stored = {(obj.kind, obj.name): obj for obj in base.objects}
        observed = []
        for new in head.objects:
            old = stored.get((new.kind, new.name))
            if old is None or old.blocked or new.blocked:
                continue
            for rule in registry.applicable(new.kind, self.release, Stage.TRANSITION, hygiene=True):
                if self.enabled(rule):
                    observed.extend(_observe(rule, new, rule.check(old, new, context)))
        return self.findings(observed)


def _malformed(observations: Iterable[Observation]) -> dict[tuple, list[str]]:
    """The paths of each object's fields that loading found malformed (a wrong type, missing, outside the enum,
    too long or too many), by (source, kind, name)."""
    found: dict[tuple, list[str]] = {}
    for o in observations:
        if o.rule in typed_schema.MALFORMED:
            found.setdefault((o.source, o.kind, o.name), []).append(o.violation.path)
    return found


def _where_well_formed(rule: Rule, obj: Any, context: Context, malformed: Iterable[str]) -> list[Violation]:
    """What ``rule`` finds on a blocked object, kept when every field it read is well-formed; the API server's CEL
    rules find nothing there, as it runs none of them on such an object."""
    if rule.layer == "api-server":
        return []
    reads: set[str] = set()
    found = list(rule.check(watched(obj, reads), context))
    return found if found and well_formed(reads, malformed) else []


def rendered(observations: Iterable[Observation], objects: Iterable[Any]) -> list[Observation]:
    """``observations`` less those at or below a path of an object whose value holds a template placeholder
    (what they say is about text a renderer replaces); the file's ``manifest/not-rendered`` says it once."""
    unrendered = {(obj.source, obj.kind, obj.name): obj.unrendered for obj in objects if obj.unrendered}
    if not unrendered:
        return list(observations)
    return [
        o
        for o in observations
        if o.rule == NOT_RENDERED or not _below_any(o.violation.path, unrendered.get((o.source, o.kind, o.name), ()))
    ]


def _below_any(path: str, placeholders: tuple[str, ...]) -> bool:
    return any(_at_or_inside(path, p) for p in placeholders)


def _at_or_inside(path: str, outer: str) -> bool:
    """Whether the field at ``path`` is the one at ``outer`` or one inside it."""
    return path == outer or path.startswith((f"{outer}.", f"{outer}["))


def once(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` with each mistake told once: a finding whose rule ``restates`` another rule that found
    something at the same path of the same object is left out, and that other finding (the API server's or
    Karpenter's refusal, which no setting may weaken) takes its hint when it had one of its own (the rule's
    generic fix says less). Findings that are equal are one."""
    findings = list(dict.fromkeys(findings))
    found = {(f.file, f.kind, f.name, f.path, f.rule): f for f in findings}
    restated: set[Finding] = set()
    hints: dict[Finding, str | None] = {}
    for finding in findings:
        rule = RULES[finding.rule]
        for other in filter(
            None, (found.get((finding.file, finding.kind, finding.name, finding.path, r)) for r in rule.restates)
        ):
            restated.add(finding)
            if finding.hint != rule.fix:
                hints.setdefault(other, finding.hint)
    if not restated:
        return findings
    return [dataclasses.replace(f, hint=hints[f]) if f in hints else f for f in findings if f not in restated]


def _observe(rule: Rule, obj, violations: Iterable[Violation]) -> list[Observation]:
    return [Observation(rule.id, obj.kind, obj.name, violation, obj.source) for violation in violations]


def validate(
    inputs: Inputs,
    release: versions.Release = versions.DEFAULT,
    *,
    policy: bool = False,
    waivers: Iterable[Waiver] = (),
    today: dt.date | None = None,
    observed: Iterable[Observation] = (),
    base: Inputs | None = None,
) -> Report:
    """Judge ``inputs`` (and what else was ``observed`` about them, e.g. by the user's CRDs) under their
    stack's policy settings; with ``base`` (the stored objects a change updates, e.g. a PR's base), also
    the transition rules on each object present in both; with ``policy``, also the hygiene rules, the
    stack's waivers and ``waivers`` (``today`` decides which have expired; default: the local date),
    applied once to every finding, transitions included."""
    judge = Judge(release, inputs.policy, hygiene=policy)
    findings = once(judge.objects(inputs) + judge.findings(rendered(observed, inputs.objects)))
    if base is not None:
        findings += judge.transitions(base, inputs)
    return conclude(judge, findings, inputs, (*inputs.waivers, *waivers), today)


def conclude(
    judge: Judge,
    findings: list[Finding],
    inputs: Inputs,
    waivers: Iterable[Waiver] = (),
    today: dt.date | None = None,
    *,
    objects: int | None = None,
    subjects: Sequence[Subject] | None = None,
    expiry: bool = True,
) -> Report:
    """The report on ``findings`` about ``inputs`` (``objects`` of them, ``subjects``, when the judge saw only
    part), the waivers their objects carry applied: with hygiene on, after ``waivers`` too (``today`` decides which
    have expired), their expiry judged unless ``expiry`` is off (a run reported in parts judges it once, in its
    last)."""
    count = len(inputs.objects) if objects is None else objects
    listed = Subject.each_of(inputs.objects) if subjects is None else subjects
    judged = tuple(sorted(listed, key=lambda s: s.sort_key))  # as the findings: the same whichever parts judged them
    if not judge.hygiene:  # the objects' own (inline) waivers alone
        findings.sort(key=lambda f: f.sort_key)
        inline = apply_waivers(findings, (), dt.date.min)
        return Report(
            tuple(findings),
            count,
            inputs.notes,
            False,
            inline.active,
            inline.waived,
            judge.release,
            len(inputs.skipped),
            judged,
        )
    outcome = apply_waivers(findings, waivers, today or dt.date.today())
    if expiry:
        findings.extend(judge.findings(outcome.expired))
    findings.sort(key=lambda f: f.sort_key)
    return Report(
        tuple(findings), count, inputs.notes, True, outcome.active, outcome.waived, judge.release, len(inputs.skipped), judged
    )


def check_transitions(base: Inputs, head: Inputs, release: versions.Release) -> tuple[Finding, ...]:
    """The transition findings of ``head`` against ``base``, under the head's policy settings."""
    found = Judge(release, head.policy).transitions(base, head)
    return tuple(sorted(found, key=lambda f: f.sort_key))
