"""The one registry of rules, shared by the CLI, the dynamic provider's check() and the policy pack.

A rule is small and pure: a stable id, a severity, the kinds it judges, a one-line doc, a fix
hint, the Karpenter releases it applies to, and good/bad examples (spec overlays merged onto a
valid base object, see :mod:`karpenter_gitops.rules.examples`) that the test-suite runs for
every rule. Checks take a model and a :class:`Context` and yield :class:`Violation` objects;
rules whose violations are found while loading (the schema layer) have no check function.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.versions import Version

if TYPE_CHECKING:
    from karpenter_gitops.load.config import Inputs

Check = Callable[[Any, "Context"], Iterable[Violation]]
ALL_KINDS = frozenset({"EC2NodeClass", "NodePool"})


@dataclass(frozen=True)
class Context:
    """What a check may know besides its object: the release and the other objects."""

    version: Version
    inputs: "Inputs"


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    kinds: frozenset[str]
    doc: str
    fix: str
    check: Check | None = None
    since: Version | None = None  # first Karpenter release the rule applies to
    until: Version | None = None  # first release it no longer applies to
    origin: str = "karpenter"  # "karpenter" mirrors the CRD/controller; "ours" is stricter
    policy: bool = False  # a hygiene policy: runs with `validate --policy` and in the policy pack
    good: tuple[Mapping[str, Any], ...] = ()
    bad: tuple[Mapping[str, Any], ...] = ()

    def applies(self, kind: str, version: Version) -> bool:
        return (
            kind in self.kinds
            and (self.since is None or version >= self.since)
            and (self.until is None or version < self.until)
        )


RULES: dict[str, Rule] = {}


def register(rule: Rule) -> Rule:
    if rule.id in RULES:
        raise ValueError(f"rule id {rule.id!r} registered twice")
    RULES[rule.id] = rule
    return rule


def rule(
    id: str,
    severity: Severity,
    kinds: Iterable[str],
    doc: str,
    fix: str,
    *,
    since: Version | None = None,
    until: Version | None = None,
    origin: str = "karpenter",
    policy: bool = False,
    good: Iterable[Mapping[str, Any]] = (),
    bad: Iterable[Mapping[str, Any]] = (),
) -> Callable[[Check], Check]:
    """Decorator registering a check function as a rule."""

    def decorate(check: Check) -> Check:
        register(
            Rule(
                id=id,
                severity=severity,
                kinds=frozenset(kinds),
                doc=doc,
                fix=fix,
                check=check,
                since=since,
                until=until,
                origin=origin,
                policy=policy,
                good=tuple(good),
                bad=tuple(bad),
            )
        )
        return check

    return decorate


def applicable(kind: str, version: Version, policy: bool = False) -> list[Rule]:
    """Rules with a check for ``kind`` at ``version``; hygiene policies only when asked for."""
    return [
        r for r in RULES.values() if r.check is not None and r.applies(kind, version) and (policy or not r.policy)
    ]

