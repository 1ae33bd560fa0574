"""The policy pack's use case: judge resources as the Pulumi engine hands them to an analyzer.

One CrossGuard policy judges one rule. Its config is the rule's parameters (as the stack's policy
block would set them); custom resources are loaded as the CLI loads manifests, after the engine's
numbers are normalised; what a Reconciliation observed in AWS comes back from its outputs. Every
verdict comes from the same judge as the CLI's.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from karpenter_gitops.adapters import pulumi_project
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import (
    Finding,
    Observation,
    Severity,
    Source,
    Violation,
)
from karpenter_gitops.core.inputs import DEFAULT_WAIVERS, Inputs, PolicySettings, Waiver
from karpenter_gitops.judge import Judge
from karpenter_gitops.judge import waiving as judged_waivers
from karpenter_gitops.load import engine_values, policy_settings, waiver_files
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.registry import Rule, Stage

VERSION = versions.DEFAULT  # the pack judges for the newest release: it never sees the stack's cluster block
WAIVER_FILE_ENV = "KARPENTER_GITOPS_WAIVERS"  # the waiver file a Pulumi stack's policy pack reads


@functools.lru_cache(maxsize=512)
def _inputs(documents: str) -> Inputs:
    """Inputs from ``[[urn, document], ...]`` as JSON; each object's source file is its URN.

    Every policy of the pack judges the same resource, so the load is shared through this cache.
    A stack is one whole cluster, as a stack file is: a class it does not declare is nowhere, so
    the inputs are their own context.
    """
    inputs = load_documents([(urn, [doc]) for urn, doc in json.loads(documents)], VERSION)
    return dataclasses.replace(inputs, context_node_classes=frozenset())


def load_resources(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> Inputs:
    """Custom resources' props, normalised as they arrive from the engine (numbers are doubles)."""
    return _inputs(json.dumps([[urn, engine_values.normalise(doc)] for urn, doc in resources], sort_keys=True))


def settings(rule: Rule, config: Mapping[str, Any], where: str) -> PolicySettings:
    """A policy's config as policy settings: the parameters the rule declares, validated as in a stack."""
    params = {
        p.name: policy_settings.param_value(p, config[p.name], f"{where}.{p.name}", where)
        for p in rule.params
        if p.name in config
    }
    return PolicySettings(params=params, origins={name: "set by the pack config" for name in params})


def judge_rule(rule: Rule, inputs: Inputs, rule_settings: PolicySettings) -> list[Finding]:
    """What one rule finds among ``inputs``: loading's observations, or its check on each object.

    A policy reports one rule, yet a mistake is told once, as ``validate`` tells it: where a rule that
    this one restates (the API server's refusal of the same field) finds something, that policy says it."""
    judge = Judge(VERSION, rule_settings, hygiene=True)
    found = judge.objects(inputs, only=rule)
    if not (found and rule.restates):
        return found
    refused = {
        (f.file, f.kind, f.name, f.path) for other in rule.restates for f in judge.objects(inputs, only=registry.RULES[other])
    }
    return [f for f in found if (f.file, f.kind, f.name, f.path) not in refused]


def judge_observed(rule: Rule, observed: Iterable[Observation], rule_settings: PolicySettings) -> list[Finding]:
    """The observations of ``rule`` (live, or of the resources a stack creates), judged."""
    return Judge(VERSION, rule_settings, hygiene=True).findings(o for o in observed if o.rule == rule.id)


def live_observations(urn: str, outputs: Mapping[str, Any]) -> list[Observation]:
    """The live observations a Reconciliation's outputs carry (its plan's findings), located at its URN."""
    found = []
    for item in outputs.get("findings") or ():
        rule = registry.RULES.get(item.get("rule"))
        if rule is None or rule.stage is not Stage.LIVE:
            continue
        violation = Violation(item.get("path") or "", item.get("message") or "", item.get("hint"))
        found.append(Observation(rule.id, item.get("kind") or "", item.get("name") or "", violation, Source(urn)))
    return found


@functools.lru_cache(maxsize=8)
def _read_waivers(path: str, _mtime: int) -> tuple[Waiver, ...]:
    return waiver_files.read_file(path)


def read_waivers(path: Path) -> tuple[Waiver, ...]:
    """The waivers in ``path`` (none without a file), read once per change of the file."""
    return _read_waivers(str(path), path.stat().st_mtime_ns) if path.is_file() else ()


