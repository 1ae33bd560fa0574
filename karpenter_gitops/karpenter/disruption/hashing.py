"""What Karpenter's static drift hashes see: the NodePool template (``NodePool.Hash()`` of
sigs.k8s.io/karpenter) and the EC2NodeClass (``EC2NodeClass.Hash()`` of the AWS provider), per release.

Both hash a Go struct with hashstructure v2 (``SlicesAsSets``, ``IgnoreZeroValue``, ``ZeroNil``); a NodeClaim
drifts statically when the hash it was stamped with differs from its owner's while the hash versions
agree. Two manifests drift each other exactly when their *views* here differ, a view being what the
hash walks, written out:

* a struct field is skipped when it is Go's zero value: an absent pointer, slice or map, and an empty
  string, ``false`` or ``0`` only where the Go field is not a pointer (``role``, a taint's ``value``); a
  pointer to ``false``/``0``/``""`` and an empty list or map are hashed;
* lists are sets, hashed by XOR: an element written twice cancels itself out;
* map values are hashed whatever they are (no zero is skipped inside a map);
* a volume size is hashed as its canonical text (``100G`` = ``100000M``, but not ``100Gi`` or ``1e11``);
* durations are their length (``1h`` and ``60m`` hash the same); ``expireAfter: Never`` is zero;
* what the API server defaults is hashed as defaulted (``expireAfter`` 720h, ``metadataOptions``).

The EC2NodeClass's selector terms, ``amiFamily`` (the *resolved* family is hashed instead) and
``ipPrefixCount`` are never hashed; ``kubelet`` was not in 1.0, is a struct from 1.1 and its JSON text
from 1.15 (order and zero values count there). tests/real/test_drift_conformance.py compares these views
with the hashes of Karpenter's own code.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from karpenter_gitops.core import versions
from karpenter_gitops.core.model import EC2NodeClass, NodePool
from karpenter_gitops.karpenter.amifamily import family_of
from karpenter_gitops.karpenter.scheduling import resources

# (first release, version) of each hash; a NodeClaim stamped with another version is not compared.
NODEPOOL_HASH_VERSIONS = ((versions.Release((1, 0)), "v3"),)
EC2NODECLASS_HASH_VERSIONS = (
    (versions.Release((1, 0)), "v3"),
    (versions.Release((1, 1)), "v4"),  # kubelet hashed
    (versions.Release((1, 12)), "v5"),  # the cluster's CA bundle hashed too (the same on both sides)
    (versions.Release((1, 15)), "v6"),  # kubelet hashed as its JSON text
)
UNHASHED_NODECLASS_FIELDS = frozenset(
    {
        "subnetSelectorTerms",
        "securityGroupSelectorTerms",
        "capacityReservationSelectorTerms",
        "amiSelectorTerms",
        "amiFamily",
        "ipPrefixCount",
    }
)
KUBELET_HASHED_SINCE = versions.Release((1, 1))
KUBELET_AS_TEXT_SINCE = versions.Release((1, 15))
EXPIRE_AFTER_DEFAULT = "720h"
METADATA_OPTIONS_DEFAULTS = {
    "httpEndpoint": "enabled",
    "httpProtocolIPv6": "disabled",
    "httpPutResponseHopLimit": 1,
    "httpTokens": "required",
}
# Fields Go declares as plain values, not pointers, in the structs the hashes walk (struct → fields):
# only there is an empty string, false or 0 skipped like an absent field.
_VALUE_FIELDS = {
    "EC2NodeClassSpec": frozenset({"role"}),
    "BlockDeviceMapping": frozenset({"rootVolume"}),
    "EnclaveOptions": frozenset({"enabled"}),
    "NetworkInterface": frozenset({"networkCardIndex", "deviceIndex", "interfaceType"}),
    "NodeClassReference": frozenset({"kind", "name", "group"}),
    "Taint": frozenset({"key", "value", "effect"}),
}
_STRUCT_OF = {  # (struct, field) → the struct a nested object is
    ("EC2NodeClassSpec", "blockDeviceMappings"): "BlockDeviceMapping",
    ("BlockDeviceMapping", "ebs"): "BlockDevice",
    ("EC2NodeClassSpec", "enclaveOptions"): "EnclaveOptions",
    ("EC2NodeClassSpec", "networkInterfaces"): "NetworkInterface",
    ("NodeClaimTemplateSpec", "nodeClassRef"): "NodeClassReference",
    ("NodeClaimTemplateSpec", "taints"): "Taint",
    ("NodeClaimTemplateSpec", "startupTaints"): "Taint",
}
_QUANTITIES = frozenset({"volumeSize"})
_DURATIONS = frozenset({"terminationGracePeriod", "expireAfter"})
_DURATION_MAPS = frozenset({"evictionSoftGracePeriod"})


def hash_version(versions_table: tuple[tuple[versions.Release, str], ...], release: versions.Release) -> str:
    """The version ``release`` stamps its hashes with."""
    return [version for since, version in versions_table if release >= since][-1]


def node_pool_view(pool: NodePool) -> dict[str, Any]:
    """``spec.template`` as ``NodePool.Hash()`` walks it (requirements and resources are ``hash:"ignore"``)."""
    template = _mapping(_mapping(pool.raw.get("spec")).get("template"))
    metadata = _mapping(template.get("metadata"))
    spec = dict(_mapping(template.get("spec")))
    spec.pop("requirements", None)
    spec.pop("resources", None)
    if "expireAfter" not in spec:
        spec["expireAfter"] = EXPIRE_AFTER_DEFAULT
    view = {
        "metadata": _struct("ObjectMeta", {k: v for k, v in metadata.items() if k in ("labels", "annotations")}),
        "spec": _struct("NodeClaimTemplateSpec", spec),
    }
    return {part: value for part, value in view.items() if value is not _ZERO}


def node_class_view(node_class: EC2NodeClass, release: versions.Release) -> dict[str, Any]:
    """What ``EC2NodeClass.Hash()`` of ``release`` walks: the spec's hashed fields and the resolved AMI family."""
    spec = {k: v for k, v in _mapping(node_class.raw.get("spec")).items() if k not in UNHASHED_NODECLASS_FIELDS}
    kubelet = spec.pop("kubelet", None)
    spec["metadataOptions"] = {**METADATA_OPTIONS_DEFAULTS, **_mapping(spec.get("metadataOptions"))}
    view: dict[str, Any] = {"spec": _struct("EC2NodeClassSpec", spec), "AMI family": family_of(node_class).name}
    if release >= KUBELET_AS_TEXT_SINCE:
        view["kubelet"] = _json_text(kubelet) if isinstance(kubelet, Mapping) and kubelet else None
    elif release >= KUBELET_HASHED_SINCE:
        view["kubelet"] = _value("KubeletConfiguration", kubelet) if isinstance(kubelet, Mapping) else None
    return view


