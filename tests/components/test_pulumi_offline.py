"""The offline runner: the stack's program through the engine stand-in, reconciled, without the Pulumi CLI."""

from __future__ import annotations

import io
import json

import pytest
from conftest import PROJECT, scratch_project

from karpenter_gitops_pulumi import offline
from karpenter_gitops.app.stack import eks_cluster


def test_demo_stack_registers_ready_classes_and_blocks_the_one_that_fails(default_aws):
    run = offline.engine_for("demo", cluster_lookup=eks_cluster).up()
    reconciled = {r.name: r for r in run.by_type(offline.RECONCILIATION)}
    assert set(reconciled) == {"default-reconciliation", "gpu-reconciliation"}  # payments failed: not in state
    ready = {c["type"]: c["status"] for c in reconciled["gpu-reconciliation"].outputs["conditions"]}["Ready"]
    assert ready == "True"
    failed = {u.split("::")[-1]: why for u, why in run.failures.items()}
    assert set(failed) == {"payments-reconciliation", "payments-ec2nodeclass", "payments-nodepool"}
    assert "has no role" in failed["payments-reconciliation"] and "Traceback" not in failed["payments-reconciliation"]
    assert failed["payments-nodepool"].startswith("skipped:")

    out = io.StringIO()
    offline.print_run(run, out)
    lines = out.getvalue().splitlines()
    assert any("payments-ec2nodeclass  [blocked" in line for line in lines)
    assert any("payments-nodepool  [blocked" in line for line in lines)
    assert not any("default-ec2nodeclass  [blocked" in line for line in lines)
    assert lines[0] == "+ karpenter-gitops:index:Fleet  demo"
    assert "Resources: 39 created, 1 failed, 2 skipped" in lines
    assert lines[-1].startswith("FAILED payments-reconciliation: EC2NodeClass payments: spec.instanceProfile:")


def test_preview_runs_checks_only(default_aws):
    run = offline.engine_for("demo", cluster_lookup=eks_cluster).preview()
    assert run.failures == {} and not run.failed
    cr = run.resources[run.urn("default-ec2nodeclass")]
    assert cr.inputs["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20250201"}]
    assert {s.op for s in run.steps} == {"create"}


def test_a_stack_that_cannot_run_is_one_line_and_exit_two(tmp_path, monkeypatch, capsys):
    orphan = (
        "config:\n"
        "  karpenter-gitops:nodeClasses: {}\n"
        "  karpenter-gitops:nodePools:\n"
        "    general: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nope}}}}\n"
    )
    monkeypatch.setattr(offline, "PROJECT", scratch_project(tmp_path, "orphan", orphan))
    assert offline.main(["--stack", "missing"]) == 2
    assert offline.main(["--stack", "orphan"]) == 2  # the program itself refuses (a pool naming no class)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 2
    assert "stack 'missing' has no config file" in lines[0] and "'nope' names no EC2NodeClass" in lines[1]
    assert "Traceback" not in err


def test_a_policy_pack_that_cannot_start_is_one_line(tmp_path, capsys):
    assert offline.main(["--stack", "demo", "--preview", "--policy-pack", str(tmp_path / "nowhere")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "nowhere" in err


def test_an_encrypted_stack_value_is_one_line_naming_the_key(tmp_path, monkeypatch, capsys):
    secured = (
        "config:\n"
        "  karpenter-gitops:nodeClasses:\n"
        "    default: {userData: {secure: v1:AAAA}}\n"
    )
    monkeypatch.setattr(offline, "PROJECT", scratch_project(tmp_path, "secured", secured))
    assert offline.main(["--stack", "secured"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert "Pulumi.secured.yaml: karpenter-gitops:nodeClasses.default.userData is a Pulumi secret" in err


@pytest.mark.parametrize("content", [None, "not json", '{"resources": [{"urn": 1}]}', b"\xff\xfe"])
def test_a_state_file_that_cannot_serve_is_one_line(tmp_path, capsys, content):
    state = tmp_path / ("missing-dir/state.json" if content is None else "state.json")
    if isinstance(content, bytes):
        state.write_bytes(content)
    elif content is not None:
        state.write_text(content)
    assert offline.main(["--stack", "demo", "--preview", "--state", str(state)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and str(state) in err


def test_refresh_without_state_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        offline.main(["--stack", "demo", "--refresh"])
    assert exit_.value.code == 2 and "--refresh needs --state" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["config: [unclosed\n", "a: 1\n---\nb: 2\n", "- just a list\n", "config: 3\n"])
def test_a_stack_file_that_is_not_a_stack_is_one_line(tmp_path, monkeypatch, capsys, text):
    monkeypatch.setattr(offline, "PROJECT", scratch_project(tmp_path, "broken", text))
    assert offline.main(["--stack", "broken", "--preview"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "Pulumi.broken.yaml" in err


def test_a_policy_pack_config_file_sets_levels_as_the_engine_does(tmp_path, capsys):
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"all": "mandatory", "policy-detailed-monitoring": "disabled"}))
    args = ["--stack", "demo", "--preview", "--policy-pack", str(PROJECT / "karpenter_gitops_policies")]
    assert offline.main([*args, "--policy-pack-config", str(config)]) == 1  # the pool-size policy is now mandatory
    out = capsys.readouterr().out
    assert "policy mandatory: policy-bounded-instance-size: general-nodepool:" in out
    assert "policy-detailed-monitoring" not in out


@pytest.mark.parametrize("content, says", [
    ('{"policy-bounded-instance-size": {"maxInstanceCpu": "lots"}}', "policy-bounded-instance-size: 'lots' is not of type"),
    ('{"all": "loud"}', "give an enforcement level"),
    ("not json", "not a policy pack config file"),
])
def test_a_policy_pack_config_the_pack_refuses_is_one_line(tmp_path, capsys, content, says):
    config = tmp_path / "policy.json"
    config.write_text(content)
    args = ["--stack", "demo", "--preview", "--policy-pack", str(PROJECT / "karpenter_gitops_policies"), "--policy-pack-config", str(config)]
    assert offline.main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and says in err, err
