"""The ``rules`` use case: the rule catalogue, or one rule with its fix and examples."""

from __future__ import annotations

from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.registry import Rule


def describe(rule: Rule) -> dict:
    """A rule in the ``rules --format json`` contract."""
    return {
        "id": rule.id,
        "severity": rule.severity.value,
        "kinds": sorted(rule.kinds),
        "origin": rule.origin,
        "policy": rule.hygiene,
        "since": versions.show(rule.since) if rule.since else None,
        "until": versions.show(rule.until) if rule.until else None,
        "doc": rule.doc,
        "fix": rule.fix,
        "good": list(rule.good),
        "bad": list(rule.bad),
    }


def releases(rule: Rule) -> str:
    """The Karpenter releases a rule applies to, in words."""
    since = versions.show(rule.since) if rule.since else None
    until = versions.show(rule.until) if rule.until else None
    if since and until:
        return f"{since} until {until}"
    if since:
        return f"{since}+"
    return f"before {until}" if until else "all releases"


def chosen(rule_id: str | None) -> list[Rule]:
    """The whole catalogue sorted by id, or the one rule asked for (an unknown id is an input error)."""
    if not rule_id:
        return sorted(registry.RULES.values(), key=lambda r: r.id)
    if rule_id not in registry.RULES:
        raise InputError(
            f"no rule {rule_id!r}", hint=did_you_mean(rule_id, registry.RULES, cutoff=0.6) or "run `karpenter-gitops rules`"
        )
    return [registry.RULES[rule_id]]
