"""NodePool rules: Karpenter's CEL validations (``cel/``) and our stricter checks (``nodepool/``).

The ``cel/`` rules mirror the ``x-kubernetes-validations`` of the NodePool CRD with the exact
message of the chosen release (checked against the v1.0.14, v1.4.4, v1.8.8 and v1.14.1 CRDs).
The ``karpenter.k8s.aws`` label allow-list grows by release; between verified CRDs a label joins at
the release that introduced it (``ec2nodeclass`` is first seen in v1.4.4 and assumed from 1.3).

The rules that compare with the stored object (``oldSelf``: ``nodeClassRef.group``/``kind``
immutability and the static/dynamic ``replicas`` transition) need the base of a change, so they
live in :mod:`.transitions` and run in ``preview``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import AWS_GROUP, EC2NODECLASS, LABEL_KEY, NODEPOOL
from karpenter_gitops.core.names import go_quote, has_placeholder, label_value_errors, qualified_name_errors
from karpenter_gitops.core.text import closest, did_you_mean
from karpenter_gitops.core.versions import Version
from karpenter_gitops.families.userdata.taints import LOOKALIKE
from karpenter_gitops.rules.registry import rule

KINDS = (NODEPOOL,)
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

# --- label keys ---------------------------------------------------------------------------

# karpenter.k8s.aws labels Karpenter registers as well-known (and the NodePool CRD allows), by release.
AWS_LABELS: dict[str, Version | None] = {
    "instance-encryption-in-transit-supported": None,
    "instance-category": None,
    "instance-hypervisor": None,
    "instance-family": None,
    "instance-generation": None,
    "instance-local-nvme": None,
    "instance-size": None,
    "instance-cpu": None,
    "instance-cpu-manufacturer": None,
    "instance-memory": None,
    "instance-ebs-bandwidth": None,
    "instance-network-bandwidth": None,
    "instance-gpu-name": None,
    "instance-gpu-manufacturer": None,
    "instance-gpu-count": None,
    "instance-gpu-memory": None,
    "instance-accelerator-name": None,
    "instance-accelerator-manufacturer": None,
    "instance-accelerator-count": None,
    "instance-cpu-sustained-clock-speed-mhz": (1, 3),
    "capacity-reservation-id": (1, 3),
    "ec2nodeclass": (1, 3),
    "capacity-reservation-type": (1, 6),
    "instance-capability-flex": (1, 7),
    "instance-tenancy": (1, 9),
    "capacity-reservation-interruptible": (1, 10),
    "placement-group-id": (1, 11),
    "placement-group-partition": (1, 11),
}
# Well-known labels outside karpenter.k8s.aws; the beta/failure-domain keys are aliases Karpenter normalises.
OTHER_WELL_KNOWN = frozenset(
    {
        "karpenter.sh/nodepool",
        "karpenter.sh/capacity-type",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "topology.k8s.aws/zone-id",
        "node.kubernetes.io/instance-type",
        "node.kubernetes.io/windows-build",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/arch",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/instance-type",
    }
)
# v1.0-v1.8 CRDs: kubernetes.io keys outside node.kubernetes.io / node-restriction.kubernetes.io
# had to be one of these (the template-labels list omits node.kubernetes.io/instance-type, which the
# node.kubernetes.io exemption admits anyway).
_LEGACY_KUBERNETES_IO = frozenset(
    {
        "beta.kubernetes.io/instance-type",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/arch",
        "failure-domain.beta.kubernetes.io/zone",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "node.kubernetes.io/windows-build",
    }
)
_KUBERNETES_IO_UNTIL: Version = (1, 9)
_KARPENTER_SH_ALLOWED = ("karpenter.sh/capacity-type", "karpenter.sh/nodepool")
_RESTRICTED_LABELS = ("karpenter.sh/nodepool", "kubernetes.io/hostname")
# Keys people carry over from docs or old releases, with what to do instead.
_NOT_LABELS = {
    "karpenter.k8s.aws/instance-pods": "Karpenter no longer defines instance-pods (the docs table is stale); "
    "cap pods with the EC2NodeClass kubelet.maxPods or select on instance-cpu/instance-memory",
}


@cache
def _aws_allowed(version: Version) -> frozenset[str]:
    return frozenset(
        f"{AWS_GROUP}/{name}" for name, since in AWS_LABELS.items() if since is None or version >= since
    )


@cache
def _well_known(version: Version) -> tuple[str, ...]:
    """Well-known keys of ``version``, stable keys before the deprecated aliases."""
    return tuple(sorted(_aws_allowed(version) | OTHER_WELL_KNOWN, key=lambda k: ("beta." in k, k)))


def _domain(key: str) -> str:
    return key.split("/", 1)[0]  # CEL: key.find("^([^/]+)"), the whole key when it has no "/"


def domain_messages(key: str, version: Version) -> Iterator[str]:
    """Messages of the CEL label-domain rules ``key`` breaks (note the bare endsWith, as upstream)."""
    domain = _domain(key)
    if key not in _KARPENTER_SH_ALLOWED and domain.endswith("karpenter.sh"):
        yield 'label domain "karpenter.sh" is restricted'
    if key not in _aws_allowed(version) and domain.endswith(AWS_GROUP):
        yield f'label domain "{AWS_GROUP}" is restricted'
    if version < _KUBERNETES_IO_UNTIL:
        if (
            key not in _LEGACY_KUBERNETES_IO
            and domain.endswith("kubernetes.io")
            and not domain.endswith(("node.kubernetes.io", "node-restriction.kubernetes.io"))
        ):
            yield 'label domain "kubernetes.io" is restricted'
        if domain.endswith("k8s.io") and not domain.endswith("kops.k8s.io"):
            yield 'label domain "k8s.io" is restricted'


def key_suggestion(key: str, version: Version) -> str | None:
    """A did-you-mean for a label key Karpenter does not know, if one is close enough."""
    if key in _NOT_LABELS:
        return _NOT_LABELS[key]
    domain, _, name = key.rpartition("/")
    known = _well_known(version)
    same_name = [k for k in known if k.rpartition("/")[2] == name and k != key]
    if same_name:
        return f"did you mean {same_name[0]!r}?"
    in_domain = {k.rpartition("/")[2]: k for k in known if k.rpartition("/")[0] == domain}
    close = closest(name, in_domain, cutoff=0.8)
    return f"did you mean {in_domain[close]!r}?" if close else None


def _requirements(obj) -> Iterator[tuple[int, object]]:
    template = obj.spec.template
    spec = template.spec if template else None
    for index, requirement in enumerate((spec.requirements if spec else None) or ()):
        if requirement is not None:
            yield index, requirement


def _requirement_path(index: int) -> str:
    return f"spec.template.spec.requirements[{index}]"


def _requirement_keys(obj) -> Iterator[tuple[str, str]]:
    for index, requirement in _requirements(obj):
        if requirement.key is not None:
            yield f"{_requirement_path(index)}.key", requirement.key


def _label_keys(obj) -> Iterator[tuple[str, str]]:
    """Requirement keys and template labels: the CRD restricts both the same way."""
    yield from _requirement_keys(obj)
    metadata = obj.spec.template.metadata if obj.spec.template else None
    for key in (metadata.labels if metadata else None) or {}:
        yield f"spec.template.metadata.labels[{key}]", key


@rule(
    "cel/label-domain-restricted",
    ERROR,
    KINDS,
    "CEL: requirement keys and template labels may not use Karpenter's domains beyond the well-known labels "
    "(nor, before 1.9, the kubernetes.io and k8s.io domains beyond an allow-list).",
    "Use a well-known Karpenter label or a label in a domain of your own.",
    good=(
        {"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}]}}}},
        {"spec": {"template": {"metadata": {"labels": {"example.com/team": "a"}}}}},
    ),
    bad=(
        {"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-pods", "operator": "Exists"}]}}}},
        {"spec": {"template": {"metadata": {"labels": {"karpenter.sh/registered": "true"}}}}},
        {"karpenterVersion": "1.8", "spec": {"template": {"metadata": {"labels": {"kubernetes.io/team": "a"}}}}},
    ),
)
def label_domain_restricted(obj, ctx):
    for path, key in _label_keys(obj):
        for message in domain_messages(key, ctx.version):
            yield Violation(path, message, key_suggestion(key, ctx.version))


@rule(
    "cel/label-restricted",
    ERROR,
    KINDS,
    "CEL: karpenter.sh/nodepool and kubernetes.io/hostname are set per node and may not be required or templated.",
    "Remove the key; Karpenter sets karpenter.sh/nodepool, and the hostname is unique per node.",
    good=({"spec": {"template": {"spec": {"requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}}}},),
    bad=({"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["a"]}]}}}},),
)
def label_restricted(obj, ctx):
    for path, key in _label_keys(obj):
        if key in _RESTRICTED_LABELS:
            yield Violation(path, f'label "{key}" is restricted')


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
    known = _well_known(ctx.version)
    for path, key in _requirement_keys(obj):
        if key in known or key in _RESTRICTED_LABELS or any(True for _ in domain_messages(key, ctx.version)):
            continue
        domain = _domain(key) if "/" in key else ""
        hint = key_suggestion(key, ctx.version)
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
    for path, key in _label_keys(obj):
        instead = _NODE_GROUP_KEYS.get(key)
        if instead:
            yield Violation(path, f"{key!r} belongs to EKS managed node groups; Karpenter's nodes carry it only as "
                                  "a copied label, never as a fact of the instance", f"use {instead}")


# The deprecated beta labels and their stable keys (Karpenter's NormalizedLabels): requirement keys are
# normalised before they are judged, template labels are not, and 1.0-1.8 count them in the restricted
# kubernetes.io domain though their CRDs admit them.
NORMALIZED_LABELS = {
    "beta.kubernetes.io/arch": "kubernetes.io/arch",
    "beta.kubernetes.io/os": "kubernetes.io/os",
    "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
}
_KNATIVE_UNTIL: Version = (1, 1)  # 1.0 built its errors with knative's FieldError, 1.1 with fmt and multierr
_CRD_PATTERN = re.compile(LABEL_KEY)  # requirement and taint keys (and taint values) must match it to be applied


def _knative(message: str, path: str, details: str = "") -> str:
    """One knative FieldError as Karpenter 1.0 printed it; its details line is joined with a space here."""
    return f"{message}: {path}" + (f" {details}" if details else "")


def runtime_requirement_message(key: str, values, path: str, version: Version) -> str | None:
    """Karpenter's error for a requirement whose key is not a qualified name or whose values are no label values.

    ``ValidateRequirement`` (on a key it first normalises from the deprecated beta labels) joins the key's
    errors, then each value's, with multierr's '; '; the NodePool and (from 1.7) the NodeOverlay wrap them
    the same way. A key the CRD's pattern refuses never reaches Karpenter; the values' pattern sits on the
    array in the CRD, so the API server applies none and Karpenter is the one that refuses them.
    """
    key = NORMALIZED_LABELS.get(key, key)
    judged = _CRD_PATTERN.match(key) and not has_placeholder(key)
    errors = [f"key {key} is not a qualified name, {e}" for e in qualified_name_errors(key, version)] if judged else []
    errors += [
        f"invalid value {value} for key {key}, {e}"
        for value in values
        if isinstance(value, str) and not has_placeholder(value)
        for e in label_value_errors(value, version)
    ]
    if not errors:
        return None
    if version < _KNATIVE_UNTIL:
        return _knative(f"invalid value: {'; '.join(errors)}", path)
    return f"invalid value: {'; '.join(errors)} in requirements, restricted"


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
    version = ctx.version
    metadata = obj.spec.template.metadata if obj.spec.template else None
    for key in (metadata.labels if metadata else None) or {}:
        for error in [] if has_placeholder(key) else qualified_name_errors(key, version):
            if version < _KNATIVE_UNTIL:
                message = _knative(f"invalid key name {go_quote(key)}", "spec.template.metadata.labels", error)
            else:
                message = f"invalid key name {go_quote(key)} in labels, {go_quote(error)}"
            yield Violation(f"spec.template.metadata.labels[{key}]", message)
    for path, field, _, taint in _taints(obj):
        for part, value in (("key", taint.key), ("value", taint.value)):
            if not value or not _CRD_PATTERN.match(value):
                continue
            for error in qualified_name_errors(value, version):
                if version < _KNATIVE_UNTIL:
                    message = _knative(f"invalid value: {error}", path)
                else:
                    message = f"invalid value: {error} in {field}"
                yield Violation(f"{path}.{part}", message)
    for index, requirement in _requirements(obj):
        if requirement.key is not None:
            message = runtime_requirement_message(requirement.key, _values(requirement), _requirement_path(index), version)
            if message:
                yield Violation(_requirement_path(index), message)


_ELIDED = "[…]"  # Karpenter's whole well-known list and its restricted domains, which depend on the provider build


def _restricted_message(key: str, version: Version) -> str:
    """IsRestrictedLabel's error as the NodePool's label validation wraps it, per release (lists elided)."""
    if version < _KNATIVE_UNTIL:
        detail = f"label {key} is restricted; specify a well known label: {_ELIDED}, or a custom label that does not use a restricted domain: {_ELIDED}"
        return _knative(f"invalid key name {go_quote(key)}", "spec.template.metadata.labels", detail)
    if version < (1, 5):
        detail = f"label {key} is restricted; specify a well known label: {_ELIDED}, or a custom label that does not use a restricted domain: {_ELIDED}"
    else:  # 1.5 wrapped it with operatorpkg's serrors, which prints its values after the message
        detail = ("label is restricted; specify a well known label or a custom label that does not use a restricted domain "
                  f"(label={key}, restricted-labels={_ELIDED}, well-known-labels={_ELIDED})")
    return f"invalid key name {go_quote(key)} in labels, {detail}"


@rule(
    "nodepool/beta-template-label",
    ERROR,
    KINDS,
    "A template label with a deprecated beta key (beta.kubernetes.io/arch, failure-domain.beta.kubernetes.io/zone, ...): "
    "the 1.0-1.8 CRDs admit it, but Karpenter's runtime validation counts it in the restricted kubernetes.io domain, "
    "sets ValidationSucceeded=False (NodePoolValidationFailed) and the pool launches nothing. From 1.9 the domain is "
    "no longer restricted. Karpenter's message lists every well-known label; the lists are shown as […].",
    "Use the stable key (the hint names it); Karpenter sets the well-known labels on its nodes itself.",
    until=(1, 9),
    good=({"karpenterVersion": "1.8", "spec": {"template": {"metadata": {"labels": {"kubernetes.io/arch": "amd64"}}}}},),
    bad=({"karpenterVersion": "1.8", "spec": {"template": {"metadata": {"labels": {"beta.kubernetes.io/arch": "amd64"}}}}},),
)
def beta_template_label(obj, ctx):
    metadata = obj.spec.template.metadata if obj.spec.template else None
    for key in (metadata.labels if metadata else None) or {}:
        stable = NORMALIZED_LABELS.get(key)
        if stable:
            yield Violation(f"spec.template.metadata.labels[{key}]", _restricted_message(key, ctx.version), f"use {stable}")


# Labels whose values Karpenter knows all of; a requirement allowing none of them matches no capacity.
_KNOWN_VALUES = {
    "karpenter.sh/capacity-type": (("on-demand", "spot", "reserved"), None),
    "karpenter.k8s.aws/instance-tenancy": (("default", "dedicated"), (1, 9)),
}


@rule(
    "nodepool/requirement-unknown-values",
    ERROR,
    KINDS,
    "An In requirement on karpenter.sh/capacity-type (or instance-tenancy) that allows none of the values "
    "Karpenter knows (on-demand, spot, reserved; default, dedicated): Karpenter rejects the NodePool.",
    "Use the values Karpenter knows, in lower case: on-demand, spot or reserved.",
    origin="karpenter",
    good=({"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]}}}},),
    bad=({"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["SPOT"]}]}}}},),
)
def requirement_unknown_values(obj, ctx):
    for index, requirement in _requirements(obj):
        known = _KNOWN_VALUES.get(requirement.key)
        if known is None or requirement.operator != "In" or (known[1] and ctx.version < known[1]):
            continue
        values = _values(requirement)
        if values and not set(values) & set(known[0]):
            yield Violation(
                f"{_requirement_path(index)}.values",
                f"none of {list(values)} is a value of {requirement.key} (expected one of {', '.join(known[0])})",
                did_you_mean(str(values[0]).lower(), known[0]),
            )


# --- requirements -------------------------------------------------------------------------


def _values(requirement) -> tuple:
    return requirement.values or ()


@rule(
    "cel/requirement-in-values",
    ERROR,
    KINDS,
    "CEL: an 'In' requirement lists at least one value.",
    "Add values, or use Exists to accept any value.",
    good=({"spec": {"template": {"spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]}}}},),
    bad=({"spec": {"template": {"spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": []}]}}}},),
)
def requirement_in_values(obj, ctx):
    for index, requirement in _requirements(obj):
        if requirement.operator == "In" and not _values(requirement):
            yield Violation(_requirement_path(index), "requirements with operator 'In' must have a value defined")


_INTEGER = re.compile(r"^[+-]?[0-9]+\Z")  # CEL int(string): base 10, optional sign, int64


def is_non_negative_int64(value) -> bool:
    return isinstance(value, str) and bool(_INTEGER.match(value)) and 0 <= int(value) < 2**63


@cache
def numeric_operators(version: Version) -> tuple[tuple[str, ...], str]:
    if version >= (1, 9):
        return ("Gt", "Lt", "Gte", "Lte"), "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
    return ("Gt", "Lt"), "requirements operator 'Gt' or 'Lt' must have a single positive integer value"


@rule(
    "cel/requirement-numeric-operator",
    ERROR,
    KINDS,
    "CEL: Gt/Lt (and Gte/Lte since 1.9) compare with exactly one non-negative integer.",
    "Give exactly one integer value, e.g. values: ['4'].",
    good=({"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4"]}]}}}},),
    bad=({"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4", "8"]}]}}}},),
)
def requirement_numeric_operator(obj, ctx):
    operators, message = numeric_operators(ctx.version)
    for index, requirement in _requirements(obj):
        if requirement.operator in operators:
            values = _values(requirement)
            if None in values:
                continue  # a value that is not a string (values: [5]): schema/type names it, CEL never runs on it
            if len(values) != 1 or not is_non_negative_int64(values[0]):
                yield Violation(_requirement_path(index), message)


@rule(
    "cel/requirement-min-values",
    ERROR,
    KINDS,
    "CEL: an 'In' requirement with minValues lists at least that many values.",
    "List more values or lower minValues.",
    good=({"spec": {"template": {"spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m6i.large"], "minValues": 2}]}}}},),
    bad=({"spec": {"template": {"spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"], "minValues": 2}]}}}},),
)
def requirement_min_values(obj, ctx):
    for index, requirement in _requirements(obj):
        wanted = requirement.min_values
        if requirement.operator == "In" and wanted is not None and len(_values(requirement)) < wanted:
            yield Violation(_requirement_path(index), "requirements with 'minValues' must have at least that many values specified in the 'values' field")


# --- disruption, static capacity ------------------------------------------------------------


@rule(
    "cel/budget-schedule-duration",
    ERROR,
    KINDS,
    "CEL: a disruption budget sets schedule and duration together, or neither.",
    "Add the missing schedule or duration, or drop both for an always-active budget.",
    good=({"spec": {"disruption": {"budgets": [{"nodes": "10%", "schedule": "@daily", "duration": "10m"}]}}},),
    bad=({"spec": {"disruption": {"budgets": [{"nodes": "0", "schedule": "@daily"}]}}},),
)
def budget_schedule_duration(obj, ctx):
    disruption = obj.spec.disruption
    for index, budget in enumerate((disruption.budgets if disruption else None) or ()):
        if budget is not None and (budget.schedule is None) != (budget.duration is None):
            yield Violation(f"spec.disruption.budgets[{index}]", "'schedule' must be set with 'duration'")


@rule(
    "cel/static-nodepool-limits",
    ERROR,
    KINDS,
    "CEL: a static NodePool (replicas set) supports only limits.nodes.",
    "Keep only limits.nodes, or drop replicas.",
    since=(1, 8),
    good=({"spec": {"replicas": 3, "limits": {"cpu": None, "memory": None, "nodes": "5"}}},),
    bad=({"spec": {"replicas": 3}},),
)
def static_nodepool_limits(obj, ctx):
    limits = obj.spec.limits
    if obj.spec.replicas is not None and limits and set(limits) != {"nodes"}:
        yield Violation("spec.limits", "only 'limits.nodes' is supported on static NodePools")


@rule(
    "cel/static-nodepool-weight",
    ERROR,
    KINDS,
    "CEL: a static NodePool (replicas set) has no weight.",
    "Drop weight, or drop replicas.",
    since=(1, 8),
    good=({"spec": {"weight": 10}},),
    bad=({"spec": {"replicas": 3, "limits": None, "weight": 10}},),
)
def static_nodepool_weight(obj, ctx):
    if obj.spec.replicas is not None and obj.spec.weight is not None:
        yield Violation("spec.weight", "'weight' is not supported on static NodePools")


# --- nodeClassRef -------------------------------------------------------------------------


def _node_class_ref(obj):
    template = obj.spec.template
    return template.spec.node_class_ref if template and template.spec else None


_REF = "spec.template.spec.nodeClassRef"


@rule(
    "cel/node-class-ref-not-empty",
    ERROR,
    KINDS,
    "CEL: nodeClassRef group, kind and name may not be empty strings.",
    "Set group: karpenter.k8s.aws, kind: EC2NodeClass and the class's name.",
    since=(1, 1),
    good=({"spec": {"template": {"spec": {"nodeClassRef": {"name": "default"}}}}},),
    bad=({"spec": {"template": {"spec": {"nodeClassRef": {"name": ""}}}}},),
)
def node_class_ref_not_empty(obj, ctx):
    ref = _node_class_ref(obj)
    if ref is None:
        return
    for field, value in (("group", ref.group), ("kind", ref.kind), ("name", ref.name)):
        if value == "":
            yield Violation(f"{_REF}.{field}", f"{field} may not be empty")


@rule(
    "nodepool/node-class-ref-kind",
    ERROR,
    KINDS,
    "nodeClassRef mixes up Karpenter's AWS provider: its group karpenter.k8s.aws serves only kind EC2NodeClass "
    "(and takes no version), and EC2NodeClass lives in no other group; the NodePool never becomes ready.",
    "Set group: karpenter.k8s.aws and kind: EC2NodeClass.",
    origin="ours",
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
    ref = _node_class_ref(obj)
    if ref is None or not ref.group:
        return
    aws = ref.group == AWS_GROUP or ref.group.startswith(AWS_GROUP + "/")
    if ref.group != AWS_GROUP and (aws or ref.kind == EC2NODECLASS):
        hint = "drop the version: group takes no '/v1'" if aws else None
        yield Violation(f"{_REF}.group", f"nodeClassRef.group is {ref.group!r}; the AWS provider serves {AWS_GROUP!r}", hint)
    if aws and ref.kind and ref.kind != EC2NODECLASS:
        yield Violation(f"{_REF}.kind", f"nodeClassRef.kind is {ref.kind!r}; the AWS provider serves {EC2NODECLASS!r}")


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
    ref = _node_class_ref(obj)
    if ref is None or not ref.group or not ref.kind or ref.is_ec2_node_class or AWS_GROUP in ref.group or ref.kind == EC2NODECLASS:
        return  # mix-ups of the AWS provider's own names are node-class-ref-kind's
    what = "EKS Auto Mode's NodeClass" if ref.is_auto_mode else f"a {ref.kind} of {ref.group}"
    yield Violation(_REF, f"the NodePool uses {what}: only the NodePool rules were applied")


def _unresolved(obj, ctx) -> tuple[str, frozenset[str]] | None:
    """The class name a NodePool's reference does not find among the objects it can see, with those names."""
    ref = _node_class_ref(obj)
    if ref is None or not ref.name or not ref.is_ec2_node_class:
        return None  # empty names and foreign kinds are reported by their own rules
    names = ctx.inputs.node_class_names(obj.source.scope) | (ctx.inputs.context_node_classes or frozenset())
    return None if ref.name in names else (ref.name, names)


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
    unresolved = _unresolved(obj, ctx)
    if unresolved is None or not (obj.source.scope or ctx.inputs.context_node_classes is not None):
        return
    name, names = unresolved
    where = f"the stack {obj.source.file}" if obj.source.scope else "the inputs or their --context"
    yield Violation(f"{_REF}.name", f"no EC2NodeClass named {name!r} in {where}", did_you_mean(name, names))


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
    unresolved = _unresolved(obj, ctx)
    if unresolved is None or obj.source.scope or ctx.inputs.context_node_classes is not None:
        return
    name, names = unresolved
    yield Violation(f"{_REF}.name", f"no EC2NodeClass named {name!r} among the files given", did_you_mean(name, names))


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
            if ctx.version < _KNATIVE_UNTIL:  # 1.0 named the index under 'taints' for startup taints too
                message = _knative(message, f"spec.template.spec.taints[{index}]")
            yield Violation(path, message)
        seen.add(pair)
