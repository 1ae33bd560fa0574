"""The reconciliation as a Pulumi dynamic resource: one per EC2NodeClass, with its NodePools.

``check()`` runs the core's rule registry offline, so an invalid spec blocks the preview with the
property path and rule id. ``create()``/``update()`` run :func:`karpenter_gitops.reconcile.reconcile`
against AWS and store the plan of this class and its pools as outputs. The EC2NodeClass custom
resource depends on this resource, so an invalid or unresolvable class is never applied.

Given ``workloads`` (Kubernetes objects), the resource also stores ``forecast``: what Karpenter would
launch for them over this class's NodePools — as if they were the cluster's only ones — and what it
costs (``plan --workloads``' forecast, without the per-candidate detail). Without them no key changes.

The provider is pickled **by reference** (this module's path is part of every stack's state:
moving or renaming it breaks ``refresh``/``destroy`` of existing stacks). It holds no state of its
own: boto3 clients are made per call by the core from the environment, so nothing unpicklable is
captured, the four threads of the provider host share nothing mutable, and credentials never
reach inputs or state.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pulumi
from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    ConfigureRequest,
    CreateResult,
    DiffResult,
    ReadResult,
    ResourceProvider,
    UpdateResult,
)
from pulumi.output import Unknown
from pulumi.runtime.rpc import UNKNOWN

from karpenter_gitops.app import stack
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.inputs import NAMESPACE, Inputs
from karpenter_gitops.core.model import EC2NODECLASS, NODEOVERLAY
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.karpenter.status.prediction import Plan

INPUT_KEYS = ("nodeClassName", "spec", "nodePoolSpecs", "nodeOverlaySpecs", "cluster", "policy", "workloads")
# NodeClassPlan.to_json() keys, plus the per-pool plans and the non-blocking findings.
OUTPUT_KEYS = ("conditions", "amis", "skippedAmis", "subnets", "securityGroups", "instanceProfile", "nodePools", "findings")
SECRET_OUTPUTS = ("spec", "nodePoolSpecs", "findings")  # what can hold a secret spec's values
FORECAST = "forecast"  # the output, present only with workloads
SECRET_SPECS = "secretSpecs"  # an input present (true) only when the specs came from secret stack config
SHOWN_VALUE_CHARS = 80  # a check failure quotes the value it is about up to this length


class TransientReconciliationError(Exception):
    """AWS could not answer; nothing was decided and the previous outputs stay."""


class ReconciliationError(Exception):
    """A persistent problem (the class would not become Ready, or the plan has errors)."""


class SetupError(ReconciliationError):
    """The reconciliation could not start (no AWS credentials, an unusable cluster block): nothing was judged."""


def _plan(props: Mapping[str, Any], settings: Any) -> tuple[Plan, dict[str, Any] | None]:
    """The plan for these inputs, and the forecast when they carry workloads; an AWS outage becomes a plan
    that decided nothing."""
    try:
        return stack.reconciled(**_stack_settings(props), workloads=props.get("workloads"), settings=settings)
    except InputError as err:  # no credentials, or an alias without the cluster's Kubernetes version
        raise SetupError(f"EC2NodeClass {props['nodeClassName']}: {err}") from None


def _stack_settings(props: Mapping[str, Any]) -> dict[str, Any]:
    """This resource's inputs as a stack's settings: its class, with its pools, the cluster, policy and overlays."""
    return {
        "cluster": props.get("cluster"),
        "node_classes": {props["nodeClassName"]: props.get("spec")},
        "node_pools": props.get("nodePoolSpecs") or {},
        "policy": props.get("policy"),
        "node_overlays": props.get("nodeOverlaySpecs")
        or None,  # the stack's overlays: what each pool launches first, as plan says
    }


def property_path(finding: Finding) -> str:
    """Where a finding points among this resource's inputs (``spec.amiSelectorTerms[0].alias``)."""
    if finding.kind == EC2NODECLASS:
        return finding.path if finding.path.startswith("spec") else "nodeClassName"
    pool = f'nodePoolSpecs["{finding.name}"]'
    return pool + finding.path[len("spec") :] if finding.path.startswith("spec") else pool


