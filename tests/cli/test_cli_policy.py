"""The `validate --policy` CLI contract: waiver fields, the waivers list, exit codes 0/1/2.

House-style policies are warnings by default; these tests run as a team that enforces IMDSv2 (a
policy file raising it to an error), so a waiver decides the exit code."""

from __future__ import annotations

import json

import pytest

from karpenter_gitops.cli import main

NODECLASS = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: gpu-a}
spec:
  amiSelectorTerms: [{alias: al2023@v20240807}]
  role: KarpenterNodeRole-demo
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  detailedMonitoring: true
  metadataOptions: {httpTokens: optional}
"""
WAIVER = """\
waivers:
  - rule: policy/imdsv2-required
    object: gpu-*
    kind: EC2NodeClass
    reason: vendor agent still speaks IMDSv1 (VEND-7)
    expires: {expires}
"""


@pytest.fixture
def enforced(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("rules: {policy/imdsv2-required: {severity: error}}\n")
    return path


@pytest.fixture
def manifest(tmp_path):
    path = tmp_path / "nc.yaml"
    path.write_text(NODECLASS)
    return path


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def waiver_file(tmp_path, expires: str):
    path = tmp_path / "waivers.yaml"
    path.write_text(WAIVER.format(expires=expires))
    return path


def test_policy_error_fails_without_a_waiver(manifest, enforced, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no karpenter_gitops_policies/waivers.yaml here
    code, out, _ = run(capsys, "validate", manifest, "--policy", "--format", "json")
    (advisory,) = [f for f in json.loads(out)["findings"] if f["rule"] == "policy/imdsv2-required"]
    assert code == 0 and advisory["severity"] == "warning"  # house style: reported, not blocking
    code, out, _ = run(capsys, "validate", manifest, "--policy-file", enforced, "--format", "json")
    report = json.loads(out)
    assert code == 1
    (finding,) = [f for f in report["findings"] if f["rule"] == "policy/imdsv2-required"]
    assert finding["severity"] == "error" and finding["waived"] is False and finding["waiver"] is None
    assert report["waivers"] == [] and report["summary"]["waived"] == 0


def test_waived_error_is_listed_but_exits_zero(manifest, enforced, capsys, tmp_path):
    code, out, _ = run(capsys, "validate", manifest, "--policy-file", enforced, "--waivers", waiver_file(tmp_path, "2999-12-31"),
                       "--format", "json")
    report = json.loads(out)
    assert code == 0
    (finding,) = [f for f in report["findings"] if f["rule"] == "policy/imdsv2-required"]
    assert finding["waived"] is True and finding["waiver"]["object"] == "gpu-*"
    assert [w["rule"] for w in report["waivers"]] == ["policy/imdsv2-required"]
    assert report["summary"] == {"errors": 0, "warnings": 0, "objects": 1, "waived": 1}


def test_expired_waiver_brings_the_error_back_and_is_reported(manifest, enforced, capsys, tmp_path):
    code, out, _ = run(capsys, "validate", manifest, "--policy-file", enforced, "--waivers", waiver_file(tmp_path, "2000-01-01"),
                       "--format", "json")
    report = json.loads(out)
    assert code == 1
    assert {f["rule"]: f["severity"] for f in report["findings"]} == {"policy/imdsv2-required": "error", "policy/waiver-expired": "warning"}
    assert report["waivers"] == []


def test_text_report_lists_active_waivers(manifest, capsys, tmp_path):
    code, out, _ = run(capsys, "validate", manifest, "--policy", "--waivers", waiver_file(tmp_path, "2999-12-31"))
    assert code == 0
    assert "waived " in out and "active waivers: 1" in out and "until 2999-12-31" in out


def test_default_waiver_file_is_used_from_the_working_directory(manifest, enforced, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "validate", manifest, "--policy-file", enforced)[0] == 1
    (tmp_path / "karpenter_gitops_policies").mkdir()
    (tmp_path / "karpenter_gitops_policies" / "waivers.yaml").write_text(WAIVER.format(expires="2999-12-31"))
    assert run(capsys, "validate", manifest, "--policy-file", enforced)[0] == 0


def test_plain_validate_keeps_its_contract(manifest, capsys):
    code, out, _ = run(capsys, "validate", manifest, "--format", "json")
    assert code == 0
    assert json.loads(out) == {"findings": [], "summary": {"errors": 0, "warnings": 0, "objects": 1}}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (WAIVER.replace("policy/imdsv2-required", "policy/imdsv2"), "waivers[0]: unknown rule id 'policy/imdsv2'"),
        ("waivers:\n  - just a string\n", "waivers[0]: a waiver must be a mapping"),
        ("- rule: x\n", "a waiver file holds one mapping with a single key 'waivers'"),
    ],
)
def test_bad_waiver_file_exits_two_naming_the_entry(manifest, capsys, tmp_path, content, expected):
    path = tmp_path / "waivers.yaml"
    path.write_text(content)
    code, out, err = run(capsys, "validate", manifest, "--policy", "--waivers", path)
    assert code == 2 and out == ""
    assert expected in err and str(path) in err and "Traceback" not in err


def test_waivers_without_policy_is_a_usage_error(manifest, capsys, tmp_path):
    code, _, err = run(capsys, "validate", manifest, "--waivers", waiver_file(tmp_path, "2999-12-31"))
    assert code == 2 and "--waivers only applies with --policy" in err