def engine_project() -> Path | None:
    """The directory of the Pulumi project whose engine runs this process (a policy pack), if it can be told."""
    return pulumi_project.engine_project()


def stack_waivers(named: str | None, stack_value: str | None, project: Path | None) -> tuple[Waiver, ...]:
    """The waivers a Pulumi stack runs under, as its policy pack reads them: as ``validate --stack --policy``
    reads them in the project, with ``named`` (the file ``$KARPENTER_GITOPS_WAIVERS`` names) for ``--waivers``.

    ``stack_value`` is the stack's ``karpenter-gitops:waivers`` as the engine passes config: its entries as
    JSON, or the path of a waiver file. Beside them, the ``named`` file, else the project's default waiver
    file when it has one. A relative path is the project's (``project``: where ``Pulumi.yaml`` is); a file
    that was named but is missing is an InputError, never an empty list of waivers."""
    own: tuple[Waiver, ...] = ()
    if stack_value:
        entries = _entries(stack_value)
        own = (
            read_waivers(_named_file(stack_value, waiver_files.STACK_KEY, project))
            if entries is None
            else _stack_entries(entries)
        )
    if named:
        return own + read_waivers(_named_file(named, f"${WAIVER_FILE_ENV}", project))
    return own + (read_waivers(project / DEFAULT_WAIVERS) if project is not None else ())


def _entries(stack_value: str) -> str | None:
    """The stack value when it holds the entries (JSON other than a string), None when it is a file's path
    (the engine passes a plain string as it is)."""
    try:
        parsed = json.loads(stack_value)
    except ValueError:
        return None
    return None if isinstance(parsed, str) else stack_value


@functools.lru_cache(maxsize=8)
def _stack_entries(entries: str) -> tuple[Waiver, ...]:
    """The waivers a stack lists (its own mistakes: an InputError naming the entry), parsed once per value."""
    return waiver_files.parse(json.loads(entries), waiver_files.STACK_KEY, waiver_files.STACK_KEY)


def _named_file(given: str, source: str, project: Path | None) -> Path:
    """The waiver file ``source`` names, relative to the project; it must exist."""
    path = Path(given).expanduser()
    if not path.is_absolute():
        if project is None:
            raise InputError(
                f"the waiver file {given!r} is relative and the Pulumi project directory is unknown",
                source,
                hint="give an absolute path",
            )
        path = project / path
    if not path.is_file():
        raise InputError(f"the waiver file {str(path)!r} does not exist", source, hint="fix the path, or unset it")
    return path


def unwaived(findings: list[Finding], active: Iterable[Waiver], today: dt.date | None = None) -> list[Finding]:
    outcome = judged_waivers.apply(findings, active, today or dt.date.today())
    return [f for f in findings if f not in outcome.waived]


def expired(loaded: Iterable[Waiver], today: dt.date | None = None) -> list[Finding]:
    outcome = judged_waivers.apply((), loaded, today or dt.date.today())
    return Judge(VERSION, hygiene=True).findings(outcome.expired)


def policy_name(rule_id: str) -> str:
    """The CrossGuard policy judging a rule: its id with ``/`` turned into ``-``."""
    return rule_id.replace("/", "-")


def pack_config(stack_settings: PolicySettings) -> dict[str, dict[str, Any]]:
    """The pack config that applies policy settings (a stack's block or a policy file) in CrossGuard: a
    switched-off rule's policy is ``disabled``, a rule whose severity the settings (or ``production``)
    change is ``mandatory`` when it becomes an error and ``advisory`` otherwise, and the parameters pass
    as they are."""
    judge = Judge(VERSION, stack_settings, hygiene=True)
    config: dict[str, dict[str, Any]] = {}
    for rule in registry.RULES.values():
        entry: dict[str, Any] = {p.name: stack_settings.params[p.name] for p in rule.params if p.name in stack_settings.params}
        if not judge.enabled(rule):
            entry = {"enforcementLevel": "disabled"}
        elif judge.severity(rule) is not rule.severity:
            entry["enforcementLevel"] = "mandatory" if judge.severity(rule) is Severity.ERROR else "advisory"
        if entry:
            config[policy_name(rule.id)] = entry
    return config