def _unknown_paths(value: Any, path: str) -> Iterator[str]:
    """Paths of values not known yet (preview): the host hands them over as ``Unknown``, or as the
    ``UNKNOWN`` sentinel string when called directly."""
    if isinstance(value, Unknown) or value == UNKNOWN:
        yield path
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if path == "nodePoolSpecs":
                yield from _unknown_paths(item, f'{path}["{key}"]')
            else:
                yield from _unknown_paths(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _unknown_paths(item, f"{path}[{index}]")


def _related(path: str, other: str) -> bool:
    """True when one path is the other or lies inside it."""
    shorter, longer = sorted((path, other), key=len)
    return longer == shorter or longer.startswith((shorter + ".", shorter + "["))


def _reason(finding: Finding) -> str:
    fix = f" (fix: {finding.hint})" if finding.hint else ""
    return f"{finding.message} [{finding.rule}]{fix}"


def _failure(finding: Finding, props: Mapping[str, Any]) -> CheckFailure:
    """A check failure that names the property and its value in its reason.

    The engine prints a failure's property with ``inputs[property]``, a top-level look-up that a path such
    as ``spec.amiSelectorTerms[0].alias`` never matches (it printed "value {<nil>} has a problem"), so the
    failure names no property and its reason says where and what: a short scalar value as JSON, never one
    of a spec that came from secret stack config."""
    path = property_path(finding)
    spec = props.get("spec") if finding.kind == EC2NODECLASS else (props.get("nodePoolSpecs") or {}).get(finding.name)
    value = None if props.get(SECRET_SPECS) else stack.value_at({"spec": spec}, finding.path)
    shown = json.dumps(value) if isinstance(value, (str, int, float, bool)) else ""
    named = f"{path} is {shown}" if shown and len(shown) <= SHOWN_VALUE_CHARS and "\\n" not in shown else path
    return CheckFailure("", f"{named}: {_reason(finding)}")


def _why_not_ready(name: str, plan: Plan) -> str:
    """Why a plan with a persistent problem must not be applied, in one line."""
    errors = [f for f in plan.findings if f.severity is Severity.ERROR]
    if errors:
        first = errors[0]
        more = f" (+{len(errors) - 1} more errors)" if len(errors) > 1 else ""
        return f"{first.kind} {first.name}: {first.path}: {_reason(first)}{more}"
    conditions = plan.node_classes[name].conditions
    blocking = [c for c in conditions if c.type != "Ready" and c.status != "True"]
    detail = "; ".join(f"{c.type}={c.status} ({c.reason}{': ' + c.message if c.message else ''})" for c in blocking)
    return f"EC2NodeClass {name} would not become Ready: {detail or 'Ready is not True'}"


def _outputs(props: Mapping[str, Any], plan: Plan, forecast: dict[str, Any] | None = None) -> dict[str, Any]:
    name = props["nodeClassName"]
    class_plan = plan.node_classes[name]
    pools = {pool: p.to_json() for pool, p in sorted(plan.node_pools.items()) if p.node_class == name}
    # As they will come back: a refresh that changed nothing must read back exactly what create wrote.
    return _stored(
        {
            **{key: props.get(key) for key in INPUT_KEYS},
            **class_plan.to_json(),
            "nodePools": pools,
            "findings": [f.to_json() for f in plan.findings],
            FORECAST: forecast,
        }
    )


def _stored(value: Any) -> Any:
    """``value`` as it comes back from the provider host: its deserialiser drops keys whose value is None."""
    if isinstance(value, Mapping):
        return {k: _stored(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_stored(v) for v in value]
    return value


def _view(outs: Mapping[str, Any]) -> dict[str, Any]:
    """What Karpenter would act on; free-IP counts and finding wording do not make a change."""
    return {
        "amis": [(a["id"], a["name"], _stored(a.get("requirements"))) for a in outs.get("amis") or ()],
        "subnets": sorted(s["id"] for s in outs.get("subnets") or ()),
        "securityGroups": sorted(g["id"] for g in outs.get("securityGroups") or ()),
        "instanceProfile": outs.get("instanceProfile"),
        "conditions": sorted((c["type"], c["status"], c["reason"]) for c in outs.get("conditions") or ()),
        "nodePools": _stored(outs.get("nodePools") or {}),
        FORECAST: _forecast_view(outs.get(FORECAST)),
    }


def _forecast_view(forecast: Mapping[str, Any] | None) -> tuple:
    """The NodeClaims per pool (type, capacity type) and the unschedulable pods: price updates alone are no change."""
    if not forecast:
        return ()
    pools = tuple(
        sorted(
            (
                name,
                tuple(sorted((c.get("instanceType") or "", c.get("capacityType") or "") for c in pool.get("nodeClaims") or ())),
            )
            for name, pool in (forecast.get("nodePools") or {}).items()
        )
    )
    return pools, sum(u.get("pods", 0) for u in forecast.get("unschedulable") or ())


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Human reasons for a changed reconciled result, e.g. ``amis: ami-1 -> ami-2``."""
    before, after = _view(old), _view(new)
    reasons = []
    for key in before:
        if before[key] == after[key]:
            continue
        if key == "amis":
            reasons.append(f"amis: {[a[0] for a in before[key]]} -> {[a[0] for a in after[key]]}")
        elif key == "conditions":
            changed = sorted(set(after[key]) - set(before[key]))
            reasons.append("conditions: " + ", ".join(f"{t}={s} ({r})" for t, s, r in changed))
        elif key == "nodePools":
            pools = sorted(p for p in set(before[key]) | set(after[key]) if before[key].get(p) != after[key].get(p))
            reasons.append(f"instance-type to AMI map of NodePool(s) {', '.join(pools)}")
        elif key == FORECAST:
            reasons.append(
                f"forecast for the workloads: {stack.forecast_price(old.get(FORECAST))} -> {stack.forecast_price(new.get(FORECAST))}"
            )
        else:
            reasons.append(f"{key}: {before[key]} -> {after[key]}")
    return reasons


class ReconciliationProvider(ResourceProvider):
    """Validates, resolves and predicts one EC2NodeClass (and its NodePools) against AWS."""

    # Nothing secret is captured (the provider has no fields), so __provider stays readable in
    # state and in mocks instead of being encrypted by default.
    serialize_as_secret_always = False

    _settings = None  # the stack's AWS settings (app.stack.provider_settings), set by configure() once per process

    def configure(self, req: ConfigureRequest) -> None:
        """Read AWS as the stack's pulumi-aws provider does: its ``aws:`` config wins over the environment.

        Runs once, in the provider host. The host reports any exception from a method as the resource's
        error with ``traceback.format_exc()``, which the engine prints: our errors are one-line
        messages with a fix, so the host formats them without frames (the type and message stay)."""
        sys.tracebacklimit = 0
        self._settings = stack.provider_settings(req.config)

    def check(self, olds: dict, news: dict) -> CheckResult:
        """Offline rules, as ``validate`` judges the stack; values unknown during preview are judged at ``up``."""
        unknown = list(_unknown_paths({k: news.get(k) for k in INPUT_KEYS}, ""))
        try:
            inputs, release = stack.load_inputs(**_stack_settings(news))
        except InputError as err:
            where = "policy" if f"{NAMESPACE}:policy" in str(err) else "cluster"
            if any(_related(where, u) for u in unknown):
                return CheckResult(news, [])
            return CheckResult(news, [CheckFailure(where, str(err))])
        failures = []
        for finding in sorted(stack.check(inputs, release, self._stored(olds)), key=lambda f: f.sort_key):
            if finding.kind == NODEOVERLAY:  # its own NodeOverlay component judges it; here it only reprices pools
                continue
            path = property_path(finding)
            if any(_related(path, u) for u in unknown):
                continue
            if finding.severity is Severity.ERROR:
                failures.append(_failure(finding, news))
            else:  # the engine shows these in the preview: as warnings, or as info
                log = pulumi.log.warn if finding.severity is Severity.WARNING else pulumi.log.info
                log(f"{finding.kind} {finding.name}: {path}: {_reason(finding)}")
        return CheckResult(news, failures)

    @staticmethod
    def _stored(olds: dict) -> Inputs | None:
        """The stored inputs, for Karpenter's update-only (oldSelf) rules; None on create or when unreadable."""
        if not olds or not isinstance(olds.get("spec"), Mapping) or any(_unknown_paths(olds, "")):
            return None
        try:
            stored, _ = stack.load_inputs(**_stack_settings(olds))
        except InputError:
            return None
        return stored

    def diff(self, _id: str, olds: dict, news: dict) -> DiffResult:
        """A change when the inputs differ or when AWS now resolves differently (reason logged)."""
        changed = [key for key in INPUT_KEYS if olds.get(key) != news.get(key)]
        if changed:
            self._refuse_what_update_would(news)
            return DiffResult(changes=True, replaces=["nodeClassName"] if "nodeClassName" in changed else [])
        name = news["nodeClassName"]
        try:
            plan, forecast = _plan(news, self._settings)
        except ReconciliationError as err:  # no credentials is the user's setup, never a change
            pulumi.log.warn(f"could not re-resolve, assuming no change: {err}")
            return DiffResult(changes=False)
        if plan.transient or name not in plan.node_classes:
            why = "; ".join(plan.transient) or "no plan for this class"
            pulumi.log.warn(f"EC2NodeClass {name}: could not re-resolve, assuming no change: {why}")
            return DiffResult(changes=False)
        reasons = _changes(olds, _outputs(news, plan, forecast))
        if reasons:
            pulumi.log.info(f"EC2NodeClass {name}: AWS now resolves differently: " + "; ".join(reasons))
        return DiffResult(changes=bool(reasons))

    def _refuse_what_update_would(self, news: dict) -> None:
        """Changed inputs: reconcile them read-only now, so a preview of an update fails with the very line
        ``up`` would (images all pending or failed, a pool that can launch nothing). The engine calls ``diff``,
        never ``update``, in a preview. Values not known yet, an AWS outage or missing credentials decide
        nothing here: the update judges them."""
        if any(_unknown_paths({k: news.get(k) for k in INPUT_KEYS}, "")):
            return
        try:
            self._reconciled(news, self._settings)
        except (TransientReconciliationError, SetupError) as err:
            pulumi.log.warn(f"could not reconcile the change now, the update will: {err}")

    def create(self, props: dict) -> CreateResult:
        return CreateResult(props["nodeClassName"], self._reconciled(props, self._settings))

    def update(self, _id: str, _olds: dict, news: dict) -> UpdateResult:
        """Fresh outputs, or an exception: the engine then keeps the previous outputs untouched."""
        return UpdateResult(self._reconciled(news, self._settings))

    def read(self, id_: str, props: dict) -> ReadResult:
        """Refresh; when AWS cannot answer or the class would not be Ready, keep the last good outputs."""
        try:
            outs = self._reconciled(props, self._settings)
        except (TransientReconciliationError, ReconciliationError) as err:
            pulumi.log.warn(f"refresh kept the last known good outputs: {err}")
            return ReadResult(id_, dict(props))
        return ReadResult(id_, outs)

    def delete(self, _id: str, _props: dict) -> None:
        """Nothing to remove: the reconciliation only reads AWS; the objects belong to other resources."""

    @staticmethod
    def _reconciled(props: Mapping[str, Any], settings: Any) -> dict[str, Any]:
        name = props["nodeClassName"]
        plan, forecast = _plan(props, settings)
        if plan.exit_code is Outcome.TRANSIENT or name not in plan.node_classes:
            why = "; ".join(plan.transient) or "no plan for this class"
            raise TransientReconciliationError(f"EC2NodeClass {name}: transient AWS failure, nothing changed, retry later: {why}")
        if plan.exit_code is Outcome.FINDINGS:
            raise ReconciliationError(_why_not_ready(name, plan))
        return _outputs(props, plan, forecast)


class Reconciliation(pulumi.dynamic.Resource, module="karpenter-gitops", name="Reconciliation"):
    """The reconciled plan of one EC2NodeClass; outputs mirror the ``plan`` JSON of the CLI."""

    conditions: pulumi.Output[list]
    amis: pulumi.Output[list]
    skippedAmis: pulumi.Output[list]
    subnets: pulumi.Output[list]
    securityGroups: pulumi.Output[list]
    instanceProfile: pulumi.Output[str]
    nodePools: pulumi.Output[dict]
    findings: pulumi.Output[list]
    forecast: pulumi.Output[dict]  # only with workloads

    def __init__(
        self,
        resource_name: str,
        node_class_name: str,
        spec: pulumi.Input[Mapping[str, Any]],
        node_pool_specs: Mapping[str, pulumi.Input[Mapping[str, Any]]],
        cluster: Mapping[str, Any] | None = None,
        policy: Mapping[str, Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        secret: bool = False,
        node_overlay_specs: Mapping[str, pulumi.Input[Mapping[str, Any]]] | None = None,
        workloads: pulumi.Input[list[Mapping[str, Any]]] | None = None,
    ) -> None:
        """``secret``: the specs come from secret stack config; the engine then keeps the outputs that
        echo them (and the findings, which may quote them) encrypted in state. ``workloads``: the workload
        manifests (Deployments, Pods, DaemonSets, ... as Kubernetes objects) to forecast; they and the
        forecast join the outputs only when given."""
        if secret:
            echoed = [*SECRET_OUTPUTS, "workloads"] if workloads is not None else list(SECRET_OUTPUTS)
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(additional_secret_outputs=echoed))
        props = {
            "nodeClassName": node_class_name,
            "spec": spec,
            "nodePoolSpecs": dict(node_pool_specs),
            "nodeOverlaySpecs": dict(node_overlay_specs or {}),
            "cluster": dict(cluster or {}),
            "policy": dict(policy or {}),
            **({SECRET_SPECS: True} if secret else {}),
            **{key: None for key in OUTPUT_KEYS},
            **({"workloads": workloads, FORECAST: None} if workloads is not None else {}),
        }
        super().__init__(ReconciliationProvider(), resource_name, props, opts)
