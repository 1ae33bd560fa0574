"""A stack's Karpenter settings as the Pulumi layer hands them over: judged as the CLI judges a stack file.

The components and the dynamic provider pass plain values (the engine's: every number a double,
unknowns during a preview); this module has them loaded exactly as ``validate --stack`` loads
``Pulumi.<stack>.yaml`` (same loader, same release, same policy settings), made plain at that
boundary, and judges them with the same judge, so ``pulumi preview`` and the CLI agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from karpenter_gitops.adapters.aws.client import AwsSession, AwsSettings
from karpenter_gitops.adapters.aws.error_kinds import PersistentAWSError, TransientAWSError
from karpenter_gitops.adapters.aws.target import Target
from karpenter_gitops.app.plan import forecaster
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Finding, Observation
from karpenter_gitops.core.inputs import NAMESPACE, Inputs
from karpenter_gitops.core.model import CAPACITYBUFFER, NODEOVERLAY
from karpenter_gitops.judge import Judge
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.load import engine_values, files
from karpenter_gitops.load.locate import path_segments
from karpenter_gitops.load.stack_file import load_engine_stack
from karpenter_gitops.load.stacks import workload_paths
from karpenter_gitops.load.workloads import WORKLOAD_KINDS, workloads_from_documents
from karpenter_gitops.output.workload_forecast_text import outline, price_range
from karpenter_gitops.reconcile import reconcile
from karpenter_gitops.rules import controller as controller_rules

SOURCE = "stack config"
WORKLOADS = "workloads input"  # where the workload objects the component passes are said to come from


def load_inputs(
    cluster: Mapping[str, Any] | None,
    node_classes: Mapping[str, Any],
    node_pools: Mapping[str, Any],
    policy: Mapping[str, Any] | None = None,
    controller: Mapping[str, Any] | None = None,
    *,
    node_overlays: Mapping[str, Any] | None = None,
    capacity_buffers: Mapping[str, Any] | None = None,
) -> tuple[Inputs, versions.Release]:
    """Load values as the CLI loads a stack file, with the stack's Karpenter release (or the default)."""
    config = _stack_config(
        cluster, node_classes, node_pools, policy, controller, node_overlays=node_overlays, capacity_buffers=capacity_buffers
    )
    return load_engine_stack(config, SOURCE)


