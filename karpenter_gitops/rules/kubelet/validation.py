"""The reason Karpenter 1.15 gives first when the kubelet block fails its validation, as plan predicts the
class's ValidationSucceeded condition: the ``kubelet/`` rules' checks in Karpenter's order."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.rules.kubelet import configuration, expressions
from karpenter_gitops.rules.kubelet.configuration import Said

# Karpenter's order of the kubelet checks in its validation reconciler; the first that fails is the reason.
_REASONS: tuple[tuple[str, Callable[[Any, Cluster], Iterator[Said]]], ...] = (
    ("InvalidKubeletConfiguration", lambda obj, _cluster: configuration.invalid(obj)),
    ("KubeletExpressionsDisabled", expressions.disabled),
    # Karpenter stops at the first expression that does not compile, and shows cel-go's caret lines.
    (
        "KubeletExpressionInvalid",
        lambda obj, cluster: (said for said, _ in expressions.not_compiling(obj, cluster, snippets=True)),
    ),
    ("UnsupportedKubeletConfiguration", lambda obj, _cluster: configuration.unsupported(obj)),
)


def validation_failure(node_class, cluster: Cluster) -> tuple[str, str] | None:
    """(reason, message) of the ValidationSucceeded=False Karpenter 1.15+ sets for the class's kubelet
    block, or None; its checks run before it waits for the AMI, subnet, group and profile resolution."""
    for reason, check in _REASONS:
        if said := [text for text, _ in check(node_class, cluster)]:
            return reason, said[0] if reason == "KubeletExpressionInvalid" else "; ".join(said)
    return None
