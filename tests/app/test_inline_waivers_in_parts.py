"""Inline waivers in a run judged in parts: split over two cores, or streamed part by part, the findings
carry their objects' waivers across, and the run reports what one process reports."""

from __future__ import annotations

import json
import os
import sys

import pytest
from support.validate_runs import Recorder, node_class, write

from karpenter_gitops.app import validate_strategies
from karpenter_gitops.core.findings import IGNORE_ANNOTATION

RULE = "nodeclass/block-device-without-ebs"


def _waived(name: str) -> dict:
    """An EC2NodeClass with this project's error, waived on the object itself."""
    obj = node_class(name, blockDeviceMappings=[{"deviceName": "/dev/xvdb"}])
    obj["metadata"]["annotations"] = {IGNORE_ANNOTATION: f"{RULE}: instance store of {name}"}
    return obj


@pytest.fixture
def deploy(tmp_path):
    return write(
        tmp_path / "deploy",
        {
            "a.yaml": [_waived("one"), node_class("plain"), _waived("two")],
            "b.yaml": [node_class("three"), _waived("four")],
        },
    )


@pytest.mark.skipif(sys.platform != "linux" or (os.cpu_count() or 1) < 2, reason="one process elsewhere")
def test_split_on_two_cores(deploy, monkeypatch, cli):
    recorder = Recorder(monkeypatch)
    seen = []
    for threshold in (0, 10**12):
        monkeypatch.setattr(validate_strategies, "SPLIT_BYTES", threshold)
        seen.append(cli("validate", "--no-cache", "--format", "json", deploy))
    assert recorder.taken[0] and seen[0] == seen[1]
    report = json.loads(seen[0].out)
    assert seen[0].code == 0 and report["summary"]["waived"] == 3
    assert sorted(w["object"] for w in report["waivers"]) == ["four", "one", "two"]


def test_streamed_part_by_part(deploy, monkeypatch, cli):
    recorder = Recorder(monkeypatch, "streamed")
    monkeypatch.setattr(validate_strategies, "PART_BYTES", 300)
    seen = []
    for threshold in (0, 10**15):
        monkeypatch.setattr(validate_strategies, "STREAM_BYTES", threshold)
        code, out, err = cli("validate", "--no-cache", "--format", "jsonl", deploy)
        lines = [json.loads(line) for line in out.splitlines()]
        seen.append(
            (code, sorted(map(json.dumps, lines[:-1])), lines[-1]["summary"], sorted(map(json.dumps, lines[-1]["waivers"])))
        )
    assert recorder.taken[0] and seen[0] == seen[1]
    code, found, summary, waivers = seen[0]
    assert code == 0 and summary["waived"] == 3 and len(waivers) == 3
    assert all(json.loads(line)["waived"] for line in found if RULE in line)
