"""House-style policies a team can live with, on a manifests-only repository (no stack anywhere).

By default `validate --policy`, `preview` and the pack block on what plain `validate` blocks on and
report the house-style policies as warnings; a policy file (`--policy-file`) raises the ones a team
enforces, tunes their parameters, and every message says where a setting came from.
"""

from __future__ import annotations

import json

import pytest
import yaml

from karpenter_gitops.rules import registry
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

# A GPU pool capped on GPUs only, nodes that never expire, an unencrypted volume: house style, not breakage.
NODE_CLASS = {
    **BASE_NODECLASS,
    "spec": {**BASE_NODECLASS["spec"], "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "100Gi"}}]},
}
GPU_POOL = {
    **BASE_NODEPOOL,
    "metadata": {"name": "gpu"},
    "spec": {
        **BASE_NODEPOOL["spec"],
        "template": {"spec": {**BASE_NODEPOOL["spec"]["template"]["spec"], "expireAfter": "Never"}},
        "limits": {"nvidia.com/gpu": "16"},
    },
}
CPU_ONLY_POOL = {**BASE_NODEPOOL, "metadata": {"name": "batch"}, "spec": {**BASE_NODEPOOL["spec"], "limits": {"cpu": "64"}}}
UNCAPPED_POOL = {
    **BASE_NODEPOOL,
    "metadata": {"name": "uncapped"},
    "spec": {key: value for key, value in BASE_NODEPOOL["spec"].items() if key != "limits"},
}
RAISED = """\
maxExpireAfter: 336h
rules:
  policy/ebs-encrypted: {severity: error}
  policy/expire-after-bounded: {severity: error}
"""


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """A user's repository: manifests under deploy/, a base copy under base/, no stack, no waiver file."""
    monkeypatch.chdir(tmp_path)
    for folder in ("deploy", "base"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "karpenter.yaml").write_text(yaml.safe_dump_all([NODE_CLASS, GPU_POOL, CPU_ONLY_POOL]))
    return tmp_path


def findings(out: str) -> dict[str, dict]:
    return {f["rule"]: f for f in json.loads(out)["findings"]}


def test_house_style_is_reported_as_warnings_and_blocks_nothing_plain_validate_lets_through(repository, cli):
    assert cli("validate", "deploy")[0] == 0
    code, out, _ = cli("validate", "deploy", "--policy", "--format", "json")
    found = findings(out)
    assert code == 0 and json.loads(out)["summary"]["errors"] == 0
    assert found["policy/ebs-encrypted"]["severity"] == "warning"
    assert found["policy/expire-after-bounded"]["message"] == "nodes live up to Never; maxExpireAfter is 720h (the default)"

    code, out, _ = cli("preview", "--manifests", "deploy", "--base", "base", "--kubernetes-version", "1.32")
    assert code == 0 and "Blocking errors" not in out and "no blocking problems" in out
    assert "policy/ebs-encrypted" in out and "stack" not in out


def test_a_gpu_cap_or_a_cpu_cap_is_a_limit_and_no_cap_is_a_warning(repository, cli):
    (repository / "deploy" / "karpenter.yaml").write_text(
        yaml.safe_dump_all([NODE_CLASS, GPU_POOL, CPU_ONLY_POOL, UNCAPPED_POOL])
    )
    code, out, _ = cli("validate", "deploy", "--policy", "--format", "json")
    limits = [f for f in json.loads(out)["findings"] if f["rule"] == "policy/nodepool-limits"]
    assert code == 0 and [(f["name"], f["severity"]) for f in limits] == [("uncapped", "warning")]
    assert "no limit for" not in out and limits[0]["message"] == "no limits: nothing caps how many nodes the pool launches"


def test_a_policy_file_raises_policies_to_blocking_and_says_where_its_settings_came_from(repository, cli):
    (repository / "policies").mkdir()
    (repository / "policies" / "karpenter.yaml").write_text(RAISED)
    code, out, _ = cli("validate", "deploy", "--policy-file", "policies/karpenter.yaml", "--format", "json")
    found = findings(out)
    assert code == 1 and found["policy/ebs-encrypted"]["severity"] == "error"
    assert found["policy/expire-after-bounded"]["message"] == (
        "nodes live up to Never; maxExpireAfter is 336h (set by the policy file policies/karpenter.yaml)"
    )
    assert found["policy/disruption-budgets"]["severity"] == "warning"  # not raised: still advisory

    code, out, _ = cli(
        "preview",
        "--manifests",
        "deploy",
        "--base",
        "base",
        "--kubernetes-version",
        "1.32",
        "--policy-file",
        "policies/karpenter.yaml",
    )
    blocking = out.split("#### Blocking errors")[1].split("<details>")[0]
    assert code == 1 and "policy/ebs-encrypted" in blocking and "policy/disruption-budgets" not in blocking

    code, out, _ = cli("pack-config", "--policy-file", "policies/karpenter.yaml")
    config = json.loads(out)
    assert code == 0 and config["policy-ebs-encrypted"] == {"enforcementLevel": "mandatory"}
    assert config["policy-expire-after-bounded"] == {"enforcementLevel": "mandatory", "maxExpireAfter": "336h"}


def test_a_stack_block_wins_over_the_policy_file_key_by_key(repository, cli):
    (repository / "policy.yaml").write_text(RAISED)
    (repository / "Pulumi.prod.yaml").write_text(
        yaml.safe_dump(
            {
                "config": {
                    "karpenter-gitops:nodePools": {"gpu": GPU_POOL["spec"]},
                    "karpenter-gitops:policy": {
                        "maxExpireAfter": "168h",
                        "rules": {"policy/expire-after-bounded": {"severity": "info"}},
                    },
                }
            }
        )
    )
    code, out, _ = cli("validate", "Pulumi.prod.yaml", "--policy-file", "policy.yaml", "--format", "json")
    expiry = findings(out)["policy/expire-after-bounded"]
    assert (expiry["severity"], expiry["message"]) == (
        "info",
        "nodes live up to Never; maxExpireAfter is 168h (set by the stack in Pulumi.prod.yaml)",
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- policy/ebs-encrypted\n", "a policy file holds one mapping of policy settings"),
        ("rules: {policy/ebs-encryptd: {severity: error}}\n", "rules: unknown rule id 'policy/ebs-encryptd'"),
        ("maxExpireAfter: forever\n", "'maxExpireAfter' is 'forever'; expected a duration like 720h"),
        ("rules: {schema/required: {severity: warning}}\n", "mirrors Karpenter's own validation"),
    ],
)
def test_a_malformed_policy_file_is_one_line_naming_it_and_exit_2(repository, cli, text, expected):
    (repository / "policy.yaml").write_text(text)
    for command in (["validate", "deploy"], ["preview", "--manifests", "deploy", "--base", "base"], ["pack-config"]):
        code, out, err = cli(*command, "--policy-file", "policy.yaml")
        assert code == 2 and out == "" and "policy.yaml" in err and expected in err, (command, err)
        assert "Traceback" not in err


def test_pack_config_needs_a_policy_file_or_a_stack(repository, cli):
    code, _, err = cli("pack-config")
    assert code == 2 and "--policy-file FILE, --stack NAME or both" in err


def test_no_house_style_policy_is_blocking_by_default():
    """The promise of the docs: out of the box, only what `validate` blocks on blocks (the pack follows)."""
    house = [rule.id for rule in registry.RULES.values() if rule.hygiene]
    assert "policy/nodepool-limits" in house
    assert [rule_id for rule_id in house if registry.RULES[rule_id].severity.value == "error"] == []
