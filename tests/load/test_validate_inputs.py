"""Input edge cases of `validate`: what YAML hands us is judged as the API server would judge it."""

from __future__ import annotations

import json

import pytest
from support.upstream import crds
from support.validate_runs import VALID_NODECLASS as NODECLASS

from karpenter_gitops.cli import main

NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
"""


def run_json(tmp_path, cli, text: str, *args: str) -> tuple[int, list[dict]]:
    path = tmp_path / "in.yaml"
    path.write_text(text)
    code, out, _ = cli("validate", path, "--format", "json", *args)
    return code, json.loads(out)["findings"]


def test_null_required_field_is_reported_missing(tmp_path, cli):
    code, findings = run_json(
        tmp_path,
        cli,
        NODECLASS
        + "---\n"
        + NODEPOOL.replace("requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]", "requirements: null"),
    )
    assert code == 1
    assert ("schema/required", "spec.template.spec.requirements") in {(f["rule"], f["path"]) for f in findings}


@pytest.mark.parametrize("spec", ["", "spec:\n"])
def test_missing_or_null_spec_is_required_not_a_type_error(tmp_path, cli, spec):
    code, findings = run_json(tmp_path, cli, "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\n" + spec)
    assert code == 1
    found = [(f["rule"], f["path"], f["message"]) for f in findings if f["path"] == "spec"]
    assert found == [("schema/required", "spec", "Required value")]


@pytest.mark.parametrize(
    ("old", "new", "path"),
    [
        ("requirements:", "expireAfter: >\n        720h\n      requirements:", "spec.template.spec.expireAfter"),
        (
            "  template:\n",
            "  template:\n    metadata:\n      labels:\n        team: |\n          platform\n",
            "spec.template.metadata.labels[team]",
        ),
    ],
)
def test_block_scalar_trailing_newline_fails_anchored_patterns(tmp_path, cli, old, new, path):
    """Go's RE2 `$` does not match before a final newline, Python's does: `720h\\n` must fail."""
    code, findings = run_json(tmp_path, cli, NODECLASS + "---\n" + NODEPOOL.replace(old, new, 1))
    assert code == 1
    finding = next(f for f in findings if f["path"] == path)
    assert finding["rule"] == "schema/pattern"
    assert "\n" not in finding["message"] and "\\n" in finding["message"]  # one line, newline shown escaped
    assert "newline" in finding["hint"]


def test_block_scalar_trailing_newline_fails_crd_patterns(tmp_path, capsys):
    path = tmp_path / "np.yaml"
    path.write_text(NODEPOOL.replace("requirements:", "expireAfter: >\n        720h\n      requirements:"))
    code = main(["validate", str(path), "--crd", str(crds("v1.14.1")), "--format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert code == 1
    assert ("crd/schema", "spec.template.spec.expireAfter") in {(f["rule"], f["path"]) for f in findings}


def test_duplicate_mapping_key_is_unreadable_input(tmp_path, capsys):
    path = tmp_path / "np.yaml"
    path.write_text(NODEPOOL.replace("spec:\n  template:", "spec:\n  weight: 10\n  weight: 20\n  template:"))
    code = main(["validate", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{path}:6: invalid YAML: duplicate key 'weight'" in err
    assert "Traceback" not in err


def test_merge_key_overrides_are_not_duplicates(tmp_path, cli):
    stack = """\
config:
  karpenter-gitops:nodeClasses:
    base: &base
      amiSelectorTerms: [{alias: al2023@v20240807}]
      role: KarpenterNodeRole-demo
      subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
      securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
    other:
      <<: *base
      role: KarpenterNodeRole-other
