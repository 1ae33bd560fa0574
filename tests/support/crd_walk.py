"""Walk a release's CRD schema beside our models: every field, enum value, bound, pattern and required
flag the CRD has must be what the model declares for that release, and the reverse.

So a release whose CRDs change shows up as failing tests, not as silent passes. The few places where
the model differs on purpose are listed in :data:`DELIBERATE`, with the releases and the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from karpenter_gitops.core.model import KIND_SINCE, CapacityBufferSpec, EC2NodeClassSpec, NodeOverlaySpec, NodePoolSpec
from karpenter_gitops.core.schema_fields import fields_of
from karpenter_gitops.core.versions import Release

# CRD file -> (kind, served version, our spec model); a release without the file does not serve the kind.
SPECS = {
    "karpenter.k8s.aws_ec2nodeclasses.yaml": ("EC2NodeClass", "v1", EC2NodeClassSpec),
    "karpenter.sh_nodepools.yaml": ("NodePool", "v1", NodePoolSpec),
    "karpenter.sh_nodeoverlays.yaml": ("NodeOverlay", "v1alpha1", NodeOverlaySpec),
    "autoscaling.x-k8s.io_capacitybuffers.yaml": ("CapacityBuffer", "v1beta1", CapacityBufferSpec),
}
_SCALAR = (
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("maxLength", "max_length"),
    ("minLength", "min_length"),
    ("pattern", "pattern"),
)
_COUNT = (("maxItems", "max_items"), ("minItems", "min_items"), ("maxProperties", "max_properties"))

# (first release, last release, difference): where the model differs from a CRD on purpose.
DELIBERATE = {
    (
        (1, 0),
        (1, 7),
        "NodePool.spec.disruption.budgets.reasons: maxItems CRD None, model 50",
    ): "the list is a set of at most four enum values, so no manifest can reach the bound the later CRDs added",
    (
        (1, 0),
        (1, 3),
        "NodePool.spec.disruption.consolidateAfter: pattern",
    ): "these CRDs' pattern lacks a group around its alternation and accepts any text after a duration; "
    "the model keeps the corrected pattern of 1.4+",
    ((1, 0), (1, 3), "NodePool.spec.template.spec.expireAfter: pattern"): "the same ungrouped alternation as consolidateAfter",
}


def spec_schema(path: Path, version: str = "v1") -> Mapping[str, Any]:
    crd = yaml.safe_load(path.read_text(encoding="utf-8"))
    served = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    return served["schema"]["openAPIV3Schema"]["properties"]["spec"]


def differences(crds: Path, release: Release) -> list[str]:
    """What the release's CRDs in ``crds`` and our models at ``release`` disagree on, less :data:`DELIBERATE`."""
    found = []
    for file, (kind, served, spec) in SPECS.items():
        since = KIND_SINCE.get(kind, (1, 0))
        if (release >= since) != (crds / file).is_file():
            found.append(f"{kind}: served from {since} in the model, {'' if (crds / file).is_file() else 'not '}by this release")
        if (crds / file).is_file():
            found += _walk(spec_schema(crds / file, served), spec, f"{kind}.spec", release)
    deliberate = [what for (first, last, what) in DELIBERATE if first <= release <= last]
    return [d for d in found if not any(d.startswith(what) for what in deliberate)]


def _walk(schema: Mapping[str, Any], cls: type, path: str, release: Release) -> Iterator[str]:
    props = schema.get("properties") or {}
    opened = getattr(cls, "OPEN_SINCE", None)
    model_open = opened is not None and release >= opened
    if model_open or (schema.get("x-kubernetes-preserve-unknown-fields") and not props):
        if not (model_open and schema.get("x-kubernetes-preserve-unknown-fields") and not props):
            yield f"{path}: CRD {'open' if not props else 'typed'}, model {'open' if model_open else 'typed'}"
        return
    table = fields_of(cls)
    required = set(schema.get("required") or ())
    for name, sub in props.items():
        field, where = table.get(name), f"{path}.{name}"
        if field is None:
            yield f"{where}: in the CRD, not in the model"
            continue
        facts = field.prop
        if facts.since and facts.since > release:
            yield f"{where}: in the CRD, the model has it from {facts.since}"
        model_required = facts.required or (facts.required_until is not None and release < facts.required_until)
        crd_required = name in required and sub.get("default") is None  # a defaulted field is never missing
        if model_required != crd_required:
            yield f"{where}: required CRD {crd_required}, model {model_required}"
        item = sub.get("items") if field.kind == "list" else sub
        scalar = (
            item.get("additionalProperties")
            if field.kind == "map" and isinstance(item.get("additionalProperties"), Mapping)
            else item
        )
        enum = scalar.get("enum")
        known = {value for value, since in (facts.enum or {}).items() if since is None or release >= since}
        if set(map(str, enum or ())) != known:
            yield f"{where}: enum CRD {sorted(map(str, enum or ()))}, model {sorted(known)}"
        for key, attr in _SCALAR:
            theirs = scalar.get(key)
            ours = facts.value_pattern if key == "pattern" and field.kind == "map" else getattr(facts, attr)
            if field.kind == "map" and key != "pattern":
                continue
            if theirs != ours:
                yield f"{where}: {key} CRD {theirs}, model {ours}" if key != "pattern" else f"{where}: pattern"
        if scalar.get("type") == "integer" and (scalar.get("format") == "int32") != facts.int32:
            yield f"{where}: format CRD {scalar.get('format')}, model int32 {facts.int32}"
        unique = facts.unique is not None and release >= facts.unique
        if (sub.get("x-kubernetes-list-type") == "set") != unique:
            yield f"{where}: list-type CRD {sub.get('x-kubernetes-list-type')}, model set {unique}"
        for key, attr in _COUNT:
            if sub.get(key) != getattr(facts, attr):
                yield f"{where}: {key} CRD {sub.get(key)}, model {getattr(facts, attr)}"
        if field.item is not None and dataclasses.is_dataclass(field.item):
            child = sub.get("items") if field.kind == "list" else sub.get("additionalProperties") if field.kind == "map" else sub
            yield from _walk(child or {}, field.item, where, release)
    for name, field in table.items():
        if name not in props and not (field.prop.since and field.prop.since > release):
            yield f"{path}.{name}: in the model, not in the CRD"
