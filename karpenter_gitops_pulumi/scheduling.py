"""The ``NodeOverlay`` and ``CapacityBuffer`` components: objects that steer what Karpenter launches.

A NodeOverlay changes the price or capacity Karpenter assumes for instance types; a CapacityBuffer
keeps spare capacity ready. Neither names a class nor needs AWS, so each is judged on its own when
the component is built (a spec holding other resources' outputs: once they are known), exactly as
``validate --stack`` judges it (:func:`karpenter_gitops.app.stack.standalone`): an error stops the
program before its custom resource is registered, a warning or note (a feature gate the cluster
does not declare on) shows in the preview.

No ``from __future__ import annotations``: the component provider reads the ``args`` annotations at
run time to infer the schema.
"""

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from karpenter_gitops.app import stack
from karpenter_gitops.core.model import CAPACITYBUFFER, CAPACITYBUFFER_API, NODEOVERLAY, NODEOVERLAY_API, STACK_KEY
from karpenter_gitops_pulumi import arguments
from karpenter_gitops_pulumi.errors import one_line, one_line_errors, refuse_errors
from karpenter_gitops_pulumi.identity import with_the_other_forms_alias
from karpenter_gitops_pulumi.nodeclass import ClusterArgs, cluster_block, cluster_of, holds_outputs, kept_secret, specs_are_secret

# Written by Karpenter (the overlay's validation condition, the buffer's computed replicas), never by us.
CONTROLLER_OWNED = ["status"]


class NodeOverlayArgs(TypedDict):
    """One NodeOverlay; the component's resource name is its ``metadata.name``."""

    spec: dict[str, Any]
    """The NodeOverlay spec, spelled as the CRD (``karpenter.sh/v1alpha1``): requirements, price or priceAdjustment,
    capacity, weight."""
    cluster: NotRequired[ClusterArgs]
    """The cluster it is for: its Karpenter release (1.7+ serves the kind) and feature gates (``NodeOverlay``)."""
    policy: NotRequired[dict[str, Any]]
    """The stack's policy block (``karpenter-gitops:policy``), applied as ``validate`` applies it."""
    secret: NotRequired[bool]
    """Keep the spec secret; without it, a spec holding Outputs or read while a spec key is secret stack
    config is kept secret too."""


class CapacityBufferArgs(TypedDict):
    """One CapacityBuffer; the component's resource name is ``namespace/name`` (or a name alone: the
    provider's default namespace), as the stack's ``karpenter-gitops:capacityBuffers`` keys it."""

    spec: dict[str, Any]
    """The CapacityBuffer spec, spelled as the CRD (``autoscaling.x-k8s.io/v1beta1``): podTemplateRef or scalableRef,
    replicas, percentage, limits."""
    cluster: NotRequired[ClusterArgs]
    """The cluster it is for: its Karpenter release (1.14+ serves the kind) and feature gates (``CapacityBuffer``)."""
    policy: NotRequired[dict[str, Any]]
    """The stack's policy block (``karpenter-gitops:policy``), applied as ``validate`` applies it."""
    secret: NotRequired[bool]
    """Keep the spec secret; without it, a spec holding Outputs or read while a spec key is secret stack
    config is kept secret too."""


def _apply(component: pulumi.ComponentResource, kind: str, api_version: str, name: str, args: Any) -> dict[str, str]:
    """Judge the object as the stack declares it under ``name``, then register its custom resource; its metadata.

    A spec holding outputs of other resources (a PodTemplate's name) is judged once they are known: in
    ``up``, or in a preview that knows them; the custom resource waits for that judgement."""
    where = f"karpenter-gitops:{STACK_KEY[kind]}.{name}"
    cluster, policy = cluster_block(cluster_of(args.get("cluster"), f"{kind} {name!r}")), args.get("policy")

    def judged(spec: Any) -> dict[str, str]:
        metadata, findings = stack.standalone(kind, name, spec, cluster, policy)
        refuse_errors(findings, where)
        return dict(metadata)

    def judged_when_known(spec: Any) -> Any:
        with one_line():
            judged(spec)
        return spec

    spec = args["spec"]
    secret = specs_are_secret(args.get("secret"))
    if holds_outputs(spec):
        metadata, _ = stack.standalone(kind, name, None, cluster, policy)  # the key alone names it (or is refused)
        spec = pulumi.Output.from_input(spec).apply(judged_when_known)
    else:
        metadata = judged(spec)
    k8s.apiextensions.CustomResource(
        f"{name}-{kind.lower()}",
        api_version=api_version,
        kind=kind,
        metadata=dict(metadata),
        spec=kept_secret(spec, secret),
        opts=pulumi.ResourceOptions(parent=component, ignore_changes=CONTROLLER_OWNED),
    )
    return dict(metadata)


class NodeOverlay(pulumi.ComponentResource):
    """A NodeOverlay applied after ``validate``'s rules found no error in it."""

    node_overlay_name: pulumi.Output[str]
    """The NodeOverlay's metadata.name."""

    @one_line_errors
    def __init__(self, name: str, args: NodeOverlayArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        given = arguments.read(args, NodeOverlayArgs, f"NodeOverlay {name!r}")
        super().__init__("karpenter-gitops:index:NodeOverlay", name, None, with_the_other_forms_alias(opts))
        _apply(self, NODEOVERLAY, NODEOVERLAY_API, name, given)
        self.node_overlay_name = pulumi.Output.from_input(name)
        self.register_outputs({"nodeOverlayName": self.node_overlay_name})


class CapacityBuffer(pulumi.ComponentResource):
    """A CapacityBuffer applied in its namespace after ``validate``'s rules found no error in it."""

    capacity_buffer_name: pulumi.Output[str]
    """The CapacityBuffer's metadata.name."""
    namespace: pulumi.Output[str | None]
    """Its metadata.namespace, when the name gives one."""

    @one_line_errors
    def __init__(self, name: str, args: CapacityBufferArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        given = arguments.read(args, CapacityBufferArgs, f"CapacityBuffer {name!r}")
        super().__init__("karpenter-gitops:index:CapacityBuffer", name, None, with_the_other_forms_alias(opts))
        metadata = _apply(self, CAPACITYBUFFER, CAPACITYBUFFER_API, name, given)
        self.capacity_buffer_name = pulumi.Output.from_input(metadata["name"])
        self.namespace = pulumi.Output.from_input(metadata.get("namespace"))
        self.register_outputs({"capacityBufferName": self.capacity_buffer_name, "namespace": self.namespace})