def node_pool_template_changes(base: NodePool, head: NodePool) -> tuple[str, ...]:
    """The template fields whose change moves the NodePool's hash (``spec.template.<part>.<field>``)."""
    old, new = node_pool_view(base), node_pool_view(head)
    paths = []
    for part in ("metadata", "spec"):
        before, after = _fields(old.get(part)), _fields(new.get(part))
        paths += [
            f"spec.template.{part}.{key}" for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)
        ]
    return tuple(paths)


def node_class_hash_changes(base: EC2NodeClass, head: EC2NodeClass, release: versions.Release) -> tuple[str, ...]:
    """The hashed EC2NodeClass fields that differ (``spec.<field>``), and the resolved family when it moves."""
    old, new = node_class_view(base, release), node_class_view(head, release)
    before, after = _fields(old["spec"]), _fields(new["spec"])
    changed = [f"spec.{key}" for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)]
    if old.get("kubelet") != new.get("kubelet"):
        changed.append("spec.kubelet")
    if old["AMI family"] != new["AMI family"]:
        changed.append(f"AMI family {old['AMI family']} → {new['AMI family']}")
    return tuple(sorted(changed))


# --- the walk ------------------------------------------------------------------------------


class _Zero:
    """A value the hash skips as a struct field."""

    def __repr__(self) -> str:
        return "<zero>"