"""
    code, findings = run_json(tmp_path, cli, stack)
    assert code == 0, findings


def test_unquoted_number_in_string_list_gets_one_finding_with_quote_hint(tmp_path, cli):
    text = (
        NODECLASS
        + "---\n"
        + NODEPOOL.replace(
            "{key: kubernetes.io/arch, operator: In, values: [amd64]}",
            "{key: karpenter.k8s.aws/instance-generation, operator: Gt, values: [5]}",
        )
    )
    code, findings = run_json(tmp_path, cli, text)
    assert code == 1
    assert [(f["rule"], f["path"], f.get("hint")) for f in findings] == [
        ("schema/type", "spec.template.spec.requirements[0].values[0]", 'quote it: "5"')
    ]


def test_numeric_object_name_is_a_type_error_not_missing(tmp_path, cli):
    code, findings = run_json(tmp_path, cli, NODECLASS.replace("metadata: {name: default}", "metadata: {name: 5}"))
    assert code == 1
    assert [(f["rule"], f["name"], f["path"]) for f in findings] == [("schema/type", "5", "metadata.name")]


def test_malformed_pulumi_project_file_is_one_line_exit_two(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Pulumi.yaml").write_text("name: x\nstackConfigDir: [\n")
    code = main(["validate", "--stack", "dev"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("karpenter-gitops: error: Pulumi.yaml:") and err.count("\n") == 1


def _stack(cluster: str, version: str) -> str:
    return f"""\
config:
  karpenter-gitops:cluster: {{name: {cluster}, karpenterVersion: "{version}"}}
  karpenter-gitops:nodeClasses:
    {cluster}:
      amiSelectorTerms: [{{alias: al2023@v20240807}}]
      role: KarpenterNodeRole-{cluster}
      subnetSelectorTerms: [{{tags: {{karpenter.sh/discovery: {cluster}}}}}]
      securityGroupSelectorTerms: [{{tags: {{karpenter.sh/discovery: {cluster}}}}}]
"""


def test_stacks_naming_different_releases_are_refused_not_judged_by_the_first(tmp_path, capsys):
    old, new = tmp_path / "Pulumi.old.yaml", tmp_path / "Pulumi.new.yaml"
    old.write_text(_stack("old", "1.0"))
    new.write_text(_stack("new", "1.14"))
    code = main(["validate", str(old), str(new)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"karpenter-gitops: error: {new}: ") and "1.0 in " in err and "--karpenter-version" in err
    assert main(["validate", str(old), str(new), "--karpenter-version", "1.14"]) == 0
    new.write_text(_stack("new", "1.0"))
    assert main(["validate", str(old), str(new)]) == 0


def test_a_rule_mirroring_karpenter_cannot_be_waived(tmp_path, capsys):
    """A waived `cel/` error would exit 0 while the API server still rejects the object."""
    manifest = tmp_path / "nc.yaml"
    manifest.write_text(
        NODECLASS.replace("role: KarpenterNodeRole-demo", "role: KarpenterNodeRole-demo\n  tags: {karpenter.sh/nodepool: x}")
    )
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text("waivers:\n  - {rule: cel/tags-restricted, object: default, reason: legacy tag, expires: 2999-12-31}\n")
    code = main(["validate", str(manifest), "--policy", "--waivers", str(waivers)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{waivers}: waivers[0]: cel/tags-restricted mirrors Karpenter's own validation" in err


SECRET_STACK = """\
config:
  karpenter-gitops:nodeClasses:
    default:
      amiSelectorTerms: [{alias: al2023@v20250201}]
      role: KarpenterNodeRole-demo
      subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
      securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
      userData:
        secure: v1:AAAABBBBCCCC
"""


def test_a_pulumi_secret_is_noted_not_misjudged(tmp_path, cli):
    code, findings = run_json(tmp_path, cli, SECRET_STACK, "--policy")
    assert code == 0
    assert [(f["rule"], f["severity"]) for f in findings if f["path"] == "spec.userData"] == [("schema/secret", "info")]


def test_render_refuses_a_secret_it_cannot_decrypt(tmp_path, capsys):
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text(SECRET_STACK)
    out = tmp_path / "out"
    assert main(["render", "--manifests", str(path), "--out", str(out)]) == 2
    assert "Pulumi secret" in capsys.readouterr().err and not out.exists()
