"""``karpenter-gitops bump``: the pinned stack's dry run against the embedded AWS as JSON and as text (the
snapshot), and its contract: what it writes, what it shows, and its exit codes."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
from conftest import PROJECT
from support.command_runs import masked, transcript

PINNED = PROJECT / "stacks" / "Pulumi.pinned.yaml"


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_bump_dry_run(in_project, capsys, snapshot, fmt):
    text = transcript(capsys, "bump", "--stack", "pinned", "--embedded-aws", "--dry-run", "--format", fmt)
    if fmt == "json":
        json.loads(text.split("--- stdout\n", 1)[1].split("--- stderr", 1)[0])
    assert masked(text) == snapshot


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project directory holding a copy of the pinned example stack; the current directory during the test."""
    (tmp_path / "stacks").mkdir()
    shutil.copy(PROJECT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(PINNED, tmp_path / "stacks" / "Pulumi.pinned.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "stacks" / "Pulumi.pinned.yaml"


@pytest.fixture
def bump(cli):
    """``bump`` of the pinned stack, with more arguments."""
    return functools.partial(cli, "bump", "--stack", "pinned")


def test_dry_run_shows_the_diff_and_writes_nothing(project, bump):
    code, out, _ = bump("--embedded-aws", "--dry-run")
    assert code == 0
    assert "-        - alias: al2023@v20250201   # bumped by review only" in out
    assert "+        - alias: al2023@v20250212   # bumped by review only" in out
    assert "dry run: nothing written" in out
    assert project.read_bytes() == PINNED.read_bytes()


@pytest.mark.slow
def test_bump_writes_only_the_moved_values_then_finds_nothing_to_do(project, bump):
    code, out, _ = bump("--embedded-aws", "--format", "json")
    result = json.loads(out)
    assert code == 0 and result["written"] and result["file"] == "stacks/Pulumi.pinned.yaml"
    moves = {c["nodeClass"]: (c["from"], c["to"]) for c in result["changes"]}
    assert moves == {
        "default": ([{"alias": "al2023@v20250201"}], [{"alias": "al2023@v20250212"}]),
        "gpu": ([{"alias": "bottlerocket@1.32.0"}], [{"alias": "bottlerocket@1.33.0"}]),
        "payments": ([{"id": "ami-0c9a000000000f001"}], [{"id": "ami-0c9a000000000f002"}, {"id": "ami-0c9a000000000f003"}]),
    }
    assert [u["nodeClass"] for u in result["unchanged"]] == ["edge"] and result["problems"] == []
    assert all(c["reason"] for c in result["changes"]) and result["notes"]
    expected = (
        PINNED.read_text()
        .replace("al2023@v20250201", "al2023@v20250212")
        .replace('"bottlerocket@1.32.0"', '"bottlerocket@1.33.0"')
        .replace(
            "        - id: ami-0c9a000000000f001\n", "        - id: ami-0c9a000000000f002\n        - id: ami-0c9a000000000f003\n"
        )
    )
    assert project.read_text() == expected

    written = project.stat().st_mtime_ns
    code, out, _ = bump("--embedded-aws")
    assert code == 0 and "nothing to bump" in out
    assert project.stat().st_mtime_ns == written and project.read_text() == expected


def test_pin_latest_and_class_filter(project, bump):
    code, out, _ = bump("--embedded-aws", "--class", "edge", "--pin-latest", "--format", "json")
    result = json.loads(out)
    assert code == 0
    assert [(c["nodeClass"], c["to"]) for c in result["changes"]] == [("edge", [{"alias": "al2023@v20250212"}])]
    assert "al2023@v20250201" in project.read_text()  # the other classes were not touched


def test_unresolvable_pin_exits_one(project, bump):
    project.write_text(PINNED.read_text().replace("- name: payments-node-*", "- name: retired-pipeline-*"))
    code, out, _ = bump("--embedded-aws", "--class", "payments", "--format", "json")
    result = json.loads(out)
    assert code == 1 and result["problems"][0]["nodeClass"] == "payments" and not result["written"]


def test_unreachable_aws_is_transient_and_writes_nothing(project, bump, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # discard port: nothing listens
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    code, out, err = bump("--format", "json")
    assert code == 3 and "nothing written" in err
    assert json.loads(out)["written"] is False
    assert project.read_bytes() == PINNED.read_bytes()


@pytest.mark.parametrize(
    "args",
    [
        ("--class", "nope", "--embedded-aws"),
        ("--aws-fixture", "world.yaml"),
        ("--format", "yaml"),
    ],
)
def test_usage_errors_exit_two(project, bump, args):
    code, _, err = bump(*args)
    assert code == 2 and err
    assert project.read_bytes() == PINNED.read_bytes()


def test_missing_stack_and_bad_sources_exit_two(project, bump, cli):
    assert cli("bump").code == 2
    assert cli("bump", "--stack", "absent").code == 2
    project.write_text(
        PINNED.read_text().replace(
            "  karpenter-gitops:amiSources:\n    payments:", "  karpenter-gitops:amiSources:\n    paymnts:"
        )
    )
    code, _, err = bump("--embedded-aws")
    assert code == 2 and "amiSources.paymnts" in err and "did you mean 'payments'" in err


def test_a_failed_write_exits_two_and_leaves_the_stack_whole(project, bump, monkeypatch):
    import os

    def full_disk(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    code, _, err = bump("--embedded-aws")
    assert code == 2 and "No space left on device" in err
    assert project.read_bytes() == PINNED.read_bytes()
    assert os.listdir(project.parent) == [project.name]
