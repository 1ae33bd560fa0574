"""Policy settings, validated strictly: a stack's ``karpenter-gitops:policy`` key, or a policy file.

The settings say whether the cluster is production (rules may declare a higher severity for it),
set the tunable parameters rules declare, and let a team change the severity of a rule or switch
it off: house-style policies are warnings until raised to ``severity: error``, which makes them
block. Rules of origin ``karpenter`` mirror what the API server or controller rejects anyway, so
they can be neither downgraded nor disabled.

A policy file (``--policy-file``, read by :func:`karpenter_gitops.app.sources.read_policy_file`)
holds the same mapping at its top level and works without a stack; where both are read, the
stack's block wins key by key (the cluster's tuning over the repository's house rules).

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

The parameters are whatever the rules declare (:data:`karpenter_gitops.rules.registry.PARAMS`):
a rule with a new setting needs no change here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.inputs import NAMESPACE, PolicySettings, RuleSetting
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.load.keys import POLICY_KEYS, RULE_SETTING_KEYS
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.manifest import UNUSABLE_IGNORE
from karpenter_gitops.rules.policy import WAIVER_EXPIRED

KEY = f"{NAMESPACE}:policy"


def known_rule(rule_id: Any, where: str, file: str) -> registry.Rule:
    """The registered rule ``rule_id``, or an InputError naming it (unknown ids are never ignored)."""
    rule = registry.RULES.get(rule_id) if isinstance(rule_id, str) else None
    if rule is None:
        hint = did_you_mean(str(rule_id), registry.RULES) or "`karpenter-gitops rules` lists the rule ids"
        raise InputError(f"{where}: unknown rule id {rule_id!r}", file, hint=hint)
    return rule


def unwaivable(rule: registry.Rule) -> tuple[str, str] | None:
    """Why ``rule``'s findings cannot be waived (by a waiver file or an object's annotation), and what to do
    instead; None when they can. Rules that mirror Karpenter refuse the object in the API server or the
    controller whatever a report says; a waiver's own findings would waive themselves."""
    if rule.origin == "karpenter":
        return f"{rule.id} mirrors Karpenter's own validation, so it cannot be waived", "fix the object instead"
    if rule.id == WAIVER_EXPIRED:
        return f"{rule.id} cannot be waived", "renew or delete the expired waiver"
    if rule.id == UNUSABLE_IGNORE:
        return f"{rule.id} cannot be waived", "fix the annotation"
    return None


def parse(value: Any, file: str, key: str = KEY, origin: str | None = None) -> PolicySettings:
    """Settings from the policy mapping; anything unknown or mistyped is an InputError naming ``key``.
    ``origin`` is where a message says the params were set (default: the stack in ``file``)."""
    keys = [*POLICY_KEYS, *registry.PARAMS]
    if not isinstance(value, Mapping):
        raise InputError(f"'{key}' must be a mapping", file, hint=f"keys: {', '.join(keys)}")
    production, params, rules = False, {}, {}
    for name, item in value.items():
        where = f"{key}.{name}" if key else str(name)
        if name == "rules":
            rules = _rules(item, where, file)
        elif name == "production":
            if type(item) is not bool:  # bool is an int in Python; neither may stand in for the other
                raise InputError(f"'{where}' is {item!r}; expected true or false", file)
            production = item
        elif name in registry.PARAMS:
            params[name] = param_value(registry.PARAMS[name], item, where, file)
        else:
            raise InputError(f"unknown field '{where}'", file, hint=did_you_mean(str(name), keys))
    origin = origin or f"set by the stack in {file}"
    return PolicySettings(production, params, rules, {name: origin for name in params})


def param_value(param: registry.Param, value: Any, where: str, file: str) -> Any:
    """A parameter's value checked against its declared schema; whole-number floats (the Pulumi wire's
    numbers) count as integers."""
    from jsonschema import Draft202012Validator

    if isinstance(value, float) and value.is_integer() and param.schema.get("type") == "integer":
        value = int(value)
    if isinstance(value, bool) and param.schema.get("type") != "boolean":
        raise InputError(f"'{where}' is {value!r}; expected {param.expected}", file)
    valid = Draft202012Validator(param.schema).is_valid(value) and (param.valid is None or param.valid(value))
    if not valid:
        raise InputError(f"'{where}' is {value!r}; expected {param.expected}", file)
    return value


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
            if key not in RULE_SETTING_KEYS:
                raise InputError(f"unknown field '{entry}.{key}'", file, hint=did_you_mean(str(key), RULE_SETTING_KEYS))
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