def _stack_config(
    cluster: Mapping[str, Any] | None,
    node_classes: Mapping[str, Any],
    node_pools: Mapping[str, Any],
    policy: Mapping[str, Any] | None,
    controller: Mapping[str, Any] | None,
    *,
    node_overlays: Mapping[str, Any] | None,
    capacity_buffers: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The values under the keys a stack file's ``config`` gives them; an empty block is left out, as unset."""
    config: dict[str, Any] = {f"{NAMESPACE}:nodeClasses": dict(node_classes), f"{NAMESPACE}:nodePools": dict(node_pools)}
    for key, value in (
        ("cluster", cluster),
        ("policy", policy),
        ("controller", controller),
        ("nodeOverlays", node_overlays),
        ("capacityBuffers", capacity_buffers),
    ):
        if value is not None and (value or key == "controller"):
            config[f"{NAMESPACE}:{key}"] = value
    return config


def standalone(
    kind: str,
    key: str,
    spec: Mapping[str, Any],
    cluster: Mapping[str, Any] | None = None,
    policy: Mapping[str, Any] | None = None,
) -> tuple[Mapping[str, Any], list[Finding]]:
    """A NodeOverlay or CapacityBuffer declared alone under its stack ``key`` (``name``, or ``namespace/name``
    for a buffer): the metadata it is applied with, and what ``validate`` finds in it for the stack's
    cluster (its release, its feature gates) and policy. Nothing else of the stack is needed to judge it."""
    objects = {key: spec}
    inputs, release = load_inputs(
        cluster,
        {},
        {},
        policy,
        node_overlays=objects if kind == NODEOVERLAY else None,
        capacity_buffers=objects if kind == CAPACITYBUFFER else None,
    )
    loaded = next((o for o in inputs.objects if o.kind == kind), None)
    metadata = loaded.raw["metadata"] if loaded is not None else {"name": key}  # not loaded: refused, see the findings
    return metadata, sorted(check(inputs, release), key=lambda f: f.sort_key)


def check(inputs: Inputs, release: versions.Release, stored: Inputs | None = None) -> list[Finding]:
    """What ``validate`` finds in these inputs, plus Karpenter's update-only rules against ``stored``."""
    judge = Judge(release, inputs.policy)
    found = judge.objects(inputs)
    if stored is not None:
        found += judge.transitions(stored, inputs)
    return found


def value_at(document: Any, path: str) -> Any:
    """The value at a finding's ``path`` (``spec.taints[0].effect``) in ``document``; None where it holds none."""
    value = document
    for segment in path_segments(path):
        if isinstance(value, Mapping):
            value = value.get(segment)
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return None
    return value


def judged(inputs: Inputs, release: versions.Release, observed: Iterable[Observation]) -> list[Finding]:
    """What the Pulumi layer alone could observe (e.g. the cluster's IP family), judged under the stack's settings."""
    return Judge(release, inputs.policy).findings(observed)


def controller_findings(inputs: Inputs, release: versions.Release) -> list[Finding]:
    """What the controller rules find: the block's own problems and the per-object coherence checks, the
    rules the ``KarpenterController`` component runs before it creates anything."""
    wanted = (*controller_rules.BLOCK_RULES, *controller_rules.OBJECT_RULES)
    return [f for f in Judge(release, inputs.policy).objects(inputs) if f.rule in wanted]


def provider_settings(config: Any) -> AwsSettings:
    """The stack's ``aws:`` config as the pulumi-aws provider reads it (see :meth:`AwsSettings.from_stack_config`)."""
    return AwsSettings.from_stack_config(config)


def reconciled(
    cluster: Mapping[str, Any] | None,
    node_classes: Mapping[str, Any],
    node_pools: Mapping[str, Any],
    policy: Mapping[str, Any] | None = None,
    *,
    node_overlays: Mapping[str, Any] | None = None,
    workloads: Sequence[Any] | None = None,
    settings: AwsSettings | None = None,
) -> tuple[Plan, dict | None]:
    """What the dynamic provider stores of a stack's settings: the reconciliation against the AWS of the
    stack's provider settings (else the environment's), and, given ``workloads`` (Kubernetes objects, as
    the component passes them), what Karpenter would launch for them over the plan's NodePools, from the
    same session: the plan's catalogue and AMI mapping, the region's prices; as the output holds it
    (:func:`~karpenter_gitops.output.workload_forecast_text.outline`), None without workloads.

    An AWS outage is a plan that decided nothing, and no forecast. No region, or no usable credentials, is
    an InputError: the user's setup, not something AWS said, so never a change."""
    inputs, release = load_inputs(cluster, node_classes, node_pools, policy, node_overlays=node_overlays)
    session = _session(settings)
    try:
        planned = reconcile(inputs, release=release, kubernetes=inputs.cluster.kubernetes, aws=session)
    except TransientAWSError as err:
        return Plan({}, {}, transient=(str(err),)), None
    if workloads is None or planned.transient:
        return planned, None
    loaded = workloads_from_documents([(WORKLOADS, engine_values.normalise(list(workloads)))], inputs.cluster.kubernetes)
    forecast = forecaster(Target(session), release, loaded, [WORKLOADS])(inputs, planned)
    return planned, outline(forecast)


def workload_objects(paths: Any) -> list[dict]:
    """The workload objects (Deployments, Pods, DaemonSets, ... also inside ``List`` items) of the files under
    ``paths`` (``karpenter-gitops:workloads``), as the component passes them on: other objects (ConfigMaps,
    Secrets) stay out of the resource's inputs and state."""
    return [doc for _, docs in files.read(workload_paths(paths, SOURCE)) for doc in _workloads_in(docs)]


def _workloads_in(documents: Iterable[Any]) -> Iterable[dict]:
    for doc in documents:
        if not isinstance(doc, Mapping):
            continue
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            yield from _workloads_in(doc["items"])
        elif kind in WORKLOAD_KINDS:
            yield dict(doc)


def forecast_price(outlined: Mapping[str, Any] | None) -> str:
    """A stored forecast's total per hour, for the reason a preview gives (``$0.2114–$0.6323/h``)."""
    hourly = (outlined or {}).get("pricePerHour")
    return price_range(hourly["low"], hourly["high"]) if hourly else "no forecast"


def _session(settings: AwsSettings | None) -> AwsSession:
    try:
        session = AwsSession(settings=settings)
        session.require_credentials()
    except PersistentAWSError as err:
        raise InputError(
            err.detail, hint="configure the stack's aws provider (aws:region, aws:profile) or the environment"
        ) from None
    return session
