"""``validate`` of many files split in two parts on two cores says exactly what one process says.

Each case runs the command twice on the same files: once with every run split (the byte threshold at 0)
and once whole, and compares what a user sees: the output in every format, stderr and the exit code. A
recorder checks that the split really ran (or that it handed the run back, where it must).
"""

from __future__ import annotations

import json
import os
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.validate_runs import DOCUMENTS, FILES, SEPARATORS, STREAM, Recorder, node_class, node_pool, overlay, stack, write

from karpenter_gitops.app import validate_strategies
from karpenter_gitops.load import partition
from karpenter_gitops.rules.examples import BASE_NODECLASS

pytestmark = pytest.mark.skipif(sys.platform != "linux" or (os.cpu_count() or 1) < 2, reason="one process elsewhere")


def both_ways(monkeypatch, cli, argv: list[str], stdin: bytes | None = None) -> tuple[tuple, bool]:
    """What a user sees with the run split, whether it was split; it must equal one process's."""
    recorder = Recorder(monkeypatch)
    seen = []
    for threshold in (0, 10**12):
        monkeypatch.setattr(validate_strategies, "SPLIT_BYTES", threshold)
        seen.append(cli("validate", "--no-cache", *argv, stdin=stdin))
    assert seen[0] == seen[1]
    return seen[0], recorder.taken[0]


def test_findings_in_both_halves_and_references_across_them(tmp_path, monkeypatch, cli):
    """A NodePool's class defined in the other half resolves; mistakes on either side are reported."""
    folder = write(
        tmp_path / "deploy",
        {
            "a-classes.yaml": [
                node_class("one"),
                node_class("two", amiSelectorTerms=[{"alias": "al2023@latest", "id": "ami-0123456789abcdef0"}]),
            ],
            "b-pools.yaml": [node_pool("general", "one"), node_pool("batch", "two"), node_pool("lost", "missing")],
            "c-more.yaml": [node_class("three"), node_pool("late", "three", weight=500)],
        },
    )
    for fmt in ("text", "json", "jsonl", "github"):
        (code, out, _), split = both_ways(monkeypatch, cli, ["--format", fmt, str(folder)])
        assert split and code == 1
    findings = json.loads(both_ways(monkeypatch, cli, ["--format", "json", str(folder)])[0][1])["findings"]
    assert {"two", "lost", "late"} <= {f["name"] for f in findings}
    assert not [f for f in findings if f["name"] in ("general", "batch")]  # their classes are in another file


def test_a_stack_in_one_half_sets_the_cluster_and_policy_of_the_other(tmp_path, monkeypatch, cli):
    folder = write(
        tmp_path / "repo",
        {
            "a.yaml": [overlay("cheap", "0.01")],
            "b.yaml": [node_class("one"), node_pool("general", "one")],
            "z-stack.yaml": [
                stack(
                    cluster={"name": "dev", "karpenterVersion": "1.14", "featureGates": {"NodeOverlay": True}},
                    policy={"rules": {"policy/ebs-encrypted": {"severity": "error"}}},
                    waivers=[
                        {"rule": "policy/ebs-encrypted", "object": "one", "reason": "test", "expires": "2099-01-01"},
                        {"rule": "policy/ebs-encrypted", "object": "gone", "reason": "old", "expires": "2020-01-01"},
                    ],
                )
            ],
        },
    )
    (code, out, err), split = both_ways(monkeypatch, cli, ["--policy", "--format", "json", str(folder)])
    assert split and json.loads(out)["summary"]["objects"] == 3
    expired = [f for f in json.loads(out)["findings"] if f["file"].endswith("z-stack.yaml")]
    assert expired  # the expired waiver, judged by the first process after both halves


def test_overlays_in_both_halves_are_judged_against_each_other(tmp_path, monkeypatch, cli):
    folder = write(
        tmp_path / "repo",
        {
            "a.yaml": [overlay("first", "0.01"), node_class("one")],
            "b.yaml": [overlay("second", "0.02"), node_pool("general", "one")],
        },
    )
    (code, out, _), split = both_ways(monkeypatch, cli, ["--format", "json", "--feature-gates", "NodeOverlay=true", str(folder)])
    assert split
    assert {"first", "second"} & {f["name"] for f in json.loads(out)["findings"] if f["rule"].startswith("nodeoverlay/")}


