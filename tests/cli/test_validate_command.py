"""``karpenter-gitops validate``: every output format on a stack, manifests, broken input and the policy
(the snapshots); the contract (JSON shape, exit codes, one-line errors for bad input); and ``--policy``
with waivers: their fields, the waivers list, exit codes 0/1/2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from support.command_runs import transcript
from support.validate_runs import VALID_NODECLASS as GOOD

from karpenter_gitops.load.files import MAX_FILE_BYTES
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("validate", "--stack", "demo"), id="stack-text"),
        pytest.param(("validate", "examples/manifests", "--format", "json"), id="manifests-json"),
        pytest.param(("validate", "examples/broken"), id="broken-text"),
        pytest.param(("validate", "examples/broken", "--format", "json"), id="broken-json"),
        pytest.param(("validate", "examples/broken", "--format", "github"), id="broken-github"),
        pytest.param(("validate", "--stack", "dev", "examples/manifests", "--policy", "--format", "json"), id="policy-json"),
        pytest.param(("validate", "--stack", "pinned", "--policy"), id="pinned-policy-text"),
    ],
)
def test_validate(in_project, capsys, snapshot, argv):
    assert transcript(capsys, *argv) == snapshot


# --- the contract ------------------------------------------------------------------------------------


def test_clean_manifest_exits_zero_with_json_summary(tmp_path, cli):
    path = tmp_path / "nc.yaml"
    path.write_text(GOOD)
    code, out, _ = cli("validate", str(path), "--format", "json")
    assert code == 0
    assert json.loads(out) == {"findings": [], "summary": {"errors": 0, "warnings": 0, "objects": 1}}


def test_error_finding_exits_one_with_contract_fields(tmp_path, cli):
    path = tmp_path / "nc.yaml"
    path.write_text(GOOD.replace("role: KarpenterNodeRole-demo", "role: x\n  detailedMonitring: true"))
    code, out, _ = cli("validate", str(path), "--format", "json")
    report = json.loads(out)
    assert code == 1
    finding = next(f for f in report["findings"] if f["rule"] == "schema/unknown-field")
    assert {"rule", "severity", "kind", "name", "path", "message"} <= finding.keys()
    assert finding["path"] == "spec.detailedMonitring"
    assert finding["severity"] == "error" and finding["kind"] == "EC2NodeClass" and finding["name"] == "default"
    assert "detailedMonitoring" in finding["hint"]
    assert report["summary"]["errors"] >= 1


def test_text_format_groups_by_object_and_ends_with_summary(tmp_path, cli):
    path = tmp_path / "nc.yaml"
    path.write_text(GOOD + '  detailedMonitoring: "yes"\n')
    code, out, _ = cli("validate", str(path))
    lines = out.strip().splitlines()
    assert code == 1
    assert lines[0].startswith("EC2NodeClass/default")
    assert "1 object(s) checked against Karpenter 1.15" in lines[-1]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"kind: [unclosed\n", "invalid YAML"),
        (b"kind: Pod\n---\n- just\n- a list\n", "document 2 is an array, not a Kubernetes object"),
        (b"\x00\x01binary", "binary file"),
        (b"\xff\xfe\xfa not utf8", "not UTF-8"),
        (b"config:\n  aws:region: us-west-2\n", "no 'karpenter-gitops:' settings"),
        (b"config:\n  nodeClasses: {}\n", "has no namespace"),
        (b"config:\n  karpenter-gitops:nodeClass: {}\n", "did you mean 'nodeClasses'"),
        (b"config:\n  karpenter-gitops:cluster: {kubernetesVersion: 1.30}\n", "YAML drops trailing zeros"),
        (
            b'config:\n  karpenter-gitops:cluster: {kubernetesVersion: "1.x"}\n',
            "'karpenter-gitops:cluster.kubernetesVersion' '1.x' is not major.minor",
        ),
    ],
    ids=[
        "malformed",
        "not-mapping",
        "binary",
        "not-utf8",
        "no-namespace",
        "bare-key",
        "typo-key",
        "float-version",
        "kubernetes-version",
    ],
)
def test_bad_input_is_one_line_exit_two(tmp_path, cli, content, expected):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    code, out, err = cli("validate", str(path))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert str(path) in err and expected in err


def test_malformed_yaml_names_the_line(tmp_path, cli):
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: v1\nkind: EC2NodeClass\nspec: {a: [1, 2}\n")
    code, _, err = cli("validate", str(path))
    assert code == 2 and f"{path}:3:" in err


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path, cli):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as file:
        file.truncate(MAX_FILE_BYTES + 1)  # sparse: nothing is written, the size alone decides
    code, out, err = cli("validate", str(path))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"karpenter-gitops: error: {path}: file is 256 MiB; files over 256 MiB are refused (hint: split it into smaller files)"
    ]


def test_a_large_multi_document_file_is_read_not_refused(tmp_path, cli):
    """12 MiB in one file (the old limit was 5 MiB): documents, and a long comment as a generator might leave."""
    pool = yaml.safe_dump(dict(BASE_NODEPOOL)).replace("name: general", "name: pool-{}")
    path = tmp_path / "fleet.yaml"
    padding = "# " + "x" * 1_000 + "\n"
    documents = "".join(f"---\n{pool.format(i)}" for i in range(2_000))
    path.write_text(yaml.safe_dump(dict(BASE_NODECLASS)) + documents + padding * 12_000)
    assert path.stat().st_size > 12 * 1_048_576
    code, out, err = cli("validate", "--format", "json", str(path))
    assert code == 0, err
    assert json.loads(out)["summary"]["objects"] == 2_001


def test_missing_path_and_missing_arguments(tmp_path, cli):
    code, _, err = cli("validate", str(tmp_path / "nope.yaml"))
    assert code == 2 and "no such file or directory" in err
    code, _, err = cli("validate")
    assert code == 2 and "give at least one PATH" in err


def test_bad_karpenter_version_is_usage_error(tmp_path, cli):
    path = tmp_path / "nc.yaml"
    path.write_text(GOOD)
    code, _, err = cli("validate", str(path), "--karpenter-version", "0.37")
    assert code == 2 and "predates the v1 API" in err


def test_stack_option_reads_the_stack_config_dir(cli, monkeypatch):
    monkeypatch.chdir(PROJECT)
    code, out, _ = cli("validate", "--stack", "demo", "--format", "json")
    report = json.loads(out)
    assert report["summary"]["objects"] == 6
    assert code == (1 if report["summary"]["errors"] else 0)


def test_console_entry_point_runs_without_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [")
    result = subprocess.run([sys.executable, "-m", "karpenter_gitops", "validate", str(bad)], capture_output=True, text=True)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "invalid YAML" in result.stderr


def _stack(tmp_path, name: str, classes: dict, pools: dict) -> str:
    import yaml

    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": {"karpenter-gitops:nodeClasses": classes, "karpenter-gitops:nodePools": pools}}))
    return str(path)


def test_each_stack_file_is_its_own_cluster(tmp_path, cli):
    import yaml

    spec = yaml.safe_load(GOOD)["spec"]
    pool = {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
            }
        }
    }
    dev = _stack(tmp_path, "dev", {"default": spec}, {"general": pool})
    prod = _stack(tmp_path, "prod", {"default": spec}, {"general": pool})
    code, out, _ = cli("validate", dev, prod, "--format", "json")
    assert code == 0, out  # the same names in two stacks are two clusters, not duplicates
    orphan = _stack(tmp_path, "edge", {}, {"general": pool})
    code, out, _ = cli("validate", dev, orphan, "--format", "json")
    missing = [f for f in json.loads(out)["findings"] if f["rule"] == "nodepool/node-class-ref-missing"]
    assert code == 1 and len(missing) == 1 and missing[0]["file"] == orphan  # dev's class is not edge's


TYPO = GOOD.replace("role: KarpenterNodeRole-demo", "role: KarpenterNodeRole-demo\n  detailedMonitring: true")


def test_findings_name_the_line_of_their_path(tmp_path, cli):
    path = tmp_path / "nc.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n---\n" + TYPO)
    code, out, _ = cli("validate", str(path), "--format", "json")
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "schema/unknown-field"]
    assert code == 1 and finding["line"] == 11  # document 2 starts on line 5; the typo is its 7th line
    code, out, _ = cli("validate", str(path))
    assert f"[schema/unknown-field] (api-server)  {path}:11" in out


def test_stack_findings_name_the_line_under_config(tmp_path, cli):
    import yaml

    spec = yaml.safe_load(TYPO)["spec"]
    stack = _stack(tmp_path, "dev", {"default": spec}, {})
    lines = Path(stack).read_text().splitlines()
    code, out, _ = cli("validate", stack, "--format", "json")
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "schema/unknown-field"]
    assert code == 1 and lines[finding["line"] - 1].strip() == "detailedMonitring: true"


def test_github_format_prints_one_annotation_per_finding_then_the_summary(tmp_path, cli):
    path = tmp_path / "team,a:nc.yaml"  # `,` and `:` end a property unless escaped
    path.write_text(TYPO.replace("al2023@v20240807", "al2023@latest"))
    code, out, _ = cli("validate", "--policy", str(path), "--format", "github")
    lines = out.splitlines()
    file = str(path).replace(":", "%3A").replace(",", "%2C")
    assert code == 1
    assert (
        f"::error file={file},line=7,title=schema/unknown-field (api-server)::EC2NodeClass/default spec.detailedMonitring: "
        "unknown field 'detailedMonitring'%0Afix: did you mean 'detailedMonitoring'?"
    ) in lines
    assert any(
        line.startswith(f"::warning file={file},line=5,title=nodeclass/alias-latest (karpenter-gitops)::") for line in lines
    )
    assert any(
        line.startswith(f"::notice file={file},line=4,title=policy/detailed-monitoring (karpenter-gitops)::") for line in lines
    )
    assert len(lines) == 4 and lines[-1].startswith("1 object(s) checked against Karpenter 1.15: 1 error(s), 1 warning(s)")


def test_github_format_keeps_the_exit_codes(tmp_path, cli):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(GOOD)
    bad.write_text("kind: [unclosed\n")
    code, out, _ = cli("validate", str(good), "--format", "github")
    assert code == 0 and out.splitlines() == ["1 object(s) checked against Karpenter 1.15: 0 error(s), 0 warning(s)"]
    code, out, err = cli("validate", str(bad), "--format", "github")
    assert code == 2 and out == "" and "invalid YAML" in err


def test_github_format_marks_info_and_waived_findings_as_notices(tmp_path, cli):
    path, waivers = tmp_path / "nc.yaml", tmp_path / "waivers.yaml"
    path.write_text(GOOD)
    waivers.write_text("waivers:\n  - {rule: policy/detailed-monitoring, object: default, reason: cost, expires: 2999-01-01}\n")
    code, out, _ = cli("validate", str(path), "--policy", "--waivers", str(waivers), "--format", "github")
    annotation = out.splitlines()[0]
    assert code == 0
    assert annotation.startswith(f"::notice file={path},line=4,title=policy/detailed-monitoring (karpenter-gitops)::")
    assert "(waived until 2999-01-01: cost)" in annotation


def test_github_escaping_follows_the_actions_toolkit():
    from karpenter_gitops.output.report_text import github_data as _github_data
    from karpenter_gitops.output.report_text import github_property as _github_property

    assert _github_data("100% of\r\nnodes: a, b") == "100%25 of%0D%0Anodes: a, b"
    assert _github_property("dir/a,b:c%.yaml") == "dir/a%2Cb%3Ac%25.yaml"


def test_crd_findings_name_their_line_too(tmp_path, cli):
    from support.upstream import crds

    path = tmp_path / "nc.yaml"  # a field 1.15 brought, which the 1.14.1 CRD prunes: the CRD's finding alone
    path.write_text(
        GOOD.replace("role: KarpenterNodeRole-demo", "role: KarpenterNodeRole-demo\n  enclaveOptions: {enabled: true}")
    )
    code, out, _ = cli("validate", str(path), "--crd", str(crds("v1.14.1")), "--format", "json")
    (finding,) = [f for f in json.loads(out)["findings"] if f["rule"] == "crd/schema"]
    assert code == 1 and finding["line"] == 7


def test_context_resolves_a_node_pool_changed_alone(tmp_path, cli):
    """A PR touching only the NodePool file: the repository, given as context, holds its class."""
    pool = tmp_path / "pools" / "general.yaml"
    pool.parent.mkdir()
    pool.write_text(yaml.safe_dump(dict(BASE_NODEPOOL)))
    repo = tmp_path / "repo"
    (repo / "classes").mkdir(parents=True)
    (repo / "classes" / "default.yaml").write_text(yaml.safe_dump(dict(BASE_NODECLASS)))
    (repo / "chart" / "templates").mkdir(parents=True)
    (repo / "chart" / "templates" / "pool.yaml").write_text("{{- if .Values.enabled }}\nkind: {{ .Values.kind }\n")
    code, out, _ = cli("validate", "--format", "json", str(pool))
    assert code == 0 and [f["rule"] for f in json.loads(out)["findings"]] == ["nodepool/node-class-ref-unresolved"]
    code, out, _ = cli("validate", "--format", "json", "--context", str(repo), str(pool))
    assert code == 0 and json.loads(out)["findings"] == []
    (repo / "classes" / "default.yaml").unlink()
    code, out, _ = cli("validate", "--format", "json", "--context", str(repo), str(pool))
    assert code == 1 and [f["rule"] for f in json.loads(out)["findings"]] == ["nodepool/node-class-ref-missing"]


def test_embedded_aws_without_moto_is_one_line_saying_how_to_install_it(tmp_path):
    """Run in a child whose import system refuses moto, as a plain `pip install karpenter-gitops` would be."""
    probe = (
        "import sys\n"
        "class NoMoto:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'moto' or name.startswith('moto.'):\n"
        "            raise ModuleNotFoundError(\"No module named 'moto'\", name='moto')\n"
        "sys.meta_path.insert(0, NoMoto())\n"
        "from karpenter_gitops.cli import main\n"
        "sys.exit(main(['plan', '--stack', 'demo', '--embedded-aws']))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "karpenter-gitops: error: --embedded-aws needs moto, which is not installed (no module 'moto') "
        "(hint: pip install 'karpenter-gitops[embedded]')"
    ]


# --- --policy and waivers ----------------------------------------------------------------------------
# House-style policies are warnings by default; these tests run as a team that enforces IMDSv2 (a policy
# file raising it to an error), so a waiver decides the exit code.

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


def waiver_file(tmp_path, expires: str):
    path = tmp_path / "waivers.yaml"
    path.write_text(WAIVER.format(expires=expires))
    return path


def test_policy_error_fails_without_a_waiver(manifest, enforced, cli, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no karpenter_gitops_policies/waivers.yaml here
    code, out, _ = cli("validate", manifest, "--policy", "--format", "json")
    (advisory,) = [f for f in json.loads(out)["findings"] if f["rule"] == "policy/imdsv2-required"]
    assert code == 0 and advisory["severity"] == "warning"  # house style: reported, not blocking
    code, out, _ = cli("validate", manifest, "--policy-file", enforced, "--format", "json")
    report = json.loads(out)
    assert code == 1
    (finding,) = [f for f in report["findings"] if f["rule"] == "policy/imdsv2-required"]
    assert finding["severity"] == "error" and finding["waived"] is False and finding["waiver"] is None
    assert report["waivers"] == [] and report["summary"]["waived"] == 0


def test_waived_error_is_listed_but_exits_zero(manifest, enforced, cli, tmp_path):
    code, out, _ = cli(
        "validate", manifest, "--policy-file", enforced, "--waivers", waiver_file(tmp_path, "2999-12-31"), "--format", "json"
    )
    report = json.loads(out)
    assert code == 0
    (finding,) = [f for f in report["findings"] if f["rule"] == "policy/imdsv2-required"]
    assert finding["waived"] is True and finding["waiver"]["object"] == "gpu-*"
    assert [w["rule"] for w in report["waivers"]] == ["policy/imdsv2-required"]
    assert report["summary"] == {"errors": 0, "warnings": 0, "objects": 1, "waived": 1}


def test_expired_waiver_brings_the_error_back_and_is_reported(manifest, enforced, cli, tmp_path):
    code, out, _ = cli(
        "validate", manifest, "--policy-file", enforced, "--waivers", waiver_file(tmp_path, "2000-01-01"), "--format", "json"
    )
    report = json.loads(out)
    assert code == 1
    assert {f["rule"]: f["severity"] for f in report["findings"]} == {
        "policy/imdsv2-required": "error",
        "policy/waiver-expired": "warning",
    }
    assert report["waivers"] == []


def test_text_report_lists_active_waivers(manifest, cli, tmp_path):
    code, out, _ = cli("validate", manifest, "--policy", "--waivers", waiver_file(tmp_path, "2999-12-31"))
    assert code == 0
    assert "waived " in out and "active waivers: 1" in out and "until 2999-12-31" in out


def test_default_waiver_file_is_used_from_the_working_directory(manifest, enforced, cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("validate", manifest, "--policy-file", enforced)[0] == 1
    (tmp_path / "karpenter_gitops_policies").mkdir()
    (tmp_path / "karpenter_gitops_policies" / "waivers.yaml").write_text(WAIVER.format(expires="2999-12-31"))
    assert cli("validate", manifest, "--policy-file", enforced)[0] == 0


def test_plain_validate_keeps_its_contract(manifest, cli):
    code, out, _ = cli("validate", manifest, "--format", "json")
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
def test_bad_waiver_file_exits_two_naming_the_entry(manifest, cli, tmp_path, content, expected):
    path = tmp_path / "waivers.yaml"
    path.write_text(content)
    code, out, err = cli("validate", manifest, "--policy", "--waivers", path)
    assert code == 2 and out == ""
    assert expected in err and str(path) in err and "Traceback" not in err


def test_waivers_without_policy_is_a_usage_error(manifest, cli, tmp_path):
    code, _, err = cli("validate", manifest, "--waivers", waiver_file(tmp_path, "2999-12-31"))
    assert code == 2 and "--waivers only applies with --policy" in err
