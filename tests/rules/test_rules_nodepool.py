"""NodePool rules: CEL mirrors (exact messages per release) and our stricter checks."""

from __future__ import annotations

import dataclasses
import re

import pytest
import yaml
from support.rule_helpers import (
    RELEASES,
    crd_messages,
    findings,
    fired,
    node_class,
    node_pool,
    requirements,
)
from support.upstream import crds

from karpenter_gitops.judge import validate
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules.label_keys import AWS_GROUP, AWS_LABELS

CRD = "karpenter.sh_nodepools.yaml"


def _pool_findings(patch, release=(1, 14), *classes) -> list:
    return findings(node_pool(patch), *(classes or (node_class(),)), release=release)


def _messages(patch, rule_id, release=(1, 14)) -> list[str]:
    return [m for _, m in fired(_pool_findings(patch, release), rule_id)]


# --- every CEL message of the real CRDs is produced, and nothing else ---------------------

_RESTRICTED_KEYS = [
    "karpenter.sh/registered",
    "karpenter.sh/nodepool",
    "kubernetes.io/hostname",
    "karpenter.k8s.aws/instance-pods",
    "kubernetes.io/team",
    "example.k8s.io/team",
]
_EVERY_CEL_RULE = [
    requirements(
        {"key": "kubernetes.io/arch", "operator": "In", "values": []},
        {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4", "8"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"], "minValues": 2},
        *({"key": key, "operator": "Exists"} for key in _RESTRICTED_KEYS),
    ),
    {"spec": {"template": {"metadata": {"labels": {key: "x" for key in _RESTRICTED_KEYS}}}}},
    {"spec": {"disruption": {"budgets": [{"nodes": "1", "schedule": "@daily"}]}}},
    {"spec": {"replicas": 2, "weight": 5}},
    {"spec": {"template": {"spec": {"nodeClassRef": {"group": "", "kind": "", "name": ""}}}}},
]


@pytest.mark.parametrize("release", RELEASES, ids=RELEASES.get)
def test_every_crd_cel_message_is_mirrored_verbatim(release):
    produced = {f.message for patch in _EVERY_CEL_RULE for f in _pool_findings(patch, release) if f.rule.startswith("cel/")}
    assert produced == crd_messages(RELEASES[release], CRD)


@pytest.mark.parametrize("release", RELEASES, ids=RELEASES.get)
def test_aws_label_allow_list_matches_the_crd(release):
    text = (crds(RELEASES[release]) / CRD).read_text(encoding="utf-8")
    in_crd = set(re.findall(r'"(karpenter\.k8s\.aws/[a-z0-9-]+)"', text))
    ours = {f"{AWS_GROUP}/{name}" for name, since in AWS_LABELS.items() if since is None or release >= since}
    assert ours == in_crd


# --- what Karpenter's CRD refuses in a NodePool's requirements, in its words ---------------


