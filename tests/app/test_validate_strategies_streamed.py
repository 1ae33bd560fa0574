"""``validate --format jsonl`` of a large run, judged part by part, reports what one process reports.

Each case runs the command twice on the same input: once streamed, with the thresholds so low that
every file of more than a few documents is cut into slices and files are grouped a few at a time, and
once judged whole. The finding lines must be the same (each part's come sorted, so the order may
differ), the summary line, stderr and the exit code too. A recorder checks that the run really
streamed, or that it was handed back where it must be.
"""

from __future__ import annotations

import io
import json
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.validate_runs import DOCUMENTS, FILES, SEPARATORS, STREAM, Recorder, node_class, node_pool, overlay, stack, write

from karpenter_gitops.app import validate_pipeline, validate_strategies
from karpenter_gitops.cli import main
from karpenter_gitops.load import partition

SMALL_PART = 300  # bytes: a NodeClass or NodePool of the examples is some 400


def both_ways(monkeypatch, cli, argv: list[str], stdin: bytes | None = None, part: int = SMALL_PART):
    """What a user sees streamed, and whether it streamed; the same findings as the run judged whole."""
    recorder = Recorder(monkeypatch, "streamed")
    seen = []
    monkeypatch.setattr(validate_strategies, "PART_BYTES", part)
    for threshold in (0, 10**15):
        monkeypatch.setattr(validate_strategies, "STREAM_BYTES", threshold)
        code, out, err = cli("validate", "--no-cache", "--format", "jsonl", *argv, stdin=stdin)
        lines = out.splitlines()
        seen.append((code, sorted(lines[:-1]), lines[-1:], err))
    assert seen[0] == seen[1]
    return seen[0], recorder.taken[0]


def findings(seen) -> list[dict]:
    return [json.loads(line) for line in seen[1]]


def test_a_large_file_is_judged_in_slices_its_findings_on_their_lines(tmp_path, monkeypatch, cli):
    path = tmp_path / "rendered.yaml"
    path.write_text(STREAM)
    seen, streamed = both_ways(monkeypatch, cli, [str(path)])
    assert streamed and seen[0] == 1
    lines = {f["name"]: f["line"] for f in findings(seen)}
    assert {"two", "lost", "three"} <= set(lines) and lines["three"] > lines["lost"] > lines["two"] > 1


def test_standard_input_is_spooled_and_judged_in_slices(monkeypatch, cli):
    seen, streamed = both_ways(monkeypatch, cli, ["-"], stdin=STREAM.encode())
    assert streamed and seen[0] == 1
    assert {f["file"] for f in findings(seen)} == {"<stdin>"}


def test_lines_after_breaks_other_than_newline_are_numbered_as_one_process_numbers_them(tmp_path, monkeypatch, cli):
    """libyaml ends a line at a lone carriage return, NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR too: the
    lines before a later slice are counted so."""
    notes = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata: {a: "x\u2028y", b: "p\rq", c: "n\x85m\u2029"}\n---\n'
    path = tmp_path / "rendered.yaml"
    path.write_text(notes + STREAM, newline="")
    seen, streamed = both_ways(monkeypatch, cli, [str(path)])
    assert streamed and seen[0] == 1
    assert {f["name"] for f in findings(seen)} >= {"two", "lost", "three"}


def test_files_in_groups_with_references_stacks_and_waivers_across_them(tmp_path, monkeypatch, cli):
    folder = write(
        tmp_path / "repo",
        {
            "a.yaml": [overlay("cheap", "0.01"), node_class("one")],
            "b.yaml": [node_pool("general", "one"), node_pool("lost", "missing")],
            "c.yaml": [overlay("dear", "0.02"), node_class("two", role="arn:aws:iam::111122223333:role/x")],
            "z-stack.yaml": [
                stack(
                    cluster={"name": "dev", "karpenterVersion": "1.14", "featureGates": {"NodeOverlay": True}},
                    policy={"rules": {"policy/ebs-encrypted": {"severity": "error"}}},
                    waivers=[
                        {"rule": "nodeclass/role-arn-name", "object": "two", "reason": "test", "expires": "2099-01-01"},
                        {"rule": "policy/ebs-encrypted", "object": "gone", "reason": "old", "expires": "2020-01-01"},
                    ],
                )
            ],
        },
    )
    seen, streamed = both_ways(monkeypatch, cli, ["--policy", str(folder)])
    assert streamed and seen[0] == 1
    judged = findings(seen)
    assert [f["name"] for f in judged if f["rule"] == "nodepool/node-class-ref-unresolved"] == ["lost"]
    assert any(f["waived"] for f in judged) and any(f["file"].endswith("z-stack.yaml") for f in judged)
    assert json.loads(seen[2][0])["summary"]["waived"] >= 1


