"""Our NodePool rules on the pool's taints: Karpenter's own taints set by hand, a startup taint nothing
removes, the same taint twice.
"""

from __future__ import annotations

from collections.abc import Iterator

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import NODEPOOL
from karpenter_gitops.karpenter.amifamily.userdata.taints import LOOKALIKE
from karpenter_gitops.rules.label_keys import (
    KNATIVE_UNTIL,
    knative,
)
from karpenter_gitops.rules.registry import rule

KINDS = (NODEPOOL,)
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


_KARPENTER_TAINTS = {
    "karpenter.sh/unregistered": "its registration taint, added at launch and removed once the node registers",
    "karpenter.sh/disrupted": "its disruption taint, put on nodes it is about to drain",
}
_NOT_A_KARPENTER_TAINT = LOOKALIKE  # one spelling for the NodePool rule and the userData checks


def taints_of(obj) -> Iterator[tuple[str, str, int, object]]:
    """(path, field, index, taint) of every taint and startup taint with a key; field is taints or startupTaints."""
    template = obj.spec.template
    spec = template.spec if template else None
    if spec is None:
        return
    for wire, taints in (("taints", spec.taints), ("startupTaints", spec.startup_taints)):
        for index, taint in enumerate(taints or ()):
            if taint is not None and taint.key is not None:
                yield f"spec.template.spec.{wire}[{index}]", wire, index, taint


@rule(
    "nodepool/reserved-taint",
    ERROR,
    KINDS,
    "A taint or startup taint with a key Karpenter manages itself (karpenter.sh/unregistered, karpenter.sh/disrupted).",
    "Remove the taint; Karpenter adds and removes it on its own.",
    origin="ours",
    good=({"spec": {"template": {"spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}}},),
    bad=({"spec": {"template": {"spec": {"startupTaints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]}}}},),
)
def reserved_taint(obj, ctx):
    for path, _, _, taint in taints_of(obj):
        purpose = _KARPENTER_TAINTS.get(taint.key)
        if purpose:
            yield Violation(f"{path}.key", f"taint {taint.key!r} is reserved for Karpenter: {purpose}")


@rule(
    "nodepool/uninitialized-taint",
    WARNING,
    KINDS,
    "karpenter.sh/uninitialized is not a Karpenter taint, and nothing removes it unless you run something that does.",
    "Drop it: Karpenter's registration taint is karpenter.sh/unregistered:NoExecute (set by Karpenter itself); "
    "the cloud provider's is node.cloudprovider.kubernetes.io/uninitialized.",
    origin="ours",
    good=(
        {
            "spec": {
                "template": {
                    "spec": {"startupTaints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}]}
                }
            }
        },
    ),
    bad=({"spec": {"template": {"spec": {"startupTaints": [{"key": "karpenter.sh/uninitialized", "effect": "NoSchedule"}]}}}},),
)
def uninitialized_taint(obj, ctx):
    for path, _, _, taint in taints_of(obj):
        if taint.key == _NOT_A_KARPENTER_TAINT:
            yield Violation(
                f"{path}.key",
                f"{_NOT_A_KARPENTER_TAINT!r} is not a Karpenter taint: Karpenter's registration taint is "
                "'karpenter.sh/unregistered:NoExecute', which it sets itself, and the cloud provider's is "
                "'node.cloudprovider.kubernetes.io/uninitialized'",
            )


@rule(
    "nodepool/duplicate-taint",
    ERROR,
    KINDS,
    "Two taints with the same key and effect across taints and startupTaints (a startup taint repeated as a taint, "
    "or one listed twice): the API server admits it, Karpenter's runtime validation sets ValidationSucceeded=False "
    "(NodePoolValidationFailed) and the pool launches nothing.",
    "Keep one of them: a taint that must go away once the node is ready belongs only in startupTaints.",
    good=(
        {
            "spec": {
                "template": {
                    "spec": {"startupTaints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}]}
                }
            }
        },
    ),
    bad=(
        {
            "spec": {
                "template": {
                    "spec": {
                        "taints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}],
                        "startupTaints": [{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}],
                    }
                }
            }
        },
    ),
)
def duplicate_taint(obj, ctx):
    seen = set()
    for path, _, index, taint in taints_of(obj):
        pair = (taint.key, taint.effect or "")
        if pair in seen:
            message = f"duplicate taint Key/Effect pair {taint.key}={taint.effect or ''}"
            if ctx.release < KNATIVE_UNTIL:  # 1.0 named the index under 'taints' for startup taints too
                message = knative(message, f"spec.template.spec.taints[{index}]")
            yield Violation(path, message)
        seen.add(pair)