@pytest.mark.parametrize(
    ("requirement", "rule_id", "message"),
    [
        (
            {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4", "8"]},
            "cel/requirement-numeric-operator",
            "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
        ),
        (
            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"], "minValues": 2},
            "cel/requirement-min-values",
            "requirements with 'minValues' must have at least that many values specified in the 'values' field",
        ),
        (
            {"key": "karpenter.k8s.aws/instance-pods", "operator": "Exists"},
            "cel/label-domain-restricted",
            'label domain "karpenter.k8s.aws" is restricted',
        ),
        (
            {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["general"]},
            "cel/label-restricted",
            'label "karpenter.sh/nodepool" is restricted',
        ),
    ],
)
def test_karpenters_message(requirement, rule_id, message):
    found = _pool_findings(requirements(requirement))
    assert fired(found, rule_id) == [
        ("spec.template.spec.requirements[0].key" if "label" in rule_id else "spec.template.spec.requirements[0]", message)
    ]
    assert [f.rule for f in found] == [rule_id]


@pytest.mark.parametrize(
    ("operator", "values", "ok"),
    [
        ("Gt", ["4"], True),
        ("Lt", ["+4"], True),
        ("Gt", ["-1"], False),
        ("Gt", ["4.5"], False),
        ("Lt", [], False),
        ("Gte", ["0"], True),
        ("Lte", ["x"], False),
        ("Gt", [str(2**63)], False),
    ],
)
def test_numeric_operator_values(operator, values, ok):
    patch = requirements({"key": "karpenter.k8s.aws/instance-cpu", "operator": operator, "values": values})
    assert bool(_messages(patch, "cel/requirement-numeric-operator")) is not ok


# --- release differences --------------------------------------------------------------------


def test_numeric_operator_message_changed_in_1_9():
    patch = requirements({"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["a"]})
    assert _messages(patch, "cel/requirement-numeric-operator", (1, 8)) == [
        "requirements operator 'Gt' or 'Lt' must have a single positive integer value"
    ]
    assert _messages(patch, "cel/requirement-numeric-operator", (1, 14)) == [
        "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
    ]


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("kubernetes.io/team", 'label domain "kubernetes.io" is restricted'),
        ("example.k8s.io/team", 'label domain "k8s.io" is restricted'),
    ],
)
def test_kubernetes_io_domains_were_restricted_until_1_9(key, message):
    patch = {"spec": {"template": {"metadata": {"labels": {key: "a"}}}}}
    assert _messages(patch, "cel/label-domain-restricted", (1, 8)) == [message]
    assert _messages(patch, "cel/label-domain-restricted", (1, 9)) == []


@pytest.mark.parametrize(
    "key",
    ["node.kubernetes.io/instance-type", "node-restriction.kubernetes.io/team", "kops.k8s.io/instancegroup", "kubernetes.io/os"],
)
def test_kubernetes_io_allow_list_before_1_9(key):
    assert _messages(requirements({"key": key, "operator": "Exists"}), "cel/label-domain-restricted", (1, 8)) == []


@pytest.mark.parametrize(("release", "allowed"), [((1, 8), False), ((1, 9), True)])
def test_instance_tenancy_joined_the_allow_list_in_1_9(release, allowed):
    patch = requirements({"key": "karpenter.k8s.aws/instance-tenancy", "operator": "In", "values": ["default"]})
    assert bool(_messages(patch, "cel/label-domain-restricted", release)) is not allowed


def test_static_nodepool_rules_start_with_1_8():
    patch = {"spec": {"replicas": 2, "weight": 5}}
    assert {f.rule for f in _pool_findings(patch, (1, 7))} == {"schema/version"}
    assert {f.rule for f in _pool_findings(patch, (1, 8))} == {
        "cel/static-nodepool-limits",
        "cel/static-nodepool-weight",
        "gate/feature-off",
    }
    assert (
        _messages(
            {"spec": {"replicas": 2, "limits": {"cpu": None, "memory": None, "nodes": "4"}}}, "cel/static-nodepool-limits", (1, 8)
        )
        == []
    )


# --- label keys: upstream message plus a hint, or our warning -------------------------------


def test_restricted_aws_key_gets_the_upstream_message_and_a_hint_but_no_second_finding():
    found = _pool_findings(requirements({"key": "karpenter.k8s.aws/instance-pods", "operator": "Exists"}))
    [finding] = found
    assert finding.rule == "cel/label-domain-restricted"
    assert "maxPods" in finding.hint


def test_typo_in_aws_domain_hints_the_well_known_key():
    found = _pool_findings(requirements({"key": "karpenter.k8s.aws/instance-familly", "operator": "Exists"}))
    [finding] = found
    assert finding.hint == "did you mean 'karpenter.k8s.aws/instance-family'?"


def test_unknown_key_in_a_kubernetes_domain_warns_with_did_you_mean():
    found = _pool_findings(requirements({"key": "node.kubernetes.io/instance-family", "operator": "In", "values": ["m5"]}))
    [finding] = found
    assert (finding.rule, finding.severity.value) == ("nodepool/unknown-requirement-key", "warning")
    assert finding.hint == "did you mean 'karpenter.k8s.aws/instance-family'?"


@pytest.mark.parametrize(
    "key",
    [
        "node.kubernetes.io/exclude-from-external-load-balancers",
        "example.com/team",
        "kubernetes.io/os",
        "topology.k8s.aws/zone-id",
    ],
)
def test_well_known_and_custom_keys_pass(key):
    assert _pool_findings(requirements({"key": key, "operator": "Exists"})) == []


def test_unknown_key_in_an_aws_domain_warns_even_without_a_suggestion():
    found = _pool_findings(requirements({"key": "topology.k8s.aws/rack", "operator": "Exists"}))
    assert [f.rule for f in found] == ["nodepool/unknown-requirement-key"]


# --- nodeClassRef ----------------------------------------------------------------------------


def test_node_class_ref_to_a_class_not_among_the_manifests_is_noted_not_an_error():
    found = _pool_findings({"spec": {"template": {"spec": {"nodeClassRef": {"name": "defualt"}}}}})
    [finding] = found
    assert (finding.rule, finding.severity.value, finding.path) == (
        "nodepool/node-class-ref-unresolved",
        "info",
        "spec.template.spec.nodeClassRef.name",
    )
    assert finding.hint == "did you mean 'default'?"


def test_node_class_ref_missing_from_a_stack_is_an_error():
    pool = node_pool({"spec": {"template": {"spec": {"nodeClassRef": {"name": "defualt"}}}}})
    stack = {
        "config": {
            "karpenter-gitops:cluster": {"name": "demo"},
            "karpenter-gitops:nodeClasses": {"default": node_class()["spec"]},
            "karpenter-gitops:nodePools": {"general": pool["spec"]},
        }
    }
    inputs = load_documents([("Pulumi.demo.yaml", [stack])], (1, 14))
    [finding] = [f for f in validate(inputs).findings if f.rule.startswith("nodepool/node-class-ref")]
    assert (finding.rule, finding.severity.value, finding.hint) == (
        "nodepool/node-class-ref-missing",
        "error",
        "did you mean 'default'?",
    )
    assert "the stack Pulumi.demo.yaml" in finding.message


@pytest.mark.parametrize(
    ("context", "rule"), [(frozenset({"gpu"}), None), (frozenset({"other"}), "nodepool/node-class-ref-missing")]
)
def test_context_resolves_a_reference_or_makes_its_absence_an_error(context, rule):
    pool = node_pool({"spec": {"template": {"spec": {"nodeClassRef": {"name": "gpu"}}}}})
    inputs = dataclasses.replace(load_documents([("pool.yaml", [pool])], (1, 14)), context_node_classes=context)
    assert [f.rule for f in validate(inputs).findings if f.rule.startswith("nodepool/node-class-ref")] == ([rule] if rule else [])


def test_node_class_ref_resolves_within_each_input():
    patch = {"spec": {"template": {"spec": {"nodeClassRef": {"name": "gpu"}}}}}
    gpu = node_class({"metadata": {"name": "gpu"}})
    assert fired(_pool_findings(patch, (1, 14), gpu), "nodepool/node-class-ref-unresolved") == []
    assert len(fired(_pool_findings(patch), "nodepool/node-class-ref-unresolved")) == 1


def test_auto_mode_node_pool_gets_the_node_pool_rules_and_one_note():
    auto = {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"}
    found = _pool_findings({"spec": {"template": {"spec": {"nodeClassRef": auto}}}})
    assert [(f.rule, f.severity.value) for f in found] == [("nodepool/other-node-class", "info")]
    assert "EKS Auto Mode" in found[0].message
    broken = _pool_findings({"spec": {"template": {"spec": {"nodeClassRef": auto, "expireAfter": "30 days"}}}})
    assert "nodepool/other-node-class" in {f.rule for f in broken} and any(f.severity.value == "error" for f in broken)


def test_node_class_ref_with_a_versioned_group_or_wrong_kind():
    found = _pool_findings(
        {"spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.k8s.aws/v1", "kind": "NodeClass"}}}}}
    )
    # the group is the CRD's pattern refusal, told once with our hint; the kind is ours alone
    assert [(f.rule, f.path) for f in found] == [
        ("schema/pattern", "spec.template.spec.nodeClassRef.group"),
        ("nodepool/node-class-ref-kind", "spec.template.spec.nodeClassRef.kind"),
    ]
    assert found[0].hint == "drop the version: group takes no '/v1'"


