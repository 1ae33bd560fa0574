"""Karpenter's label keys by release: the well-known labels, the restricted domains, and what its CEL rules
and its runtime validation say about a key. It declares no rule: the NodePool and NodeOverlay rules read it
(``cel/`` in :mod:`.cel.nodepool` and :mod:`.cel.nodeoverlay`, ours in :mod:`.nodepool` and :mod:`.nodeoverlay`).

The ``karpenter.k8s.aws`` allow-list grows by release; between verified CRDs a label joins at the
release that introduced it (``ec2nodeclass`` is first seen in v1.4.4 and assumed from 1.3).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache, lru_cache

from karpenter_gitops.core.model import AWS_GROUP, LABEL_KEY
from karpenter_gitops.core.name_validation import go_quote, has_placeholder, label_value_errors, qualified_name_errors
from karpenter_gitops.core.text import closest
from karpenter_gitops.core.versions import Release

# karpenter.k8s.aws labels Karpenter registers as well-known (and the NodePool CRD allows), by release.
AWS_LABELS: dict[str, Release | None] = {
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
    "instance-cpu-sustained-clock-speed-mhz": Release((1, 3)),
    "capacity-reservation-id": Release((1, 3)),
    "ec2nodeclass": Release((1, 3)),
    "capacity-reservation-type": Release((1, 6)),
    "instance-capability-flex": Release((1, 7)),
    "instance-tenancy": Release((1, 9)),
    "capacity-reservation-interruptible": Release((1, 10)),
    "placement-group-id": Release((1, 11)),
    "placement-group-partition": Release((1, 11)),
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
_KUBERNETES_IO_UNTIL = Release((1, 9))
_KARPENTER_SH_ALLOWED = ("karpenter.sh/capacity-type", "karpenter.sh/nodepool")
RESTRICTED_LABELS = ("karpenter.sh/nodepool", "kubernetes.io/hostname")
# Keys people carry over from docs or old releases, with what to do instead.
_NOT_LABELS = {
    "karpenter.k8s.aws/instance-pods": "Karpenter no longer defines instance-pods (the docs table is stale); "
    "cap pods with the EC2NodeClass kubelet.maxPods or select on instance-cpu/instance-memory",
}


@cache
def _aws_allowed(release: Release) -> frozenset[str]:
    return frozenset(f"{AWS_GROUP}/{name}" for name, since in AWS_LABELS.items() if since is None or release >= since)


@cache
def well_known(release: Release) -> tuple[str, ...]:
    """Well-known keys of ``version``, stable keys before the deprecated aliases."""
    return tuple(sorted(_aws_allowed(release) | OTHER_WELL_KNOWN, key=lambda k: ("beta." in k, k)))


def key_domain(key: str) -> str:
    return key.split("/", 1)[0]  # CEL: key.find("^([^/]+)"), the whole key when it has no "/"


def domain_messages(key: str, release: Release) -> Iterator[str]:
    """Messages of the CEL label-domain rules ``key`` breaks (note the bare endsWith, as upstream)."""
    domain = key_domain(key)
    if key not in _KARPENTER_SH_ALLOWED and domain.endswith("karpenter.sh"):
        yield 'label domain "karpenter.sh" is restricted'
    if key not in _aws_allowed(release) and domain.endswith(AWS_GROUP):
        yield f'label domain "{AWS_GROUP}" is restricted'
    if release < _KUBERNETES_IO_UNTIL:
        if (
            key not in _LEGACY_KUBERNETES_IO
            and domain.endswith("kubernetes.io")
            and not domain.endswith(("node.kubernetes.io", "node-restriction.kubernetes.io"))
        ):
            yield 'label domain "kubernetes.io" is restricted'
        if domain.endswith("k8s.io") and not domain.endswith("kops.k8s.io"):
            yield 'label domain "k8s.io" is restricted'


def key_suggestion(key: str, release: Release) -> str | None:
    """A did-you-mean for a label key Karpenter does not know, if one is close enough."""
    if key in _NOT_LABELS:
        return _NOT_LABELS[key]
    domain, _, name = key.rpartition("/")
    known = well_known(release)
    same_name = [k for k in known if k.rpartition("/")[2] == name and k != key]
    if same_name:
        return f"did you mean {same_name[0]!r}?"
    in_domain = {k.rpartition("/")[2]: k for k in known if k.rpartition("/")[0] == domain}
    close = closest(name, in_domain, cutoff=0.8)
    return f"did you mean {in_domain[close]!r}?" if close else None


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
KNATIVE_UNTIL = Release((1, 1))  # 1.0 built its errors with knative's FieldError, 1.1 with fmt and multierr
CRD_PATTERN = re.compile(LABEL_KEY)  # requirement and taint keys (and taint values) must match it to be applied


def knative(message: str, path: str, details: str = "") -> str:
    """One knative FieldError as Karpenter 1.0 printed it; its details line is joined with a space here."""
    return f"{message}: {path}" + (f" {details}" if details else "")


@lru_cache(maxsize=4096)  # the same requirements recur on every NodePool of a repository
def runtime_requirement_message(key: str, values: tuple[str, ...], path: str, release: Release) -> str | None:
    """Karpenter's error for a requirement whose key is not a qualified name or whose values are no label values.

    ``ValidateRequirement`` (on a key it first normalises from the deprecated beta labels) joins the key's
    errors, then each value's, with multierr's '; '; the NodePool and (from 1.7) the NodeOverlay wrap them
    the same way. A key the CRD's pattern refuses never reaches Karpenter; the values' pattern sits on the
    array in the CRD, so the API server applies none and Karpenter is the one that refuses them.
    """
    key = NORMALIZED_LABELS.get(key, key)
    judged = CRD_PATTERN.match(key) and not has_placeholder(key)
    errors = [f"key {key} is not a qualified name, {e}" for e in qualified_name_errors(key, release)] if judged else []
    errors += [
        f"invalid value {value} for key {key}, {e}"
        for value in values
        if isinstance(value, str) and not has_placeholder(value)
        for e in label_value_errors(value, release)
    ]
    if not errors:
        return None
    if release < KNATIVE_UNTIL:
        return knative(f"invalid value: {'; '.join(errors)}", path)
    return f"invalid value: {'; '.join(errors)} in requirements, restricted"


_ELIDED = "[…]"  # Karpenter's whole well-known list and its restricted domains, which depend on the provider build


def restricted_message(key: str, release: Release) -> str:
    """IsRestrictedLabel's error as the NodePool's label validation wraps it, per release (lists elided)."""
    if release < KNATIVE_UNTIL:
        detail = f"label {key} is restricted; specify a well known label: {_ELIDED}, or a custom label that does not use a restricted domain: {_ELIDED}"
        return knative(f"invalid key name {go_quote(key)}", "spec.template.metadata.labels", detail)
    if release < (1, 5):
        detail = f"label {key} is restricted; specify a well known label: {_ELIDED}, or a custom label that does not use a restricted domain: {_ELIDED}"
    else:  # 1.5 wrapped it with operatorpkg's serrors, which prints its values after the message
        detail = (
            "label is restricted; specify a well known label or a custom label that does not use a restricted domain "
            f"(label={key}, restricted-labels={_ELIDED}, well-known-labels={_ELIDED})"
        )
    return f"invalid key name {go_quote(key)} in labels, {detail}"
