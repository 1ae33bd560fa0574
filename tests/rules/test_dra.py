"""dra/: the NVIDIA consumable-capacity annotation as Karpenter 1.15's validation reads it, with its gate."""

from __future__ import annotations

import pytest
from support.rule_helpers import findings, node_class

from karpenter_gitops.rules import dra

_INVALID = (
    'annotation karpenter.k8s.aws/nvidia-consumable-capacity, {} is not one of "disabled", "memory", '
    '"unlimited", or a positive integer share count'
)
_DISABLED = (
    "annotation karpenter.k8s.aws/nvidia-consumable-capacity enables GPU sharing, but the DRANVIDIAGPU feature gate is disabled"
)


def _class(value: str) -> dict:
    return node_class({"metadata": {"annotations": {dra.ANNOTATION: value}}})


def _errors(value: str, release=(1, 15)) -> list[tuple[str, str, str]]:
    return [(f.rule, f.path, f.message) for f in findings(_class(value), release=release) if f.rule.startswith("dra/")]


@pytest.mark.parametrize("value", ["", "disabled"])
def test_no_sharing_needs_no_gate(value):
    assert _errors(value) == []


@pytest.mark.parametrize("value", ["memory", "unlimited", "1", "+3", "007", str(2**63 - 1), "0" * 30 + "5"])
def test_a_sharing_mode_without_the_gate_is_drad_disabled(value):
    [(rule, path, message)] = _errors(value)
    assert (rule, path) == ("dra/nvidia-gate-off", "metadata.annotations[karpenter.k8s.aws/nvidia-consumable-capacity]")
    assert message.startswith(_DISABLED + ": Karpenter reports ValidationSucceeded=False (DRADisabled)")


@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        ("0", '"0"'),
        ("-1", '"-1"'),
        ("half", '"half"'),
        (" 1", '" 1"'),
        ("1.5", '"1.5"'),
        ("Memory", '"Memory"'),
        (str(2**63), f'"{2**63}"'),
        ("1_000", '"1_000"'),
        ('say "x"', '"say \\"x\\""'),
        ("9" * 5000, '"' + "9" * 5000 + '"'),
    ],
)
def test_a_value_karpenter_cannot_read_is_invalid_gate_or_not(value, quoted):
    [(rule, _, message)] = _errors(value)
    assert rule == "dra/nvidia-consumable-capacity"
    assert message.startswith(
        _INVALID.format(quoted) + ": Karpenter reports ValidationSucceeded=False (NVIDIAConsumableCapacityInvalid)"
    )


def test_before_1_15_the_annotation_means_nothing():
    assert _errors("half", release=(1, 14)) == [] and _errors("memory", release=(1, 14)) == []


def test_the_gate_on_lets_sharing_through_and_reasons_are_karpenters():
    from karpenter_gitops.core.inputs import Cluster
    from karpenter_gitops.load.into_inputs import load_documents

    [shared], [broken] = (load_documents([("x.yaml", [_class(v)])], (1, 15)).node_classes for v in ("4", "x"))
    on = Cluster(feature_gates=frozenset({"DRANVIDIAGPU"}))
    assert dra.refusal(shared, on) is None and dra.refusal(shared, Cluster())[0] == "DRADisabled"
    assert dra.refusal(broken, on)[0] == "NVIDIAConsumableCapacityInvalid"
