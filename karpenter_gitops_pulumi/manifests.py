"""The specs the components apply: the user's spec plus Karpenter's server defaults made explicit.

Karpenter's CRDs default some fields on the API server (EC2NodeClass ``metadataOptions``, NodePool
``disruption``, each budget's ``nodes`` and ``expireAfter``). Left unset, the live object differs
from what Pulumi sent and every refresh shows a diff, so the components write the defaults
themselves. Pure functions of the user's data: the reconciliation validates exactly what gets applied.
Values inside a spec may be Pulumi Outputs (a secret, a ``StackReference`` value); they are kept as they
are, never copied (an Output refuses to be deep-copied).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.model import EC2NODECLASS, EC2NODECLASS_API

# CRD defaults, Karpenter v1: ``pkg/apis/crds/`` of github.com/aws/karpenter-provider-aws (EC2NodeClass)
# and of sigs.k8s.io/karpenter (NodePool).
METADATA_OPTIONS_DEFAULTS = {
    "httpEndpoint": "enabled",
    "httpProtocolIPv6": "disabled",
    "httpPutResponseHopLimit": 1,
    "httpTokens": "required",
}
BUDGET_NODES_DEFAULT = "10%"
DISRUPTION_DEFAULTS = {
    "consolidationPolicy": "WhenEmptyOrUnderutilized",
    "consolidateAfter": "0s",
    "budgets": [{"nodes": BUDGET_NODES_DEFAULT}],
}
EXPIRE_AFTER_DEFAULT = "720h"
NODE_CLASS_GROUP = EC2NODECLASS_API.split("/")[0]


def copied(value: Any) -> Any:
    """``value`` with its mappings and lists copied, so defaults written into the copy never reach the user's
    data; any other value (a scalar, an Output) is shared."""
    if isinstance(value, Mapping):
        return {key: copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copied(item) for item in value]
    return value


def node_class_spec(spec: Mapping[str, Any], instance_profile: Any = None) -> dict[str, Any]:
    """The EC2NodeClass spec to apply; ``instance_profile`` (a profile *name*) replaces ``role``."""
    result = copied(spec)
    given = spec.get("metadataOptions")
    if given is None or isinstance(given, Mapping):  # anything else stays as written: the check refuses it
        result["metadataOptions"] = {**METADATA_OPTIONS_DEFAULTS, **(given or {})}
    if instance_profile is not None:
        result.pop("role", None)
        result["instanceProfile"] = instance_profile
    return result


def aliases(spec: Any) -> list[str]:
    """The aliases ``spec`` selects its AMIs through (none while its terms are not known yet)."""
    terms = spec.get("amiSelectorTerms") if isinstance(spec, Mapping) else None
    if not isinstance(terms, Sequence) or isinstance(terms, str):
        return []
    return [t["alias"] for t in terms if isinstance(t, Mapping) and isinstance(t.get("alias"), str) and t["alias"]]


def pins_by_version(spec: Mapping[str, Any], where: str) -> bool:
    """Whether ``spec`` selects through an alias, which a version already pins.

    Alias classes must keep the alias: Karpenter gives ``id``-selected images only an arch
    requirement, so replacing an alias by its images' ids would make the GPU, neuron and standard
    images of one architecture interchangeable (the multi-AMI mapping bug). A versioned alias is a
    pin already; ``karpenter-gitops bump`` moves it by review. ``@latest`` cannot be pinned here:
    an InputError at ``where``.
    """
    found = aliases(spec)
    latest = [alias for alias in found if alias.endswith("@latest") and not alias.startswith("windows")]
    if latest:
        raise InputError(
            f"pin_amis cannot pin alias {latest[0]!r}: id terms would lose the per-variant AMI mapping",
            where,
            hint="pin the alias to a version (karpenter-gitops bump --pin-latest), or leave pin_amis off",
        )
    return bool(found)


def pinned(spec: Mapping[str, Any], ami_ids: Sequence[str]) -> dict[str, Any]:
    """A custom-AMI ``spec`` with its selector replaced by ``id`` terms for the reconciled images.

    Karpenter then launches exactly these images; a newer build matching the selector reaches the
    cluster only through a reviewed ``pulumi up``. Alias classes are pinned by their version instead
    (see :func:`pins_by_version`).
    """
    if not ami_ids:
        raise ValueError("refusing to pin an empty AMI list")
    result = copied(spec)
    result["amiSelectorTerms"] = [{"id": ami_id} for ami_id in dict.fromkeys(ami_ids)]
    return result


def node_pool_spec(spec: Mapping[str, Any], node_class_name: Any) -> dict[str, Any]:
    """The NodePool spec to apply: defaults made explicit, ``nodeClassRef`` pointing at the class."""
    result = copied(spec)
    template = result.setdefault("template", {})
    template_spec = template.setdefault("spec", {}) if isinstance(template, dict) else None
    if isinstance(template_spec, dict):  # anything else stays as written: the check refuses it
        template_spec["nodeClassRef"] = {"group": NODE_CLASS_GROUP, "kind": EC2NODECLASS, "name": node_class_name}
        template_spec.setdefault("expireAfter", EXPIRE_AFTER_DEFAULT)
    # The CRD defaults the whole block when it is absent; a given block gets its fields' own defaults,
    # but not consolidateAfter, which has none: leaving it out stays an error the check reports.
    given = result.get("disruption")
    if given is not None and not isinstance(given, Mapping):
        return result
    defaults = DISRUPTION_DEFAULTS if given is None else {k: v for k, v in DISRUPTION_DEFAULTS.items() if k != "consolidateAfter"}
    disruption = {**copied(defaults), **(given or {})}
    if isinstance(disruption.get("budgets"), list):  # each item's ``nodes`` has a CRD default of its own
        disruption["budgets"] = [
            {"nodes": BUDGET_NODES_DEFAULT, **budget} if isinstance(budget, Mapping) else budget
            for budget in disruption["budgets"]
        ]
    result["disruption"] = disruption
    return result
