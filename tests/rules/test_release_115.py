"""Karpenter 1.15 as the project judges it: what its CRDs changed and the kubelet checks Karpenter took over.

Facts from the v1.15.0 module (pkg/apis/crds, pkg/apis/v1/kubeletconfiguration_validation.go,
pkg/controllers/nodeclass/validation.go); tests/real/test_release_115_crds.py holds our verdicts
against those CRDs themselves.
"""

from __future__ import annotations

import pytest
from support.rule_helpers import findings, fired, node_class, node_pool, stack_with

from karpenter_gitops.cli import main
from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Severity

V114, V115 = (1, 14), (1, 15)
INVALID, EXPRESSIONS, FAMILY = "kubelet/invalid-configuration", "kubelet/expressions-disabled", "kubelet/unsupported-for-family"


def errors(doc, release) -> list[tuple[str, str, str]]:
    return [(f.rule, f.path, f.message) for f in findings(doc, release=release) if f.severity is Severity.ERROR]


def kubelet(block: dict, **spec) -> dict:
    return node_class({"spec": {"kubelet": block, **spec}})


def test_an_upstream_kubelet_field_is_a_false_error_no_more_from_115():
    """The user report: an AL2023 class with a kubelet field 1.15 accepts got a schema error."""
    doc = kubelet({"shutdownGracePeriod": "30s", "maxPods": 110})
    assert [e[0] for e in errors(doc, V114)] == ["schema/unknown-field"]
    assert errors(doc, V115) == []


def test_from_115_kubelet_mistakes_are_karpenters_not_the_api_servers():
    doc = kubelet(
        {
            "maxPod": 110,
            "imageGCHighThresholdPercent": 80,
            "imageGCLowThresholdPercent": 85,
            "kubeReserved": {"gpu": "1", "memory": "-1Gi"},
        }
    )
    found = errors(doc, V115)
    assert {rule for rule, _, _ in found} == {INVALID}
    assert sorted((path, message) for _, path, message in found) == sorted(
        [
            ("spec.kubelet.maxPod", 'unknown field "maxPod"'),
            (
                "spec.kubelet.kubeReserved",
                '"gpu" isn\'t a reservable resource, must be one of cpu, memory, ephemeral-storage, pid',
            ),
            ("spec.kubelet.kubeReserved[memory]", '"-1Gi" can\'t be a negative resource quantity'),
            ("spec.kubelet", "imageGCHighThresholdPercent (80) must be greater than imageGCLowThresholdPercent (85)"),
        ]
    )
    assert {rule for rule, _, _ in errors(doc, V114)} == {
        "schema/unknown-field",
        "cel/kubelet-map-keys",
        "cel/kubelet-reserved-not-negative",
        "cel/kubelet-image-gc-thresholds",
    }


def test_a_wrong_type_is_reported_alone_as_the_strict_decoder_does():
    found = fired(findings(kubelet({"podsPerCore": "four", "maxPod": 1}), release=V115), INVALID)
    assert found == [
        (
            "spec.kubelet.podsPerCore",
            "json: cannot unmarshal string into Go struct field KubeletConfiguration.podsPerCore of type int32",
        )
    ]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"evictionSoft": {"memory.available": "10%"}}, "has no matching evictionSoftGracePeriod"),
        ({"evictionSoftGracePeriod": {"memory.available": "1m"}}, "has no matching evictionSoft"),
        ({"evictionHard": {"memory.available": "120%"}}, '"120%" must be a percentage or a resource quantity'),
        ({"evictionHard": {"memory.available": "-1Gi"}}, '"-1Gi" can\'t be a negative resource quantity'),
        (
            {"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "soon"}},
            '"soon" must be a duration',
        ),
        ({"registerWithTaints": []}, "can't be set, Karpenter sets it from the NodeClaim's taints"),
        ({"podsPerCore": -1}, "-1 can't be negative"),
        ({"imageGCLowThresholdPercent": 101}, "101 must be between 0 and 100"),
        (
            {"maxPods": 2**31},
            f"json: cannot unmarshal number {2**31} into Go struct field KubeletConfiguration.maxPods of type int32",
        ),
        (
            {"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "-1m"}},
            '"-1m" can\'t be a negative duration',
        ),
    ],
)
def test_karpenters_semantic_checks_in_its_words(block, message):
    assert any(message in text for _, text in fired(findings(kubelet(block), release=V115), INVALID))


