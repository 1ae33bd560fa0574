"""Type-safe loading: a model holds only values of its declared types, whatever the YAML said; blocking
structural errors keep the object rules away as the API server keeps CEL away; what cannot be read
at all is one exit-2 line naming the file, the document and the field (or the stack key)."""

from __future__ import annotations

import copy
import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.crd_strategies import NODECLASS_SPEC, NODEPOOL_SPEC
from support.rule_helpers import findings, node_class, node_pool

from karpenter_gitops.cli import main
from karpenter_gitops.core import typed_schema, versions
from karpenter_gitops.core.model import EC2NodeClassSpec, NodePoolSpec
from karpenter_gitops.core.schema_fields import IntOrString, fields_of
from karpenter_gitops.load.into_inputs import load_documents

WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.just([None]),
    st.just([[1]]),
    st.just({"a": [None]}),
    st.just([{}]),
    st.just({"secure": "v1:x"}),
)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        found += _paths(child, (*prefix, key))
    return found


@st.composite
def broken_specs(draw, specs: st.SearchStrategy[dict], base: dict) -> dict:
    spec = copy.deepcopy({**base, **draw(specs)})
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from([p for p in _paths(spec) if p]))
        parent = spec
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = copy.deepcopy(draw(WRONG))
    return spec


def assert_conforms(model: Any, where: str = "spec") -> None:
    """Every value of ``model`` has the type its field declares, recursively; lists hold no None."""
    for field in fields_of(type(model)).values():
        value = getattr(model, field.attr)
        path = f"{where}.{field.wire}"
        if value is None:
            continue
        if field.kind == "model":
            assert isinstance(value, field.item), path
            assert_conforms(value, path)
        elif field.kind == "list":
            assert isinstance(value, tuple), path
            for index, item in enumerate(value):
                _assert_item(field.item, item, f"{path}[{index}]")
        elif field.kind == "map":
            assert isinstance(value, (Mapping, types.MappingProxyType)), path
            for key, item in value.items():
                assert isinstance(key, str), path
                _assert_item(field.item, item, f"{path}[{key}]")
        else:
            _assert_item(field.scalar, value, path)


def _assert_item(tp: Any, value: Any, path: str) -> None:
    assert value is not None, path
    if dataclasses.is_dataclass(tp):
        assert isinstance(value, tp), path
        assert_conforms(value, path)
    elif tp is IntOrString:
        assert isinstance(value, (int, str)) and not isinstance(value, bool), path
    elif tp is int:
        assert isinstance(value, int) and not isinstance(value, bool), path
    elif tp is not Any:
        assert isinstance(value, typing.get_origin(tp) or tp), path


def _load(kind_doc: dict):
    return load_documents([("in.yaml", [kind_doc])], versions.DEFAULT)


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(spec=broken_specs(NODECLASS_SPEC, node_class()["spec"]))
def test_a_loaded_node_class_holds_only_values_of_its_declared_types(spec):
    inputs = _load(node_class() | {"spec": spec})
    (obj,) = inputs.node_classes
    assert_conforms(obj.spec)
    findings(obj.raw)  # and every rule runs on it without an exception


@SETTINGS
@given(spec=broken_specs(NODEPOOL_SPEC, node_pool()["spec"]))
def test_a_loaded_node_pool_holds_only_values_of_its_declared_types(spec):
    inputs = _load(node_pool() | {"spec": spec})
    (obj,) = inputs.node_pools
    assert_conforms(obj.spec)
    findings(node_class(), obj.raw)


def test_a_null_selector_term_is_a_type_finding_and_never_reaches_a_rule():
    inputs = _load(node_class({"spec": {"amiSelectorTerms": [None]}}))
    (obj,) = inputs.node_classes
    assert obj.spec.ami_selector_terms == () and obj.blocked
    found = findings(obj.raw)
    assert [(f.rule, f.path) for f in found] == [(typed_schema.WRONG_TYPE, "spec.amiSelectorTerms[0]")]


