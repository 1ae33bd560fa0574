"""The CRD check's one walk: an object prepared and its CEL rules judged as preparing it and then walking its rule
tree did, whatever the walk remembers from the objects before it."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.crd_helpers import crd_document, release_crds
from support.crd_strategies import NODECLASS_SPEC, NODEPOOL_SPEC
from support.rule_helpers import node_class, node_pool

from karpenter_gitops.load.crds import load as load_crds
from karpenter_gitops.rules.crd import engine, openapi, validation_rules, walk

LATEST = "v1.14.1"


def walked_apart(crd: engine.Crd, manifest: dict) -> tuple[object, list, list]:
    """What the check found before it was one walk: the object prepared, then its rule tree walked over it."""
    prepared = openapi.prepare(crd.schema, manifest)
    failed, skipped = [], []
    for node, value, path in crd.rules.visits(prepared) if crd.rules else ():
        skipped.extend((path, rule) for rule in node.transitions)
        activation = validation_rules.bound(value)
        for program, message in node.rules:
            if not program.transition and (verdict := validation_rules.evaluate(program, message, value, activation)):
                failed.append((path, *verdict))
    return prepared, failed, skipped


def walked(crd: engine.Crd, manifest: dict) -> tuple[object, list, list]:
    prepared, failed, skipped = crd._walk.outcome(manifest)
    return (
        prepared,
        [(engine._from_root(path), rule, message) for path, rule, message in failed],
        [(engine._from_root(path), rule) for path, rule in skipped],
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        NODECLASS_SPEC.map(lambda spec: node_class({"spec": spec})), NODEPOOL_SPEC.map(lambda spec: node_pool({"spec": spec}))
    )
)
def test_the_walk_finds_what_preparing_then_walking_the_rules_found(manifest):
    """One CRD for every example, so the later ones meet values remembered from the earlier ones."""
    crd = release_crds(LATEST).by_kind[manifest["kind"]]
    expected = walked_apart(crd, manifest)
    assert walked(crd, manifest) == expected
    assert walked(crd, manifest) == expected  # the second time from memory


def synthetic(tmp_path, *rules: str) -> engine.Crd:
    """A NodePool CRD whose spec carries ``rules`` and keeps any field, and whose items of ``spec.list`` carry them too."""
    validations = [{"rule": rule, "message": f"rule {i}"} for i, rule in enumerate(rules)]
    item = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "x-kubernetes-validations": validations}
    spec = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-validations": validations,
        "properties": {"list": {"type": "array", "items": item}, "map": {"type": "object", "additionalProperties": item}},
    }
    document = crd_document(spec)
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(document))
    return load_crds([path]).by_kind["NodePool"]


def paths_failing(crd: engine.Crd, spec: dict, name: str = "p") -> list[str]:
    doc = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}
    return [observation.violation.path for observation in crd.check(doc).observations]


def test_a_remembered_value_is_reported_at_the_path_it_has_in_each_object(tmp_path):
    crd = synthetic(tmp_path, "!has(self.bad)")
    bad, good = {"bad": 1}, {"good": 1}
    assert paths_failing(crd, {"list": [bad, good]}) == ["spec.list[0]"]
    assert paths_failing(crd, {"list": [good, bad]}) == ["spec.list[1]"]
    assert paths_failing(crd, {"map": {"a": good, "b": bad}, "list": [bad]}) == ["spec.map[b]", "spec.list[0]"]
    assert paths_failing(crd, {"map": {"b": bad}, "list": [bad], "bad": 0}, name="q") == ["spec", "spec.map[b]", "spec.list[0]"]


def test_values_that_never_repeat_stop_being_remembered_and_are_still_judged(tmp_path):
    crd = synthetic(tmp_path, "self.n % 7 != 0")
    spec_node = crd._walk.root.properties["spec"]
    failing = [n for n in range(3 * walk._TRIAL) if paths_failing(crd, {"n": n}) == ["spec"]]
    assert failing == list(range(0, 3 * walk._TRIAL, 7))
    assert spec_node.kept is None  # each spec was new
    item_node = spec_node.properties["list"].items
    for n in range(3 * walk._TRIAL):
        assert paths_failing(crd, {"n": 1, "list": [{"n": n % 3}]}) == (["spec.list[0]"] if n % 3 == 0 else [])
    assert item_node.kept  # the items repeated: still remembered


def test_a_rule_reading_some_fields_is_judged_once_per_value_of_those_fields(tmp_path, monkeypatch):
    crd = synthetic(tmp_path, "self.x != 2", "size(self) < 3")
    evaluated = []
    real = walk.evaluate
    monkeypatch.setattr(walk, "evaluate", lambda program, *rest: evaluated.append(program.rule) or real(program, *rest))

    def messages(spec: dict) -> list[str]:
        doc = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "spec": spec}
        return [observation.violation.message for observation in crd.check(doc).observations]

    assert messages({"x": 2, "y": 0}) == ["rule 0"]
    assert messages({"x": 2, "y": 1}) == ["rule 0"]
    assert messages({"x": 2, "y": 1, "z": 0}) == ["rule 0", "rule 1"]
    messages({"x": 2.0, "y": 1})  # a double where an int was: another value of x
    assert evaluated == ["self.x != 2", "size(self) < 3", "size(self) < 3", "size(self) < 3", "self.x != 2", "size(self) < 3"]


@pytest.mark.parametrize(
    ("rule", "fields"),
    [
        ("has(self.replicas) == has(oldSelf.replicas)", ("replicas",)),
        ("!has(self.a) || (size(self.b) == 1 && 'nodes' in self.b)", ("a", "b")),
        ("self . spaced > 0", ("spaced",)),
        ("self.terms.exists(x, has(x.alias))", ("terms",)),
        ("self != ''", None),  # self itself
        ("self.all(x, x > 0)", None),  # a macro on self
        ("self.size() > 0", None),  # a method of self
        ("self['a'] == 1", None),  # an index
        ("self.`a-b` == 1", None),  # a quoted field
        ("'self' == self.a", None),  # a string that spells self: read as self
    ],
)
def test_the_fields_a_rule_reads_are_its_selections_of_self(rule, fields):
    assert walk.fields_read(rule) == fields


def test_remembering_past_its_bound_starts_over_and_keeps_the_verdicts(tmp_path, monkeypatch):
    crd = synthetic(tmp_path, "self.x != 2")
    monkeypatch.setattr(walk, "_REMEMBERED", 1)
    assert [paths_failing(crd, {"x": x, "list": [{"x": x}]}) for x in (1, 2, 1, 2)] == [
        [],
        ["spec", "spec.list[0]"],
        [],
        ["spec", "spec.list[0]"],
    ]