def test_what_one_process_must_do_is_handed_back(tmp_path, monkeypatch, cli):
    """An object in both halves, stack files in both, a file that does not parse, nothing to judge."""
    cases = {
        "duplicate": {"a.yaml": [node_class("one")], "b.yaml": [node_class("one")]},
        "two stacks": {
            "a.yaml": [stack(nodeClasses={"x": dict(BASE_NODECLASS["spec"])})],
            "b.yaml": [stack(cluster={"name": "dev"}, nodeClasses={"y": dict(BASE_NODECLASS["spec"])})],
        },
        "broken": {"a.yaml": [node_class("one")], "b.yaml": "apiVersion: v1\nkind: [\n"},
        "empty": {
            "a.yaml": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}],
            "b.yaml": [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "y"}}],
        },
    }
    codes = {"duplicate": 1, "two stacks": 0, "broken": 2, "empty": 2}
    for name, files in cases.items():
        (code, _, err), split = both_ways(monkeypatch, cli, [str(write(tmp_path / name.replace(" ", "-"), files))])
        assert (split, code) == (False, codes[name]), name


def test_a_stack_naming_another_release_loads_both_halves_again(tmp_path, monkeypatch, cli):
    """Karpenter 1.6 serves no NodeOverlay: both halves must be loaded for it, as one process is."""
    folder = write(
        tmp_path / "repo",
        {
            "a.yaml": [overlay("cheap", "0.01"), node_class("one")],
            "b.yaml": [stack(cluster={"name": "dev", "karpenterVersion": "1.6"})],
        },
    )
    (code, out, _), split = both_ways(monkeypatch, cli, ["--format", "json", str(folder)])
    assert split and code == 1
    assert any(f["path"] == "kind" for f in json.loads(out)["findings"])


def test_context_and_skipped_files_read_as_in_one_process(tmp_path, monkeypatch, cli):
    context = write(tmp_path / "context", {"classes.yaml": [node_class("shared")]})
    folder = write(
        tmp_path / "repo",
        {
            "a.yaml": [node_pool("uses-shared", "shared")],
            "b-template.yaml": "{{ .Values.x }}: 1\n",
            "c.yaml": [node_pool("uses-missing", "missing")],
            "d-cfn.yaml": [{"AWSTemplateFormatVersion": "2010-09-09"}],
        },
    )
    (code, out, err), split = both_ways(monkeypatch, cli, ["--context", str(context), str(folder)])
    assert split
    assert (out + err).count("note: skipped") == 2 and "'missing'" in out and "'shared'" not in out


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif", "junit"])
def test_one_large_file_is_read_in_two_parts_with_its_documents_numbered_as_one(tmp_path, monkeypatch, cli, fmt):
    path = tmp_path / "rendered.yaml"
    path.write_text(STREAM)
    (code, out, err), split = both_ways(monkeypatch, cli, ["--format", fmt, str(path)])
    assert split and code == 1
    assert "two" in out and "lost" in out and "three" in out


def test_a_large_file_beside_small_ones_is_cut_inside(tmp_path, monkeypatch, cli):
    """Cut between files, the halves would be far apart: the large file holding the middle is cut at a marker,
    each part placing the findings of its slice on their lines in the whole file."""
    cuts = []
    real = partition.in_two
    monkeypatch.setattr(partition, "in_two", lambda *args: cuts.append(real(*args)) or cuts[-1])
    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "a-small.yaml").write_text(yaml.safe_dump(node_pool("first", "one", weight=5000)))
    (folder / "b-rendered.yaml").write_text(STREAM)
    (folder / "c-small.yaml").write_text(yaml.safe_dump(node_class("late", role="arn:aws:iam::111122223333:role/x")))
    for fmt in ("text", "json"):
        (code, out, err), split = both_ways(monkeypatch, cli, ["--format", fmt, str(folder)])
        assert split and code == 1
    sliced = {piece.path.name for first, second in cuts for piece in (first.pieces[-1], second.pieces[0]) if not piece.whole}
    assert sliced == {"b-rendered.yaml"}
    assert {"first", "two", "lost", "late"} <= {f["name"] for f in json.loads(out)["findings"]}


