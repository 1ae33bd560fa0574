"""The front door of every command: standard input, other YAML beside manifests, a run that finds
nothing to judge, misspelt Karpenter kinds, dead requirement values, plan on pools that launch nothing."""

from __future__ import annotations

import json

import pytest
import yaml

from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

POOL = yaml.safe_dump(dict(BASE_NODEPOOL))
CLASS = yaml.safe_dump(dict(BASE_NODECLASS))
EMPTY = "no Karpenter object found in 1 file(s)"


def test_validate_reads_a_stream_on_standard_input(cli):
    code, out, _ = cli("validate", "-", "--format", "json", stdin=f"{CLASS}---\n{POOL}")
    assert code == 0 and json.loads(out)["summary"]["objects"] == 2


def test_a_finding_on_standard_input_names_stdin_and_its_line(cli):
    code, out, _ = cli("validate", "-", "--format", "json", stdin=CLASS + "  detailedMonitring: true\n")
    (finding,) = json.loads(out)["findings"]
    assert code == 1 and finding["file"] == "<stdin>" and finding["line"] > 1


def test_a_helm_template_beside_manifests_is_skipped_and_counted(tmp_path, cli):
    (tmp_path / "pool.yaml").write_text(CLASS + "---\n" + POOL)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "pool.yaml").write_text("apiVersion: karpenter.sh/v1\nkind: NodePool\n{{- if .Values.x }}\n")
    code, out, err = cli("validate", str(tmp_path))
    assert code == 0
    assert f"note: skipped {tmp_path / 'templates' / 'pool.yaml'}: a template" in err
    assert (
        out.splitlines()[-1]
        == "2 object(s) checked against Karpenter 1.15: 0 error(s), 0 warning(s); 1 file(s) skipped (not Kubernetes YAML)"
    )
    code, out, _ = cli("validate", str(tmp_path), "--format", "json")
    assert json.loads(out)["summary"] == {"errors": 0, "warnings": 0, "objects": 2, "skippedFiles": 1}


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_a_run_that_finds_no_karpenter_object_says_so_and_exits_2(tmp_path, cli, fmt):
    (tmp_path / "app.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
    code, out, err = cli("validate", str(tmp_path), "--format", fmt)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"karpenter-gitops: error: {EMPTY}, so nothing was checked; found only other kinds: Deployment "
        "(hint: name the files or folder "
        "holding your EC2NodeClass and NodePool manifests, or pass --allow-empty)"
    ]
    code, out, _ = cli("validate", str(tmp_path), "--format", fmt, "--allow-empty")
    summary = json.loads(out)["summary"]["objects"] if fmt == "json" else out.splitlines()[-1]
    assert code == 0 and summary in (0, "0 object(s) checked against Karpenter 1.15: 0 error(s), 0 warning(s)")


def test_the_pre_commit_hook_allows_a_commit_without_karpenter_objects():
    from conftest import PROJECT

    (hook,) = yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())
    assert "--allow-empty" in hook["entry"].split()


@pytest.mark.parametrize(
    ("kinds", "said"),
    [
        (["ConfigMap", "Deployment", "ConfigMap"], "; found only other kinds: ConfigMap, Deployment ("),
        (["A", "B", "C", "D", "E", "F"], "; found only other kinds: A, B, C, D and 2 more ("),
        (["[bold]x[/bold]", "Service"], "; found only other kinds: Service and 1 more ("),
        (["not a kind\nat all"], "; found only 1 other kind(s) ("),
    ],
)
def test_a_wrong_folder_says_what_it_holds_instead(tmp_path, cli, kinds, said):
    (tmp_path / "other.yaml").write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": kind} for kind in kinds]))
    code, out, err = cli("validate", str(tmp_path))
    assert (code, out) == (2, "") and len(err.splitlines()) == 1
    assert f"so nothing was checked{said}hint:" in err


def test_kubectl_get_output_is_named_by_its_items_kinds(tmp_path, cli):
    listed = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [{"apiVersion": "v1", "kind": "ConfigMap"}, {"apiVersion": "v1", "kind": "Secret"}],
    }
    (tmp_path / "got.yaml").write_text(yaml.safe_dump(listed))
    code, _, err = cli("validate", str(tmp_path))
    assert code == 2 and "so nothing was checked; found only other kinds: ConfigMap, Secret (hint:" in err


