"""The CRD engine: loading user CRDs, schema and CEL findings, engine problems, ``validate --crd``."""

from __future__ import annotations

import copy
import json

import pytest
import re2
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from support.crd_helpers import crd_document, judged, release_crds
from support.rule_helpers import node_class, node_pool
from support.upstream import crds

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.load.crds import load as load_crds
from karpenter_gitops.rules import crd
from karpenter_gitops.rules.crd import engine, openapi, validation_rules, walk

LATEST = "v1.14.1"


def latest() -> engine.Crds:
    return release_crds(LATEST)


def found(doc) -> list[tuple[str, str, str]]:
    return [(f.rule, f.path, f.message) for f in judged(latest().check(doc))]


def synthetic_crd(*rules: str, group: str = "karpenter.sh", kind: str = "NodePool", version: str = "v1") -> dict:
    """A CRD whose spec carries the given CEL rules and keeps any field."""
    spec = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    spec["x-kubernetes-validations"] = [{"rule": rule, "message": f"rule {i}"} for i, rule in enumerate(rules)]
    return crd_document(spec, group=group, kind=kind, version=version)


# --- loading ------------------------------------------------------------------------------


def test_loads_both_kinds_from_a_release_directory():
    assert set(latest().by_kind) == {"EC2NodeClass", "NodePool"}


def test_a_file_without_karpenter_crds_is_named_in_the_error(tmp_path):
    other = tmp_path / "nodeclaims.yaml"
    other.write_text(yaml.safe_dump(synthetic_crd(kind="NodeClaim")))
    with pytest.raises(InputError, match="holds no EC2NodeClass or NodePool") as err:
        load_crds([other])
    assert err.value.file == str(other)


def test_a_crd_without_a_served_v1_schema_is_an_input_error(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(synthetic_crd(version="v1beta1")))
    with pytest.raises(InputError, match="serves no v1 version") as err:
        load_crds([path])
    assert err.value.file == str(path)


def test_the_same_kind_twice_is_an_input_error():
    with pytest.raises(InputError, match="a second NodePool CRD"):
        load_crds([crds(LATEST), crds("v1.8.8") / "karpenter.sh_nodepools.yaml"])


# --- schema -------------------------------------------------------------------------------


def test_a_valid_object_has_no_findings():
    assert found(node_class()) == []
    assert found(node_pool()) == []


def test_unknown_fields_are_reported_at_their_own_path():
    assert found(node_class({"spec": {"detailedMonitring": True}})) == [
        ("crd/schema", "spec.detailedMonitring", "unknown field 'detailedMonitring'")
    ]


def test_missing_required_fields_are_reported_at_their_own_path():
    assert found(node_class({"spec": {"subnetSelectorTerms": None}})) == [
        ("crd/schema", "spec.subnetSelectorTerms", "Required value")
    ]


def test_map_entries_and_list_items_use_our_path_format():
    taints = [{"key": "a", "effect": "Never"}]
    doc = node_pool({"spec": {"limits": {"cpu": True}, "template": {"spec": {"taints": taints}}}})
    assert {path for _, path, _ in found(doc)} == {"spec.limits[cpu]", "spec.template.spec.taints[0].effect"}


def test_defaults_fill_before_validation_and_nulls_count_as_absent():
    """The API server defaults a budget's nodes to 10% and drops a null expireAfter."""
    assert found(node_pool({"spec": {"disruption": {"budgets": [{"reasons": ["Empty"]}]}}})) == []
    assert found(node_pool({"spec": {"template": {"spec": {"expireAfter": None}}}})) == []


def test_yaml_only_values_are_judged_as_the_json_kubectl_sends():
    taint = {"key": "a", "effect": "NoSchedule", "timeAdded": yaml.safe_load("2024-01-01T00:00:00Z")}
    doc = node_pool({"spec": {"template": {"spec": {"taints": [taint]}}}})
    doc["spec"]["template"]["metadata"] = {"labels": {1: "a", "team": "b"}}
    assert found(doc) == []