def test_good_kubelet_blocks_pass():
    assert (
        errors(
            kubelet({"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "-0s"}}), V115
        )
        == []
    )
    good = {
        "evictionSoft": {"memory.available": "500Mi"},
        "evictionSoftGracePeriod": {"memory.available": "1m30s"},
        "evictionHard": {"nodefs.available": "10%"},
        "imageGCHighThresholdPercent": 85,
        "imageGCLowThresholdPercent": 80,
        "cpuCFSQuota": True,
        "clusterDNS": ["10.100.0.10"],
        "systemReserved": {"cpu": "100m", "memory": "100Mi"},
    }
    assert errors(kubelet(good), V115) == []


def test_a_cel_expression_needs_the_gate_karpenter_ships_off():
    doc = kubelet({"maxPods": "min(max_pods, 110)"})
    assert fired(findings(doc, release=V115), EXPRESSIONS) == [
        ("spec.kubelet.maxPods", "spec.kubelet contains a CEL expression, but the NodeClassCEL feature gate is disabled")
    ]
    assert fired(findings(doc, release=V115), INVALID) == []  # a string maxPods is an expression, not a type error
    assert "schema/type" in {rule for rule, _, _ in errors(doc, V114)}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"amiSelectorTerms": [{"alias": "al2023@latest"}]}, []),
        ({"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-0123abcd"}]}, []),
        (
            {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]},
            [
                "spec.kubelet has fields not applied by the Bottlerocket AMI family that would be silently dropped: podsPerCore, shutdownGracePeriod",
                "the Bottlerocket AMI family doesn't accept multiple entries, only one, but 2 were set",
            ],
        ),
        (
            {"amiSelectorTerms": [{"alias": "windows2022@latest"}]},
            [
                "spec.kubelet has fields not applied by the Windows2022 AMI family that would be silently dropped: shutdownGracePeriod",
                "the Windows2022 AMI family doesn't accept multiple entries, only one, but 2 were set",
            ],
        ),
    ],
)
def test_only_al2023_takes_every_kubelet_field_and_custom_is_not_checked(spec, expected):
    doc = kubelet({"podsPerCore": 2, "shutdownGracePeriod": "30s", "clusterDNS": ["10.0.0.10", "10.0.0.11"]}, **spec)
    assert [message for _, message in fired(findings(doc, release=V115), FAMILY)] == expected


def test_the_other_115_crd_changes():
    enclave = node_class({"spec": {"enclaveOptions": {"enabled": True}}})
    assert [e[0] for e in errors(enclave, V114)] == ["schema/version"] and errors(enclave, V115) == []
    assert [e[:2] for e in errors(node_class({"spec": {"enclaveOptions": {}}}), V115)] == [
        ("schema/required", "spec.enclaveOptions.enabled")
    ]
    unhealthy = node_pool({"spec": {"disruption": {"budgets": [{"nodes": "1", "reasons": ["Unhealthy"]}]}}})
    assert [e[0] for e in errors(unhealthy, V114)] == ["schema/enum"] and errors(unhealthy, V115) == []
    defaulted = node_pool({"spec": {"disruption": {"consolidateAfter": None, "consolidationPolicy": "WhenEmpty"}}})
    assert [e[0] for e in errors(defaulted, V114)] == ["schema/required"] and errors(defaulted, V115) == []


def test_a_release_newer_than_the_project_knows_is_judged_as_the_newest_with_a_line(tmp_path, capsys):
    assert versions.known((1, 16)) == (
        versions.NEWEST,
        "Karpenter 1.16 is newer than the newest release karpenter-gitops knows (1.15): judged as 1.15",
    )
    assert versions.known((1, 15)) == ((1, 15), None)
    path = tmp_path / "class.yaml"
    path.write_text(
        "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: x}\nspec:\n"
        "  amiSelectorTerms: [{alias: al2023@latest}]\n  role: R\n"
        "  subnetSelectorTerms: [{id: subnet-1}]\n  securityGroupSelectorTerms: [{id: sg-1}]\n"
        "  kubelet: {shutdownGracePeriod: 30s}\n"
    )
    assert main(["validate", str(path), "--karpenter-version", "1.16"]) == 0
    out, err = capsys.readouterr()
    assert (
        err == "karpenter-gitops: Karpenter 1.16 is newer than the newest release karpenter-gitops knows (1.15): judged as 1.15\n"
    )
    assert "checked against Karpenter 1.15" in out


def test_a_gate_the_stack_declares_on_allows_kubelet_expressions(tmp_path, capsys):
    assert main(["validate", stack_with(tmp_path, '{name: demo, karpenterVersion: "1.15"}')]) == 1
    assert "[kubelet/expressions-disabled]" in capsys.readouterr().out
    assert (
        main(["validate", stack_with(tmp_path, '{name: demo, karpenterVersion: "1.15", featureGates: {NodeClassCEL: true}}')])
        == 0
    )
    assert "[kubelet/expressions-disabled]" not in capsys.readouterr().out


def test_feature_gates_that_are_not_names_to_booleans_are_one_line(tmp_path, capsys):
    assert main(["validate", stack_with(tmp_path, '{karpenterVersion: "1.15", featureGates: {NodeClassCEL: "yes"}}')]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'karpenter-gitops:cluster.featureGates' must map gate names to true or false" in err