def test_a_stack_naming_another_release_reads_every_part_again(tmp_path, monkeypatch, cli):
    folder = write(
        tmp_path / "repo",
        {
            "a.yaml": [overlay("cheap", "0.01"), node_class("one")],
            "b.yaml": [stack(cluster={"name": "dev", "karpenterVersion": "1.6"})],
        },
    )
    seen, streamed = both_ways(monkeypatch, cli, [str(folder)])
    assert streamed and any(f["path"] == "kind" for f in findings(seen))
    assert "1.6" in seen[3] or "Karpenter" in seen[3] or seen[3] == ""


def test_what_one_process_must_judge_is_handed_back(tmp_path, monkeypatch, cli):
    """An object in two parts, stack files in two parts, a file that does not parse, nothing to judge, a
    slice that reads as something else than a part of its file, one document (nothing to cut)."""
    cases = {
        "duplicate": ({"a.yaml": [node_class("one")], "b.yaml": [node_class("one")]}, 1),
        "two stacks": ({"a.yaml": [stack(nodeClasses={"x": {"role": "r"}})], "b.yaml": [stack(cluster={"name": "dev"})]}, 1),
        "broken": ({"a.yaml": [node_class("one")], "b.yaml": "apiVersion: v1\nkind: [\n"}, 2),
        "empty": ({"a.yaml": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}]}, 2),
        "slice of comments": (
            {
                "a.yaml": yaml.safe_dump(node_class("one"))
                + "---\n"
                + "# padding\n" * 40
                + "---\n"
                + yaml.safe_dump(node_pool("general", "one"))
            },
            0,
        ),
        "one document": (
            {"a.yaml": [{"apiVersion": "v1", "kind": "List", "items": [node_class("one"), node_pool("general", "one")]}]},
            0,
        ),
    }
    for name, (files, code) in cases.items():
        seen, streamed = both_ways(monkeypatch, cli, [str(write(tmp_path / name.replace(" ", "-"), files))], part=50)
        assert (streamed, seen[0]) == (False, code), name


