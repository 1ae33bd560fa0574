"""The CRDs compiled once and kept across runs: the same CRD files and tool load what an earlier run compiled and
judge as compiling them does; another CRD file, another tool or an entry that does not load compiles again."""

from __future__ import annotations

import json
import pickle

import pytest
import yaml
from support.crd_helpers import crd_document
from support.rule_helpers import node_class, node_pool

from karpenter_gitops.app import compiled_crds, verdict_cache
from karpenter_gitops.rules.crd import engine

POOL = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"}, "spec": {"weight": 5}}


def crd(rule: str) -> dict:
    """A NodePool CRD whose spec carries one CEL rule (a transition rule too) and keeps any field."""
    validations = [{"rule": rule, "message": f"broken: {rule}"}, {"rule": "self == oldSelf", "message": "immutable"}]
    spec = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "x-kubernetes-validations": validations}
    return crd_document(spec)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "verdicts"
    monkeypatch.setenv(verdict_cache.LOCATION, str(folder))
    return folder / compiled_crds.FOLDER


@pytest.fixture
def crd_file(tmp_path):
    path = tmp_path / "crds" / "nodepools.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(crd("self.weight < 10")))
    return path


@pytest.fixture
def compiles(monkeypatch):
    """How many times the CRDs were really compiled."""
    calls = []
    real = compiled_crds.crd_files.load
    monkeypatch.setattr(compiled_crds.crd_files, "load", lambda paths: calls.append(1) or real(paths))
    return calls


def messages(crds: engine.Crds, spec: dict) -> list[str]:
    outcome = crds.check(dict(POOL, spec=spec))
    return [observation.violation.message for observation in outcome.observations] + [s.rule for s in outcome.skipped]


def test_the_same_crd_files_load_what_an_earlier_run_compiled_and_judge_alike(cache, crd_file, compiles):
    compiled = compiled_crds.load([str(crd_file)])
    loaded = compiled_crds.load([str(crd_file)])
    assert len(compiles) == 1 and len(list(cache.iterdir())) == 1
    for spec in ({"weight": 5}, {"weight": 50}, {"weight": "x"}):
        assert messages(loaded, spec) == messages(compiled, spec)
    assert messages(loaded, {"weight": 50}) == ["broken: self.weight < 10", "self == oldSelf"]


def test_an_edited_crd_file_compiles_again(cache, crd_file, compiles):
    compiled_crds.load([str(crd_file)])
    crd_file.write_text(yaml.safe_dump(crd("self.weight < 100")))
    assert messages(compiled_crds.load([str(crd_file)]), {"weight": 50}) == ["self == oldSelf"]
    assert len(compiles) == 2


def test_another_tool_compiles_again(cache, crd_file, compiles, monkeypatch):
    compiled_crds.load([str(crd_file)])
    monkeypatch.setattr(verdict_cache, "rule_set_version", lambda: "an edited engine")
    compiled_crds.load([str(crd_file)])
    monkeypatch.setattr(verdict_cache, "environment", lambda: "another cel-expr-python")
    compiled_crds.load([str(crd_file)])
    assert len(compiles) == 3 and len(list(cache.iterdir())) == 3


def test_an_entry_that_does_not_load_is_compiled_again_and_replaced(cache, crd_file, compiles):
    compiled_crds.load([str(crd_file)])
    [entry] = cache.iterdir()
    for broken in (b"not a pickle", entry.read_bytes()[:100], pickle.dumps({"a": 1})):
        entry.write_bytes(broken)
        assert messages(compiled_crds.load([str(crd_file)]), {"weight": 50})[0] == "broken: self.weight < 10"
    assert len(compiles) == 4
    assert messages(compiled_crds.load([str(crd_file)]), {"weight": 50})[0] == "broken: self.weight < 10"
    assert len(compiles) == 4  # replaced by the last compile


def test_a_cache_turned_off_or_unwritable_compiles_each_time(tmp_path, crd_file, compiles, monkeypatch):
    monkeypatch.setenv(verdict_cache.LOCATION, "off")
    compiled_crds.load([str(crd_file)])
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(verdict_cache.LOCATION, str(blocker / "verdicts"))
    assert messages(compiled_crds.load([str(crd_file)]), {"weight": 50})[0] == "broken: self.weight < 10"
    assert len(compiles) == 2 and not list(tmp_path.glob("**/.tmp-*"))


def test_validate_no_cache_keeps_the_compiled_crds_and_pruning_verdicts_leaves_them(cache, crd_file, tmp_path, monkeypatch, cli):
    manifests = tmp_path / "pool.yaml"
    manifests.write_text(yaml.safe_dump_all([node_class(), node_pool({"spec": {"weight": 50}})]))
    code, out, _ = cli("validate", str(manifests), "--format", "json", "--no-cache", "--crd", str(crd_file))
    assert code == 1 and "broken: self.weight < 10" in {f["message"] for f in json.loads(out)["findings"]}
    assert len(list(cache.iterdir())) == 1
    monkeypatch.setattr(verdict_cache, "ENTRIES_KEPT", 1)
    for weight in (1, 2):
        manifests.write_text(yaml.safe_dump_all([node_class(), node_pool({"spec": {"weight": weight}})]))
        assert cli("validate", str(manifests), "--format", "json", "--crd", str(crd_file)).code == 0
    assert len(list(cache.iterdir())) == 1 and len([p for p in cache.parent.iterdir() if p.is_file()]) == 1
