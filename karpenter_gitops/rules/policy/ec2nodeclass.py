"""Hygiene policies on EC2NodeClasses (``policy/``): instance metadata, volumes, addresses, AMI owners,
secrets in userData, tag domains and monitoring."""

from __future__ import annotations

import re

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS
from karpenter_gitops.rules.registry import Param, rule

WARNING, INFO = Severity.WARNING, Severity.INFO
NC = (EC2NODECLASS,)


@rule(
    "policy/imdsv2-required",
    WARNING,
    NC,
    "Instance metadata must require session tokens (IMDSv2): with httpTokens: optional, any SSRF in a pod "
    "can read the node role's credentials with a plain GET. [NC-01; CKV_AWS_79, CT.EC2.PR.1]",
    "Set metadataOptions.httpTokens: required (the v1 default) or disable the endpoint.",
    origin="ours",
    hygiene=True,
    good=({"spec": {"metadataOptions": {"httpTokens": "required"}}}, {"spec": {"metadataOptions": None}}),
    bad=({"spec": {"metadataOptions": {"httpTokens": "optional"}}},),
)
def imdsv2_required(obj, ctx):
    options = obj.spec.metadata_options
    if options and options.http_tokens == "optional" and options.http_endpoint != "disabled":
        yield Violation("spec.metadataOptions.httpTokens", "IMDSv1 is allowed (httpTokens: optional)")


@rule(
    "policy/imds-hop-limit",
    WARNING,
    NC,
    "The IMDS hop limit decides whether pods reach the node's metadata service. At 1 (the v1 default) only "
    "the host network can, so a compromised pod cannot take the node role's credentials; at 2 or more every "
    "pod can, which some workloads still need (SDKs reading the region or credentials from IMDS instead of "
    "IRSA/Pod Identity). Keep it at maxHopLimit and waive, with an expiry, the classes whose pods "
    "truly need IMDS. [NC-02; CKV_AWS_341, CT.EC2.PR.2]",
    "Lower httpPutResponseHopLimit to maxHopLimit (default 1), move the pods to IRSA or Pod "
    "Identity, or add an expiring waiver naming this class.",
    origin="ours",
    hygiene=True,
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
            f"hop limit {limit} lets pods reach IMDS and the node role's credentials; {ctx.setting('maxHopLimit')}",
        )


@rule(
    "policy/ebs-encrypted",
    WARNING,
    NC,
    "Every EBS volume is encrypted at rest. Explicit blockDeviceMappings replace Karpenter's encrypted "
    "defaults, so a mapping without encrypted: true launches plain volumes unless the account forces "
    "encryption. [NC-03; AWSGuard encrypted-volumes, CT.EC2.PR.7]",
    "Set ebs.encrypted: true on every mapping (optionally with kmsKeyID).",
    origin="ours",
    hygiene=True,
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


@rule(
    "policy/no-public-ip",
    WARNING,
    NC,
    "Nodes get no public IP address: node traffic leaves through NAT or endpoints, and a public address "
    "exposes every host port the security groups let through. [NC-04; CKV_AWS_88, CT.EC2.PR.9]",
    "Remove associatePublicIPAddress (or set it to false) and select private subnets.",
    origin="ours",
    hygiene=True,
    good=({"spec": {"associatePublicIPAddress": False}},),
    bad=({"spec": {"associatePublicIPAddress": True}},),
)
def no_public_ip(obj, ctx):
    if obj.spec.associate_public_ip_address:
        yield Violation("spec.associatePublicIPAddress", "nodes would get a public IP address")


@rule(
    "policy/ami-owner",
    WARNING,
    NC,
    "AMI terms selecting by name or tags name an owner. Without one Karpenter searches self and amazon for "
    "names and everything visible to the account for tags, so an image shared into the account (or a new "
    "Amazon image with a matching name) can become a node's root disk. [NC-06]",
    "Add owner: the account id (or 'self') that builds the image.",
    origin="ours",
    hygiene=True,
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


@rule(
    "policy/userdata-secrets",
    WARNING,
    NC,
    "userData carries no credentials (AWS keys, private keys, tokens, passwords): it is stored in launch "
    "templates and served by IMDS to anything on the node. [NC-11; tfsec no-secrets-in-user-data]",
    "Fetch secrets at boot from Secrets Manager or SSM Parameter Store with the node role, and rotate the leaked one.",
    origin="ours",
    hygiene=True,
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


# The tag domain AWS keeps for itself: EC2 refuses a tag key starting with 'aws:' (any case) at launch. The other
# domains (karpenter.sh/, kubernetes.io/, eks:) hold only the exact keys the CRD's CEL refuses
# (cel/tags-restricted); the rest of them, such as the karpenter.sh/discovery tag blueprints put on nodes, is fine.
_AWS_DOMAIN = "aws:"


@rule(
    "policy/reserved-tag-domain",
    WARNING,
    NC,
    "spec.tags stay out of the 'aws:' domain, which AWS keeps for itself: EC2 refuses such keys when Karpenter "
    "tags the instances it launches. Keys of the other domains AWS, EKS, Kubernetes and Karpenter write are "
    "refused only where the CRD refuses them (cel/tags-restricted); karpenter.sh/discovery and the like are fine. [NC-12]",
    "Rename the tag into your own domain, e.g. example.com/team.",
    origin="ours",
    hygiene=True,
    good=({"spec": {"tags": {"example.com/team": "platform"}}}, {"spec": {"tags": {"karpenter.sh/discovery": "demo"}}}),
    bad=({"spec": {"tags": {"aws:cloudformation:stack-name": "x"}}}, {"spec": {"tags": {"AWS:team": "x"}}}),
)
def reserved_tag_domain(obj, ctx):
    for key in obj.spec.tags or {}:
        if key.lower().startswith(_AWS_DOMAIN):
            yield Violation(f"spec.tags[{key}]", f"tag key {key!r} is in the {_AWS_DOMAIN!r} domain, which AWS reserves")


@rule(
    "policy/detailed-monitoring",
    INFO,
    NC,
    "Detailed (1-minute) CloudWatch monitoring for nodes; a warning in production stacks. [NC-15; AWSGuard]",
    "Set detailedMonitoring: true.",
    origin="ours",
    hygiene=True,
    good=({"spec": {"detailedMonitoring": True}},),
    bad=({"spec": {"detailedMonitoring": False}},),
    production=WARNING,
)
def detailed_monitoring(obj, ctx):
    if not obj.spec.detailed_monitoring:
        yield Violation("spec.detailedMonitoring", "nodes report CloudWatch metrics every 5 minutes only")
