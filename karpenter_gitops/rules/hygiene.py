"""Hygiene policies (``policy/``): security and operations rules an organisation opts into.

They run with ``validate --policy`` and in the CrossGuard pack, never in plain ``validate`` or the
provider's ``check()``. The limits they compare against are parameters they declare; a stack sets
them in ``karpenter-gitops:policy`` and the pack in its config, and a check reads its own with
``ctx.param(...)``.

:data:`CATALOGUE` maps the proposed catalogue ids (NC-xx for EC2NodeClass, NP-xx for NodePool) to
the rules that implement them. Where a stricter rule of ours already judges the same thing (an
``@latest`` alias, an ARN for the role or instance profile, a dangling nodeClassRef, a reserved
taint, userData that does not fit the AMI family) the catalogue points at that rule rather than
repeating it; production stacks raise the
``@latest`` rule to an error (its declared ``production`` severity).
"""

from __future__ import annotations

import re

from karpenter_gitops.core import labels
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS, NODEPOOL
from karpenter_gitops.core.text import duration_seconds
from karpenter_gitops.families.userdata import problems as userdata
from karpenter_gitops.rules.cel import ec2nodeclass
from karpenter_gitops.rules.registry import Param, Stage, rule

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
NC, NP = (EC2NODECLASS,), (NODEPOOL,)
WAIVER_EXPIRED = "policy/waiver-expired"
_POSITIVE = {"type": "integer", "minimum": 1}


def _policy(id, severity, kinds, doc, fix, good, bad, **options):
    return rule(id, severity, kinds, doc, fix, origin="ours", hygiene=True, good=good, bad=bad, **options)


# --- EC2NodeClass -------------------------------------------------------------------------


@_policy(
    "policy/imdsv2-required",
    ERROR,
    NC,
    "Instance metadata must require session tokens (IMDSv2): with httpTokens: optional, any SSRF in a pod "
    "can read the node role's credentials with a plain GET. [NC-01; CKV_AWS_79, CT.EC2.PR.1]",
    "Set metadataOptions.httpTokens: required (the v1 default) or disable the endpoint.",
    good=({"spec": {"metadataOptions": {"httpTokens": "required"}}}, {"spec": {"metadataOptions": None}}),
    bad=({"spec": {"metadataOptions": {"httpTokens": "optional"}}},),
)
def imdsv2_required(obj, ctx):
    options = obj.spec.metadata_options
    if options and options.http_tokens == "optional" and options.http_endpoint != "disabled":
        yield Violation("spec.metadataOptions.httpTokens", "IMDSv1 is allowed (httpTokens: optional)")


@_policy(
    "policy/imds-hop-limit",
    WARNING,
    NC,
    "The IMDS hop limit decides whether pods reach the node's metadata service. At 1 (the v1 default) only "
    "the host network can, so a compromised pod cannot take the node role's credentials; at 2 or more every "
    "pod can, which some workloads still need (SDKs reading the region or credentials from IMDS instead of "
    "IRSA/Pod Identity). Keep it at the stack's maximum and waive, with an expiry, the classes whose pods "
    "truly need IMDS. [NC-02; CKV_AWS_341, CT.EC2.PR.2]",
    "Lower httpPutResponseHopLimit to the stack's maxHopLimit (default 1), move the pods to IRSA or Pod "
    "Identity, or add an expiring waiver naming this class.",
    good=({"spec": {"metadataOptions": {"httpPutResponseHopLimit": 1}}},),
    bad=({"spec": {"metadataOptions": {"httpPutResponseHopLimit": 2}}},),
    params=(Param("maxHopLimit", 1, {"type": "integer", "minimum": 1, "maximum": 64}, "an integer from 1 to 64"),),
)
def imds_hop_limit(obj, ctx):
    options = obj.spec.metadata_options
    limit = options.http_put_response_hop_limit if options else None
    allowed = ctx.param("maxHopLimit")
    if limit is not None and limit > allowed and options.http_endpoint != "disabled":
        yield Violation(
            "spec.metadataOptions.httpPutResponseHopLimit",
            f"hop limit {limit} lets pods reach IMDS and the node role's credentials (stack maximum {allowed})",
        )


