"""The CrossGuard policies of the karpenter-gitops pack, importable without starting anything.

One CrossGuard policy per registry rule, named after the rule id with ``/`` turned into ``-``
(``policy/imds-hop-limit`` → ``policy-imds-hop-limit``), so a pack config can set each rule's
enforcement level; the default is ``mandatory`` for error rules and ``advisory`` for the others.

* EC2NodeClass / NodePool custom resources: the resource's inputs (``args.props``) are loaded into
  our models with :func:`karpenter_gitops.load.config.load_documents` and judged by the rule: schema
  mirror, CEL mirror, stricter and hygiene rules alike.
* Cross-object rules (a NodePool's nodeClassRef) are stack policies over every custom resource.
* Live rules are stack policies reading each Reconciliation resource's outputs (its plan):
  conditions, AMIs, skipped AMIs and the NodePools' unserved instance types. (The engine hands a
  resource policy the resource's inputs, and only a stack policy its outputs.)
* ``karpenter-iam-coherence`` (stack): an instance profile the stack creates for a NodeClass holds a
  role, and a node role the stack creates can be assumed by EC2. Where the stack also creates the
  controller's IAM (a policy granting ``iam:PassRole``), the ``controller/`` rules on what it really
  creates: PassRole covers every NodeClass role, node roles have access entries, spot pools have the
  interruption queue; and a customer-managed queue key lets EventBridge use it, a Pod Identity
  association does not serve pods that a Fargate profile takes.
* ``policy-waiver-expired`` (stack): expired or malformed waivers.

Waivers come from ``waivers.yaml`` beside this module, or the file ``$KARPENTER_GITOPS_WAIVERS``
names; a waived finding is not reported. A value unknown during preview raises
``UnknownValueError``, which CrossGuard turns into an advisory note instead of a violation.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy import (
    Severity as PolicySeverity,
)
from pulumi_policy.proxy import UnknownValueError

from karpenter_gitops import controller
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.model import EC2NODECLASS, NODEPOOL
from karpenter_gitops.judge.validate import rule_findings
from karpenter_gitops.load import config, policy, waivers
from karpenter_gitops.rules import hygiene, live, registry, transitions

PACK_NAME = "karpenter-gitops"
NODECLASS_TYPE = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODEPOOL_TYPE = "kubernetes:karpenter.sh/v1:NodePool"
RECONCILIATION_TYPE = "pulumi-python:dynamic/karpenter-gitops:Reconciliation"
INSTANCE_PROFILE_TYPE = "aws:iam/instanceProfile:InstanceProfile"
ROLE_TYPE = "aws:iam/role:Role"
POLICY_TYPES = ("aws:iam/policy:Policy", "aws:iam/rolePolicy:RolePolicy")
ACCESS_ENTRY_TYPE = "aws:eks/accessEntry:AccessEntry"
QUEUE_TYPE = "aws:sqs/queue:Queue"
KMS_KEY_TYPES = ("aws:kms/key:Key", "aws:kms/keyPolicy:KeyPolicy")
POD_IDENTITY_TYPE = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
FARGATE_PROFILE_TYPE = "aws:eks/fargateProfile:FargateProfile"
KIND_OF_TYPE = {NODECLASS_TYPE: EC2NODECLASS, NODEPOOL_TYPE: NODEPOOL}
IAM_COHERENCE = "karpenter-iam-coherence"
WAIVER_FILE = Path(__file__).with_name("waivers.yaml")
WAIVER_FILE_ENV = "KARPENTER_GITOPS_WAIVERS"
VERSION = versions.DEFAULT

# Rules that need the other objects of the stack; they run as stack policies.
CROSS_OBJECT = frozenset({"nodepool/node-class-ref-missing"})
# Controller rules: judged on the IAM, queue and EKS resources of the stack by the IAM_COHERENCE policy.
CONTROLLER_RULE_PREFIX = "controller/"
# Settings a rule reads, exposed as that policy's config (JSON schema per stack-setting name).
PARAMETERS: dict[str, dict[str, dict]] = {
    "policy/imds-hop-limit": {"maxHopLimit": {"type": "integer", "minimum": 1, "maximum": 64}},
    "policy/expire-after-bounded": {"maxExpireAfter": {"type": "string", "pattern": r"^([0-9]+(s|m|h))+$"}},
    "policy/bounded-instance-size": {"maxInstanceCpu": {"type": "integer", "minimum": 1}},
    "policy/spot-flexibility": {"minSpotFamilies": {"type": "integer", "minimum": 1}},
}
_POLICY_SEVERITY = {Severity.ERROR: PolicySeverity.HIGH, Severity.WARNING: PolicySeverity.MEDIUM, Severity.INFO: PolicySeverity.LOW}


def policy_name(rule_id: str) -> str:
    return rule_id.replace("/", "-")


def enforcement(severity: Severity) -> EnforcementLevel:
    return EnforcementLevel.MANDATORY if severity is Severity.ERROR else EnforcementLevel.ADVISORY


def plain(value: Any) -> Any:
    """A deep copy of policy props as dicts and lists; touching an unknown raises UnknownValueError."""
    if isinstance(value, Mapping):
        return {key: plain(value[key]) for key in value}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(value[index]) for index in range(len(value))]
    return value


# --- loading and judging ------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _inputs(documents: str) -> config.Inputs:
    """Inputs from ``[[urn, document], ...]`` as JSON; each object's source file is its URN.

    Every policy of the pack judges the same resource, so the load is shared through this cache.
    """
    return config.load_documents([(urn, [doc]) for urn, doc in json.loads(documents)], VERSION)


def load(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> config.Inputs:
    return _inputs(json.dumps([[urn, doc] for urn, doc in resources], sort_keys=True))


def _json_number(value: Any) -> Any:
    """Policy config travels as a protobuf Struct, where every number is a float."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def settings(rule_id: str, policy_config: Mapping[str, Any]) -> policy.Settings:
    """The stack settings a rule reads, from its policy config (validated like the stack key)."""
    wanted = {key: _json_number(policy_config[key]) for key in PARAMETERS.get(rule_id, {}) if key in policy_config}
    return policy.parse(wanted, f"policy config of {policy_name(rule_id)}")