KEYS = st.one_of(
    st.sampled_from(
        [
            "template",
            "spec",
            "disruption",
            "budgets",
            "nodes",
            "requirements",
            "values",
            "limits",
            "expireAfter",
            "taints",
            "timeAdded",
            "metadata",
            "labels",
            "weight",
            "status",
        ]
    ),
    st.text(max_size=3),
    st.integers(-2, 2),
    st.booleans(),
)
YAML_VALUES = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5), st.dates(), st.datetimes()
    ),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(KEYS, children, max_size=4)),
    max_leaves=25,
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, YAML_VALUES, max_size=5))
def test_an_object_is_prepared_as_its_json_is_and_left_as_it_was(spec):
    """The walk that fills defaults also gives the JSON kubectl sends: the same as preparing that JSON."""
    schema = latest().by_kind["NodePool"].schema
    manifest = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"}, "spec": spec}
    before = copy.deepcopy(manifest)
    prepared = openapi.prepare(schema, manifest)
    assert manifest == before
    assert prepared == openapi.prepare(schema, openapi.as_json(manifest)) == openapi.as_json(prepared)


def test_what_preparing_learns_of_schema_nodes_stays_bounded_in_a_long_lived_process(monkeypatch):
    """The policy pack and the dynamic provider load CRDs again and again: the nodes worked out start over."""
    monkeypatch.setattr(openapi, "_NODES", {})
    monkeypatch.setattr(openapi, "_NODES_KEPT", 3)
    manifest = node_pool()
    del manifest["spec"]["disruption"]
    prepared = [openapi.prepare(copy.deepcopy(latest().by_kind["NodePool"].schema), manifest) for _ in range(4)]
    assert len(openapi._NODES) <= 3
    assert prepared[0] == prepared[-1] and prepared[0]["spec"]["disruption"]["consolidateAfter"] == "0s"


def test_schema_errors_that_block_cel_skip_every_rule_like_the_api_server():
    outcome = latest().check(node_class({"spec": {"role": 1, "instanceProfile": "x"}}))
    assert [o.rule for o in outcome.observations] == ["crd/schema"]
    assert outcome.skipped == (engine.Skipped("", "*", engine.BLOCKED),)


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        (r"^a\sb$", "a b", True),
        (r"^a\sb$", "a\u00a0b", False),  # RE2's \s is ASCII whitespace; ECMA-262's is Unicode's
        (r"^a.b$", "a\rb", True),  # RE2's . stops at \n only
        (r"^a.b$", "a\nb", False),
        (r"^[\s]+$", "\t ", True),
        (r"^[^.]+\.x$", "a.x", True),  # a dot in a class and an escaped one stay literal
        (r"^[[:alpha:]]+$", "abc", True),  # no ECMA-262 form: RE2 itself
        (r"^[[:alpha:]]+$", "ab1", False),
        ("^720h$", "720h\n", False),  # RE2's $ does not match before a final newline
    ],
)
def test_schema_patterns_match_as_re2_does(pattern, value, matches):
    schema = {"type": "string", "pattern": pattern}
    validator = openapi.SchemaValidator(schema, openapi.to_json_schema(schema))
    assert bool(re2.search(pattern, value)) is matches
    errors = list(validator.errors(value))
    assert errors == ([] if matches else [("pattern", [], f"{value!r} does not match {pattern!r}")])


# --- CEL ----------------------------------------------------------------------------------


def test_cel_findings_carry_the_crd_message_at_the_node_with_the_rule():
    terms = [{"alias": "AL2023@latest"}]
    doc = node_class({"spec": {"amiSelectorTerms": terms, "tags": {"eks:eks-cluster-name": "x"}}})
    assert found(doc) == [
        (
            "crd/cel",
            "spec.amiSelectorTerms[0].alias",
            "family is not supported, must be one of the following: "
            "'al2', 'al2023', 'bottlerocket', 'windows2019', 'windows2022', 'windows2025'",
        ),
        ("crd/cel", "spec.tags", "tag contains a restricted tag matching eks:eks-cluster-name"),
    ]