@_policy(
    "policy/ebs-encrypted",
    ERROR,
    NC,
    "Every EBS volume is encrypted at rest. Explicit blockDeviceMappings replace Karpenter's encrypted "
    "defaults, so a mapping without encrypted: true launches plain volumes unless the account forces "
    "encryption. [NC-03; AWSGuard encrypted-volumes, CT.EC2.PR.7]",
    "Set ebs.encrypted: true on every mapping (optionally with kmsKeyID).",
    good=({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "50Gi", "encrypted": True}}]}},),
    bad=(
        {"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "50Gi"}}]}},
        {"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "50Gi", "encrypted": False}}]}},
    ),
)
def ebs_encrypted(obj, ctx):
    for index, mapping in enumerate(obj.spec.block_device_mappings or ()):
        if mapping is not None and mapping.ebs is not None and mapping.ebs.encrypted is not True:
            state = "false" if mapping.ebs.encrypted is False else "not set"
            yield Violation(f"spec.blockDeviceMappings[{index}].ebs.encrypted", f"volume encryption is {state}")


@_policy(
    "policy/no-public-ip",
    ERROR,
    NC,
    "Nodes get no public IP address: node traffic leaves through NAT or endpoints, and a public address "
    "exposes every host port the security groups let through. [NC-04; CKV_AWS_88, CT.EC2.PR.9]",
    "Remove associatePublicIPAddress (or set it to false) and select private subnets.",
    good=({"spec": {"associatePublicIPAddress": False}},),
    bad=({"spec": {"associatePublicIPAddress": True}},),
)
def no_public_ip(obj, ctx):
    if obj.spec.associate_public_ip_address:
        yield Violation("spec.associatePublicIPAddress", "nodes would get a public IP address")


@_policy(
    "policy/ami-owner",
    WARNING,
    NC,
    "AMI terms selecting by name or tags name an owner. Without one Karpenter searches self and amazon for "
    "names and everything visible to the account for tags, so an image shared into the account (or a new "
    "Amazon image with a matching name) can become a node's root disk. [NC-06]",
    "Add owner: the account id (or 'self') that builds the image.",
    good=({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"name": "platform-al2023-*", "owner": "123456789012"}]}},),
    bad=({"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"tags": {"team": "payments"}}]}},),
)
def ami_owner(obj, ctx):
    for index, term in enumerate(obj.spec.ami_selector_terms or ()):
        if term is not None and (term.name or term.tags) and not term.owner:
            selector = "name" if term.name else "tags"
            yield Violation(f"spec.amiSelectorTerms[{index}]", f"AMI term selects by {selector} without an owner")


# What a secret in userData looks like; userData is stored in the launch template, readable by anyone
# with ec2:DescribeLaunchTemplateVersions and from every pod that reaches IMDS.
_SECRETS = (
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("an AWS secret access key", re.compile(r"(?i)aws_?secret_?access_?key\s*[=:]\s*['\"]?[A-Za-z0-9/+]{40}")),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    ("a GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a bearer token", re.compile(r"(?i)authorization:\s*bearer\s+[A-Za-z0-9._~+/-]{20,}")),
    (
        "a password or token assignment",
        re.compile(r"(?i)\b(?:password|passwd|api[_-]?key|secret|token)\b\s*[=:]\s*['\"]?(?![$<{%])[^\s'\"]{8,}"),
    ),
)


@_policy(
    "policy/userdata-secrets",
    ERROR,
    NC,
    "userData carries no credentials (AWS keys, private keys, tokens, passwords): it is stored in launch "
    "templates and served by IMDS to anything on the node. [NC-11; tfsec no-secrets-in-user-data]",
    "Fetch secrets at boot from Secrets Manager or SSM Parameter Store with the node role, and rotate the "
    "leaked one.",
    good=({"spec": {"userData": "#!/bin/bash\nTOKEN=$(aws ssm get-parameter --name /app/token --with-decryption)\n"}},),
    bad=(
        {"spec": {"userData": "#!/bin/bash\nexport AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n"}},
        {"spec": {"userData": "#!/bin/bash\necho 'password=hunter2hunter2' > /etc/app.conf\n"}},
    ),
)
def userdata_secrets(obj, ctx):
    text = obj.spec.user_data
    if not text:
        return
    for what, pattern in _SECRETS:
        match = pattern.search(text)
        if match:
            line = text.count("\n", 0, match.start()) + 1
            yield Violation("spec.userData", f"userData line {line} holds what looks like {what}")


# Tag domains AWS or Karpenter own. The exact keys Karpenter's CEL rejects are cel/tags-restricted's.
_RESERVED_TAG_PREFIXES = ("aws:", "eks:", "karpenter.sh/", "karpenter.k8s.aws/", "kubernetes.io/")


@_policy(
    "policy/reserved-tag-domain",
    ERROR,
    NC,
    "spec.tags stay out of the domains AWS, EKS, Kubernetes and Karpenter write themselves: EC2 refuses "
    "'aws:' keys at launch, and the others collide with ownership and discovery tags. Beyond the exact "
    "keys Karpenter's CEL rejects (cel/tags-restricted). [NC-12]",
    "Rename the tag into your own domain, e.g. example.com/team.",
    good=({"spec": {"tags": {"example.com/team": "platform"}}},),
    bad=({"spec": {"tags": {"aws:cloudformation:stack-name": "x"}}}, {"spec": {"tags": {"karpenter.sh/team": "x"}}}),
)
def reserved_tag_domain(obj, ctx):
    restricted = {violation.path for violation in ec2nodeclass.tags_restricted(obj, ctx)}
    for key in obj.spec.tags or {}:
        path = f"spec.tags[{key}]"
        domain = next((prefix for prefix in _RESERVED_TAG_PREFIXES if key.startswith(prefix)), None)
        if domain and path not in restricted:
            yield Violation(path, f"tag key {key!r} is in the reserved {domain!r} domain")


@_policy(
    "policy/detailed-monitoring",
    INFO,
    NC,
    "Detailed (1-minute) CloudWatch monitoring for nodes; a warning in production stacks. [NC-15; AWSGuard]",
    "Set detailedMonitoring: true.",
    good=({"spec": {"detailedMonitoring": True}},),
    bad=({"spec": {"detailedMonitoring": False}},),
    production=WARNING,
)
def detailed_monitoring(obj, ctx):
    if not obj.spec.detailed_monitoring:
        yield Violation("spec.detailedMonitoring", "nodes report CloudWatch metrics every 5 minutes only")


# --- NodePool -----------------------------------------------------------------------------


def _requirements(obj):
    template = obj.spec.template
    spec = template.spec if template else None
    return tuple(r for r in (spec.requirements if spec else None) or () if r is not None and r.key)


@_policy(
    "policy/nodepool-limits",
    ERROR,
    NP,
    "A NodePool caps its total cpu and memory: without limits a scheduling bug, a runaway HPA or a "
    "pending-pod storm scales the bill without bound. [NP-01]",
    "Set spec.limits.cpu and spec.limits.memory (below the account's vCPU quota).",
    good=({"kind": "NodePool", "spec": {"limits": {"cpu": "100", "memory": "400Gi"}}},),
    bad=({"kind": "NodePool", "spec": {"limits": None}}, {"kind": "NodePool", "spec": {"limits": {"cpu": "100", "memory": None}}}),
)
def nodepool_limits(obj, ctx):
    limits = obj.spec.limits or {}
    missing = [resource for resource in ("cpu", "memory") if resource not in limits]
    if missing:
        yield Violation("spec.limits", f"no limit for {' and '.join(missing)}")


_CPU_CAPS = {"Lt": -1, "Lte": 0}  # operator -> offset from its value to the largest allowed cpu count


def _largest_cpu(requirement) -> int | None:
    values = [int(v) for v in requirement.values or () if v.isdigit()]
    if not values:
        return None
    if requirement.operator in _CPU_CAPS:
        return values[0] + _CPU_CAPS[requirement.operator]
    return max(values) if requirement.operator == "In" else None


def _metal_excluded(requirement) -> bool:
    values = requirement.values or ()
    if requirement.key == labels.INSTANCE_TYPE and requirement.operator == "In":
        return not any(".metal" in v for v in values)
    if requirement.key == labels.SIZE:
        metal = [v for v in values if v.startswith("metal")]
        return bool(metal) if requirement.operator == "NotIn" else requirement.operator == "In" and not metal
    return False


@_policy(
    "policy/bounded-instance-size",
    WARNING,
    NP,
    "Requirements bound instance size, either by excluding metal sizes or by capping instance-cpu at the "
    "stack's maxInstanceCpu (default 96): an unbounded pool can answer one pending pod with a 192-vCPU "
    "metal host. [NP-02]",
    "Add {key: karpenter.k8s.aws/instance-size, operator: NotIn, values: [metal]} or "
    "{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ['97']}.",
    good=(
        {"kind": "NodePool", "spec": {"template": {"spec": {"requirements": [
            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["33"]}]}}}},
        {"kind": "NodePool", "spec": {"template": {"spec": {"requirements": [
            {"key": "karpenter.k8s.aws/instance-size", "operator": "NotIn", "values": ["metal", "metal-24xl"]}]}}}},
    ),
    bad=(
        {"kind": "NodePool", "spec": {"template": {"spec": {"requirements": [
            {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m"]}]}}}},
        {"kind": "NodePool", "spec": {"template": {"spec": {"requirements": [
            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lte", "values": ["192"]}]}}}},
    ),
    params=(Param("maxInstanceCpu", 96, _POSITIVE, "a positive integer"),),
)
def bounded_instance_size(obj, ctx):
    cap = ctx.param("maxInstanceCpu")
    requirements = _requirements(obj)
    if any(_metal_excluded(r) for r in requirements):
        return
    largest = [n for r in requirements if r.key == labels.CPU and (n := _largest_cpu(r)) is not None]
    if largest and min(largest) <= cap:
        return
    detail = f"instance-cpu is capped at {min(largest)}" if largest else "no size or cpu bound"
    yield Violation(
        "spec.template.spec.requirements",
        f"{detail}: the pool may launch metal or larger-than-{cap}-vCPU instances",
    )


@_policy(
    "policy/expire-after-bounded",
    WARNING,
    NP,
    "Nodes are replaced at least every maxExpireAfter (default 720h, Karpenter's own default) so they pick "
    "up patched AMIs; 'Never' or a longer period leaves unpatched hosts running. [NP-03]",
    "Set spec.template.spec.expireAfter to the stack's maxExpireAfter or less.",
    good=({"kind": "NodePool", "spec": {"template": {"spec": {"expireAfter": "336h"}}}},),
    bad=(
        {"kind": "NodePool", "spec": {"template": {"spec": {"expireAfter": "Never"}}}},
        {"kind": "NodePool", "spec": {"template": {"spec": {"expireAfter": "2160h"}}}},
    ),
    params=(
        Param(
            "maxExpireAfter",
            "720h",
            {"type": "string", "pattern": r"^([0-9]+(s|m|h))+$"},
            "a duration like 720h",
            valid=lambda v: duration_seconds(v) is not None,
        ),
    ),
)
def expire_after_bounded(obj, ctx):
    template = obj.spec.template
    value = (template.spec.expire_after if template and template.spec else None) or "720h"
    allowed = ctx.param("maxExpireAfter")
    seconds = duration_seconds(value)
    if value == "Never" or (seconds is not None and seconds > duration_seconds(allowed)):
        yield Violation("spec.template.spec.expireAfter", f"nodes live up to {value}; the stack allows {allowed}")


@_policy(
    "policy/disruption-budgets",
    WARNING,
    NP,
    "A NodePool states its disruption budgets: without them Karpenter may disrupt 10% of the pool's nodes "
    "at any time, drift after an AMI change included. [NP-04]",
    "Add spec.disruption.budgets, e.g. [{nodes: '10%'}, {nodes: '0', schedule: '0 9 * * mon-fri', "
    "duration: 8h, reasons: [Drifted, Underutilized]}].",
    good=({"kind": "NodePool", "spec": {"disruption": {"budgets": [{"nodes": "10%"}]}}},),
    bad=({"kind": "NodePool", "spec": {"disruption": {"budgets": None}}},),
)
def disruption_budgets(obj, ctx):
    disruption = obj.spec.disruption
    if disruption is None or not disruption.budgets:
        yield Violation("spec.disruption.budgets", "no disruption budgets (Karpenter assumes nodes: 10%)")


@_policy(
    "policy/consolidate-after",
    WARNING,
    NP,
    "A NodePool sets its disruption block with consolidateAfter: left out, Karpenter defaults to "
    "WhenEmptyOrUnderutilized after 0s and consolidates nodes the moment a pod leaves. [NP-05]",
    "Add spec.disruption with consolidationPolicy and consolidateAfter (e.g. 5m).",
    good=({"kind": "NodePool", "spec": {"disruption": {"consolidateAfter": "5m"}}},),
    bad=({"kind": "NodePool", "spec": {"disruption": None}},),
)
def consolidate_after(obj, ctx):
    if obj.spec.disruption is None:
        yield Violation("spec.disruption", "no disruption block: consolidateAfter defaults to 0s")


def _allows_spot(requirements) -> bool:
    capacity = next((r for r in requirements if r.key == labels.CAPACITY_TYPE), None)
    if capacity is None:
        return False  # Karpenter defaults to on-demand
    values = capacity.values or ()
    return (
        (capacity.operator == "In" and "spot" in values)
        or (capacity.operator == "NotIn" and "spot" not in values)
        or capacity.operator == "Exists"
    )


@_policy(
    "policy/spot-flexibility",
    WARNING,
    NP,
    "A pool that allows spot stays flexible: with few instance families a capacity-pool shortage or "
    "interruption wave leaves pods pending. It needs at least minSpotFamilies (default 3) families, or "
    "minValues of that size on the family or instance-type requirement. [NP-07]",
    "Allow more instance families or categories, or add minValues to the family requirement.",
    good=({"kind": "NodePool", "spec": {"template": {"spec": {"requirements": [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5", "m6i", "m7i"]}]}}}},),
    bad=({"kind": "NodePool", "spec": {"template": {"spec": {"requirements": [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]}]}}}},),
    params=(Param("minSpotFamilies", 3, _POSITIVE, "a positive integer"),),
)
def spot_flexibility(obj, ctx):
    requirements = _requirements(obj)
    if not _allows_spot(requirements):
        return
    needed = ctx.param("minSpotFamilies")
    narrowing = [r for r in requirements if r.key in (labels.FAMILY, labels.INSTANCE_TYPE)]
    if any((r.min_values or 0) >= needed for r in narrowing):
        return
    for r in narrowing:
        if r.operator != "In":
            continue
        families = {v.split(".")[0] for v in r.values or ()}
        if len(families) < needed:
            yield Violation(
                "spec.template.spec.requirements",
                f"spot is allowed but {r.key} leaves {len(families)} instance famil{'y' if len(families) == 1 else 'ies'} "
                f"(the stack wants {needed})",
            )
            return


rule(
    WAIVER_EXPIRED,
    ERROR,
    ("Waiver",),
    "A waiver past its expiry date: it no longer waives anything, and the exception it granted needs a "
    "decision. (Observed while applying waivers, not by a check.) [landscape §7.8]",
    "Fix the findings it waived and delete the waiver, or agree a new expiry date.",
    stage=Stage.WAIVERS,
    origin="ours",
    hygiene=True,
)

# Catalogue id -> the rules implementing it (ours and the stricter rules we reuse).
CATALOGUE: dict[str, tuple[str, ...]] = {
    "NC-01": ("policy/imdsv2-required",),
    "NC-02": ("policy/imds-hop-limit",),
    "NC-03": ("policy/ebs-encrypted",),
    "NC-04": ("policy/no-public-ip",),
    "NC-05": ("nodeclass/alias-latest",),
    "NC-06": ("policy/ami-owner",),
    "NC-07": (userdata.TOML, userdata.AL2023_BOOTSTRAP, userdata.NODECONFIG, userdata.POWERSHELL_TAGS),
    "NC-08": ("nodeclass/instance-profile-arn", "nodeclass/role-arn", "nodeclass/role-arn-name"),
    "NC-09": (userdata.MIME, userdata.BOOTSTRAP_ARGS, userdata.FOLDED_YAML, userdata.TOML_DOTTED_KEY),
    "NC-10": (userdata.REGISTRATION_TAINT, userdata.REGISTRATION_TAINT_LOGGED, userdata.MANAGED_REGISTRATION_TAINT),
    "NC-11": ("policy/userdata-secrets",),
    "NC-12": ("cel/tags-restricted", "policy/reserved-tag-domain"),
    "NC-15": ("policy/detailed-monitoring",),
    "NP-01": ("policy/nodepool-limits",),
    "NP-02": ("policy/bounded-instance-size",),
    "NP-03": ("policy/expire-after-bounded",),
    "NP-04": ("policy/disruption-budgets",),
    "NP-05": ("policy/consolidate-after",),
    "NP-06": ("nodepool/node-class-ref-missing",),
    "NP-07": ("policy/spot-flexibility",),
    "NP-09": ("nodepool/reserved-taint",),
}
