"""`preview`: snapshot-tested PR comments for the scenarios reviewers meet, bases, budgets, exit codes."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from support.fake_kube import kubeconfig_for
from support.preview_objects import family, node_class, node_pool

from karpenter_gitops.app import preview_result
from karpenter_gitops.cli import main
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.judge import validate
from karpenter_gitops.karpenter.disruption.drift import forecast
from karpenter_gitops.load import into_inputs, pulumi_events
from karpenter_gitops.output import comment_sections, pr_comment
from karpenter_gitops.rules.examples import BASE_NODECLASS

PULUMI = Path(__file__).resolve().parent.parent / "data" / "pulumi"


def write(directory: Path, *docs) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "karpenter.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return directory


def run_preview(tmp_path, monkeypatch, cli, base_docs, head_docs, *extra) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "base", *base_docs)
    write(tmp_path / "head", *head_docs)
    code, out, _ = cli("preview", "--manifests", "head", "--base", "base", "--kubernetes-version", "1.32", *extra)
    return code, out


def reconciled(catalogue_cache) -> list[str]:
    return ["--embedded-aws", "--cache-dir", str(catalogue_cache)]


PAYMENTS = {"amiFamily": "AL2023", "amiSelectorTerms": [{"name": "payments-node-2025-01-27", "owner": "self"}]}


@pytest.mark.slow
def test_ami_bump_moves_instance_types_and_drifts_the_pool(tmp_path, monkeypatch, cli, catalogue_cache, snapshot):
    pool = node_pool(family("m5", "c5"))
    code, out = run_preview(
        tmp_path,
        monkeypatch,
        cli,
        [node_class(), pool],
        [node_class(amiSelectorTerms=[{"alias": "al2023@v20250201"}]), pool],
        *reconciled(catalogue_cache),
    )
    assert "`ami-0a23000000000a001`" in out and "→ `ami-0a23000000000b001`" in out
    assert out == snapshot
    assert code == 0


def test_pending_ami_appearing_is_skipped_and_nothing_moves(tmp_path, monkeypatch, cli, catalogue_cache, snapshot):
    pool = node_pool(family("m6i"))
    widened = {**PAYMENTS, "amiSelectorTerms": [{"name": "payments-node-20*", "owner": "self"}]}
    code, out = run_preview(
        tmp_path,
        monkeypatch,
        cli,
        [node_class(**PAYMENTS), pool],
        [node_class(**widened), pool],
        *reconciled(catalogue_cache),
    )
    assert "ami-0c9a000000000f005" in out and "state is pending" in out
    assert "AMIDrift" not in out and "move to another AMI" not in out
    assert out == snapshot


def test_instance_profile_arn_is_a_blocking_error_in_the_summary(tmp_path, monkeypatch, cli, catalogue_cache, snapshot):
    arn = node_class()
    del arn["spec"]["role"]
    arn["spec"]["instanceProfile"] = "arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile"
    code, out = run_preview(
        tmp_path,
        monkeypatch,
        cli,
        [node_class(), node_pool(family("m5"))],
        [arn, node_pool(family("m5"))],
        *reconciled(catalogue_cache),
    )
    assert code == 1
    summary = out.split("<details>")[0]
    assert "#### Blocking errors" in summary and "nodeclass/instance-profile-arn" in summary
    # both sides: what Karpenter 1.15 will show, and why the class will fail
    assert (
        "`default`: Karpenter will show ValidationSucceeded=False (InstanceProfileNotFound); it will fail: "
        "instanceProfile must be a name, not an ARN"
    ) in summary
    assert out == snapshot


def test_requirement_widening_adds_types_and_reports_arm64_unserved(tmp_path, monkeypatch, cli, catalogue_cache, snapshot):
    arch = {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]}
    code, out = run_preview(
        tmp_path,
        monkeypatch,
        cli,
        [node_class(**PAYMENTS), node_pool(family("m6i"))],
        [node_class(**PAYMENTS), node_pool(family("m6i", "c6i", "m7g"), arch)],
        *reconciled(catalogue_cache),
    )
    assert "become launchable" in out and "c6i.*" in out
    assert "arm64 allowed but only amd64 AMIs selected" in out
    assert out == snapshot


def test_oversized_diff_is_cut_with_summary_intact_and_full_report_written(tmp_path, monkeypatch, cli, snapshot):
    base_tags = {f"cost-centre-{i:03}": "platform" for i in range(300)}
    head_tags = {key: "payments" for key in base_tags}
    code, out = run_preview(
        tmp_path,
        monkeypatch,
        cli,
        [node_class(tags=base_tags)],
        [node_class(tags=head_tags)],
        "--budget",
        "5000",
        "--full-report",
        "out/full.md",
    )
    assert len(out) <= 5000
    assert out.startswith(pr_comment.MARKER) and "**Objects** vs `base`: 0 added, 1 changed, 0 removed." in out
    assert ":scissors: diff cut:" in out and "`out/full.md`" in out
    full = (tmp_path / "out" / "full.md").read_text()
    assert full.count("cost-centre-") == 600 and ":scissors:" not in full
    assert out == snapshot


def test_user_data_and_secret_looking_values_are_redacted(tmp_path, monkeypatch, cli):
    secret = "AKIAABCDEFGHIJKLMNOP"
    code, out = run_preview(
        tmp_path,
        monkeypatch,
        cli,
        [node_class(userData="#!/bin/bash\necho old\n")],
        [node_class(userData="#!/bin/bash\necho new-password=hunter2\n", tags={"leak": secret})],
    )
    assert "hunter2" not in out and "echo" not in out and secret not in out
    assert "-  userData: '<redacted: 21 bytes, sha256:" in out and "+  userData: '<redacted: 38 bytes, sha256:" in out


@pytest.mark.slow
def test_five_thousand_object_change_stays_under_budget_with_summary_intact(tmp_path, monkeypatch, cli):
    base = [node_class(f"class-{i:04}") for i in range(2500)] + [
        node_pool(name=f"pool-{i:04}", node_class_name=f"class-{i:04}") for i in range(2500)
    ]
    head = copy.deepcopy(base)
    for doc in head:
        doc["metadata"]["labels"] = {"release": "2"}
    code, out = run_preview(tmp_path, monkeypatch, cli, base, head, "--full-report", "full.md")
    assert len(out) <= pr_comment.DEFAULT_BUDGET
    assert out.startswith(pr_comment.MARKER)
    assert "0 added, 5000 changed, 0 removed." in out
    assert ":scissors: Shortened to fit 65,000 characters" in out
    assert (tmp_path / "full.md").stat().st_size > len(out)


def test_json_format_is_the_same_report_for_machines(tmp_path, monkeypatch, cli):
    code, out = run_preview(tmp_path, monkeypatch, cli, [node_class()], [node_class(), node_pool()], "--format", "json")
    data = json.loads(out)
    assert data["summary"]["added"] == 1 and data["summary"]["reconciled"] is False
    assert data["objects"][0]["kind"] == "NodePool" and data["objects"][0]["status"] == "added"
    assert data["exitCode"] == code


def test_output_is_deterministic(tmp_path, monkeypatch, cli):
    args = ([node_class()], [node_class(userData="x"), node_pool(family("m5"))])
    first = run_preview(tmp_path, monkeypatch, cli, *args)
    assert run_preview(tmp_path, monkeypatch, cli, *args) == first


# --- bases --------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_git_ref_base_reads_the_same_paths_at_the_ref(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path / "karpenter", node_class(), node_pool(family("m5")))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    write(tmp_path / "karpenter", node_class(), node_pool(family("m5", "c5")), node_class("extra"))
    assert main(["preview", "--manifests", "karpenter", "--base", "main", "--format", "json"]) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    assert {(o["kind"], o["name"], o["status"]) for o in data["objects"]} == {
        ("EC2NodeClass", "extra", "added"),
        ("NodePool", "general", "changed"),
    }
    assert main(["preview", "--manifests", "karpenter", "--base", "no-such-ref"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no-such-ref" in err and "Git ref" in err


def test_base_directory_with_foreign_files_is_a_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "head", node_class())
    write(tmp_path / "base", node_class())
    (tmp_path / "base" / "notes.txt").write_text("hello")
    assert main(["preview", "--manifests", "head", "--base", "base"]) == 2
    assert "not manifests (notes.txt)" in capsys.readouterr().err


def test_rendered_directory_is_a_base(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "head", node_class(), node_pool(family("m5")))
    assert main(["render", "--manifests", "head", "--out", "rendered"]) == 0
    capsys.readouterr()
    assert main(["preview", "--manifests", "head", "--base", "rendered", "--format", "json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["objects"] == []


# --- cluster and Pulumi -------------------------------------------------------------------


def test_unreadable_kubeconfig_exits_two_and_unreachable_cluster_still_prints(tmp_path, monkeypatch, cli):
    base, head = [node_class()], [node_class(userData="x")]
    code, out = run_preview(tmp_path, monkeypatch, cli, base, head, "--kubeconfig", "missing")
    assert code == 2
    kubeconfig = kubeconfig_for(tmp_path / "kubeconfig", "http://127.0.0.1:9")
    code, out = run_preview(tmp_path, monkeypatch, cli, base, head, "--kubeconfig", str(kubeconfig))
    assert "**Node impact**: not available: cluster not read: cannot reach the API server" in out
    assert "#### Node impact" not in out


def test_node_counts_from_a_fake_cluster(tmp_path, monkeypatch, cli, fake_cluster):
    code, out = run_preview(
        tmp_path,
        monkeypatch,
        cli,
        [node_class(), node_pool()],
        [node_class(userData="x"), node_pool()],
        "--kubeconfig",
        str(fake_cluster),
    )
    assert "**Node impact**: 1 of 1 node(s) in the affected NodePools would be replaced" in out
    assert "| `general` | 1 | 1 | NodeClassDrift 1 | 20% | ~1 |" in out


def test_pulumi_preview_json_and_event_log_fold_into_the_comment(tmp_path, monkeypatch, cli):
    code, out = run_preview(
        tmp_path,
        monkeypatch,
        cli,
        [node_class()],
        [node_class()],
        "--pulumi-json",
        str(PULUMI / "preview.json"),
        "--pulumi-events",
        str(PULUMI / "events.jsonl"),
    )
    assert "**Pulumi**: 1 to create, 1 to update, 1 to replace, 0 to delete." in out
    assert "| update | `kubernetes:karpenter.k8s.aws/v1:EC2NodeClass` | `default` | spec, spec.amiSelectorTerms[0].alias |" in out
    assert "Pulumi policy karpenter-gitops/nodepool-limits (mandatory)" in out.split("<details>")[0]
    assert "- advisory `karpenter-gitops/detailed-monitoring`: detailed monitoring is off" in out
    assert "warning: NodePool batch has no disruption budget" in out  # colour directives stripped
    assert code == 1  # a mandatory policy violation blocks


def _step(op: str, parents: str, type_: str, name: str) -> dict:
    return {"op": op, "urn": f"urn:pulumi:e2e::team-infra::{parents}${type_}::{name}"}


CODE_CLASS = "karpenter-gitops:index:NodeClass"
RECONCILIATION = "pulumi-python:dynamic/karpenter-gitops:Reconciliation"


def test_the_comment_counts_the_objects_declared_in_code_beside_those_in_the_files(tmp_path, monkeypatch, cli):
    steps = [
        # the stack file's pool changed: Git shows it already, it is not counted twice
        _step(
            "update",
            "karpenter-gitops:index:Fleet$karpenter-gitops:index:NodePool",
            "kubernetes:karpenter.sh/v1:NodePool",
            "general-nodepool",
        ),
        # the code-defined GPU class: AWS resolves its images anew (its reconciliation), its custom resource is the same
        _step("update", CODE_CLASS, RECONCILIATION, "gpu-reconciliation"),
        _step("same", CODE_CLASS, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "gpu-ec2nodeclass"),
        # a code-defined pool created and another deleted
        _step("create", "karpenter-gitops:index:NodePool", "kubernetes:karpenter.sh/v1:NodePool", "gpu-spot-nodepool"),
        _step("delete", "karpenter-gitops:index:NodePool", "kubernetes:karpenter.sh/v1:NodePool", "old-gpu-nodepool"),
        _step("update", "karpenter-gitops:index:NodePool", "kubernetes:core/v1:ConfigMap", "unrelated-nodepool"),
    ]
    preview_json = tmp_path / "pulumi-preview.json"
    preview_json.write_text(json.dumps({"steps": steps}))
    pool = node_pool(family("m5"))
    edited = node_pool(family("m5", "c5"))
    code, out = run_preview(
        tmp_path, monkeypatch, cli, [node_class(), pool], [node_class(), edited], "--pulumi-json", str(preview_json)
    )
    assert (
        "1 added, 2 changed, 1 removed. Of them, declared in code (from Pulumi's preview): `EC2NodeClass/gpu` changed, "
        "`NodePool/gpu-spot` added, `NodePool/old-gpu` removed."
    ) in out


def test_event_log_alone_counts_from_the_summary_event():
    events = pulumi_events.parse_event_log((PULUMI / "events.jsonl").read_text(), "events.jsonl")
    assert events.counts == {"create": 1, "update": 1, "replace": 0, "delete": 0}
    assert sorted(s.op for s in events.steps) == ["create", "update"]
    assert [p.level for p in events.policy_events] == ["mandatory", "advisory"]
    assert events.diagnostics == ()  # the only diagnostic was ephemeral


def test_malformed_pulumi_input_is_a_usage_error(tmp_path, monkeypatch, cli):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _ = run_preview(tmp_path, monkeypatch, cli, [node_class()], [node_class()], "--pulumi-json", str(bad))
    assert code == 2


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (pulumi_events.parse_preview_json, '{"steps": [1]}'),
        (pulumi_events.parse_preview_json, '{"steps": [], "diagnostics": ["x"]}'),
        (pulumi_events.parse_preview_json, '{"steps": [], "changeSummary": [1]}'),
        (pulumi_events.parse_event_log, '{"summaryEvent": {}}\n1\n'),
        (pulumi_events.parse_event_log, '{"policyEvent": 1}'),
        (pulumi_events.parse_event_log, '{"summaryEvent": {"resourceChanges": {"create": "x"}}}'),
    ],
)
def test_valid_json_of_the_wrong_shape_is_an_input_error_not_a_traceback(parse, text):
    with pytest.raises(InputError, match="unexpected shape"):
        _ = parse(text, "pulumi.json").counts


def test_pure_layer_without_cli():
    base = into_inputs.load_documents([("b.yaml", [node_class()])])
    head = into_inputs.load_documents([("h.yaml", [node_class(), node_pool()])])
    report = preview_result.Preview.build("main", base, head, validate(head, policy=True, base=base), forecast(base, head))
    text, shortened = pr_comment.markdown(report)
    assert not shortened and "1 added, 0 changed, 0 removed" in text
    assert text.count("<details>") == text.count("</details>")


def test_an_unwritable_full_report_is_one_line_and_exit_two(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("not a directory\n")
    base_tags = {f"cost-centre-{i:03}": "platform" for i in range(300)}
    write(tmp_path / "base", node_class(tags=base_tags))
    write(tmp_path / "head", node_class(tags={key: "payments" for key in base_tags}))
    code = main(["preview", "--manifests", "head", "--base", "base", "--budget", "5000", "--full-report", "file/full.md"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "cannot write the full report" in err and "file/full.md" in err


def test_the_footer_fits_its_reserve_even_with_the_longest_object_names():
    labels = [f"~ NodePool/{'n' * 253} (changed)"] * 12
    assert len(pr_comment._footer(65_000, [], labels, "out/preview-full.md")) < pr_comment._FOOTER_RESERVE


# --- transition rules: what the API server refuses only on update -------------------------------


def test_node_class_ref_kind_change_is_a_blocking_transition_error(tmp_path, monkeypatch, cli, snapshot):
    moved = node_pool(family("m5"))
    moved["spec"]["template"]["spec"]["nodeClassRef"]["kind"] = "NodeClass"
    code, out = run_preview(tmp_path, monkeypatch, cli, [node_class(), node_pool(family("m5"))], [node_class(), moved])
    assert code == 1
    summary = out.split("<details>")[0]
    assert (
        "`NodePool/general` spec.template.spec.nodeClassRef: nodeClassRef.kind is immutable "
        "[`transition/node-class-ref-immutable`]" in summary
    )
    assert out == snapshot


def _role_change_at(tmp_path, monkeypatch, capsys, karpenter_version: str) -> tuple[int, str]:
    """Preview a role change in a stack whose cluster runs ``karpenter_version``, against the committed stack."""
    monkeypatch.chdir(tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")

    def stack(role: str) -> None:
        spec = {**BASE_NODECLASS["spec"], "role": role}
        config = {
            "karpenter-gitops:cluster": {"name": "demo", "karpenterVersion": karpenter_version},
            "karpenter-gitops:nodeClasses": {"default": spec},
            "karpenter-gitops:nodePools": {"general": node_pool(family("m5"))["spec"]},
        }
        (tmp_path / "Pulumi.demo.yaml").write_text(yaml.safe_dump({"config": config}, sort_keys=False))

    stack("KarpenterNodeRole-demo")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    stack("KarpenterNodeRole-demo-v2")
    code = main(["preview", "--stack", "demo", "--base", "main", "--kubernetes-version", "1.32"])
    return code, capsys.readouterr().out


def test_role_change_on_karpenter_1_6_is_refused_as_immutable(tmp_path, monkeypatch, capsys):
    code, out = _role_change_at(tmp_path, monkeypatch, capsys, "1.6")
    assert code == 1
    summary = out.split("<details>")[0]
    assert "`EC2NodeClass/default` spec.role: immutable field changed [`transition/role-immutable`]" in summary
    assert "transition/role-change-drifts" not in out


def test_role_change_on_karpenter_1_7_is_allowed_with_a_drift_warning(tmp_path, monkeypatch, capsys):
    code, out = _role_change_at(tmp_path, monkeypatch, capsys, "1.7")
    assert code == 0
    assert "#### Blocking errors" not in out and "transition/role-immutable" not in out
    policy = out.split("Policy results:")[1]
    assert "| warning | `EC2NodeClass/default` | spec.role |" in policy and "`transition/role-change-drifts`" in policy


@given(st.lists(st.text(), min_size=1, max_size=5), st.data())
def test_a_table_is_one_markdown_line_per_row_with_every_cell_as_given(header, data):
    """Cells are not padded to column widths (a long one would widen every row against the budget) and keep
    their own whitespace; the separator is GitHub's shortest. (tabulate takes a row whose first or second
    cell is a lone \\x01 for its separating-line marker; the only outside text there is a Pulumi step's op.)"""
    cell, lead = st.text(), st.text().filter(lambda text: text.strip() != "\x01")
    row = st.tuples(*(lead if column < 2 else cell for column in range(len(header)))).map(list)
    rows = data.draw(st.lists(row, max_size=4))
    expected = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(row) + " |" for row in rows)]
    assert "\n".join(comment_sections.section_table(header, rows, full=True)) == "\n".join(expected)


