"""An object's karpenter-gitops.io/ignore annotation as every report shows it: the finding listed as waived, its
reason beside it, the run not failed, in text, json, jsonl, GitHub annotations and the PR comment alike."""

from __future__ import annotations

import json

import pytest
import yaml

from karpenter_gitops.core.findings import IGNORE_ANNOTATION
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

RULE = "nodeclass/block-device-without-ebs"
REASON = "instance-store volume, formatted by our userData [PLAT-7]"
ANNOTATED = {
    **BASE_NODECLASS,
    "metadata": {"name": "scratch", "annotations": {IGNORE_ANNOTATION: f"{RULE}: {REASON}"}},
    "spec": {**BASE_NODECLASS["spec"], "blockDeviceMappings": [{"deviceName": "/dev/xvdb"}]},
}
POOL = {**BASE_NODEPOOL, "spec": {**BASE_NODEPOOL["spec"]}}
POOL["spec"]["template"] = {
    "spec": {
        **BASE_NODEPOOL["spec"]["template"]["spec"],
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "scratch"},
    }
}


@pytest.fixture
def manifests(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "nodes.yaml").write_text(yaml.safe_dump_all([ANNOTATED, POOL]))
    (tmp_path / "base").mkdir()
    return tmp_path


def test_text(manifests, cli):
    code, out, _ = cli("validate", "nodes.yaml", "--no-cache")
    assert code == 0
    assert "  waived  spec.blockDeviceMappings[0]:" in out and f"[{RULE}]" in out
    assert f"active waivers: 1\n  {RULE} on EC2NodeClass/scratch inline ({IGNORE_ANNOTATION}): {REASON}\n" in out
    assert out.splitlines()[-1].endswith("0 error(s), 0 warning(s)")


def test_json_and_jsonl(manifests, cli):
    code, out, _ = cli("validate", "nodes.yaml", "--no-cache", "--format", "json")
    report = json.loads(out)
    [finding] = [f for f in report["findings"] if f["rule"] == RULE]
    assert code == 0 and finding["waived"] is True and finding["waiver"]["reason"] == REASON
    assert finding["waiver"]["inline"] is True and finding["waiver"]["file"] == "nodes.yaml"
    assert report["summary"] == {"errors": 0, "warnings": 0, "objects": 2, "waived": 1}
    lines = [json.loads(line) for line in cli("validate", "nodes.yaml", "--no-cache", "--format", "jsonl").out.splitlines()]
    assert lines[-1] == {"waivers": report["waivers"], "summary": report["summary"]}
    assert [line for line in lines[:-1] if line["rule"] == RULE] == [finding]


def test_github(manifests, cli):
    code, out, _ = cli("validate", "nodes.yaml", "--no-cache", "--format", "github")
    [line] = [line for line in out.splitlines() if RULE in line]
    assert code == 0 and line.startswith("::notice file=nodes.yaml,line=")
    assert f"(waived inline ({IGNORE_ANNOTATION}): {REASON})" in line


def test_the_pr_comment(manifests, cli):
    code, out, _ = cli("preview", "nodes.yaml", "--base", "base")
    assert code == 0 and ":white_check_mark: no blocking problems" in out
    assert "| waived | `EC2NodeClass/scratch` |" in out
    assert (
        f"- `{RULE}` on `scratch` inline ({IGNORE_ANNOTATION}): instance-store volume, formatted by our userData [PLAT-7]" in out
    )