def test_an_input_over_what_one_process_reads_says_why_it_was_not_streamed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(validate_strategies, "STREAM_BYTES", 0)
    monkeypatch.setattr(validate_strategies, "PART_BYTES", SMALL_PART)
    monkeypatch.setattr(validate_strategies, "MAX_FILE_BYTES", 100)
    path = tmp_path / "rendered.yaml"
    path.write_text(yaml.safe_dump(node_class("one")) + "---\n" + yaml.safe_dump(node_class("one")))
    assert main(["validate", "--format", "jsonl", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: cannot be judged in parts (an object is defined in two parts)" in err and "Traceback" not in err
    path.write_text(yaml.safe_dump(node_class("one")) + "---\n" + yaml.safe_dump(node_pool("x", "one")) + "---\nkind: [\n")
    assert main(["validate", "--format", "jsonl", str(path)]) == 2
    streamed = capsys.readouterr().err
    monkeypatch.setattr(validate_strategies, "STREAM_BYTES", 10**15)
    assert main(["validate", "--format", "jsonl", str(path)]) == 2
    assert streamed == capsys.readouterr().err and ".yaml:41: invalid YAML" in streamed  # the first error, on its line


def unique(documents: list[tuple[dict, str]]) -> list[tuple[dict, str]]:
    """The documents with each object's name made unique (an object defined twice is judged in one process)."""
    seen, renamed = set(), []
    for index, (document, separator) in enumerate(documents):
        key = (document["kind"], document["metadata"]["name"])
        if key in seen:
            document = {**document, "metadata": {"name": f"{key[1]}-{index}"}}
        seen.add(key)
        renamed.append((document, separator))
    return renamed


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(DOCUMENTS, SEPARATORS), min_size=2, max_size=10), st.booleans(), st.sampled_from([200, 600, 2000]))
def test_any_stream_gives_one_process_findings(tmp_path_factory, monkeypatch, cli, documents, through_stdin, part):
    text = "".join(separator + yaml.safe_dump(document) for document, separator in unique(documents))
    if through_stdin:
        _, streamed = both_ways(monkeypatch, cli, ["-"], stdin=text.encode(), part=part)
    else:
        path = tmp_path_factory.mktemp("stream") / "rendered.yaml"
        path.write_text(text)
        _, streamed = both_ways(monkeypatch, cli, [str(path)], part=part)
    nothing_to_judge = all(document["kind"] == "ConfigMap" for document, _ in documents)
    one_part = partition._CUT.search(text.encode(), part) is None  # nothing to cut at: judged whole
    assert streamed or nothing_to_judge or one_part or "# only a comment" in text  # a slice of that alone reads as no document


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(FILES, st.booleans(), st.sampled_from([200, 600, 2000]))
def test_any_mix_of_files_gives_one_process_findings(tmp_path_factory, monkeypatch, cli, files, with_crds, part):
    from support.upstream import crds

    folder = write(tmp_path_factory.mktemp("mix"), {f"{index:02}.yaml": documents for index, documents in enumerate(files)})
    crds = ["--crd", str(crds("v1.14.1"))] if with_crds else []
    both_ways(monkeypatch, cli, ["--policy", *crds, str(folder)], part=part)


def test_standard_input_is_copied_no_further_than_the_run_reads_it(monkeypatch, capsys):
    """An endless stream is refused once it passes the limit, not copied to the disk until it is full."""

    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            buffer[:] = b"#" * len(buffer)
            return len(buffer)

    monkeypatch.setattr(validate_strategies, "STREAM_BYTES", 1_000_000)
    monkeypatch.setattr(validate_strategies, "MAX_STREAM_BYTES", 10_000_000)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    assert main(["validate", "--no-cache", "--format", "jsonl", "-"]) == 2
    assert "<stdin>: input is over" in capsys.readouterr().err


def test_a_file_changed_between_the_two_readings_stops_the_run_with_no_summary(tmp_path, monkeypatch, capsys):
    """Said as one process says it, on the line of the whole file, with no summary line: no verdict."""
    path = tmp_path / "rendered.yaml"
    broken = STREAM[::-1].replace("kind: EC2NodeClass"[::-1], "kind: ["[::-1], 1)[::-1]  # the last class, in a later slice
    path.write_text(broken)
    monkeypatch.setattr(validate_strategies, "STREAM_BYTES", 10**15)
    assert main(["validate", "--no-cache", "--format", "jsonl", str(path)]) == 2
    one_process = capsys.readouterr().err
    path.write_text(STREAM)
    real = validate_pipeline.Pipeline.settle

    def then_changed(*args):
        settled = real(*args)
        path.write_text(broken)
        return settled

    monkeypatch.setattr(validate_pipeline.Pipeline, "settle", then_changed)
    monkeypatch.setattr(validate_strategies, "STREAM_BYTES", 0)
    monkeypatch.setattr(validate_strategies, "PART_BYTES", SMALL_PART)
    assert main(["validate", "--no-cache", "--format", "jsonl", str(path)]) == 2
    out, err = capsys.readouterr()
    assert '"summary"' not in out and err == one_process and "invalid YAML" in err


def test_a_byte_that_is_not_utf8_in_a_later_slice_is_named_as_one_process_names_it(tmp_path, monkeypatch, capsys):
    path = tmp_path / "rendered.yaml"
    path.write_bytes(STREAM.encode() + b"# \xff\n")
    monkeypatch.setattr(validate_strategies, "STREAM_BYTES", 10**15)
    assert main(["validate", "--no-cache", "--format", "jsonl", str(path)]) == 2
    one_process = capsys.readouterr().err
    monkeypatch.setattr(validate_strategies, "STREAM_BYTES", 0)
    monkeypatch.setattr(validate_strategies, "PART_BYTES", SMALL_PART)
    monkeypatch.setattr(validate_strategies, "MAX_FILE_BYTES", 100)  # too large for one process: the stream says it
    assert main(["validate", "--no-cache", "--format", "jsonl", str(path)]) == 2
    assert capsys.readouterr().err == one_process and f"(byte {len(STREAM.encode()) + 2})" in one_process


