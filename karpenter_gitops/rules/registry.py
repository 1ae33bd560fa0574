"""The one registry of rules, shared by the CLI, the dynamic provider's check() and the policy pack.

There is one way to declare a rule: :func:`rule`, with a stable id, a severity, the kinds it
judges, a one-line doc, a fix hint, the Karpenter releases it applies to, the tunable parameters
it reads, and good/bad examples (merge patches onto valid base objects, see
:mod:`karpenter_gitops.rules.examples`) that the test-suite runs for every rule.

A rule's :class:`Stage` says who observes its violations. Object and transition rules carry a
pure check (``rule(...)`` decorates it); the others are declared with ``rule(...)`` alone because
their violations are seen elsewhere: while loading (the schema layer, the controller block), by
the reconciliation against AWS, by the user's CRDs, while applying waivers, or by the Pulumi layer.
:data:`PRODUCERS` names, for each such stage, the modules that observe it. Whoever sees a violation
hands it to :mod:`karpenter_gitops.judge` as an observation; the judge decides severity, enablement
and waivers for every stage alike.

A rule lives where its id says: ``cel/...`` in :mod:`karpenter_gitops.rules.cel`, ``policy/...`` in
:mod:`karpenter_gitops.rules.policy`, ``live/...`` in :mod:`karpenter_gitops.rules.live`, and so on,
one module or folder per prefix. ``tests/rules/test_rule_homes.py`` holds every rule to it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.inputs import Inputs, PolicySettings
from karpenter_gitops.core.versions import Release

Check = Callable[..., Iterable[Violation]]
_Object = TypeVar("_Object")
_Derived = TypeVar("_Derived")
ALL_KINDS = frozenset({"EC2NodeClass", "NodePool", "NodeOverlay", "CapacityBuffer"})


class Stage(StrEnum):
    """Where a rule's violations are observed."""

    OBJECT = "object"  # its check judges one object: check(obj, ctx)
    TRANSITION = "transition"  # its check judges an update against the stored object: check(old, new, ctx)
    LOAD = "load"  # seen while loading (the CRD schema mirror, the controller block)
    LIVE = "live"  # seen by the reconciliation against AWS
    CRD = "crd"  # seen by the user's own CRDs (schema and CEL)
    WAIVERS = "waivers"  # seen while applying waivers
    PULUMI = "pulumi"  # needs a fact only the Pulumi layer has (a cluster look-up, a key policy in the stack)


WITH_CHECK = frozenset({Stage.OBJECT, Stage.TRANSITION})

#: Who observes the violations of each stage that runs no check of the registry's: modules or packages
#: (by name: most sit in layers above this one, which it may not import). Each must name the id of
#: every rule of its stage (by its constant, or the id itself) inside a function, where it observes it;
#: ``tests/rules/test_rule_homes.py`` fails for a declared rule that no producer of its stage names.
#: Why a test reading the producers rather than a registration call in each of them: the test sees
#: what a producer really does, and a producer cannot forget a call it never had to make.
PRODUCERS: Mapping[Stage, tuple[str, ...]] = {
    # the CRD schema mirror, which the loader drives; the loader itself; the controller block's own checks
    # (``block_violations``, beside their declarations), which the loader runs
    Stage.LOAD: ("karpenter_gitops.core.typed_schema", "karpenter_gitops.load", "karpenter_gitops.rules.controller"),
    Stage.LIVE: ("karpenter_gitops.reconcile",),
    Stage.CRD: ("karpenter_gitops.rules.crd",),  # its engine: the schema check and the CEL evaluation
    Stage.WAIVERS: ("karpenter_gitops.judge",),
    # the components (a cluster look-up) and the policy pack, which reads the resources of the stack and
    # has app.pack_coherence ask controller/ about them
    Stage.PULUMI: ("karpenter_gitops_pulumi", "karpenter_gitops_policies", "karpenter_gitops.app.pack_coherence"),
}


@dataclass(frozen=True)
class Param:
    """A tunable value a rule reads, set in the stack's policy block or the pack's config."""

    name: str  # the setting's key, e.g. maxHopLimit
    default: Any
    schema: Mapping[str, Any]  # JSON Schema of a valid value; the policy pack's config schema too
    expected: str  # a valid value in words, for error messages
    valid: Callable[[Any], bool] | None = None  # what the schema cannot say (e.g. a duration that parses)


