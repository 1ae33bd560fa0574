"""CapacityBuffer (``autoscaling.x-k8s.io/v1beta1``, from Karpenter 1.14): the CEL rules of its CRD.

A buffer keeps spare capacity ready: room for a number of pods of a PodTemplate, or for a share of a
workload's replicas. The documentation's first examples were ``v1alpha1``, which no release serves:
such a manifest is refused by its apiVersion (schema/api-version).
"""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import CAPACITYBUFFER, CAPACITYBUFFER_SINCE
from karpenter_gitops.rules.registry import rule

KINDS = (CAPACITYBUFFER,)


def _buffer(spec: dict) -> dict:
    """An example: the base CapacityBuffer of rules/examples.py with this spec."""
    return {"kind": CAPACITYBUFFER, "spec": spec}


@rule(
    "cel/buffer-template-size",
    Severity.ERROR,
    KINDS,
    "CEL: a buffer of a PodTemplate says how much: replicas or limits.",
    "Add replicas (how many pods' worth) or limits (how much capacity).",
    since=CAPACITYBUFFER_SINCE,
    good=(_buffer({"podTemplateRef": {"name": "spare"}, "replicas": 3}),),
    bad=(_buffer({"podTemplateRef": {"name": "spare"}, "replicas": None}),),
)
def template_size(obj, ctx):
    spec = obj.spec
    if spec.pod_template_ref is not None and spec.replicas is None and spec.limits is None:
        yield Violation("spec", "If podTemplateRef is set, replicas or limits must also be set")


@rule(
    "cel/buffer-template-xor-scalable",
    Severity.ERROR,
    KINDS,
    "CEL: a buffer is sized from a PodTemplate or from a workload (scalableRef), not both.",
    "Keep podTemplateRef (with replicas or limits) or scalableRef (with percentage or replicas).",
    since=CAPACITYBUFFER_SINCE,
    good=(
        _buffer(
            {"podTemplateRef": None, "scalableRef": {"apiGroup": "apps", "kind": "Deployment", "name": "web"}, "percentage": 20}
        ),
    ),
    bad=(_buffer({"scalableRef": {"apiGroup": "apps", "kind": "Deployment", "name": "web"}}),),
)
def template_xor_scalable(obj, ctx):
    if obj.spec.pod_template_ref is not None and obj.spec.scalable_ref is not None:
        yield Violation("spec", "You must define either PodTemplateRef or ScalableRef, but not both")
