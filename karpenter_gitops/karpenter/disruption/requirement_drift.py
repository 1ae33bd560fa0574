"""``RequirementsDrifted``: a NodeClaim whose labels no longer satisfy its NodePool's requirements.

Karpenter's check (``areRequirementsDrifted`` of pkg/controllers/nodeclaim/disruption/drift.go, the
same in every v1 release) is ``NewLabelRequirements(nodeClaim.Labels).Compatible(NewNodeSelectorRequirementsWithMinValues(
nodePool.Spec.Template.Spec.Requirements...))``: with no label allowed undefined, every requirement's key
must be on the NodeClaim (unless the requirement is ``NotIn``/``DoesNotExist``) with a value it allows.
The template's labels are not requirements here (they drift the pool through its hash instead).

With no cluster at hand :func:`label_drifts` says which nodes a change drifts from what the base
allowed and the head no longer does: the base's nodes carry values the base allowed, so "nodes with
karpenter.sh/capacity-type=on-demand" when on-demand was allowed and is no longer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from karpenter_gitops.core import labels as label_keys
from karpenter_gitops.core.model import NodePool
from karpenter_gitops.core.requirements import Requirements, ValueSet
from karpenter_gitops.karpenter.scheduling.matching import WELL_KNOWN, compatibility_error

NO_LABEL_UNDEFINED: frozenset[str] = frozenset()  # drift passes Compatible no option
# Well-known labels whose every value is known: a node of a pool that does not constrain one carries one of these.
EVERY_VALUE = {
    label_keys.ARCH: ("amd64", "arm64"),
    label_keys.OS: ("linux", "windows"),
    label_keys.CAPACITY_TYPE: ("on-demand", "spot", "reserved"),
}


def pool_requirements(pool: NodePool) -> Requirements:
    """``spec.template.spec.requirements`` as Karpenter reads them (with ``minValues``); an entry the API
    server refuses (no key, an operator or bound it cannot read) constrains nothing here."""
    template = pool.spec.template
    entries = (template and template.spec and template.spec.requirements) or ()
    pairs = []
    for entry in entries:
        if entry.key is None:
            continue
        try:
            pairs.append((entry.key, ValueSet.of(entry.operator, entry.values or (), entry.min_values)))
        except ValueError:
            continue
    return Requirements(pairs)


def requirements_drift(pool: NodePool, labels: Mapping[str, str]) -> str | None:
    """Why Karpenter marks a NodeClaim carrying ``labels`` RequirementsDrifted under ``pool``, or None."""
    return compatibility_error(Requirements.from_labels(labels), pool_requirements(pool), NO_LABEL_UNDEFINED)


@dataclass(frozen=True)
class LabelDrift:
    """One label key on which some node the base could have launched no longer satisfies the head."""

    key: str
    head: ValueSet  # what the head allows
    dropped: tuple[str, ...]  # values the base listed that the head no longer allows
    outside: bool  # nodes with a value the base allowed without listing it (any value, NotIn, a bound) may drift
    without_label: bool  # nodes without the label drift (the head requires it; the base's nodes may lack it)
    every_node: bool  # no node of the base carries the label, and the head requires it

    def covers(self, labels: Mapping[str, str]) -> bool:
        """Whether a NodeClaim with ``labels`` fails the head on this key (Karpenter's check, this key only)."""
        value = labels.get(self.key)
        return not self.head.tolerates_absence if value is None else not self.head.has(value)

    def nodes(self) -> str:
        """Which nodes, in words: ``nodes with karpenter.sh/capacity-type=on-demand``."""
        if self.every_node:
            return f"every node (its nodes do not carry {self.key}, which the head requires)"
        parts = []
        if self.dropped:
            parts.append(f"nodes with {self.key}={', '.join(self.dropped)}")
        if self.outside:
            parts.append(f"nodes with {_outside(self.key, self.head)}")
        if self.without_label:
            parts.append(f"nodes without {self.key}")
        return "; ".join(parts)


def _outside(key: str, allowed: ValueSet) -> str:
    """The values ``allowed`` leaves out, of a label the base's nodes carry any value of: ``k outside [c, m]``, ``k < 4``."""
    if not allowed.complement:
        return f"{key} outside [{', '.join(sorted(allowed.values))}]"
    bounds = ([f"< {allowed.gte}"] if allowed.gte is not None else []) + ([f"> {allowed.lte}"] if allowed.lte is not None else [])
    return f"{key} {' or '.join(bounds)}"


def label_drifts(base: NodePool, head: NodePool) -> tuple[LabelDrift, ...]:
    """Per head requirement key, the base's nodes it drifts (none when the head allows all the base did)."""
    before, after = pool_requirements(base), pool_requirements(head)
    template = base.spec.template
    template_labels = dict((template and template.metadata and template.metadata.labels) or {})
    drifts = []
    for key in sorted(after):
        allowed = after[key]
        launched = _launched_values(key, before.get(key), template_labels.get(key))
        if launched is None:  # the base's nodes never carry the key
            if not allowed.tolerates_absence:
                drifts.append(LabelDrift(key, allowed, (), False, False, True))
            continue
        dropped: tuple[str, ...] = ()
        outside = False
        if launched.complement and allowed.complement:  # both exclude some values: name those the head adds
            dropped = tuple(sorted(v for v in allowed.values if launched.has(v)))
            outside = not _bounds_contain(allowed, launched)
        elif launched.complement:
            outside = True  # a finite set never holds all of an infinite one
        else:
            dropped = tuple(sorted(v for v in launched.values if not allowed.has(v)))
        without = launched.tolerates_absence and not allowed.tolerates_absence and key not in WELL_KNOWN
        if dropped or outside or without:
            drifts.append(LabelDrift(key, allowed, dropped, outside, without, False))
    return tuple(drifts)


def _launched_values(key: str, required: ValueSet | None, template_value: str | None) -> ValueSet | None:
    """The values the base's nodes may carry on ``key`` (None: they never carry it). A NodeClaim is labelled
    from its requirements (a value even for ``Exists``/``NotIn``), its template labels and its instance
    type's well-known labels."""
    if template_value is not None:
        fixed = ValueSet(False, frozenset((template_value,)))
        return fixed & required if required is not None else fixed
    if required is not None and required.is_empty:  # DoesNotExist
        return None
    if key in EVERY_VALUE:
        return ValueSet(False, frozenset(v for v in EVERY_VALUE[key] if required is None or required.has(v)))
    if required is not None:
        return required
    return ValueSet(True) if key in WELL_KNOWN else None


def _bounds_contain(outer: ValueSet, inner: ValueSet) -> bool:
    """Whether ``outer``'s integer bounds hold every value within ``inner``'s."""
    if outer.gte is not None and (inner.gte is None or inner.gte < outer.gte):
        return False
    return not (outer.lte is not None and (inner.lte is None or inner.lte > outer.lte))
