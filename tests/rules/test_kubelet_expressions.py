"""kubelet/expression-invalid and the per-instance-type variables Karpenter 1.15 binds (rules/kubelet/).

Facts from the v1.15.0 module: pkg/controllers/nodeclass/validation.go (the order of its kubelet checks,
the first expression that fails to compile), pkg/providers/instancetype/types.go (buildCELVars, pods,
ENILimitedPods) and pkg/providers/amifamily (which families default to the ENI limit, which take podsPerCore).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from support.rule_helpers import node_class, stack_with

from karpenter_gitops.cli import main
from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.judge import validate
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter import kubelet as kubelet_cel
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules import kubelet as rules

GATED = Cluster(feature_gates=frozenset({rules.CEL_GATE}))
# m5.large as DescribeInstanceTypes answers: 2 vCPUs, 8 GiB, 3 ENIs on its one card, 10 IPv4 per ENI
M5_LARGE = {
    "InstanceType": "m5.large",
    "VCpuInfo": {"DefaultVCpus": 2},
    "MemoryInfo": {"SizeInMiB": 8192},
    "NetworkInfo": {
        "NetworkCards": [{"MaximumNetworkInterfaces": 3}],
        "DefaultNetworkCardIndex": 0,
        "Ipv4AddressesPerInterface": 10,
    },
}


def loaded(kubelet: dict, alias: str = "al2023@latest", **spec):
    doc = node_class({"spec": {"amiSelectorTerms": [{"alias": alias}], "kubelet": kubelet, **spec}})
    return load_documents([("class.yaml", [doc])], (1, 15)).node_classes[0]


def test_the_first_expression_that_does_not_compile_is_karpenters_reason_with_cel_gos_lines():
    cls = loaded({"maxPods": "max_pods * 0.9", "kubeReserved": {"memory": "memory_mb"}})
    reason, message = rules.validation_failure(cls, GATED)
    assert reason == "KubeletExpressionInvalid"
    assert message == (
        "validating expression, compiling expression, ERROR: <input>:1:10: found no matching overload for "
        "'_*_' applied to '(int, double)'\n | max_pods * 0.9\n | .........^ (expression=max_pods * 0.9) "
        "(field=spec.kubelet.maxPods)"
    )


def test_an_invalid_expression_comes_before_fields_the_family_drops_and_after_the_gate():
    cls = loaded({"podsPerCore": 2, "kubeReserved": {"cpu": "vcpus * 10.5"}}, alias="bottlerocket@latest")
    assert rules.validation_failure(cls, GATED)[0] == "KubeletExpressionInvalid"
    assert rules.validation_failure(cls, Cluster())[0] == "KubeletExpressionsDisabled"
    fixed = loaded({"podsPerCore": 2, "kubeReserved": {"cpu": "vcpus * 10"}}, alias="bottlerocket@latest")
    assert rules.validation_failure(fixed, GATED)[0] == "UnsupportedKubeletConfiguration"


def test_reserved_expressions_are_checked_in_key_order_after_max_pods():
    cls = loaded({"kubeReserved": {"memory": "b", "cpu": "a"}, "systemReserved": {"cpu": "c"}})
    assert list(rules.expression_texts(cls.raw["spec"]["kubelet"])) == [
        "spec.kubelet.kubeReserved[cpu]",
        "spec.kubelet.kubeReserved[memory]",
        "spec.kubelet.systemReserved[cpu]",
    ]
    assert "(field=spec.kubelet.kubeReserved[cpu])" in rules.validation_failure(cls, GATED)[1]


def test_a_stack_that_runs_the_gate_gets_the_finding_on_the_field(tmp_path, capsys):
    path = stack_with(tmp_path, '{name: demo, karpenterVersion: "1.15", featureGates: {NodeClassCEL: true}}')
    Path(path).write_text(
        Path(path)
        .read_text()
        .replace("kubelet: {maxPods: 'min(max_pods, 110)'}", "kubelet: {systemReserved: {memory: 'memory_mib / 100.0'}}")
    )
    assert main(["validate", path]) == 1
    out = capsys.readouterr().out
    assert "[kubelet/expression-invalid]" in out and "spec.kubelet.systemReserved[memory]" in out
    assert "applied to '(int, double)'" in out


@pytest.mark.parametrize(
    ("family", "pods_per_core", "max_pods"),
    [
        ("AL2023", None, 29),  # the ENI limit: 3 × (10 − 1) + 2
        ("AL2023", 4, 8),  # podsPerCore × vCPUs when lower
        ("Bottlerocket", 4, 29),  # Bottlerocket renders no podsPerCore
        ("Windows2022", None, 110),  # Windows does not use the ENI limit
    ],
)
def test_max_pods_is_worked_out_per_family_as_karpenter_does(family, pods_per_core, max_pods):
    variables = rules.cel_variables(M5_LARGE, amifamily.by_name(family), None, pods_per_core)
    assert variables == kubelet_cel.Vars(2, 8192, 3, 10, max_pods, "m5.large")


def test_a_static_max_pods_and_efa_only_interfaces_change_what_max_pods_is():
    al2023 = amifamily.by_name("AL2023")
    assert rules.cel_variables(M5_LARGE, al2023, 50, None).max_pods == 50
    assert rules.cel_variables(M5_LARGE, al2023, None, None, efa_only=1).max_pods == 2 * 9 + 2
    assert rules.cel_variables(M5_LARGE, al2023, None, None, efa_only=3).max_pods == 0


def test_reserved_expressions_see_the_max_pods_the_max_pods_expression_gives():
    cls = loaded({"maxPods": "min(max_pods, 20)", "kubeReserved": {"memory": "255 + 11 * max_pods"}})
    evaluated = {e.path: e for e in rules.evaluate_expressions(cls, [M5_LARGE])}
    assert evaluated["spec.kubelet.maxPods"].value == 20
    assert evaluated["spec.kubelet.kubeReserved[memory]"].value == 255 + 11 * 20


def test_after_a_failing_max_pods_karpenter_goes_no_further_for_that_type():
    cls = loaded({"maxPods": "max_pods / (vcpus - 2)", "kubeReserved": {"memory": "memory_mib / 0"}})
    [only] = rules.evaluate_expressions(cls, [M5_LARGE])
    assert only.path == "spec.kubelet.maxPods" and only.failure.startswith(
        "evaluating maxPods expression, evaluating expression, division by zero"
    )


def test_an_expression_is_checked_beside_other_kubelet_mistakes_which_karpenter_reports_first():
    cls = loaded({"maxPod": 110, "kubeReserved": {"cpu": "vcpus * 10.5"}})
    assert rules.validation_failure(cls, GATED)[0] == "InvalidKubeletConfiguration"
    inputs = dataclasses.replace(load_documents([("class.yaml", [cls.raw])], (1, 15)), cluster=GATED)
    found = {f.rule: f for f in validate(inputs, (1, 15)).findings}
    assert {"kubelet/invalid-configuration", "kubelet/expression-invalid"} <= set(found)  # one pass shows both
    assert found["kubelet/expression-invalid"].path == "spec.kubelet.kubeReserved[cpu]"
    assert "int and double" in found["kubelet/expression-invalid"].hint