def test_a_folder_passed_over_leaves_the_findings_as_one_process_gives_them(tmp_path, monkeypatch, cli):
    folder = write(tmp_path / "repo", {"a.yaml": [node_class("one")], "b.yaml": [node_pool("lost", "missing")]})
    (folder / "nested").mkdir()
    (folder / "nested" / "up").symlink_to(folder, target_is_directory=True)
    seen, streamed = both_ways(monkeypatch, cli, [str(folder)])
    assert streamed and [f["name"] for f in findings(seen)] == ["lost"]


def _many_files(tmp_path, count: int):
    """``count`` files of one EC2NodeClass and a NodePool referencing a class nowhere defined (a finding each)."""
    return write(tmp_path / "many", {f"f{i:02}.yaml": [node_class(f"c{i}"), node_pool(f"p{i}", "missing")] for i in range(count)})


def test_a_run_over_many_files_prints_findings_before_it_judges_the_last_file(tmp_path, monkeypatch, cli):
    """The first part's findings are on stdout while later parts are still to be read again and judged; each
    part is let go once judged, so what the run holds stays one part's whatever the number of files."""
    import gc

    from karpenter_gitops.app import executor
    from karpenter_gitops.load.files import ReadFile
    from karpenter_gitops.output import report_text

    folder = _many_files(tmp_path, 12)
    monkeypatch.setattr(executor, "_forking", lambda: False)  # every part judged here, in order, where we watch
    monkeypatch.setattr(validate_strategies, "STREAM_BYTES", 0)
    monkeypatch.setattr(validate_strategies, "PART_BYTES", (folder / "f00.yaml").stat().st_size)  # a part per file
    events: list[tuple[str, str]] = []
    held: list[int] = []
    judge, print_findings = validate_pipeline.PartWork.verdict, report_text._print_jsonl_findings

    def verdict(work, settled):
        gc.collect()
        held.append(sum(1 for thing in gc.get_objects() if isinstance(thing, ReadFile)))
        events.append(("judged", work.part.pieces[0].name))
        return judge(work, settled)

    def printed(report):
        events.append(("printed", str(len(report.findings))))
        print_findings(report)

    monkeypatch.setattr(validate_pipeline.PartWork, "verdict", verdict)
    monkeypatch.setattr(report_text, "_print_jsonl_findings", printed)
    code, out, _ = cli("validate", "--no-cache", "--format", "jsonl", str(folder))
    assert code == 0 and len(out.splitlines()) == 12 + 1  # a finding (info) per file, the summary
    first_printed = events.index(("printed", "1"))
    last_judged = next(i for i, (what, name) in enumerate(events) if what == "judged" and name.endswith("f11.yaml"))
    assert first_printed < last_judged
    assert len(held) == 12 and max(held) == 0  # no part's files outlive its judging: none held when the next is read


def test_a_streamed_run_says_how_far_it_is(tmp_path, monkeypatch):
    from karpenter_gitops.app.validate_pipeline import Judging
    from karpenter_gitops.app.validate_strategies import Run
    from karpenter_gitops.load.files import expand

    folder = _many_files(tmp_path, 3)
    monkeypatch.setattr(validate_strategies, "STREAM_BYTES", 0)
    monkeypatch.setattr(validate_strategies, "PART_BYTES", (folder / "f00.yaml").stat().st_size)
    said: list[str] = []
    stream = validate_strategies.streamed(Run(tuple(expand([folder], []))), Judging(), print, said.append)
    assert stream is not None and said == [
        "read 1 of 3 parts (2 objects)",
        "read 2 of 3 parts (4 objects)",
        "read 3 of 3 parts (6 objects)",
    ]
    assert sum(len(report.findings) for report in stream.reports) == 3
    assert said[3:] == ["judged 1 of 3 parts", "judged 2 of 3 parts", "judged 3 of 3 parts"]