@pytest.mark.parametrize(("value", "accepted"), [("4", True), ("-1", False), ("1_0", False), (" 4", False), ("four", False)])
def test_int_parses_strings_as_kubernetes_does(value, accepted):
    requirement = {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": [value]}
    errors = found(node_pool({"spec": {"template": {"spec": {"requirements": [requirement]}}}}))
    assert (errors == []) is accepted, errors


@pytest.mark.parametrize(
    ("rule", "value"),
    [
        ("self.find('^([^/]+)') == 'karpenter.sh'", "karpenter.sh/x"),
        ("self.find('z') == ''", "abc"),
        ("self.find('[[:alpha:]]+') == 'abc'", "abc1"),  # RE2's classes, which Python's re lacks
        ("self.split('@') == ['al2023', 'v1', 'x']", "al2023@v1@x"),
        ("self.split('@') == ['']", ""),
        ("self.lowerAscii() == 'abc'", "ABC"),  # Kubernetes' strings library, version 2
        ("int(self) == -4 && '''int(x)''' == 'int(x)'", "-4"),  # int() renamed in calls only
    ],
)
def test_find_and_the_strings_library_follow_the_kubernetes_environment(rule, value):
    program = validation_rules.compile_rule(rule)
    assert program.problem is None and validation_rules.run(program, {"self": value}) is True


def test_evaluation_errors_are_said_in_cel_gos_words():
    errors = {
        "self.x == 1": "no such key: x",
        "self.l[3] == 1": "index out of bounds: 3",
        "self.n / 0 == 1": "division by zero",
        "int(self.s) == 1": "type conversion error from 'string' to 'int'",
        "self.s.find('(') == ''": "invalid regex '(' in find",
    }
    value = {"l": [1], "n": 1, "s": " 4"}
    said = {rule: validation_rules.run(validation_rules.compile_rule(rule), {"self": value}) for rule in errors}
    assert said == {rule: validation_rules.EvalError(message) for rule, message in errors.items()}


def test_an_evaluation_error_rejects_like_the_api_server():
    requirement = {"key": "kubernetes.io/arch", "operator": "In"}  # no values: x.values fails
    [(rule, path, message)] = found(node_pool({"spec": {"template": {"spec": {"requirements": [requirement]}}}}))
    assert (rule, path) == ("crd/cel", "spec.template.spec.requirements")
    assert message.endswith("evaluating rule: self.all(x, x.operator == 'In' ? x.values.size() != 0 : true)")


def test_rules_the_engine_cannot_run_are_engine_warnings_not_crashes(tmp_path):
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(synthetic_crd("isQuantity(self.x)", "self.x ==", "size(self)", "self.x == 'a'")))
    doc = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"}, "spec": {"x": "A"}}
    outcome = load_crds([path]).check(doc)
    engine = [f for f in judged(outcome) if f.rule == crd.ENGINE]
    assert len(engine) == 3 and all(f.severity is Severity.WARNING for f in engine)
    assert "isQuantity" in engine[0].message and "cannot compile" in engine[1].message and "bool" in engine[2].message
    assert [f.message for f in judged(outcome) if f.rule == crd.CEL] == ["rule 3"]


def test_a_value_judged_before_gets_its_verdict_again_and_only_the_same_value(tmp_path, monkeypatch):
    """Verdicts are remembered per schema node and value: told apart by number type, and forgotten when the
    memory fills, never mixed up."""
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(synthetic_crd("type(self.x) == int", "self.x != 2")))
    crds = load_crds([path])
    evaluated = []
    real = walk.evaluate
    monkeypatch.setattr(walk, "evaluate", lambda *args: evaluated.append(args[0].rule) or real(*args))

    def messages(spec: dict) -> list[str]:
        doc = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"}, "spec": spec}
        return [f.message for f in judged(crds.check(doc))]

    assert messages({"x": 2, "y": 0}) == ["rule 1"]
    assert messages({"x": 2, "y": 0}) == ["rule 1"] and len(evaluated) == 2  # remembered
    assert "rule 0" in messages({"x": 2.0, "y": 0})  # a double where an int was
    monkeypatch.setattr(walk, "_REMEMBERED", 1)
    assert [messages({"x": x, "y": 0}) for x in (1, 2, 1, 2)] == [[], ["rule 1"], [], ["rule 1"]]