@dataclass(frozen=True)
class Rule:
    """One rule: its id, severity, kinds, releases, doc, fix, examples and its check."""

    id: str
    severity: Severity
    kinds: frozenset[str]
    doc: str
    fix: str
    stage: Stage = Stage.OBJECT
    check: Check | None = None
    since: Release | None = None  # first Karpenter release the rule applies to
    until: Release | None = None  # first release it no longer applies to
    origin: str = "karpenter"  # "karpenter" mirrors the CRD/controller; "ours" is stricter
    hygiene: bool = False  # a hygiene policy: runs with `validate --policy` and in the policy pack
    production: Severity | None = None  # its severity in stacks that say `production: true`
    cross_object: bool = False  # judges an object against the other objects of its stack
    params: tuple[Param, ...] = ()
    # Rules whose violation at the same path is the same mistake (the CRD's pattern that this rule explains):
    # the judge reports it once, as theirs, with this rule's hint (see judge.judgement.once).
    restates: frozenset[str] = frozenset()
    good: tuple[Mapping[str, Any], ...] = ()
    bad: tuple[Mapping[str, Any], ...] = ()

    @property
    def layer(self) -> str:
        """Who refuses what the rule finds: the API server (the CRD's schema and CEL rules, checked on
        apply), Karpenter's controller (its own checks and behaviour), or this project's stricter rules."""
        if self.origin != "karpenter":
            return "karpenter-gitops"
        return "api-server" if self.id.split("/")[0] in _API_SERVER_RULE_SETS else "karpenter"

    def applies(self, kind: str, release: Release) -> bool:
        return (
            kind in self.kinds and (self.since is None or release >= self.since) and (self.until is None or release < self.until)
        )


RULES: dict[str, Rule] = {}
PARAMS: dict[str, Param] = {}


# Rule sets that mirror the CRD (its OpenAPI schema and CEL rules, oldSelf ones included).
_API_SERVER_RULE_SETS = frozenset({"schema", "cel", "crd", "transition"})


def rule(
    id: str,
    severity: Severity,
    kinds: Iterable[str],
    doc: str,
    fix: str,
    *,
    stage: Stage = Stage.OBJECT,
    since: Release | None = None,
    until: Release | None = None,
    origin: str = "karpenter",
    hygiene: bool = False,
    production: Severity | None = None,
    cross_object: bool = False,
    params: Iterable[Param] = (),
    restates: Iterable[str] = (),
    good: Iterable[Mapping[str, Any]] = (),
    bad: Iterable[Mapping[str, Any]] = (),
) -> Callable[[Check], Check]:
    """Declare a rule; decorate its check with the result when it has one (object and transition stages)."""
    if id in RULES:
        raise ValueError(f"rule id {id!r} declared twice")
    declared = Rule(
        id=id,
        severity=severity,
        kinds=frozenset(kinds),
        doc=doc,
        fix=fix,
        stage=stage,
        since=since,
        until=until,
        origin=origin,
        hygiene=hygiene,
        production=production,
        cross_object=cross_object,
        params=tuple(params),
        restates=frozenset(restates),
        good=tuple(good),
        bad=tuple(bad),
    )
    for param in declared.params:
        if PARAMS.setdefault(param.name, param) != param:
            raise ValueError(f"parameter {param.name!r} declared twice, differently")
    RULES[id] = declared

    def attach(check: Check) -> Check:
        RULES[id] = dataclasses.replace(declared, check=check)
        return check

    return attach


@dataclass(frozen=True)
class Context:
    """What a check may know besides its object: the release, the other objects and the policy settings."""

    release: Release
    inputs: Inputs
    settings: PolicySettings = dataclasses.field(default_factory=PolicySettings)
    # what several checks derive from the object being judged: the object, then derivation -> result
    _derived: list[Any] = dataclasses.field(default_factory=lambda: [None, {}], compare=False, repr=False)

    def derived(self, derive: Callable[[_Object], _Derived], obj: _Object) -> _Derived:
        """``derive(obj)``, worked out once for the object being judged however many checks ask for it.

        The judge runs every rule of one object before the next object, so only the latest object's
        results are kept: several rules can share one analysis (e.g. one userData analysis for all the
        userData rules) while the memory stays bounded by one object's worth, whatever the run's size.
        ``derive`` must be a pure function of the object.
        """
        memo = self._derived
        if memo[0] is not obj:
            memo[0], memo[1] = obj, {}
        found = memo[1].get(derive, memo)
        if found is memo:
            found = memo[1][derive] = derive(obj)
        return found

    def param(self, name: str) -> Any:
        """A tunable value a rule declared: the stack's (or the pack's) setting, else the declared default."""
        return self.settings.params.get(name, PARAMS[name].default)

    def setting(self, name: str) -> str:
        """A param with its value and where that came from, for a message: ``maxExpireAfter is 720h (the default)``.
        A message never speaks of a stack the user does not have."""
        origin = self.settings.origins.get(name, "set in the policy settings") if name in self.settings.params else "the default"
        return f"{name} is {self.param(name)} ({origin})"


def applicable(kind: str, release: Release, stage: Stage = Stage.OBJECT, hygiene: bool = False) -> list[Rule]:
    """Rules of ``stage`` with a check for ``kind`` at ``version``; hygiene policies only when asked for."""
    return [
        r
        for r in RULES.values()
        if r.stage is stage and r.check is not None and r.applies(kind, release) and (hygiene or not r.hygiene)
    ]