def judge(rule: registry.Rule, inputs: config.Inputs, rule_settings: policy.Settings) -> list[Finding]:
    """What one rule finds among ``inputs``: schema findings of loading, or its check per object."""
    if rule.check is None:
        return [f for f in inputs.findings if f.rule == rule.id]
    context = registry.Context(VERSION, dataclasses.replace(inputs, policy=rule_settings))
    return [
        finding
        for obj in inputs.objects
        if rule.applies(obj.kind, VERSION)
        for finding in rule_findings(rule, obj, context)
    ]


def waiver_file() -> Path:
    return Path(os.environ.get(WAIVER_FILE_ENV) or WAIVER_FILE)


@functools.lru_cache(maxsize=8)
def _read_waivers(path: str, _mtime: int) -> tuple[waivers.Waiver, ...]:
    return config.load_waivers(path)


def current_waivers() -> tuple[waivers.Waiver, ...]:
    """The pack's waivers (none without a file); a malformed file raises InputError."""
    path = waiver_file()
    return _read_waivers(str(path), path.stat().st_mtime_ns) if path.is_file() else ()


def unwaived(findings: list[Finding], today: dt.date | None = None) -> list[Finding]:
    """Findings no active waiver covers. A broken waiver file waives nothing; its own policy reports it."""
    try:
        loaded = current_waivers()
    except InputError:
        return findings
    outcome = waivers.apply(findings, loaded, today or dt.date.today())
    return [f for f in findings if f not in outcome.waived]


def describe(finding: Finding) -> str:
    fix = f" Fix: {finding.hint}" if finding.hint else ""
    return f"{finding.kind} {finding.name}: {finding.path}: {finding.message} [{finding.rule}].{fix}"


def report(findings: list[Finding], report_violation: ReportViolation, urn_of: Callable[[Finding], str | None]) -> None:
    for finding in unwaived(findings):
        report_violation(describe(finding), urn_of(finding))


