"""The repository configuration file at the front door: found from a sub-folder, its settings the defaults
of the flags (a flag given wins, --no-config ignores the file, --config names another), said on stderr,
and the same for every command that takes those flags."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from karpenter_gitops.cli.options import CONFIG_ENV
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEOVERLAY, BASE_NODEPOOL

HOP_LIMIT_TWO = {**BASE_NODECLASS, "spec": {**BASE_NODECLASS["spec"], "metadataOptions": {"httpPutResponseHopLimit": 2}}}


@pytest.fixture
def repository(tmp_path, monkeypatch) -> Path:
    """A Git repository whose configuration file sits at the root; the user works in a sub-folder."""
    root = tmp_path / "infra"
    (root / "deploy" / "karpenter").mkdir(parents=True)
    (root / "deploy" / "karpenter" / "nodes.yaml").write_text(yaml.safe_dump_all([HOP_LIMIT_TWO, BASE_NODEPOOL]))
    (root / "deploy" / "overlays").mkdir()
    (root / "deploy" / "overlays" / "overlay.yaml").write_text(yaml.safe_dump(BASE_NODEOVERLAY))
    (root / "policies").mkdir()
    (root / "policies" / "karpenter.yaml").write_text("rules:\n  policy/imds-hop-limit: {severity: error}\n")
    (root / "policies" / "waivers.yaml").write_text(
        "waivers:\n  - {rule: policy/imds-hop-limit, object: default, reason: PLAT-9, expires: 2099-01-01}\n"
    )
    (root / ".karpenter-gitops.yaml").write_text('karpenter-version: "1.12"\npaths: [deploy/karpenter]\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "team" / "docs").mkdir(parents=True)
    monkeypatch.chdir(root / "team" / "docs")
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    return root


def _config(root: Path, text: str) -> None:
    (root / ".karpenter-gitops.yaml").write_text(text)


def test_the_files_release_and_paths_from_a_sub_folder(repository, cli):
    code, out, err = cli("validate", "--no-cache")
    assert code == 0
    assert out.splitlines()[-1].startswith("2 object(s) checked against Karpenter 1.12")
    assert err == (
        "karpenter-gitops: settings from ../../.karpenter-gitops.yaml: karpenter-version, paths "
        "(flags given win; --no-config ignores it)\n"
    )


def test_a_flag_wins_over_the_file(repository, cli):
    _, out, _ = cli("validate", "--no-cache", "--karpenter-version", "1.14")
    assert "against Karpenter 1.14" in out.splitlines()[-1]


def test_paths_given_win_over_the_files(repository, cli):
    code, out, _ = cli("validate", "--no-cache", "../../deploy/overlays")
    assert code == 0 and out.splitlines()[-1].startswith("1 object(s) checked against Karpenter 1.12")


def test_no_config_ignores_it(repository, cli):
    code, _, err = cli("validate", "--no-cache", "--no-config")
    assert code == 2 and "give at least one PATH or --stack NAME" in err


def test_config_names_another_file_and_so_does_the_environment(repository, cli, monkeypatch, tmp_path):
    other = tmp_path / "elsewhere.yaml"
    other.write_text('karpenter-version: "1.13"\npaths: [infra/deploy/karpenter]\n')
    _, out, err = cli("validate", "--no-cache", "--config", other)
    assert "against Karpenter 1.13" in out.splitlines()[-1] and "settings from ../../../elsewhere.yaml" in err
    monkeypatch.setenv(CONFIG_ENV, str(other))
    assert "against Karpenter 1.13" in cli("validate", "--no-cache").out.splitlines()[-1]
    assert "against Karpenter 1.11" in cli("validate", "--no-cache", "--karpenter-version", "1.11").out.splitlines()[-1]


def test_config_and_no_config_together_are_refused(repository, cli):
    code, out, err = cli("validate", "--config", "x.yaml", "--no-config")
    assert (code, out) == (2, "") and "give --config FILE or --no-config, not both" in err


def test_quiet_leaves_the_note_out(repository, cli):
    assert cli("validate", "--no-cache", "-q").err == ""


def test_a_bad_file_is_one_line_even_where_a_flag_would_win(repository, cli):
    _config(repository, 'karpenter-version: "1.12"\nfeature-gate: {NodeOverlay: true}\n')
    code, out, err = cli("validate", "--no-cache", "--karpenter-version", "1.14", "../../deploy")
    assert (code, out) == (2, "")
    assert err == (
        "karpenter-gitops: error: ../../.karpenter-gitops.yaml: unknown key 'feature-gate' "
        "(hint: did you mean 'feature-gates'?)\n"
    )


def test_policy_its_policy_file_and_waivers_relative_to_the_file(repository, cli):
    _config(repository, "paths: [deploy/karpenter]\npolicy-file: policies/karpenter.yaml\n")
    code, out, _ = cli("validate", "--no-cache")
    assert code == 1 and "error   spec.metadataOptions.httpPutResponseHopLimit" in out  # raised by the policy file
    _config(repository, "paths: [deploy/karpenter]\npolicy-file: policies/karpenter.yaml\nwaivers: policies/waivers.yaml\n")
    code, out, _ = cli("validate", "--no-cache")
    assert code == 0 and "waived  spec.metadataOptions.httpPutResponseHopLimit" in out
    code, out, _ = cli("validate", "--no-cache", "--no-policy")  # neither file of the configuration, nor --policy
    assert code == 0 and "imds-hop-limit" not in out and "active waivers" not in out


def test_its_waivers_wait_for_policy(repository, cli):
    _config(repository, "paths: [deploy/karpenter]\nwaivers: policies/waivers.yaml\n")
    assert cli("validate", "--no-cache").code == 0  # no "--waivers only applies with --policy"
    _config(repository, "paths: [deploy/karpenter]\nwaivers: policies/waivers.yaml\npolicy: true\n")
    _, out, _ = cli("validate", "--no-cache")
    assert "active waivers: 1" in out and "waived  spec.metadataOptions.httpPutResponseHopLimit" in out


def test_feature_gates_from_the_file_and_the_flag_over_them(repository, cli):
    _config(repository, 'paths: [deploy/overlays]\nkarpenter-version: "1.12"\nfeature-gates: {nodeOverlay: true}\n')
    _, with_gate, _ = cli("validate", "--no-cache", "--format", "json")
    _, flag_off, _ = cli("validate", "--no-cache", "--format", "json", "--feature-gates", "NodeOverlay=false")
    assert "gate/feature-off" not in with_gate and "gate/feature-off" in flag_off


@pytest.mark.parametrize("command", [["preview", "--base", "."], ["plan", "--embedded-aws"]])
def test_preview_and_plan_take_it_too(repository, cli, command):
    """A NodeOverlay predates Karpenter 1.7: refused under the file's 1.6, served under the flag's 1.15."""
    _config(repository, 'karpenter-version: "1.6"\npaths: [deploy/overlays]\n')
    assert cli(*command).code == 1
    assert cli(*command, "--karpenter-version", "1.15").code == 0


def test_the_pre_commit_hook_does_not_judge_the_file_itself(project):
    (hook,) = yaml.safe_load((project / ".pre-commit-hooks.yaml").read_text())
    assert re.search(hook["exclude"], ".karpenter-gitops.yaml") and re.search(hook["exclude"], "infra/.karpenter-gitops.yaml")
    assert not re.search(hook["exclude"], "deploy/karpenter-gitops.yaml")


def test_its_rules_raise_a_policy_and_a_policy_file_given_replaces_them(repository, cli, tmp_path):
    _config(repository, "paths: [deploy/karpenter]\nrules:\n  policy/imds-hop-limit: {severity: error}\n")
    code, out, _ = cli("validate", "--no-cache")  # rules imply --policy, as a policy file does
    assert code == 1 and "error   spec.metadataOptions.httpPutResponseHopLimit" in out
    lenient = tmp_path / "lenient.yaml"
    lenient.write_text("rules:\n  policy/detailed-monitoring: {enabled: false}\n")
    code, out, _ = cli("validate", "--no-cache", "--policy-file", lenient)
    assert code == 0 and "warning spec.metadataOptions.httpPutResponseHopLimit" in out
    assert json.loads(cli("pack-config").out) == {"policy-imds-hop-limit": {"enforcementLevel": "mandatory"}}


def test_its_rules_over_its_policy_file_rule_by_rule(repository, cli):
    _config(
        repository,
        "paths: [deploy/karpenter]\npolicy-file: policies/karpenter.yaml\nrules:\n  policy/imds-hop-limit: {severity: info}\n",
    )
    _, out, _ = cli("validate", "--no-cache", "--show-info")
    assert "info    spec.metadataOptions.httpPutResponseHopLimit" in out
