"""Our NodePool rules on the pool's template: label keys, the class it names and its taints, where the
CRD admits what Karpenter refuses at run time, or what silently does not do what it says (a label
Karpenter only copies, a class that is not there, a taint nothing removes).
"""

from __future__ import annotations

from collections.abc import Iterator

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import AWS_GROUP, EC2NODECLASS, NODEPOOL
from karpenter_gitops.core.name_validation import go_quote, has_placeholder, qualified_name_errors
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.core.typed_schema import PATTERN
from karpenter_gitops.core.versions import Release
from karpenter_gitops.karpenter.amifamily.userdata.taints import LOOKALIKE
from karpenter_gitops.rules.cel.nodepool import (
    REF,
    label_keys,
    node_class_ref,
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
from karpenter_gitops.rules.registry import rule

KINDS = (NODEPOOL,)
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

# --- label keys ---------------------------------------------------------------------------

_OWN_DOMAINS = ("karpenter.sh", AWS_GROUP, "topology.k8s.aws")
_KUBERNETES_DOMAINS = (
    "kubernetes.io", "node.kubernetes.io", "topology.kubernetes.io", "beta.kubernetes.io", "failure-domain.beta.kubernetes.io"
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
    good=({"spec": {"template": {"spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"]}]}}}},),
    bad=(
        {"spec": {"template": {"spec": {"requirements": [{"key": "node.kubernetes.io/instance-family", "operator": "In", "values": ["m5"]}]}}}},
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
    good=({"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}}}},),
    bad=({"spec": {"template": {"spec": {"requirements": [{"key": "eks.amazonaws.com/capacityType", "operator": "In", "values": ["SPOT"]}]}}}},),
)
def managed_node_group_key(obj, ctx):
    for path, key in label_keys(obj):
        instead = _NODE_GROUP_KEYS.get(key)
        if instead:
            yield Violation(path, f"{key!r} belongs to EKS managed node groups; Karpenter's nodes carry it only as "
                                  "a copied label, never as a fact of the instance", f"use {instead}")


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
        {"karpenterVersion": "1.0", "spec": {"template": {"spec": {"startupTaints": [{"key": "example.com/" + "a" * 64, "effect": "NoSchedule"}]}}}},
        {"spec": {"template": {"spec": {"requirements": [{"key": "example.com/" + "a" * 64, "operator": "Exists"}]}}}},
        {"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c5*"]}]}}}},
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
    for path, field, _, taint in _taints(obj):
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


# --- nodeClassRef -------------------------------------------------------------------------


@rule(
    "nodepool/node-class-ref-kind",
    ERROR,
    KINDS,
    "nodeClassRef mixes up Karpenter's AWS provider: its group karpenter.k8s.aws serves only kind EC2NodeClass "
    "(and takes no version), and EC2NodeClass lives in no other group; the NodePool never becomes ready.",
    "Set group: karpenter.k8s.aws and kind: EC2NodeClass.",
    origin="ours",
    restates=(PATTERN,),  # a group with '/v1' is also the CRD's pattern refusal: one finding, with our hint
    good=(
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"}}}}},
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass"}}}}},
    ),
    bad=(
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws/v1"}}}}},
        {"spec": {"template": {"spec": {"nodeClassRef": {"kind": "NodeClass"}}}}},
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.sh"}}}}},
    ),
)
def node_class_ref_kind(obj, ctx):
    ref = node_class_ref(obj)
    if ref is None or not ref.group:
        return
    aws = ref.group == AWS_GROUP or ref.group.startswith(AWS_GROUP + "/")
    if ref.group != AWS_GROUP and (aws or ref.kind == EC2NODECLASS):
        hint = "drop the version: group takes no '/v1'" if aws else None
        yield Violation(f"{REF}.group", f"nodeClassRef.group is {ref.group!r}; the AWS provider serves {AWS_GROUP!r}", hint)
    if aws and ref.kind and ref.kind != EC2NODECLASS:
        yield Violation(f"{REF}.kind", f"nodeClassRef.kind is {ref.kind!r}; the AWS provider serves {EC2NODECLASS!r}")