# --- policies -----------------------------------------------------------------------------


def _options(rule: registry.Rule) -> dict:
    refs = [ref for ref, ids in hygiene.CATALOGUE.items() if rule.id in ids]
    params = PARAMETERS.get(rule.id)
    return {
        "enforcement_level": enforcement(rule.severity),
        "severity": _POLICY_SEVERITY[rule.severity],
        "config_schema": PolicyConfigSchema(params) if params else None,
        "remediation_steps": rule.fix,
        "tags": [rule.origin, *refs],
    }


def object_policy(rule: registry.Rule) -> ResourceValidationPolicy:
    """A rule judging one EC2NodeClass or NodePool custom resource on its own."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if KIND_OF_TYPE.get(args.resource_type) not in rule.kinds:
            return
        inputs = load([(args.urn, plain(args.props))])
        report(judge(rule, inputs, settings(rule.id, args.get_config())), report_violation, lambda f: None)

    return ResourceValidationPolicy(policy_name(rule.id), rule.doc, validate, **_options(rule))


def custom_resources(args: StackValidationArgs) -> list[tuple[str, Mapping[str, Any]]]:
    return [(r.urn, plain(r.props)) for r in args.resources if r.resource_type in KIND_OF_TYPE]


def cross_object_policy(rule: registry.Rule) -> StackValidationPolicy:
    """A rule that needs the stack's other custom resources (e.g. a NodePool's EC2NodeClass)."""

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        inputs = load(custom_resources(args))
        report(judge(rule, inputs, settings(rule.id, args.get_config())), report_violation, lambda f: f.file)

    return StackValidationPolicy(policy_name(rule.id), rule.doc, validate, **_options(rule))


def live_findings(outputs: Mapping[str, Any]) -> list[Finding]:
    """The live rules' findings in a Reconciliation's outputs (its NodeClass plan and pools)."""
    name = outputs.get("nodeClassName") or "?"
    found = []

    def add(rule_id: str, kind: str, subject: str, path: str, message: str) -> None:
        rule = registry.RULES[rule_id]
        found.append(Finding(rule_id, rule.severity, kind, subject, path, message, hint=rule.fix))

    amis, skipped = outputs.get("amis") or [], outputs.get("skippedAmis") or []
    for condition in outputs.get("conditions") or []:
        if condition.get("status") != "False":
            continue
        path = f"status.conditions[{condition.get('type')}]"
        reason, message = condition.get("reason"), condition.get("message") or ""
        if reason == "AMINotFound" and skipped and not amis:
            unusable = ", ".join(f"{s.get('id')} ({s.get('reason')})" for s in skipped)
            add(live.AMI_NOT_AVAILABLE, EC2NODECLASS, name, "status.amis", f"the selector matches only unusable images: {unusable}")
        elif reason in ("AMINotFound", "SubnetsNotFound", "SecurityGroupsNotFound"):
            add(live.SELECTOR_MATCHES_NOTHING, EC2NODECLASS, name, path, message or reason)
        elif reason == "InstanceProfileHasNoRole":
            add(live.INSTANCE_PROFILE_WITHOUT_ROLE, EC2NODECLASS, name, path, message or reason)
    for pool, plan in sorted((outputs.get("nodePools") or {}).items()):
        unserved = plan.get("unservedInstanceTypes") or []
        if unserved:
            types = ", ".join(sorted(u.get("type", "?") for u in unserved))
            add(live.UNSERVED_INSTANCE_TYPES, NODEPOOL, pool, "spec.template.spec.requirements",
                f"{len(unserved)} allowed instance type(s) have no AMI to run: {types}")
    return found


def reconciled_outputs(args: StackValidationArgs) -> list[tuple[str, dict[str, Any]]]:
    """(URN, outputs) of each Reconciliation that has a plan; one not reconciled yet (created in this
    preview: no outputs, or unknown ones) is skipped without hiding the others."""
    found = []
    for resource in args.resources:
        if resource.resource_type != RECONCILIATION_TYPE:
            continue
        try:
            outputs = plain(resource.props)
        except UnknownValueError:
            continue
        if "conditions" in outputs:
            found.append((resource.urn, outputs))
    return found


def live_policy(rule: registry.Rule) -> StackValidationPolicy:
    """A live rule read off the Reconciliations' outputs. A stack policy, because only ``AnalyzeStack``
    sees outputs: ``Analyze`` gets a resource's inputs, and a Reconciliation's inputs hold no plan."""

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        for urn, outputs in reconciled_outputs(args):
            report([f for f in live_findings(outputs) if f.rule == rule.id], report_violation, lambda f, urn=urn: urn)

    return StackValidationPolicy(policy_name(rule.id), rule.doc, validate, **_options(rule))


def _json(value: Any) -> Mapping[str, Any]:
    """A policy document given as JSON text (as pulumi-aws takes it) or already as a mapping."""
    return json.loads(value) if isinstance(value, str) else value or {}


def _trusts_ec2(assume_role_policy: Any) -> bool:
    """Whether a role's trust policy lets EC2 (the node) assume it."""
    document = _json(assume_role_policy)
    statements = document.get("Statement") or []
    for statement in statements if isinstance(statements, list) else [statements]:
        services = (statement.get("Principal") or {}).get("Service") if isinstance(statement.get("Principal"), Mapping) else None
        services = [services] if isinstance(services, str) else services or []
        if statement.get("Effect") == "Allow" and any(s.startswith("ec2.amazonaws.com") for s in services):
            return True
    return False