@pytest.mark.parametrize("command", [("plan",), ("render", "--out", "-")])
def test_other_commands_refuse_an_empty_run_before_anything_else(tmp_path, cli, command):
    (tmp_path / "values.yaml").write_text("replicaCount: 2\n")
    code, out, err = cli(command[0], str(tmp_path), *command[1:])
    assert code == 2 and out == ""
    assert err.startswith(
        "karpenter-gitops: error: no Karpenter object found in 1 file(s), so nothing was checked; skipped "
        f"{tmp_path / 'values.yaml'}: YAML that is not a Kubernetes manifest (no document has apiVersion or kind)"
    )


def test_a_misspelt_kind_fails_the_run_in_every_format(tmp_path, cli):
    path = tmp_path / "pool.yaml"
    path.write_text(POOL.replace("kind: NodePool", "kind: Nodepool"))
    code, out, _ = cli("validate", str(path), "--format", "json")
    (finding,) = json.loads(out)["findings"]
    assert code == 1 and finding["rule"] == "schema/kind" and "did you mean 'NodePool'?" in finding["hint"]
    code, out, _ = cli("validate", str(path), "--format", "github")
    assert code == 1 and out.startswith("::error file=") and "schema/kind" in out


def test_plan_and_render_take_paths_as_validate_does(tmp_path, cli, monkeypatch):
    (tmp_path / "karpenter.yaml").write_text(CLASS + "---\n" + POOL)
    code, out, _ = cli("render", str(tmp_path), "--out", "-")
    assert code == 0 and "kind: NodePool" in out
    code, out, _ = cli("render", "--manifests", str(tmp_path), "--out", "-")
    assert code == 0 and "kind: NodePool" in out


def test_a_dead_requirement_value_is_a_warning_naming_it(tmp_path, cli):
    pool = BASE_NODEPOOL | {
        "spec": {
            **BASE_NODEPOOL["spec"],
            "template": {
                "spec": {
                    **BASE_NODEPOOL["spec"]["template"]["spec"],
                    "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "ondemand"]}],
                }
            },
        }
    }
    path = tmp_path / "pool.yaml"
    path.write_text(CLASS + "---\n" + yaml.safe_dump(pool))
    code, out, _ = cli("validate", str(path), "--format", "json")
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "nodepool/requirement-dead-value"]
    assert code == 0 and finding["severity"] == "warning" and "'ondemand'" in finding["message"]
    assert "only ['spot']" in finding["message"] and "did you mean 'on-demand'?" in finding["hint"]


# --- plan on the pools' requirements -------------------------------------------------------------


def _plan_pool(tmp_path, cli, monkeypatch, catalogue_cache, families: list[str], *argv: str):
    pool = yaml.safe_load(POOL)
    pool["spec"]["template"]["spec"]["requirements"].append(
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": families}
    )
    (tmp_path / "karpenter.yaml").write_text(CLASS + "---\n" + yaml.safe_dump(pool))
    monkeypatch.setenv("NO_COLOR", "1")
    return cli("plan", str(tmp_path), "--kubernetes-version", "1.32", "--cache-dir", str(catalogue_cache), *argv)


@pytest.mark.slow
def test_plan_blocks_a_pool_that_can_launch_nothing_and_prints_the_values(
    default_aws, catalogue_cache, tmp_path, cli, monkeypatch
):
    code, out, _ = _plan_pool(tmp_path, cli, monkeypatch, catalogue_cache, ["zz9", "[bold]qq1[/]"])
    assert code == 1
    assert "no instance type satisfies karpenter.k8s.aws/instance-family In [[bold]qq1[/], zz9]" in out
    assert "[live/pool-launches-nothing]" in out and out.splitlines()[-1].endswith("persistent problems")
    code, out, _ = _plan_pool(tmp_path, cli, monkeypatch, catalogue_cache, ["zz9"], "--format", "json")
    assert code == 1 and "live/pool-launches-nothing" in {f["rule"] for f in json.loads(out)["findings"]}


@pytest.mark.slow
def test_plan_warns_of_a_family_the_region_does_not_offer(default_aws, catalogue_cache, tmp_path, cli, monkeypatch):
    code, out, _ = _plan_pool(tmp_path, cli, monkeypatch, catalogue_cache, ["m5", "p6e-gb200"], "--format", "json")
    plan = json.loads(out)
    (finding,) = [f for f in plan["findings"] if f["rule"] == "live/requirement-value-not-offered"]
    assert code == 0 and finding["path"] == "spec.template.spec.requirements[1].values[1]"
    assert "'p6e-gb200'" in finding["message"] and plan["nodePools"]["general"]["instanceTypes"]