def test_a_long_table_is_cut_in_the_comment_and_whole_in_the_full_report():
    rows = [[f"`pool-{i}`", str(i)] for i in range(comment_sections.TABLE_ROWS + 3)]
    cut = "\n".join(comment_sections.section_table(["NodePool", "nodes"], rows, full=False))
    assert "`pool-49`" in cut and "`pool-50`" not in cut and cut.endswith("\n… and 3 more row(s) (see the full report)")
    assert "\n".join(comment_sections.section_table(["NodePool", "nodes"], rows, full=True)).endswith("| `pool-52` | 52 |")


def spot_pool() -> dict:
    doc = node_pool()
    doc["spec"]["template"]["spec"]["requirements"] = [
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}
    ]
    return doc


ISSUE_BASE = [node_class(amiSelectorTerms=[{"alias": "al2023@latest"}]), node_pool()]
ISSUE_HEAD = [node_class(amiSelectorTerms=[{"alias": "al2023@v20240807"}]), spot_pool()]


def test_offline_drift_names_the_pool_each_reason_and_its_nodes(tmp_path, monkeypatch, cli, snapshot):
    """Issue 45: on-demand → spot and a pinned alias, offline: never "no existing node drifts"."""
    code, out = run_preview(tmp_path, monkeypatch, cli, ISSUE_BASE, ISSUE_HEAD)
    assert "no existing node drifts" not in out
    assert "**Node impact**: 1 NodePool(s) drift: `general` (RequirementsDrifted, AMIDrift unknown offline)" in out
    assert (
        "| `general` | RequirementsDrifted | nodes with karpenter.sh/capacity-type=on-demand | 20% | up to ~5 waves of 20% |"
        in out
    )
    assert out == snapshot