@pytest.mark.parametrize(
    ("patch", "blocked"),
    [
        ({"spec": {"metadataOptions": {"httpPutResponseHopLimit": "two"}}}, True),  # type
        ({"spec": {"role": None, "instanceProfile": None}}, False),  # a CEL rule, not the schema
        ({"spec": {"subnetSelectorTerms": None}}, True),  # required
        ({"spec": {"amiFamily": "Ubuntu"}}, True),  # enum
        ({"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@v1.32.0-aaaaaaaaaaaaaaa"}]}}, True),  # maxLength
        ({"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100GiB"}}]}}, False),  # pattern
        ({"spec": {"detailedMonitring": True}}, False),  # unknown: pruned, not blocking
    ],
)
def test_blocking_schema_errors_are_those_of_the_api_server(patch, blocked):
    (obj,) = _load(node_class(patch)).node_classes
    assert obj.blocked is blocked


def test_a_blocked_object_gets_its_schema_findings_and_our_own_rules_but_no_cel_rule():
    # A hop limit of "two" (a type error) next to a class with neither role nor instance profile (a CEL
    # rule) and an instance profile ARN elsewhere: the API server refuses the object for its structure
    # before evaluating any CEL rule, so no cel/ finding; this project's rule on the well-typed alias
    # still speaks, so the user learns both mistakes in one push. Each finding names its layer.
    neither = {"role": None, "instanceProfile": None}
    bad = node_class(
        {
            "spec": {
                **neither,
                "metadataOptions": {"httpPutResponseHopLimit": "two"},
                "amiSelectorTerms": [{"alias": "al2023@2024"}],
            }
        }
    )
    layers = {f.rule: f.layer for f in findings(bad)}
    assert layers == {typed_schema.WRONG_TYPE: "api-server", "nodeclass/alias-version-format": "karpenter-gitops"}
    assert {f.rule for f in findings(node_class({"spec": neither}))} - {typed_schema.WRONG_TYPE}, "unblocked: the CEL rule runs"


def _exit_two(tmp_path, capsys, text: str, name: str = "in.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    code = main(["validate", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "") and err.count("\n") == 1, (code, out, err)
    return err


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (
            "apiVersion: karpenter.k8s.aws/v1\nkind: [EC2NodeClass]\nmetadata: {name: a}\n",
            "in.yaml: document 1: 'kind' is an array, not a string",
        ),
        (
            "apiVersion: {group: karpenter.sh}\nkind: NodePool\nmetadata: {name: a}\n",
            "in.yaml: document 1: 'apiVersion' is an object, not a string",
        ),
        ("apiVersion: v1\nkind: ConfigMap\n---\n- a\n- b\n", "in.yaml: document 2 is an array, not a Kubernetes object"),
        (
            "kind: EC2NodeClass\nspec: &s {role: R, tags: {self: *s}}\n",
            "in.yaml:2: invalid YAML: a YAML alias refers to a value that contains it",
        ),
        (
            "kind: EC2NodeClass\nspec: {tags: " + "[" * 80 + "]" * 80 + "}\n",
            "in.yaml:2: invalid YAML: nested more than 64 levels deep",
        ),
        (
            "kind: EC2NodeClass\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 7)),
            "invalid YAML: YAML aliases expand to more than 400,000 values",
        ),
    ],
)
def test_a_document_that_cannot_be_read_is_one_line_naming_file_document_and_field(tmp_path, capsys, document, expected):
    assert expected in _exit_two(tmp_path, capsys, document)


def test_wrong_metadata_is_a_type_finding(tmp_path, capsys):
    for metadata, path in (("[a]", "metadata"), ("{name: [a]}", "metadata.name")):
        inputs = load_documents([("in.yaml", [node_class() | {"metadata": yaml.safe_load(metadata)}])])
        assert [(o.rule, o.violation.path) for o in inputs.observations] == [(typed_schema.WRONG_TYPE, path)]


STACK = """\
config:
  karpenter-gitops:cluster: {name: demo, kubernetesVersion: "1.32"}
  karpenter-gitops:nodeClasses:
    default: %s
"""