def test_standard_input_is_read_once_and_in_two_parts(monkeypatch, cli):
    (code, out, err), split = both_ways(monkeypatch, cli, ["--format", "json", "-"], stdin=STREAM.encode())
    assert split and code == 1
    assert {finding["file"] for finding in json.loads(out)["findings"]} == {"<stdin>"}


def test_standard_input_that_one_process_must_read_is_read_again(monkeypatch, cli):
    """Too small to cut, or not UTF-8: one process reads the same bytes and says the same."""
    for stdin in (yaml.safe_dump(node_class("one")).encode(), STREAM.encode() + b"\xff\xfe"):
        (code, _, err), split = both_ways(monkeypatch, cli, ["-"], stdin=stdin)
        assert not split and code in (0, 2)


def test_a_file_with_document_end_markers_stays_in_one_process(tmp_path, monkeypatch, cli):
    path = tmp_path / "ended.yaml"
    path.write_text(
        yaml.safe_dump(node_class("one"))
        + "...\n"
        + yaml.safe_dump(node_pool("general", "one"))
        + "---\n"
        + yaml.safe_dump(node_class("two"))
    )
    assert not both_ways(monkeypatch, cli, [str(path)])[1]


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(DOCUMENTS, SEPARATORS), min_size=2, max_size=8), st.booleans())
def test_any_stream_gives_one_process_report(tmp_path_factory, monkeypatch, cli, documents, through_stdin):
    text = "".join(separator + yaml.safe_dump(document) for document, separator in documents)
    if through_stdin:
        both_ways(monkeypatch, cli, ["--format", "json", "-"], stdin=text.encode())
    else:
        path = tmp_path_factory.mktemp("stream") / "rendered.yaml"
        path.write_text(text)
        both_ways(monkeypatch, cli, ["--format", "json", str(path)])


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(FILES, st.booleans())
def test_any_mix_of_files_gives_one_process_report(tmp_path_factory, monkeypatch, cli, files, with_crds):
    from support.upstream import crds

    folder = write(tmp_path_factory.mktemp("mix"), {f"{index:02}.yaml": documents for index, documents in enumerate(files)})
    crds = ["--crd", str(crds("v1.14.1"))] if with_crds else []
    both_ways(monkeypatch, cli, ["--format", "json", "--policy", *crds, str(folder)])


def test_the_users_crds_judge_both_halves_with_the_notes_of_one_run(tmp_path, monkeypatch, cli):
    """The CRD findings, and the notes on what they left unchecked, per kind in the objects' order."""
    from support.upstream import crds

    folder = write(
        tmp_path / "repo",
        {
            "a.yaml": [
                node_class("one", amiSelectorTerms=[{"alias": "al2023@latest", "id": "ami-0123456789abcdef0"}]),
                node_pool("general", "one", weight=5000),
                overlay("cheap", "0.01"),
            ],
            "b.yaml": [node_pool("batch", "one", weight=-1), node_class("two", role="")],
        },
    )
    (code, out, err), split = both_ways(monkeypatch, cli, ["--crd", str(crds("v1.14.1")), str(folder)])
    assert split and code == 1
    assert "[crd/" in out and "no NodeOverlay CRD given" in out + err


def test_a_folder_passed_over_is_noted_where_one_process_notes_it(tmp_path, monkeypatch, cli):
    """A link back up the tree, read once: its note comes after the skipped files' and before what loading
    noted, though the parts skipped and noted apart."""
    folder = write(
        tmp_path / "repo",
        {
            "a.yaml": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, node_class("one")],
            "b-template.yaml": "{{ .Values.x }}: 1\n",
            "c.yaml": [node_pool("general", "one"), node_pool("lost", "missing")],
        },
    )
    (folder / "nested").mkdir()
    (folder / "nested" / "up").symlink_to(folder, target_is_directory=True)
    (code, out, err), split = both_ways(monkeypatch, cli, [str(folder)])
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert split and len(notes) == 3, err
    assert "template" in notes[0] and "a folder already read" in notes[1] and "ignored document 1" in notes[2]