@pytest.mark.slow
def test_with_aws_the_ami_drift_is_resolved_per_instance_type(tmp_path, monkeypatch, cli, catalogue_cache):
    code, out = run_preview(tmp_path, monkeypatch, cli, ISSUE_BASE, ISSUE_HEAD, *reconciled(catalogue_cache))
    assert "unknown offline" not in out
    assert "RequirementsDrifted | nodes with karpenter.sh/capacity-type=on-demand" in out
    assert "| `general` | AMIDrift | nodes of the moving instance types (below) |" in out
    assert "would move from `ami-" in out and "(AMIDrift)" in out


@pytest.mark.parametrize(("release", "reasons"), [("1.15", "(NodeClassDrift)"), ("1.0", None)])
def test_the_release_decides_what_its_hash_sees(tmp_path, monkeypatch, cli, release, reasons):
    """Karpenter 1.0 left kubelet out of the EC2NodeClass hash: the same change drifts nothing there."""
    base, head = [node_class(), node_pool()], [node_class(kubelet={"maxPods": 110}), node_pool()]
    code, out = run_preview(tmp_path, monkeypatch, cli, base, head, "--karpenter-version", release)
    line = next(line for line in out.splitlines() if line.startswith("**Node impact**"))
    assert (
        (reasons in line)
        if reasons
        else line == "**Node impact**: no existing node drifts; AMI drift not evaluated (not reconciled)."
    )