@pytest.mark.parametrize("value", ["[role, R]", "just-a-string"])
def test_a_stack_entry_that_is_not_a_spec_is_a_type_finding_at_spec(tmp_path, capsys, value):
    # As a manifest's spec of the wrong type, and as the dynamic provider reports it (property "spec").
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(STACK % value)
    assert main(["validate", str(path), "--format", "json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["rule"], f["path"], f["name"]) for f in found] == [(typed_schema.WRONG_TYPE, "spec", "default")]


def test_a_cluster_field_of_the_wrong_type_is_one_line(tmp_path, capsys):
    text = "config:\n  karpenter-gitops:cluster: {name: [demo]}\n  karpenter-gitops:nodeClasses: {}\n"
    assert "'karpenter-gitops:cluster.name' is an array; expected a string" in _exit_two(tmp_path, capsys, text, "Pulumi.x.yaml")


def test_a_stack_whose_config_is_not_a_mapping_is_one_line(tmp_path, capsys):
    assert "'config' must be a mapping" in _exit_two(tmp_path, capsys, "config: true\n", "Pulumi.x.yaml")


def test_the_loaded_spec_types_cover_both_kinds():
    assert fields_of(EC2NodeClassSpec) and fields_of(NodePoolSpec)


def _pool(weight: Any = 10, taints: list | None = None) -> dict:
    template_spec = {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "c"},
        "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
        **({"taints": taints} if taints else {}),
    }
    return {"weight": weight, "template": {"spec": template_spec}}


@pytest.mark.parametrize(
    "first, second, path",
    [
        # the same value under another field, with other facts: judged by those
        # (an operator's enum takes "In", a taint's effect does not)
        (_pool(), _pool(taints=[{"key": "k", "effect": "In"}]), "spec.template.spec.taints[0].effect"),
        # the same value as another type: True equals 1, yet a boolean is no integer
        (_pool(weight=1), _pool(weight=True), "spec.weight"),
    ],
)
def test_a_value_taken_once_is_judged_again_under_other_facts(first, second, path):
    """Loading remembers plain values that passed their checks (typed_schema._TAKEN); a remembered value
    must not pass where its field or its type says otherwise."""
    assert typed_schema.load(NodePoolSpec, first, "spec", versions.DEFAULT).violations == []
    violations = typed_schema.load(NodePoolSpec, second, "spec", versions.DEFAULT).violations
    assert path in [violation.path for _, violation in violations]


@pytest.mark.parametrize(
    "first, second, path",
    [
        # a requirement loaded clean, then the same keys with a value of another type (True equals 1)
        (
            {"key": "k", "operator": "Gt", "values": ["1"], "minValues": 1},
            {"key": "k", "operator": "Gt", "values": ["1"], "minValues": True},
            "spec.template.spec.requirements[0].minValues",
        ),
        # the same requirement, clean once, then with one more (unknown) field
        (
            {"key": "k", "operator": "In", "values": ["a"]},
            {"key": "k", "operator": "In", "values": ["a"], "value": "a"},
            "spec.template.spec.requirements[0].value",
        ),
    ],
)
def test_a_small_model_reused_by_value_is_never_reused_for_another_value(first, second, path):
    """Loading reuses a small model (a requirement, a taint, a budget) for an equal value loaded after it
    (typed_schema._REUSED); a value that differs, even by its type alone, is loaded and judged on its own."""
    pool = lambda requirement: _pool() | {"template": {"spec": {**_pool()["template"]["spec"], "requirements": [requirement]}}}  # noqa: E731
    assert typed_schema.load(NodePoolSpec, pool(first), "spec", versions.DEFAULT).violations == []
    violations = typed_schema.load(NodePoolSpec, pool(second), "spec", versions.DEFAULT).violations
    assert path in [violation.path for _, violation in violations]


def test_a_small_model_loaded_with_a_violation_is_judged_again_at_each_place():
    """Only a model loaded without a violation is reused: each object with the same broken requirement gets
    its own finding, at its own path."""
    broken = {"key": "k", "operator": "Sometimes", "values": ["a"]}
    spec = _pool() | {"template": {"spec": {**_pool()["template"]["spec"], "requirements": [broken, broken]}}}
    for _ in range(2):
        violations = typed_schema.load(NodePoolSpec, spec, "spec", versions.DEFAULT).violations
        paths = [violation.path for _, violation in violations]
        assert "spec.template.spec.requirements[0].operator" in paths
        assert "spec.template.spec.requirements[1].operator" in paths


def test_equal_small_values_share_one_model_and_load_as_they_would_alone():
    requirement = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}
    spec = _pool() | {"template": {"spec": {**_pool()["template"]["spec"], "requirements": [requirement, dict(requirement)]}}}
    model = typed_schema.load(NodePoolSpec, spec, "spec", versions.DEFAULT).model
    first, second = model.template.spec.requirements
    assert first is second
    typed_schema._REUSED.clear()
    alone = typed_schema.load(NodePoolSpec, spec, "spec", versions.DEFAULT).model
    assert alone == model