def test_empty_node_class_ref_name_is_left_to_cel():
    found = _pool_findings({"spec": {"template": {"spec": {"nodeClassRef": {"name": ""}}}}})
    assert [f.rule for f in found] == ["cel/node-class-ref-not-empty"]


# --- taints ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "key", "rule_id", "severity"),
    [
        ("taints", "karpenter.sh/unregistered", "nodepool/reserved-taint", "error"),
        ("startupTaints", "karpenter.sh/disrupted", "nodepool/reserved-taint", "error"),
        ("startupTaints", "karpenter.sh/uninitialized", "nodepool/uninitialized-taint", "warning"),
    ],
)
def test_karpenter_taint_keys(field, key, rule_id, severity):
    patch = {"spec": {"template": {"spec": {field: [{"key": key, "effect": "NoSchedule"}]}}}}
    [finding] = _pool_findings(patch)
    assert (finding.rule, finding.severity.value, finding.path) == (rule_id, severity, f"spec.template.spec.{field}[0].key")


def test_uninitialized_warning_names_the_real_taints():
    patch = {"spec": {"template": {"spec": {"taints": [{"key": "karpenter.sh/uninitialized", "effect": "NoSchedule"}]}}}}
    [message] = _messages(patch, "nodepool/uninitialized-taint")
    assert "karpenter.sh/unregistered:NoExecute" in message
    assert "node.cloudprovider.kubernetes.io/uninitialized" in message


