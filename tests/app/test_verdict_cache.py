"""validate's verdict cache: a second run on unchanged inputs prints the same from the cache; any change,
--no-cache or an unusable cache judges again; and --format jsonl."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml
from support.rule_helpers import node_class, node_pool

from karpenter_gitops.app import validate as use_case
from karpenter_gitops.app import verdict_cache

UNRESOLVED = node_pool({"spec": {"template": {"spec": {"nodeClassRef": {"name": "elsewhere"}}}}})


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "verdicts"
    monkeypatch.setenv(verdict_cache.LOCATION, str(folder))
    return folder


@pytest.fixture
def manifests(tmp_path):
    path = tmp_path / "repo" / "karpenter.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump_all([node_class(), UNRESOLVED]))
    return path


@pytest.fixture
def judgements(monkeypatch):
    """How many times validate really judged."""
    calls = []
    real = use_case.judged
    monkeypatch.setattr(use_case, "judged", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_an_unchanged_run_prints_the_same_from_the_cache(cache, manifests, judgements, cli):
    first = cli("validate", str(manifests), "--format", "json")
    assert json.loads(first.out)["summary"]["objects"] == 2 and len(judgements) == 1
    assert cli("validate", str(manifests), "--format", "json") == first and len(judgements) == 1
    assert len(list(cache.iterdir())) == 1


def test_a_changed_file_option_or_no_cache_judges_again(cache, manifests, judgements, cli):
    cli("validate", str(manifests), "--format", "json")
    cli("validate", str(manifests), "--format", "json", "--policy")
    assert len(judgements) == 2
    cli("validate", str(manifests), "--format", "json", "--no-cache")
    assert len(judgements) == 3
    manifests.write_text(yaml.safe_dump_all([node_class(), node_pool()]))
    code, out, _ = cli("validate", str(manifests), "--format", "json")
    assert len(judgements) == 4 and json.loads(out)["findings"] == []


def test_a_policy_run_is_judged_again_on_another_day(cache, manifests, judgements, cli, monkeypatch):
    """Waivers expire by the date: a --policy verdict holds for the day it was made."""
    cli("validate", str(manifests), "--policy")
    cli("validate", str(manifests), "--policy")
    assert len(judgements) == 1

    class Tomorrow(dt.date):
        @classmethod
        def today(cls):
            return dt.date(2999, 1, 1)

    monkeypatch.setattr(dt, "date", Tomorrow)
    cli("validate", str(manifests), "--policy")
    assert len(judgements) == 2


def test_a_new_file_in_a_named_folder_judges_again(cache, manifests, judgements, cli):
    cli("validate", str(manifests.parent), "--format", "json")
    (manifests.parent / "more.yaml").write_text(yaml.safe_dump(node_class({"metadata": {"name": "other"}})))
    _, out, _ = cli("validate", str(manifests.parent), "--format", "json")
    assert len(judgements) == 2 and json.loads(out)["summary"]["objects"] == 3


def test_an_unreadable_entry_is_one_note_and_a_fresh_judgement(cache, manifests, judgements, cli):
    first = cli("validate", str(manifests), "--format", "json")
    [entry] = cache.iterdir()
    entry.write_bytes(b"not a verdict")
    code, out, err = cli("validate", str(manifests), "--format", "json")
    assert (code, out) == first[:2] and len(judgements) == 2
    assert err.count("verdict cache: ignored an unreadable entry") == 1


def test_a_cache_that_cannot_be_written_is_one_note_never_an_error(tmp_path, monkeypatch, manifests, cli):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(verdict_cache.LOCATION, str(blocker / "verdicts"))
    code, out, err = cli("validate", str(manifests), "--format", "json")
    assert code == 0 and json.loads(out)["summary"]["objects"] == 2
    assert err.count("verdict cache: not written") == 1


def test_jsonl_prints_each_finding_on_its_line_then_the_summary(cache, manifests, cli):
    _, document, _ = cli("validate", str(manifests), "--format", "json")
    code, lines, _ = cli("validate", str(manifests), "--format", "jsonl")
    *findings, summary = [json.loads(line) for line in lines.splitlines()]
    expected = json.loads(document)
    assert findings == expected["findings"] and summary == {"summary": expected["summary"]}
    assert [f["rule"] for f in findings] == ["nodepool/node-class-ref-unresolved"] and code == 0


@pytest.fixture
def fresh_environment():
    """The judging environment worked out again for this test, and again after it (it is kept per process)."""
    verdict_cache.environment.cache_clear()
    yield
    verdict_cache.environment.cache_clear()


def test_the_versions_are_read_from_the_installed_distributions():
    assert verdict_cache.installed_versions(["PyYAML", "no-such-distribution"]) == {
        "PyYAML": yaml.__version__,
        "no-such-distribution": "absent",
    }


def test_another_version_of_a_judging_dependency_judges_again(cache, manifests, fresh_environment, tmp_path, monkeypatch):
    before = verdict_cache.key([manifests], {})
    site = tmp_path / "site"
    (site / "jsonschema_rs-99.0.dist-info").mkdir(parents=True)  # found first on sys.path, as an import would be
    monkeypatch.syspath_prepend(str(site))
    verdict_cache.environment.cache_clear()
    assert verdict_cache.installed_versions(["jsonschema-rs"]) == {"jsonschema-rs": "99.0"}
    assert verdict_cache.key([manifests], {}) != before


def test_a_rebuilt_or_missing_c_reader_judges_again(cache, manifests, fresh_environment, tmp_path, monkeypatch):
    from karpenter_gitops.core import yaml_reader

    built = tmp_path / "_yaml_values.so"
    built.write_bytes(b"one build")
    monkeypatch.setattr(yaml_reader, "_yaml_values", type("Extension", (), {"__file__": str(built)}))
    keys = [verdict_cache.key([manifests], {})]
    built.write_bytes(b"another build")
    verdict_cache.environment.cache_clear()
    keys.append(verdict_cache.key([manifests], {}))
    monkeypatch.setattr(yaml_reader, "_yaml_values", None)  # not built: every document read in Python
    verdict_cache.environment.cache_clear()
    keys.append(verdict_cache.key([manifests], {}))
    assert len(set(keys)) == 3
