"""Per-stack policy settings: the ``karpenter-gitops:policy`` stack key, validated strictly.

The settings say whether the stack is production (which raises the severity of a few rules, see
:data:`PRODUCTION_SEVERITY`), carry the limits the hygiene rules compare against, and let a stack
change the severity of a rule or switch it off. Rules of origin ``karpenter`` mirror what the API
server or controller rejects anyway, so they can be neither downgraded nor disabled.

.. code-block:: yaml

    karpenter-gitops:policy:
      production: true
      maxHopLimit: 1
      maxExpireAfter: 720h
      maxInstanceCpu: 96
      minSpotFamilies: 3
      rules:
        policy/imds-hop-limit: {severity: error}
        policy/detailed-monitoring: {enabled: false}
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.hygiene import duration_seconds

KEY = "karpenter-gitops:policy"

# Rules whose default severity is raised when the stack says ``production: true``.
PRODUCTION_SEVERITY = {
    "nodeclass/alias-latest": Severity.ERROR,
    "policy/detailed-monitoring": Severity.WARNING,
}

@dataclass(frozen=True)
class RuleSetting:
    enabled: bool = True
    severity: Severity | None = None


@dataclass(frozen=True)
class Settings:
    production: bool = False
    max_hop_limit: int = 1
    max_expire_after: str = "720h"
    max_instance_cpu: int = 96
    min_spot_families: int = 3
    rules: Mapping[str, RuleSetting] = field(default_factory=dict)

    def enabled(self, rule_id: str) -> bool:
        setting = self.rules.get(rule_id)
        return setting is None or setting.enabled

    def severity(self, rule: registry.Rule) -> Severity:
        """The stack's override, else the production default, else the rule's own severity."""
        setting = self.rules.get(rule.id)
        if setting is not None and setting.severity is not None:
            return setting.severity
        if self.production:
            return PRODUCTION_SEVERITY.get(rule.id, rule.severity)
        return rule.severity


# stack key -> (Settings field, type, check of the value or None, what a valid value looks like)
_OPTIONS = {
    "production": ("production", bool, None, "true or false"),
    "maxHopLimit": ("max_hop_limit", int, lambda v: 1 <= v <= 64, "an integer from 1 to 64"),
    "maxExpireAfter": ("max_expire_after", str, lambda v: duration_seconds(v) is not None, "a duration like 720h"),
    "maxInstanceCpu": ("max_instance_cpu", int, lambda v: v >= 1, "a positive integer"),
    "minSpotFamilies": ("min_spot_families", int, lambda v: v >= 1, "a positive integer"),
}
_RULE_KEYS = ("enabled", "severity")


def did_you_mean(word: str, known) -> str | None:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else None


def known_rule(rule_id: Any, where: str, file: str) -> registry.Rule:
    """The registered rule ``rule_id``, or an InputError naming it (unknown ids are never ignored)."""
    rule = registry.RULES.get(rule_id) if isinstance(rule_id, str) else None
    if rule is None:
        hint = did_you_mean(str(rule_id), registry.RULES) or "`karpenter-gitops` rule ids look like policy/imds-hop-limit"
        raise InputError(f"{where}: unknown rule id {rule_id!r}", file, hint=hint)
    return rule


def parse(value: Any, file: str) -> Settings:
    """Settings from the ``karpenter-gitops:policy`` mapping; anything unknown or mistyped is an InputError."""
    if not isinstance(value, Mapping):
        raise InputError(f"'{KEY}' must be a mapping", file, hint=f"keys: {', '.join([*_OPTIONS, 'rules'])}")
    options: dict[str, Any] = {}
    for key, item in value.items():
        where = f"{KEY}.{key}"
        if key == "rules":
            options["rules"] = _rules(item, where, file)
            continue
        if key not in _OPTIONS:
            raise InputError(f"unknown field '{where}'", file, hint=did_you_mean(str(key), [*_OPTIONS, "rules"]))
        attr, kind, valid, expected = _OPTIONS[key]
        # bool is an int in Python; neither may stand in for the other here.
        if type(item) is not kind or (valid is not None and not valid(item)):
            raise InputError(f"'{where}' is {item!r}; expected {expected}", file)
        options[attr] = item
    return Settings(**options)


def _rules(value: Any, where: str, file: str) -> dict[str, RuleSetting]:
    if not isinstance(value, Mapping):
        raise InputError(f"'{where}' must map rule ids to {{enabled, severity}}", file)
    settings = {}
    for rule_id, item in value.items():
        rule = known_rule(rule_id, where, file)
        entry = f"{where}.{rule_id}"
        if rule.origin == "karpenter":
            raise InputError(
                f"'{entry}': {rule_id} mirrors Karpenter's own validation, so it cannot be disabled or downgraded",
                file,
                hint="fix the object instead",
            )
        if not isinstance(item, Mapping) or not item:
            raise InputError(f"'{entry}' must be a mapping with 'enabled' and/or 'severity'", file)
        for key in item:
            if key not in _RULE_KEYS:
                raise InputError(f"unknown field '{entry}.{key}'", file, hint=did_you_mean(str(key), _RULE_KEYS))
        enabled = item.get("enabled", True)
        if type(enabled) is not bool:
            raise InputError(f"'{entry}.enabled' is {enabled!r}; expected true or false", file)
        severity = item.get("severity")
        if severity is not None:
            try:
                severity = Severity(severity)
            except ValueError:
                choices = ", ".join(s.value for s in Severity)
                raise InputError(f"'{entry}.severity' is {severity!r}; expected one of {choices}", file) from None
        settings[rule_id] = RuleSetting(enabled, severity)
    return settings