def _of_type(args: StackValidationArgs, *types: str) -> list:
    return [r for r in args.resources if r.resource_type in types]


def iam_coherence(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """Where the stack creates the node's IAM: each profile holds a role, each role trusts EC2; where it creates
    the controller's IAM too, the controller rules on the resources themselves."""
    by_type: dict[str, dict[str, Any]] = {INSTANCE_PROFILE_TYPE: {}, ROLE_TYPE: {}}
    for resource in args.resources:
        if resource.resource_type in by_type and resource.props.get("name"):
            by_type[resource.resource_type][resource.props["name"]] = resource
    profiles, roles = by_type[INSTANCE_PROFILE_TYPE], by_type[ROLE_TYPE]
    grants = [_json(r.props.get("policy")) for r in _of_type(args, *POLICY_TYPES)]
    passable = [resource for doc in grants for resource in controller.allowed_resources(doc, "iam:PassRole")]
    entries = {str(r.props.get("principalArn") or "").rsplit("/", 1)[-1] for r in _of_type(args, ACCESS_ENTRY_TYPE)}
    for urn, doc in custom_resources(args):
        if doc.get("kind") != EC2NODECLASS:
            continue
        spec, name = doc.get("spec") or {}, (doc.get("metadata") or {}).get("name")
        role_name = spec.get("role")
        profile = profiles.get(spec.get("instanceProfile"))
        if profile is not None:
            role_name = profile.props.get("role")
            if not role_name:
                report_violation(
                    f"EC2NodeClass {name}: instance profile {spec['instanceProfile']!r} holds no role, so nodes "
                    f"boot without credentials and never join [{live.INSTANCE_PROFILE_WITHOUT_ROLE}].",
                    profile.urn,
                )
        role = roles.get(role_name)
        if role is not None and not _trusts_ec2(role.props.get("assumeRolePolicy")):
            report_violation(
                f"EC2NodeClass {name}: node role {role_name!r} does not let ec2.amazonaws.com assume it, so "
                "instances get no credentials.",
                role.urn,
            )
        if not passable or not role_name:
            continue  # the stack does not create the controller's IAM, or the profile's role is not in the stack
        if not controller.may_pass(passable, role_name):
            report_violation(
                f"EC2NodeClass {name}: the controller's policies do not allow iam:PassRole on {role_name!r}, so "
                f"launches fail with UnauthorizedOperation [{controller.PASS_ROLE}].",
                urn,
            )
        if role is not None and role_name.rsplit("/", 1)[-1] not in entries:
            report_violation(
                f"EC2NodeClass {name}: node role {role_name!r} has no EKS access entry in the stack, so its nodes "
                f"cannot join [{controller.ACCESS_ENTRY}].",
                role.urn,
            )
    if passable:
        _spot_without_queue(args, grants, report_violation)
    _queue_keys(args, report_violation)
    _pod_identity_on_fargate(args, report_violation)


def _spot_without_queue(args: StackValidationArgs, grants: list, report_violation: ReportViolation) -> None:
    if any(controller.allowed_resources(doc, "sqs:ReceiveMessage") for doc in grants):
        return
    for pool in load(custom_resources(args)).node_pools:
        if controller.allows_spot(pool):
            report_violation(
                f"NodePool {pool.name}: allows spot but the controller reads no interruption queue "
                f"[{controller.SPOT_QUEUE}].",
                pool.source.file,
            )


def _queue_keys(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """Queues encrypted with a key whose policy is in the stack: that policy must let EventBridge use the key."""
    key_policies = {}
    for key in _of_type(args, *KMS_KEY_TYPES):
        for ref in (key.props.get("arn"), key.props.get("keyId")):
            if ref and key.props.get("policy"):
                key_policies[ref] = _json(key.props["policy"])
    for queue in _of_type(args, QUEUE_TYPE):
        key_policy = key_policies.get(queue.props.get("kmsMasterKeyId"))
        problem = key_policy is not None and controller.kms_policy_problem(key_policy)
        if problem:
            report_violation(f"queue {queue.props.get('name') or queue.name}: {problem}.", queue.urn)


def _pod_identity_on_fargate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    profiles = _of_type(args, FARGATE_PROFILE_TYPE)
    for association in _of_type(args, POD_IDENTITY_TYPE):
        cluster, namespace = association.props.get("clusterName"), association.props.get("namespace") or ""
        for profile in profiles:
            if profile.props.get("clusterName") == cluster and controller.fargate_selects(profile.props.get("selectors") or [], namespace):
                report_violation(
                    f"Pod Identity association for {namespace}/{association.props.get('serviceAccount')}: Fargate profile "
                    f"{profile.props.get('fargateProfileName') or profile.name} runs that namespace's pods, which get no "
                    f"Pod Identity credentials [{controller.FARGATE_POD_IDENTITY}].",
                    association.urn,
                )


def waiver_policy(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    try:
        loaded = current_waivers()
    except InputError as err:
        report_violation(f"the waiver file is invalid, so nothing is waived: {err}")
        return
    for finding in waivers.apply((), loaded, dt.date.today()).expired:
        report_violation(describe(finding))


def all_policies() -> list:
    """Every policy of the pack, in registry order."""
    made: list = []
    for rule in registry.RULES.values():
        if rule.id in CROSS_OBJECT:
            made.append(cross_object_policy(rule))
        elif rule.id.startswith("live/"):
            made.append(live_policy(rule))
        elif rule.id.startswith(CONTROLLER_RULE_PREFIX):
            continue  # judged by the IAM_COHERENCE stack policy below
        elif rule.id in transitions.TRANSITIONS:
            continue  # needs the stored object, which a policy never sees; `preview` judges these
        elif rule.kinds & {EC2NODECLASS, NODEPOOL}:
            made.append(object_policy(rule))
    expired = registry.RULES[hygiene.WAIVER_EXPIRED]
    made.append(StackValidationPolicy(policy_name(expired.id), expired.doc, waiver_policy, **_options(expired)))
    made.append(
        StackValidationPolicy(
            IAM_COHERENCE,
            "Where the stack creates them with pulumi-aws: every instance profile a NodeClass names holds a "
            "role, and every node role lets EC2 assume it; with the controller's IAM, the controller/ rules "
            "(PassRole coverage, access entries, spot needs the queue, queue key lets EventBridge in, no Pod "
            "Identity on Fargate).",
            iam_coherence,
            enforcement_level=EnforcementLevel.MANDATORY,
            severity=PolicySeverity.HIGH,
        )
    )
    return made