_ZERO = _Zero()


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping; loading reported it otherwise, and the hash sees nothing there."""
    return value if isinstance(value, Mapping) else {}


def _fields(view: Any) -> Mapping[str, Any]:
    return view[1] if isinstance(view, tuple) and len(view) == 2 and isinstance(view[1], dict) else {}


def _struct(name: str, fields: Mapping[str, Any]) -> Any:
    """A struct's hashed fields (zero ones left out); a struct with none is zero itself."""
    kept = {}
    for key, value in fields.items():
        walked = _field(name, str(key), value)
        if walked is not _ZERO:
            kept[str(key)] = walked
    return (name, kept) if kept else _ZERO


def _field(struct: str, key: str, value: Any) -> Any:
    if value is None:
        return _ZERO
    is_value = key in _VALUE_FIELDS.get(struct, ())
    if is_value and value in ("", 0, False) and not isinstance(value, (list, dict)):
        return _ZERO
    if key in _QUANTITIES:
        return _quantity(value)
    if key in _DURATIONS:
        length = _duration(value)
        return _ZERO if length is None and key == "expireAfter" else length
    if key in _DURATION_MAPS and isinstance(value, Mapping):
        return frozenset((str(k), _duration(v)) for k, v in value.items())
    return _value(_STRUCT_OF.get((struct, key)), value)


def _value(struct: str | None, value: Any) -> Any:
    """A value below a field: a struct, a set of its elements, a map of its entries, or the scalar."""
    if isinstance(value, Mapping):
        if struct is not None:
            walked = _struct(struct, value)
            return (struct, {}) if walked is _ZERO else walked  # a pointer to an empty struct is hashed
        return frozenset((str(k), _hashable(_value(None, v))) for k, v in value.items())
    if isinstance(value, list):
        parity = Counter(_hashable(_value(struct, item)) for item in value)
        return frozenset(item for item, count in parity.items() if count % 2)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return Decimal(str(value))
    return value


def _hashable(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], dict):
        return (value[0], frozenset((k, _hashable(v)) for k, v in value[1].items()))
    return value


def _quantity(value: Any) -> Any:
    """A quantity as its ``String()`` (the field is tagged ``hash:"string"``): Kubernetes' canonical form keeps
    the written format, so ``100G`` and ``100000M`` hash the same and ``100Gi`` another way; a binary amount
    below 1Ki or not a whole number of bytes prints in decimal."""
    try:
        amount = resources.parse(value)
    except resources.QuantityError:
        return ("unparsed", str(value))
    text = str(value).strip()
    if text.endswith("i") and amount.denominator == 1 and amount and amount % 1024 == 0:
        return ("binary", amount)
    return ("exponent" if re.search(r"\d[eE]", text) else "decimal", amount)


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def _duration(value: Any) -> int | str | None:
    """Go's ``time.ParseDuration`` in nanoseconds; ``Never`` is None; unparsed text stays itself."""
    text = str(value).strip()
    if text == "Never":
        return None
    sign, body = (-1, text[1:]) if text.startswith("-") else (1, text.lstrip("+"))
    if body == "0":
        return 0
    total, at = Decimal(0), 0
    for match in _DURATION_PART.finditer(body):
        if match.start() != at:
            return text
        try:
            total += Decimal(match.group(1)) * _UNIT[match.group(2)]
        except InvalidOperation:
            return text
        at = match.end()
    return sign * int(total) if at == len(body) and body else text


def _json_text(value: Any) -> str:
    """The kubelet map as Go's ``json.Marshal`` writes it: keys sorted, list order kept, numbers by value."""

    def plain(item: Any) -> Any:
        if isinstance(item, Mapping):
            return {str(k): plain(v) for k, v in item.items()}
        if isinstance(item, list):
            return [plain(v) for v in item]
        if isinstance(item, float) and item.is_integer():
            return int(item)
        return item

    return json.dumps(plain(value), sort_keys=True, separators=(",", ":"), default=str)
