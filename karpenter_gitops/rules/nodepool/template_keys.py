"""Our NodePool rules on the keys of the pool's template (its labels, requirements and taints): a key Karpenter
refuses at run time though the CRD admits it, one it only copies (a managed node group's, a beta one), one
that is no qualified name.
"""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import AWS_GROUP, NODEPOOL
from karpenter_gitops.core.name_validation import go_quote, has_placeholder, qualified_name_errors
from karpenter_gitops.core.versions import Release
from karpenter_gitops.rules.cel.nodepool import (
    label_keys,
    requirement_keys,
    requirement_path,
    requirements,
    values_of,
)
from karpenter_gitops.rules.label_keys import (
    CRD_PATTERN,
    KNATIVE_UNTIL,
    NORMALIZED_LABELS,
    RESTRICTED_LABELS,
    domain_messages,
    key_domain,
    key_suggestion,
    knative,
    restricted_message,
    runtime_requirement_message,
    well_known,
)
from karpenter_gitops.rules.nodepool.template_taints import taints_of
from karpenter_gitops.rules.registry import rule

KINDS = (NODEPOOL,)
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


_OWN_DOMAINS = ("karpenter.sh", AWS_GROUP, "topology.k8s.aws")
_KUBERNETES_DOMAINS = (
    "kubernetes.io",
    "node.kubernetes.io",
    "topology.kubernetes.io",
    "beta.kubernetes.io",
    "failure-domain.beta.kubernetes.io",
)


@rule(
    "nodepool/unknown-requirement-key",
    WARNING,
    KINDS,
    "A requirement on a key in Karpenter's or Kubernetes' label domains that is not a well-known label "
    "(e.g. node.kubernetes.io/instance-family): it narrows no instance types, Karpenter only copies it onto "
    "nodes. Keys the CEL label rules reject are left to them; in Kubernetes domains only likely typos are flagged.",
    "Use the well-known label you meant, or a label in a domain of your own.",
    origin="ours",
    good=(
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}]
                    }
                }
            }
        },
    ),
    bad=(
        {
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "node.kubernetes.io/instance-family", "operator": "In", "values": ["m5"]}]}
                }
            }
        },
        {"spec": {"template": {"spec": {"requirements": [{"key": "topology.k8s.aws/zone", "operator": "Exists"}]}}}},
    ),
)
def unknown_requirement_key(obj, ctx):
    known = well_known(ctx.release)
    for path, key in requirement_keys(obj):
        if key in known or key in RESTRICTED_LABELS or any(True for _ in domain_messages(key, ctx.release)):
            continue
        domain = key_domain(key) if "/" in key else ""
        hint = key_suggestion(key, ctx.release)
        if domain in _OWN_DOMAINS or (domain in _KUBERNETES_DOMAINS and hint):
            yield Violation(
                path,
                f"{key!r} is not a label Karpenter knows: it does not narrow the instance types, "
                "Karpenter only copies it onto the nodes",
                hint,
            )


# Keys of EKS managed node groups, which Karpenter's nodes never carry, with the Karpenter key to use.
_NODE_GROUP_KEYS = {
    "eks.amazonaws.com/capacityType": "karpenter.sh/capacity-type (values on-demand, spot)",
    "eks.amazonaws.com/nodegroup": "karpenter.sh/nodepool",
    "eks.amazonaws.com/nodegroup-image": "karpenter.k8s.aws/ec2nodeclass (or the class's amiSelectorTerms)",
}


@rule(
    "nodepool/managed-node-group-key",
    WARNING,
    KINDS,
    "A requirement or label on a key of EKS managed node groups (eks.amazonaws.com/capacityType, .../nodegroup): "
    "Karpenter does not set it from the instance, it only copies the value onto nodes, so pods selecting it "
    "land on nodes that merely claim it.",
    "Use the Karpenter key: karpenter.sh/capacity-type for the capacity type, karpenter.sh/nodepool for the pool.",
    origin="ours",
    good=(
        {
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}
                }
            }
        },
    ),
    bad=(
        {
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "eks.amazonaws.com/capacityType", "operator": "In", "values": ["SPOT"]}]}
                }
            }
        },
    ),
)
def managed_node_group_key(obj, ctx):
    for path, key in label_keys(obj):
        instead = _NODE_GROUP_KEYS.get(key)
        if instead:
            yield Violation(
                path,
                f"{key!r} belongs to EKS managed node groups; Karpenter's nodes carry it only as "
                "a copied label, never as a fact of the instance",
                f"use {instead}",
            )


