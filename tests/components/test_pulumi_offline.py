"""The offline runner shows a stack's Pulumi resources, reconciled, without the Pulumi CLI."""

from __future__ import annotations

import io

from components import offline


def test_demo_stack_registers_ready_classes_and_blocks_the_one_that_fails(default_aws):
    recorder = offline.run_program("demo")
    reconciled = {r.name: r for r in recorder.by_type(offline.RECONCILIATION)}
    assert set(reconciled) == {"default-reconciliation", "gpu-reconciliation", "payments-reconciliation"}
    ready = {c["type"]: c["status"] for c in reconciled["gpu-reconciliation"].outputs["conditions"]}["Ready"]
    assert ready == "True"
    assert set(recorder.failures) == {"payments-reconciliation"}
    assert "has no role" in recorder.failures["payments-reconciliation"]

    out = io.StringIO()
    offline.print_tree(recorder, out)
    lines = out.getvalue().splitlines()
    assert any("payments-ec2nodeclass  [blocked" in line for line in lines)
    assert any("payments-nodepool  [blocked" in line for line in lines)
    assert not any("default-ec2nodeclass  [blocked" in line for line in lines)
    assert lines[0].startswith("karpenter-gitops:index:Fleet  demo")


def test_preview_runs_checks_only(default_aws):
    recorder = offline.run_program("demo", preview=True)
    assert recorder.failures == {}
    (cr,) = [r for r in recorder.by_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass") if r.name == "default-ec2nodeclass"]
    assert cr.inputs["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20250201"}]


def test_a_stack_that_cannot_run_is_one_line_and_exit_two(tmp_path, monkeypatch, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: karpenter-gitops\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.orphan.yaml").write_text(
        "config:\n"
        "  karpenter-gitops:nodeClasses: {}\n"
        "  karpenter-gitops:nodePools:\n"
        "    general: {template: {spec: {nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nope}}}}\n"
    )
    monkeypatch.setattr(offline, "PROJECT", tmp_path)
    assert offline.main(["--stack", "missing"]) == 2
    assert offline.main(["--stack", "orphan"]) == 2  # the program itself refuses (a pool naming no class)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 2
    assert "stack 'missing' has no config file" in lines[0] and "'nope' names no EC2NodeClass" in lines[1]