@rule(
    "nodepool/other-node-class",
    INFO,
    KINDS,
    "nodeClassRef points at a class other than an EC2NodeClass, such as EKS Auto Mode's eks.amazonaws.com "
    "NodeClass: the NodePool rules apply, the EC2NodeClass checks (the reference, AMIs, instance-type mapping) do not.",
    "Nothing to fix; to have the EC2NodeClass checks, point the NodePool at an EC2NodeClass.",
    origin="ours",
    good=({"spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass"}}}}},),
    bad=({"spec": {"template": {"spec": {"nodeClassRef": {"group": "eks.amazonaws.com", "kind": "NodeClass"}}}}},),
)
def other_node_class(obj, ctx):
    ref = node_class_ref(obj)
    if ref is None or not ref.group or not ref.kind or ref.is_ec2_node_class or AWS_GROUP in ref.group or ref.kind == EC2NODECLASS:
        return  # mix-ups of the AWS provider's own names are node-class-ref-kind's
    what = "EKS Auto Mode's NodeClass" if ref.is_auto_mode else f"a {ref.kind} of {ref.group}"
    yield Violation(REF, f"the NodePool uses {what}: only the NodePool rules were applied")


def _unresolved(obj, ctx) -> str | None:
    """The class name a NodePool's reference finds nowhere it can see (set by set: a union per NodePool was quadratic)."""
    ref = node_class_ref(obj)
    if ref is None or not ref.name or not ref.is_ec2_node_class:
        return None  # empty names and foreign kinds are reported by their own rules
    known = ref.name in (ctx.inputs.context_node_classes or ()) or ref.name in ctx.inputs.node_class_names(obj.source.scope)
    return None if known else ref.name


def _visible_names(obj, ctx) -> frozenset[str]:  # the did-you-mean candidates, built once a name is missing
    return ctx.inputs.node_class_names(obj.source.scope) | (ctx.inputs.context_node_classes or frozenset())


@rule(
    "nodepool/node-class-ref-missing",
    ERROR,
    KINDS,
    "nodeClassRef names an EC2NodeClass that the stack (one whole cluster), or the repository given with "
    "--context, does not define; the NodePool would stay NodeClassReady=False and launch nothing.",
    "Define that EC2NodeClass, or fix the name.",
    origin="ours",
    cross_object=True,
    good=({"stack": True, "spec": {"template": {"spec": {"nodeClassRef": {"name": "default"}}}}},),
    bad=({"stack": True, "spec": {"template": {"spec": {"nodeClassRef": {"name": "defualt"}}}}},),
)
def node_class_ref_missing(obj, ctx):
    name = _unresolved(obj, ctx)
    if name is None or not (obj.source.scope or ctx.inputs.context_node_classes is not None):
        return
    where = f"the stack {obj.source.file}" if obj.source.scope else "the inputs or their --context"
    yield Violation(f"{REF}.name", f"no EC2NodeClass named {name!r} in {where}", did_you_mean(name, _visible_names(obj, ctx)))


@rule(
    "nodepool/node-class-ref-unresolved",
    INFO,
    KINDS,
    "nodeClassRef names an EC2NodeClass that is not among the manifests given; it may be defined elsewhere in "
    "the repository, so nothing was decided.",
    "Pass the rest of the repository with --context (e.g. --context .) to check that the class exists.",
    origin="ours",
    cross_object=True,
    good=({"spec": {"template": {"spec": {"nodeClassRef": {"name": "default"}}}}},),
    bad=({"spec": {"template": {"spec": {"nodeClassRef": {"name": "shared-elsewhere"}}}}},),
)
def node_class_ref_unresolved(obj, ctx):
    name = _unresolved(obj, ctx)
    if name is None or obj.source.scope or ctx.inputs.context_node_classes is not None:
        return
    yield Violation(f"{REF}.name", f"no EC2NodeClass named {name!r} among the files given", did_you_mean(name, _visible_names(obj, ctx)))


