"""The PR preview as data: what a change to Karpenter objects does, compared base to head.

Pure: the caller loads base and head, has the judge validate the head against the base (the
transition rules of :mod:`karpenter_gitops.rules.transition` included, waivers applied),
reconciles, reads the cluster and Pulumi's preview; this module compares them into a
:class:`Preview` (the verdict, readiness, node impact, AMI moves, object diffs) that
``preview_comment`` writes as a GitHub comment and ``to_json`` as JSON. Transition errors block like
any other, their warnings join the policy results. userData and secret-looking values never appear:
diffs show their length and a short hash instead (:func:`redact`).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.app.cost_comparison import CostComparison
from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.model import EC2NODECLASS, NODEOVERLAY
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.judge.report import Report
from karpenter_gitops.karpenter.disruption.drift import AMIMove, Forecast, ami_moves
from karpenter_gitops.karpenter.nodeoverlay.applied import FirstChoice
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.load.pulumi_events import PulumiPreview, counted_op
from karpenter_gitops.output.manifests import manifest, to_yaml

# --- redaction ---------------------------------------------------------------------------

_SECRET_KEY = re.compile(r"(?i)passw(or)?d|secret|token|credential|private[-_]?key|api[-_]?key|bearer")
_NOT_SECRET_KEYS = frozenset({"httpTokens"})  # IMDSv2 mode, not a token
_SECRET_VALUE = re.compile(r"(AKIA|ASIA)[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY-----|gh[pousr]_[A-Za-z0-9]{30,}")


def fingerprint(value: Any) -> str:
    """What stands in for a hidden value: its size and a short hash, so a change still shows."""
    data = str(value).encode()
    return f"<redacted: {len(data)} bytes, sha256:{hashlib.sha256(data).hexdigest()[:12]}>"


def redact(value: Any, key: str | None = None) -> Any:
    """``value`` with userData and secret-looking keys or strings replaced by their fingerprint."""
    if key == "userData" or (key and key not in _NOT_SECRET_KEYS and _SECRET_KEY.search(key)):
        return fingerprint(value)
    if isinstance(value, Mapping):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    if isinstance(value, str) and _SECRET_VALUE.search(value):
        return fingerprint(value)
    return value


# --- what changed ------------------------------------------------------------------------


@dataclass(frozen=True)
class ObjectChange:
    kind: str
    name: str
    status: str  # added | changed | removed
    diff: tuple[str, ...]  # unified diff of the redacted manifests

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.name}"

    @property
    def line_counts(self) -> tuple[int, int]:
        added = sum(1 for line in self.diff if line.startswith("+") and not line.startswith("+++"))
        removed = sum(1 for line in self.diff if line.startswith("-") and not line.startswith("---"))
        return added, removed

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "status": self.status, "diff": list(self.diff)}


def object_changes(base: Inputs, head: Inputs) -> tuple[ObjectChange, ...]:
    """Added, changed and removed objects, EC2NodeClasses first, each with its redacted diff."""
    old = {(o.kind, o.name): to_yaml(redact(manifest(o))) for o in base.objects}
    new = {(o.kind, o.name): to_yaml(redact(manifest(o))) for o in head.objects}
    changes = []
    for kind, name in sorted(old.keys() | new.keys(), key=lambda k: (k[0] != EC2NODECLASS, k[0], k[1])):
        before, after = old.get((kind, name)), new.get((kind, name))
        if before == after:
            continue
        status = "added" if before is None else "removed" if after is None else "changed"
        diff = difflib.unified_diff(
            (before or "").splitlines(),
            (after or "").splitlines(),
            fromfile=f"base/{kind}/{name}" if before is not None else "/dev/null",
            tofile=f"head/{kind}/{name}" if after is not None else "/dev/null",
            lineterm="",
        )
        changes.append(ObjectChange(kind, name, status, tuple(diff)))
    return tuple(changes)


# --- the report --------------------------------------------------------------------------


def not_ready(plan: Plan) -> tuple[tuple[str, str], ...]:
    """(EC2NodeClass, failing conditions) for each class the plan predicts not Ready."""
    out = []
    for name, node_class in sorted(plan.node_classes.items()):
        if not node_class.ready:
            failing = [c for c in node_class.conditions if c.type != "Ready" and c.status != "True"]
            said = node_class.no_status or ", ".join(f"{c.type}={c.status} ({c.reason})" for c in failing)
            out.append((name, said or "Ready is not True"))
    return tuple(out)


@dataclass(frozen=True)
class FirstChoiceMove:
    """A NodePool whose first choice (the cheapest instance type it can launch) differs between base and head."""

    node_pool: str
    before: FirstChoice
    after: FirstChoice

    def to_json(self) -> dict:
        return {"nodePool": self.node_pool, "before": self.before.to_json(), "after": self.after.to_json()}


def first_choice_moves(base_plan: Plan, head_plan: Plan) -> tuple[FirstChoiceMove, ...]:
    """Per NodePool of both plans, the first choice with each side's NodeOverlays. A side whose overlays are
    not applied (none, or the gate off) launches what the other side computed without overlays."""
    moves = []
    for name in sorted(base_plan.node_pools.keys() & head_plan.node_pools.keys()):
        base, head = base_plan.node_pools[name].overlays, head_plan.node_pools[name].overlays
        before = base.after if base else head.before if head else None
        after = head.after if head else base.before if base else None
        if before and after and before.instance_types != after.instance_types:
            moves.append(FirstChoiceMove(name, before, after))
    return tuple(moves)


@dataclass(frozen=True)
class Preview:
    """Everything the comment says, as data; ``to_json`` is the machine form."""

    base_label: str
    base: Inputs
    head: Inputs
    validation: Report  # the head, validated with policy=True against the base (transitions judged, waivers applied)
    forecast: Forecast | None  # None: the cluster could not be read (``impact_note`` says why)
    head_plan: Plan | None = None
    base_plan: Plan | None = None
    impact_note: str | None = None
    pulumi: PulumiPreview | None = None
    notes: tuple[str, ...] = ()
    changes: tuple[ObjectChange, ...] = field(default=())
    cost: CostComparison | None = None  # the workloads' forecast on both sides (``--workloads``)
    cost_note: str | None = None  # why there is no cost although workloads were named (an offline preview)

    @classmethod
    def build(cls, base_label: str, base: Inputs, head: Inputs, validation: Report, forecast: Forecast | None, **rest) -> Preview:
        return cls(base_label, base, head, validation, forecast, changes=object_changes(base, head), **rest)

    @property
    def findings(self) -> tuple[Finding, ...]:
        live = self.head_plan.findings if self.head_plan else ()
        return tuple(sorted(set(self.validation.findings) | set(live), key=lambda f: f.sort_key))

    def waived(self, finding: Finding) -> bool:
        return finding in self.validation.waived

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity is Severity.ERROR and not self.waived(f))

    @property
    def not_ready(self) -> tuple[tuple[str, str], ...]:
        return not_ready(self.head_plan) if self.head_plan else ()

    @property
    def transient(self) -> tuple[str, ...]:
        return self.head_plan.transient if self.head_plan else ()

    @property
    def outlook(self) -> tuple[tuple[str, str, tuple[Finding, ...]], ...]:
        """(EC2NodeClass, what Karpenter will show, why its nodes will fail) for each class the plan predicts
        not Ready or an unwaived error is found on: Karpenter may well show Ready=True for a class whose
        nodes never join (a profile without a role), and the comment must say both."""
        if not self.head_plan:
            return ()
        shown = dict(self.not_ready)
        failing: dict[str, list[Finding]] = {}
        for finding in self.errors:
            if finding.kind == EC2NODECLASS and finding.name in self.head_plan.node_classes:
                failing.setdefault(finding.name, []).append(finding)
        return tuple(
            (name, shown.get(name, "Ready=True"), tuple(failing.get(name, ()))) for name in sorted(shown.keys() | failing.keys())
        )

    @property
    def moves(self) -> tuple[AMIMove, ...]:
        return ami_moves(self.base_plan, self.head_plan) if self.base_plan and self.head_plan else ()

    @property
    def overlay_changes(self) -> bool:
        return any(change.kind == NODEOVERLAY for change in self.changes)

    @property
    def first_choice_moves(self) -> tuple[FirstChoiceMove, ...]:
        """What a NodeOverlay change moves: only then is a pool's cheaper first choice worth a line."""
        if not (self.overlay_changes and self.base_plan and self.head_plan):
            return ()
        return first_choice_moves(self.base_plan, self.head_plan)

    @property
    def blocking_pulumi(self) -> tuple[str, ...]:
        if not self.pulumi:
            return ()
        policy = [f"Pulumi policy {p.pack}/{p.policy} (mandatory): {p.message}" for p in self.pulumi.policy_events if p.blocking]
        return tuple(policy + [f"Pulumi error: {d.message}" for d in self.pulumi.errors])

    @property
    def exit_code(self) -> Outcome:
        """As ``plan``: TRANSIENT (nothing decided), FINDINGS (blocking problems), OK."""
        if self.transient:
            return Outcome.TRANSIENT
        if self.errors or self.not_ready or self.blocking_pulumi or (self.cost and self.cost.newly_unschedulable):
            return Outcome.FINDINGS
        return Outcome.OK

    @property
    def code_changes(self) -> tuple[tuple[str, str, str], ...]:
        """(status, kind, name) of the Karpenter objects Pulumi's preview changes that no file of either side
        holds: declared in the program's code. Git cannot show their diff, but they count as much."""
        if not self.pulumi:
            return ()
        in_files = {(o.kind, o.name) for o in (*self.base.objects, *self.head.objects)}
        status_of = {"create": "added", "delete": "removed", "update": "changed", "replace": "changed"}
        found: dict[tuple[str, str], str] = {}
        for step in self.pulumi.steps:
            target, status = step.karpenter_object, status_of.get(counted_op(step.op))
            if target is None or status is None or target in in_files:
                continue
            # a class whose custom resource is created is added, whatever its reconciliation does
            if found.get(target) in (None, "changed"):
                found[target] = status
        return tuple((status, kind, name) for (kind, name), status in sorted(found.items()))

    def counts(self) -> dict[str, int]:
        """Objects added, changed and removed: in the files (``changes``) and in code (``code_changes``)."""
        tally = Counter(change.status for change in self.changes)
        tally.update(status for status, _kind, _name in self.code_changes)
        return {status: tally.get(status, 0) for status in ("added", "changed", "removed")}

    def new_skipped_amis(self) -> tuple[tuple[str, str, str, str], ...]:
        """(EC2NodeClass, AMI id, name, reason) for images the head skips that the base did not."""
        if not (self.head_plan and self.base_plan):
            return ()
        out = []
        for name, plan in sorted(self.head_plan.node_classes.items()):
            before = self.base_plan.node_classes.get(name)
            known = {s.id for s in before.skipped_amis} if before else set()
            out.extend((name, s.id, s.name, s.reason) for s in plan.skipped_amis if s.id not in known)
        return tuple(out)

    def ami_names(self) -> dict[str, str]:
        plans = [p for p in (self.base_plan, self.head_plan) if p]
        return {ami.id: ami.name for plan in plans for nc in plan.node_classes.values() for ami in nc.amis}

    def to_json(self) -> dict:
        readiness = None
        if self.head_plan:
            readiness = {name: plan.ready for name, plan in sorted(self.head_plan.node_classes.items())}
        return {
            "base": self.base_label,
            "exitCode": self.exit_code,
            "summary": {
                **self.counts(),
                "errors": len(self.errors),
                "warnings": sum(1 for f in self.findings if f.severity is Severity.WARNING and not self.waived(f)),
                "reconciled": self.head_plan is not None,
            },
            "objects": [c.to_json() for c in self.changes],
            "ready": readiness,
            "notReady": [{"nodeClass": n, "why": why} for n, why in self.not_ready],
            "outlook": [
                {"nodeClass": n, "karpenterShows": shows, "failsBecause": [f.rule for f in failing]}
                for n, shows, failing in self.outlook
            ],
            "amiMoves": [m.to_json() for m in self.moves],
            **({"firstChoiceMoves": [m.to_json() for m in self.first_choice_moves]} if self.overlay_changes else {}),
            "skippedAmis": [
                {"nodeClass": nc, "id": ami, "name": name, "reason": reason} for nc, ami, name, reason in self.new_skipped_amis()
            ],
            "findings": [{**f.to_json(), "waived": self.waived(f)} for f in self.findings],
            "waivers": [w.to_json() for w in self.validation.waivers],
            "impact": self.forecast.to_json() if self.forecast else None,
            "impactNote": self.impact_note,
            "pulumi": self.pulumi.to_json() if self.pulumi else None,
            "transient": list(self.transient),
            "notes": list(self.notes),
            **({"cost": self.cost.to_json()} if self.cost else {}),
            **({"costNote": self.cost_note} if self.cost_note else {}),
        }
