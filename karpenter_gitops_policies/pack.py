"""The CrossGuard policies of the karpenter-gitops pack, importable without starting anything.

One CrossGuard policy per registry rule the pack can see, named after the rule id with ``/``
turned into ``-`` (``policy/imds-hop-limit`` → ``policy-imds-hop-limit``), so a pack config can
set each rule's enforcement level and the parameters the rule declares (``maxHopLimit``...);
the default is ``mandatory`` for error rules and ``advisory`` for the others. House-style policies
(``policy-ebs-encrypted``, ``policy-nodepool-limits``...) are never errors by default, so the pack
blocks on what ``validate`` blocks on and reports the rest, until a config entry such as
``{"policy-ebs-encrypted": "mandatory"}`` (or ``karpenter-gitops pack-config``) raises one. Every verdict comes
from the same judge as the CLI and the dynamic provider (:mod:`karpenter_gitops.app.analyze`):

* EC2NodeClass / NodePool / NodeOverlay / CapacityBuffer custom resources: the resource's inputs
  (``args.props``) are loaded as the CLI loads a manifest and judged by the rule: schema mirror,
  CEL mirror, stricter and hygiene rules alike. Rules that look at the other objects (a NodePool's
  nodeClassRef) are stack policies over every custom resource.
* Live rules are stack policies over each Reconciliation resource's outputs: the reconciliation's
  own live observations, judged again under the pack's settings. (The engine hands a resource
  policy the resource's inputs, and only a stack policy its outputs.)
* Controller coherence rules are stack policies over the IAM, EKS, SQS and KMS resources the stack
  really creates (:func:`coherence_observations`): read here into plain values, judged by
  :mod:`karpenter_gitops.app.pack_coherence` with the controller's own IAM decisions.
* ``policy-waiver-expired`` (stack): expired or malformed waivers.

What the pack cannot see is listed in :data:`UNSEEN` with the reason. Waivers are the stack's
``karpenter-gitops:waivers`` (entries, or a waiver file's path) beside the file ``$KARPENTER_GITOPS_WAIVERS``
names, else the project's default waiver file, as ``validate --stack --policy`` reads them
(:func:`karpenter_gitops.app.analyze.stack_waivers`); relative paths are the Pulumi project's, found
through the engine (:func:`project_directory`). A waived finding is not reported. A value unknown during preview raises ``UnknownValueError``, which
CrossGuard turns into an advisory note instead of a violation; the coherence rules read the
values an IAM or SQS resource gets only once created (ARNs, generated names) with :func:`_known`,
so one such value silences only the check that needs it, not the whole policy.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pulumi.runtime import get_config_env
from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy import Severity as PolicySeverity
from pulumi_policy.proxy import UnknownValueError

from karpenter_gitops.app import analyze, pack_coherence
from karpenter_gitops.app.analyze import policy_name
from karpenter_gitops.app.pack_coherence import PENDING
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Finding, Observation, Severity
from karpenter_gitops.core.inputs import NAMESPACE, Inputs, PolicySettings, Waiver
from karpenter_gitops.core.model import (
    CAPACITYBUFFER,
    CAPACITYBUFFER_API,
    EC2NODECLASS,
    EC2NODECLASS_API,
    NODEOVERLAY,
    NODEOVERLAY_API,
    NODEPOOL,
    NODEPOOL_API,
)
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.rules import controller as controller_rules
from karpenter_gitops.rules import gate, policy, registry
from karpenter_gitops.rules.registry import Rule, Stage

PACK_NAME = "karpenter-gitops"
NODECLASS_TYPE = f"kubernetes:{EC2NODECLASS_API}:{EC2NODECLASS}"
NODEPOOL_TYPE = f"kubernetes:{NODEPOOL_API}:{NODEPOOL}"
NODEOVERLAY_TYPE = f"kubernetes:{NODEOVERLAY_API}:{NODEOVERLAY}"
CAPACITYBUFFER_TYPE = f"kubernetes:{CAPACITYBUFFER_API}:{CAPACITYBUFFER}"
RECONCILIATION_TYPE = "pulumi-python:dynamic/karpenter-gitops:Reconciliation"
INSTANCE_PROFILE_TYPE = "aws:iam/instanceProfile:InstanceProfile"
ROLE_TYPE = "aws:iam/role:Role"
POLICY_TYPES = ("aws:iam/policy:Policy", "aws:iam/rolePolicy:RolePolicy")
ACCESS_ENTRY_TYPE = "aws:eks/accessEntry:AccessEntry"
QUEUE_TYPE = "aws:sqs/queue:Queue"
KMS_KEY_TYPES = ("aws:kms/key:Key", "aws:kms/keyPolicy:KeyPolicy")
POD_IDENTITY_TYPE = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
FARGATE_PROFILE_TYPE = "aws:eks/fargateProfile:FargateProfile"
KIND_OF_TYPE = {
    NODECLASS_TYPE: EC2NODECLASS,
    NODEPOOL_TYPE: NODEPOOL,
    NODEOVERLAY_TYPE: NODEOVERLAY,
    CAPACITYBUFFER_TYPE: CAPACITYBUFFER,
}
WAIVER_FILE_ENV = analyze.WAIVER_FILE_ENV
WAIVERS_KEY = f"{NAMESPACE}:waivers"

# Rules judged on the resources the stack creates rather than on a controller block (which the pack never sees).
COHERENCE = frozenset(
    {
        controller_rules.PASS_ROLE,
        controller_rules.ACCESS_ENTRY,
        controller_rules.SPOT_QUEUE,
        controller_rules.QUEUE_KMS,
        controller_rules.FARGATE_POD_IDENTITY,
        controller_rules.NODE_ROLE_TRUST,
    }
)
# Rules the pack cannot see, and why; every other rule is a policy.
UNSEEN = {
    controller_rules.NAME_LENGTH: "judges the controller block, which only the stack config holds",
    controller_rules.CNI_IP_FAMILY: "needs the cluster's IP family, which the KarpenterController component looks up",
    gate.FEATURE_OFF: "needs the stack's cluster.featureGates, which the pack never sees "
    "(without them every NodeOverlay would be noted); `validate --stack` and the components judge it",
    **{
        r.id: "compares an update with the stored object, which a policy never sees; `preview` judges it"
        for r in registry.RULES.values()
        if r.stage is Stage.TRANSITION
    },
    **{r.id: "needs the user's CRD files (validate --crd)" for r in registry.RULES.values() if r.stage is Stage.CRD},
}
_POLICY_SEVERITY = {
    Severity.ERROR: PolicySeverity.HIGH,
    Severity.WARNING: PolicySeverity.MEDIUM,
    Severity.INFO: PolicySeverity.LOW,
}


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


def load(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> Inputs:
    return analyze.load_resources([(urn, _typed(urn, doc)) for urn, doc in resources])


def _typed(urn: str, doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """A custom resource whose apiVersion and kind are its type's: the engine derives the type from them, so
    props that say otherwise (not even a string) cannot be what was registered."""
    resource_type = urn.split("::")[2].rsplit("$", 1)[-1] if urn.count("::") >= 3 else ""
    kind = KIND_OF_TYPE.get(resource_type)
    if kind is None:
        return doc
    api = resource_type.split(":", 2)[1]
    wrong = {key: value for key, value in (("apiVersion", api), ("kind", kind)) if not isinstance(doc.get(key), str)}
    return {**doc, **wrong}


def settings(rule: Rule, policy_config: Mapping[str, Any]) -> PolicySettings:
    """The pack's config of one policy as policy settings: the parameters the rule declares. An option it does
    not declare is refused in one line (the engine checks the options' values against :func:`config_schema`,
    but lets any other name through, where a misspelt ``maxHopLimt`` would silently change nothing)."""
    where = f"policy config of {policy_name(rule.id)}"
    declared = [p.name for p in rule.params]
    for option in policy_config:
        if option not in declared:
            options = f"its options: {', '.join(declared)}" if declared else "it takes no option but enforcementLevel"
            raise InputError(
                f"{where}: unknown option {option!r}", "--policy-pack-config", hint=did_you_mean(str(option), declared) or options
            )
    return analyze.settings(rule, policy_config, where)


@functools.cache
def project_directory() -> Path | None:
    """The Pulumi project the engine runs this pack for (the engine starts it in the pack's directory)."""
    return analyze.engine_project()


def current_waivers() -> tuple[Waiver, ...]:
    """The stack's waivers; a malformed one, or a waiver file named but missing, raises InputError."""
    stack_value = get_config_env().get(WAIVERS_KEY)  # the stack's config, as the engine hands it to the pack
    return analyze.stack_waivers(os.environ.get(WAIVER_FILE_ENV), stack_value, project_directory())


def unwaived(findings: list[Finding]) -> list[Finding]:
    """Findings no active waiver covers. A broken waiver file waives nothing; its own policy reports it."""
    try:
        return analyze.unwaived(findings, current_waivers())
    except InputError:
        return findings


def describe(finding: Finding) -> str:
    fix = f" Fix: {finding.hint}" if finding.hint else ""
    return f"{finding.kind} {finding.name}: {finding.path}: {finding.message} [{finding.rule}].{fix}"


def report(findings: list[Finding], report_violation: ReportViolation, urn_of: Callable[[Finding], str | None]) -> None:
    for finding in unwaived(findings):
        report_violation(describe(finding), urn_of(finding))


def _urn(finding: Finding) -> str | None:
    return finding.file


# --- policies -----------------------------------------------------------------------------


def config_schema(rule: Rule) -> PolicyConfigSchema:
    """The options a policy takes in ``--policy-pack-config``, as Pulumi's config schemas declare them: each
    parameter the rule declares (the schema the stack's policy block validates it with, described with its
    default); the engine adds ``enforcementLevel`` to every policy's own. A default stays out of the schema:
    the engine would hand it to the policy as if the config had set it."""
    return PolicyConfigSchema(
        {p.name: {**p.schema, "description": f"{p.expected}; {p.default!r} when not set"} for p in rule.params}
    )


def _options(rule: Rule) -> dict:
    refs = [ref for ref, ids in policy.CATALOGUE.items() if rule.id in ids]
    return {
        "enforcement_level": enforcement(rule.severity),
        "severity": _POLICY_SEVERITY[rule.severity],
        "config_schema": config_schema(rule),
        "remediation_steps": rule.fix,
        "tags": [rule.origin, *refs],
    }


def object_policy(rule: Rule) -> ResourceValidationPolicy:
    """A rule judging one EC2NodeClass or NodePool custom resource on its own."""

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if KIND_OF_TYPE.get(args.resource_type) not in rule.kinds:
            return
        inputs = load([(args.urn, plain(args.props))])
        report(analyze.judge_rule(rule, inputs, settings(rule, args.get_config())), report_violation, lambda f: None)

    return ResourceValidationPolicy(policy_name(rule.id), rule.doc, validate, **_options(rule))


def custom_resources(args: StackValidationArgs) -> list[tuple[str, Mapping[str, Any]]]:
    return [(r.urn, plain(r.props)) for r in args.resources if r.resource_type in KIND_OF_TYPE]


def cross_object_policy(rule: Rule) -> StackValidationPolicy:
    """A rule that needs the stack's other custom resources (e.g. a NodePool's EC2NodeClass)."""

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        inputs = load(custom_resources(args))
        report(analyze.judge_rule(rule, inputs, settings(rule, args.get_config())), report_violation, _urn)

    return StackValidationPolicy(policy_name(rule.id), rule.doc, validate, **_options(rule))


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
        if isinstance(outputs.get("findings"), list):
            found.append((resource.urn, outputs))
    return found


def stack_policy(rule: Rule, observe: Callable[[StackValidationArgs], Iterable[Observation]]) -> StackValidationPolicy:
    """A rule whose violations are observed in the whole stack, judged under this policy's config."""

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        report(analyze.judge_observed(rule, observe(args), settings(rule, args.get_config())), report_violation, _urn)

    return StackValidationPolicy(policy_name(rule.id), rule.doc, validate, **_options(rule))


def _live(args: StackValidationArgs) -> Iterator[Observation]:
    for urn, outputs in reconciled_outputs(args):
        yield from analyze.live_observations(urn, outputs)
    yield from coherence_observations(args)  # a profile in the stack without its role


def _of_type(args: StackValidationArgs, *types: str) -> list:
    return [r for r in args.resources if r.resource_type in types]


def _known(resource, key: str) -> Any:
    """A property of a stack resource, or PENDING while a preview cannot know it (an ARN or generated
    name of a resource not created yet)."""
    try:
        return plain(resource.props.get(key))
    except UnknownValueError:
        return PENDING


def _named(args: StackValidationArgs, resource_type: str, key: str) -> dict[str, pack_coherence.Created]:
    """Property ``key`` of each resource of a type, by the resource's name (those whose name is known)."""
    return {
        name: pack_coherence.Created(_known(r, key), r.urn) for r in _of_type(args, resource_type) if (name := _known(r, "name"))
    }


def created_stack(args: StackValidationArgs) -> pack_coherence.CreatedStack:
    """The IAM, EKS, SQS and KMS resources of the stack as the coherence rules read them."""
    key_policies = {}
    for key in _of_type(args, *KMS_KEY_TYPES):
        policy = _known(key, "policy")
        for ref in (_known(key, "arn"), _known(key, "keyId")):
            if ref and policy:
                key_policies[ref] = policy
    return pack_coherence.CreatedStack(
        profile_roles=_named(args, INSTANCE_PROFILE_TYPE, "role"),
        role_trusts=_named(args, ROLE_TYPE, "assumeRolePolicy"),
        policies=[_known(r, "policy") for r in _of_type(args, *POLICY_TYPES)],
        entry_principals=[_known(r, "principalArn") for r in _of_type(args, ACCESS_ENTRY_TYPE)],
        key_policies=key_policies,
        queues=[
            pack_coherence.Queue(_known(q, "name") or q.name, _known(q, "kmsMasterKeyId"), q.urn)
            for q in _of_type(args, QUEUE_TYPE)
        ],
        pod_identities=[
            pack_coherence.PodIdentity(_known(a, "clusterName"), _known(a, "namespace") or "", _known(a, "serviceAccount"), a.urn)
            for a in _of_type(args, POD_IDENTITY_TYPE)
        ],
        fargate_profiles=[
            pack_coherence.FargateProfile(
                _known(p, "clusterName"), _known(p, "selectors"), _known(p, "fargateProfileName") or p.name
            )
            for p in _of_type(args, FARGATE_PROFILE_TYPE)
        ],
    )


def coherence_observations(args: StackValidationArgs) -> Iterator[Observation]:
    """The controller coherence rules (and a profile without its role) on the resources the stack creates."""
    return pack_coherence.observations(created_stack(args), load(custom_resources(args)))


def waiver_policy(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    try:
        loaded = current_waivers()
    except InputError as err:
        report_violation(f"the waivers are unusable, so nothing is waived: {err}", None)
        return
    for finding in analyze.expired(loaded):
        report_violation(describe(finding), None)


def policy_of(rule: Rule):
    """The CrossGuard policy that judges ``rule``, by where its violations are observed."""
    if rule.stage is Stage.LIVE:
        return stack_policy(rule, _live)
    if rule.id in COHERENCE:
        return stack_policy(rule, coherence_observations)
    if rule.stage is Stage.WAIVERS:
        return StackValidationPolicy(policy_name(rule.id), rule.doc, waiver_policy, **_options(rule))
    if rule.cross_object:
        return cross_object_policy(rule)
    return object_policy(rule)


def all_policies() -> list:
    """Every policy of the pack, in registry order."""
    return [policy_of(rule) for rule in registry.RULES.values() if rule.id not in UNSEEN]