# --- taints -------------------------------------------------------------------------------

_KARPENTER_TAINTS = {
    "karpenter.sh/unregistered": "its registration taint, added at launch and removed once the node registers",
    "karpenter.sh/disrupted": "its disruption taint, put on nodes it is about to drain",
}
_NOT_A_KARPENTER_TAINT = LOOKALIKE  # one spelling for the NodePool rule and the userData checks


def _taints(obj) -> Iterator[tuple[str, str, int, object]]:
    """(path, field, index, taint) of every taint and startup taint with a key; field is taints or startupTaints."""
    template = obj.spec.template
    spec = template.spec if template else None
    if spec is None:
        return
    for wire, taints in (("taints", spec.taints), ("startupTaints", spec.startup_taints)):
        for index, taint in enumerate(taints or ()):
            if taint is not None and taint.key is not None:
                yield f"spec.template.spec.{wire}[{index}]", wire, index, taint


@rule(
    "nodepool/reserved-taint",
    ERROR,
    KINDS,
    "A taint or startup taint with a key Karpenter manages itself (karpenter.sh/unregistered, karpenter.sh/disrupted).",
    "Remove the taint; Karpenter adds and removes it on its own.",
    origin="ours",
    good=({"spec": {"template": {"spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}}},),
    bad=({"spec": {"template": {"spec": {"startupTaints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]}}}},),
)
def reserved_taint(obj, ctx):
    for path, _, _, taint in _taints(obj):
        purpose = _KARPENTER_TAINTS.get(taint.key)
        if purpose:
            yield Violation(f"{path}.key", f"taint {taint.key!r} is reserved for Karpenter: {purpose}")


@rule(
    "nodepool/uninitialized-taint",
    WARNING,
    KINDS,
    "karpenter.sh/uninitialized is not a Karpenter taint, and nothing removes it unless you run something that does.",
    "Drop it: Karpenter's registration taint is karpenter.sh/unregistered:NoExecute (set by Karpenter itself); "
    "the cloud provider's is node.cloudprovider.kubernetes.io/uninitialized.",
    origin="ours",
    good=({"spec": {"template": {"spec": {"startupTaints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}]}}}},),
    bad=({"spec": {"template": {"spec": {"startupTaints": [{"key": "karpenter.sh/uninitialized", "effect": "NoSchedule"}]}}}},),
)
def uninitialized_taint(obj, ctx):
    for path, _, _, taint in _taints(obj):
        if taint.key == _NOT_A_KARPENTER_TAINT:
            yield Violation(
                f"{path}.key",
                f"{_NOT_A_KARPENTER_TAINT!r} is not a Karpenter taint: Karpenter's registration taint is "
                "'karpenter.sh/unregistered:NoExecute', which it sets itself, and the cloud provider's is "
                "'node.cloudprovider.kubernetes.io/uninitialized'",
            )


@rule(
    "nodepool/duplicate-taint",
    ERROR,
    KINDS,
    "Two taints with the same key and effect across taints and startupTaints (a startup taint repeated as a taint, "
    "or one listed twice): the API server admits it, Karpenter's runtime validation sets ValidationSucceeded=False "
    "(NodePoolValidationFailed) and the pool launches nothing.",
    "Keep one of them: a taint that must go away once the node is ready belongs only in startupTaints.",
    good=({"spec": {"template": {"spec": {"startupTaints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}]}}}},),
    bad=({"spec": {"template": {"spec": {
        "taints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}],
        "startupTaints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}],
    }}}},),
)
def duplicate_taint(obj, ctx):
    seen = set()
    for path, _, index, taint in _taints(obj):
        pair = (taint.key, taint.effect or "")
        if pair in seen:
            message = f"duplicate taint Key/Effect pair {taint.key}={taint.effect or ''}"
            if ctx.release < KNATIVE_UNTIL:  # 1.0 named the index under 'taints' for startup taints too
                message = knative(message, f"spec.template.spec.taints[{index}]")
            yield Violation(path, message)
        seen.add(pair)