# --- CLI ----------------------------------------------------------------------------------


def test_validate_with_crd_adds_crd_findings_to_the_json_contract(tmp_path, cli):
    path = tmp_path / "pool.yaml"
    balanced = node_pool({"spec": {"disruption": {"consolidationPolicy": "Balanced"}}})
    path.write_text(yaml.safe_dump_all([node_class(), balanced]))
    assert cli("validate", path, "--format", "json", "--crd", crds(LATEST)).code == 0
    code, out, _ = cli("validate", path, "--format", "json", "--crd", crds("v1.8.8"))
    assert code == 1
    [finding] = [f for f in json.loads(out)["findings"] if f["rule"] == "crd/schema"]
    assert finding["path"] == "spec.disruption.consolidationPolicy" and finding["kind"] == "NodePool"
    assert {"rule", "severity", "kind", "name", "path", "message"} <= finding.keys()


def test_a_mistake_our_rules_and_the_crds_both_find_is_one_finding_with_our_fix(tmp_path, cli):
    """The same words at the same field (an unknown field), or at an item of the field whose CEL rule the CRD
    holds (a selector term's exclusive fields): one finding, ours, which names the item and carries a fix. A
    mistake only the given CRD finds (an older release's enum) stays the CRD's."""
    path = tmp_path / "both.yaml"
    pool = node_pool({"spec": {"template": {"spec": {"bogus": 1}}}})
    terms = node_class({"spec": {"amiSelectorTerms": [{"alias": "al2023@latest", "id": "ami-0123456789abcdef0"}]}})
    path.write_text(yaml.safe_dump_all([terms, pool]))
    code, out, _ = cli("validate", path, "--format", "json", "--crd", crds(LATEST))
    found = sorted((f["rule"], f["path"]) for f in json.loads(out)["findings"])
    assert code == 1
    assert found == [
        ("cel/ami-term-alias-exclusive", "spec.amiSelectorTerms[0]"),
        ("cel/ami-term-id-exclusive", "spec.amiSelectorTerms[0]"),
        ("schema/unknown-field", "spec.template.spec.bogus"),
    ]


def test_validate_with_crd_checks_stack_objects_as_full_manifests(tmp_path, cli):
    """A stack entry is checked as the manifest it stands for: the older release's CRD refuses its enum value."""
    spec = dict(node_pool()["spec"], disruption={"consolidationPolicy": "Balanced"})
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(yaml.safe_dump({"config": {"karpenter-gitops:nodePools": {"general": spec}}}))
    code, out, _ = cli("validate", stack, "--format", "json", "--crd", crds("v1.8.8"))
    assert code == 1
    found = {(f["rule"], f["path"]) for f in json.loads(out)["findings"]}
    assert ("crd/schema", "spec.disruption.consolidationPolicy") in found


def test_validate_with_an_unusable_crd_path_exits_two(tmp_path, cli):
    path = tmp_path / "nc.yaml"
    path.write_text(yaml.safe_dump(node_class()))
    code, _, err = cli("validate", path, "--crd", path)
    assert code == 2 and "holds no EC2NodeClass or NodePool" in err


def test_a_rule_beyond_the_runtimes_iteration_budget_is_an_engine_warning_not_a_crash():
    """cel-expr-python stops comprehensions after its budget; the API server's is a cost limit of its own."""
    program = validation_rules.compile_rule("self.all(x, x > 0)")
    rule_id, message = validation_rules.evaluate(program, None, list(range(1, 20_001)))
    assert rule_id == crd.ENGINE and "Iteration budget exceeded" in message
    assert validation_rules.evaluate(program, None, list(range(1, 101))) is None