@rule(
    "nodepool/label-syntax",
    ERROR,
    KINDS,
    "A template label key, taint or startup-taint key or value, or requirement key that is not a Kubernetes qualified "
    "name (a name part of 1-63 alphanumerics, '-', '_', '.', after an optional DNS-subdomain prefix of at most 253 "
    "and a '/'), or a requirement value that is no label value (a wildcard such as 'c5*', a space): the API server "
    "admits it (label keys and requirement values are not checked, the patterns carry no lengths), then Karpenter's "
    "runtime validation sets ValidationSucceeded=False (NodePoolValidationFailed) and the pool launches nothing.",
    "Shorten or respell it: at most 63 characters after the '/', at most 253 before it, letters, digits, '-', '_' "
    "and '.' only, starting and ending with a letter or digit; a lower-case DNS name as the prefix. Requirement "
    "values are exact: list each one (In ['c5', 'c6i']) instead of a pattern.",
    good=(
        {"spec": {"template": {"metadata": {"labels": {"example.com/team": "ml"}}}}},
        {"spec": {"template": {"spec": {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]}}}},
    ),
    bad=(
        {"spec": {"template": {"metadata": {"labels": {"example.com/" + "a" * 64: "x"}}}}},
        {"spec": {"template": {"metadata": {"labels": {"team name": "ml"}}}}},
        {
            "karpenterVersion": "1.0",
            "spec": {"template": {"spec": {"startupTaints": [{"key": "example.com/" + "a" * 64, "effect": "NoSchedule"}]}}},
        },
        {"spec": {"template": {"spec": {"requirements": [{"key": "example.com/" + "a" * 64, "operator": "Exists"}]}}}},
        {
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c5*"]}]}
                }
            }
        },
    ),
)
def label_syntax(obj, ctx):
    release = ctx.release
    metadata = obj.spec.template.metadata if obj.spec.template else None
    for key in (metadata.labels if metadata else None) or {}:
        for error in [] if has_placeholder(key) else qualified_name_errors(key, release):
            if release < KNATIVE_UNTIL:
                message = knative(f"invalid key name {go_quote(key)}", "spec.template.metadata.labels", error)
            else:
                message = f"invalid key name {go_quote(key)} in labels, {go_quote(error)}"
            yield Violation(f"spec.template.metadata.labels[{key}]", message)
    for path, field, _, taint in taints_of(obj):
        for part, value in (("key", taint.key), ("value", taint.value)):
            if not value or not CRD_PATTERN.match(value):
                continue
            for error in qualified_name_errors(value, release):
                if release < KNATIVE_UNTIL:
                    message = knative(f"invalid value: {error}", path)
                else:
                    message = f"invalid value: {error} in {field}"
                yield Violation(f"{path}.{part}", message)
    for index, requirement in requirements(obj):
        if requirement.key is not None:
            message = runtime_requirement_message(requirement.key, values_of(requirement), requirement_path(index), release)
            if message:
                yield Violation(requirement_path(index), message)


@rule(
    "nodepool/beta-template-label",
    ERROR,
    KINDS,
    "A template label with a deprecated beta key (beta.kubernetes.io/arch, failure-domain.beta.kubernetes.io/zone, ...): "
    "the 1.0-1.8 CRDs admit it, but Karpenter's runtime validation counts it in the restricted kubernetes.io domain, "
    "sets ValidationSucceeded=False (NodePoolValidationFailed) and the pool launches nothing. From 1.9 the domain is "
    "no longer restricted. Karpenter's message lists every well-known label; the lists are shown as […].",
    "Use the stable key (the hint names it); Karpenter sets the well-known labels on its nodes itself.",
    until=Release((1, 9)),
    good=({"karpenterVersion": "1.8", "spec": {"template": {"metadata": {"labels": {"kubernetes.io/arch": "amd64"}}}}},),
    bad=({"karpenterVersion": "1.8", "spec": {"template": {"metadata": {"labels": {"beta.kubernetes.io/arch": "amd64"}}}}},),
)
def beta_template_label(obj, ctx):
    metadata = obj.spec.template.metadata if obj.spec.template else None
    for key in (metadata.labels if metadata else None) or {}:
        stable = NORMALIZED_LABELS.get(key)
        if stable:
            yield Violation(f"spec.template.metadata.labels[{key}]", restricted_message(key, ctx.release), f"use {stable}")