# --- robustness -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    [
        {"template": {"spec": {"requirements": "x", "taints": [5, {"effect": "NoSchedule"}], "nodeClassRef": 7}, "metadata": 3}},
        {"template": {"spec": {"requirements": [None, {"key": 5, "operator": "In", "values": "x"}, {"operator": "Gt"}]}}},
        {"template": 3, "disruption": {"budgets": [4, {"schedule": 5}]}, "replicas": "two", "limits": [1]},
        {"template": {"metadata": {"labels": ["a"]}, "spec": {"nodeClassRef": {"name": None, "group": 3}}}},
    ],
)
def test_schema_rejected_fields_never_crash_a_rule(spec):
    findings({**node_pool(), "spec": spec}, node_class())


def test_cel_manifest_documents_load_from_yaml_text():
    doc = yaml.safe_load(
        """
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: p}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.aws/instance-generation, operator: Gt, values: ["5"]}
  disruption: {consolidateAfter: 1m}
"""
    )
    assert findings(doc, node_class()) == []


@pytest.mark.parametrize(
    ("key", "values", "expected"),
    [
        ("karpenter.sh/capacity-type", ["SPOT", "ondemand"], "on-demand, spot, reserved"),
        ("karpenter.k8s.aws/instance-tenancy", ["host"], "default, dedicated"),
    ],
)
def test_requirements_whose_only_values_are_invalid_say_it_in_karpenters_words(key, values, expected):
    patch = {"spec": {"template": {"spec": {"requirements": [{"key": key, "operator": "In", "values": values}]}}}}
    assert _messages(patch, "nodepool/requirement-unknown-values", (1, 15)) == [
        f"no valid values found in [{' '.join(values)}] for {key}, expected one of: {expected}"
    ]
