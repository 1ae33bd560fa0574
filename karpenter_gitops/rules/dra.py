"""``dra/`` rules: the NVIDIA DRA GPU sharing an EC2NodeClass asks for, as Karpenter 1.15 judges it.

From 1.15 the annotation ``karpenter.k8s.aws/nvidia-consumable-capacity`` says how Karpenter models an
NVIDIA GPU for Dynamic Resource Allocation: ``disabled`` (or empty), ``memory``, ``unlimited``, or a
positive share count. It is free-form, so the API server takes anything; the validation reconciler
(provider v1.15.0 ``pkg/controllers/nodeclass/validation.go``, right after the kubelet checks, before it
waits for the resolutions) refuses a value ``nvidiadra.ParseConsumableCapacity`` cannot read
(``NVIDIAConsumableCapacityInvalid``) and a sharing mode while the ``DRANVIDIAGPU`` AWS feature gate is off
(``DRADisabled``): ValidationSucceeded=False, and no node of the class launches.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.core.model import EC2NODECLASS, EC2NodeClass
from karpenter_gitops.core.name_validation import go_quote
from karpenter_gitops.core.versions import Release
from karpenter_gitops.rules.registry import rule

SINCE = Release((1, 15))
ANNOTATION = "karpenter.k8s.aws/nvidia-consumable-capacity"
GATE = "DRANVIDIAGPU"
INVALID, DISABLED = "NVIDIAConsumableCapacityInvalid", "DRADisabled"  # Karpenter's condition reasons
_OFF = ("", "disabled")  # the values that ask for no sharing, valid with the gate off
_MODES = ("memory", "unlimited")
_INT64 = re.compile(r"^[+-]?[0-9]+$")  # what Go's strconv.ParseInt reads in base 10
_PATH = f"metadata.annotations[{ANNOTATION}]"
_KEY = ANNOTATION.encode()


def _annotated(value: str) -> dict:
    return {"metadata": {"annotations": {ANNOTATION: value}}}


def refusal(node_class: EC2NodeClass, cluster: Cluster) -> tuple[str, str] | None:
    """Karpenter's (reason, message) for the class's annotation, or None when it has no word to say."""
    if _KEY not in node_class.document:  # the manifest stays packed unless the annotation may be there
        return None
    value = ((node_class.raw.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
    if not isinstance(value, str):
        return None
    if not (value in _OFF or value in _MODES or _share_count(value)):
        choices = ", ".join(go_quote(choice) for choice in ("disabled", *_MODES))
        return INVALID, f"annotation {ANNOTATION}, {go_quote(value)} is not one of {choices}, or a positive integer share count"
    if value not in _OFF and not cluster.gate(GATE):
        return DISABLED, f"annotation {ANNOTATION} enables GPU sharing, but the {GATE} feature gate is disabled"
    return None


def _share_count(value: str) -> bool:
    """A positive count Go's ``strconv.ParseInt(value, 10, 64)`` reads (a sign, any leading zeros, within int64)."""
    digits = value.lstrip("+-").lstrip("0")
    return bool(_INT64.match(value)) and len(digits) <= 19 and 1 <= int(value) < 2**63


def _violations(node_class: EC2NodeClass, cluster: Cluster, reason: str, hint: str) -> Iterator[Violation]:
    found = refusal(node_class, cluster)
    if found and found[0] == reason:
        yield Violation(
            _PATH, f"{found[1]}: Karpenter reports ValidationSucceeded=False ({reason}) and launches no node of this class", hint
        )


@rule(
    "dra/nvidia-consumable-capacity",
    Severity.ERROR,
    [EC2NODECLASS],
    f"The {ANNOTATION} annotation with a value Karpenter cannot read (not disabled, memory, unlimited or a positive "
    f"share count): the class is ValidationSucceeded=False ({INVALID}) and launches nothing.",
    "Write disabled, memory, unlimited or a whole number of shares of at least 1, or remove the annotation.",
    since=SINCE,
    good=(_annotated("memory") | {"featureGates": {GATE: True}}, _annotated("disabled")),
    bad=(_annotated("half"), _annotated("0")),
)
def consumable_capacity(obj: EC2NodeClass, ctx) -> Iterator[Violation]:
    yield from _violations(obj, ctx.inputs.cluster, INVALID, "write disabled, memory, unlimited or a share count of at least 1")


@rule(
    "dra/nvidia-gate-off",
    Severity.ERROR,
    [EC2NODECLASS],
    f"The {ANNOTATION} annotation asks for GPU sharing (memory, unlimited or shares) while Karpenter's {GATE} AWS "
    f"feature gate is off (its default): the class is ValidationSucceeded=False ({DISABLED}) and launches nothing.",
    f"Run Karpenter with --aws-feature-gates {GATE}=true (Helm: settings.awsFeatureGates.draNVIDIAGPU=true) and "
    f"declare it: karpenter-gitops:cluster.featureGates: {{{GATE}: true}} (--feature-gates {GATE}=true with "
    "manifests); or set the annotation to disabled.",
    since=SINCE,
    good=(_annotated("4") | {"featureGates": {GATE: True}}, _annotated("")),
    bad=(_annotated("4"), _annotated("unlimited")),
)
def gate_off(obj: EC2NodeClass, ctx) -> Iterator[Violation]:
    yield from _violations(
        obj,
        ctx.inputs.cluster,
        DISABLED,
        f"run Karpenter with --aws-feature-gates {GATE}=true and declare it "
        f"(stack cluster.featureGates, or --feature-gates {GATE}=true here); or set the annotation to disabled",
    )
