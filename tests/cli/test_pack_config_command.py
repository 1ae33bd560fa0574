"""``karpenter-gitops pack-config``: a stack's policy block as the CrossGuard pack's config (JSON, its one format)."""

from __future__ import annotations

from support.command_runs import transcript

STRICT = """\
config:
  karpenter-gitops:policy:
    production: true
    maxHopLimit: 2
    rules:
      policy/imds-hop-limit: {severity: error}
      policy/detailed-monitoring: {enabled: false}
"""


def test_pack_config_without_a_policy_block(in_project, capsys, snapshot):
    assert transcript(capsys, "pack-config", "--stack", "demo") == snapshot


def test_pack_config_of_a_policy_block(capsys, snapshot, tmp_path, monkeypatch):
    (tmp_path / "Pulumi.strict.yaml").write_text(STRICT)  # no Pulumi.yaml: stack files sit beside the program
    monkeypatch.chdir(tmp_path)
    assert transcript(capsys, "pack-config", "--stack", "strict") == snapshot
