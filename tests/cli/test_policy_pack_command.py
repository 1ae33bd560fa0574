"""``karpenter-gitops policy-pack``: the shipped pack where it runs on this environment, else a pack written for it."""

from __future__ import annotations

import sys

from conftest import PROJECT
from support.command_runs import transcript


def test_policy_pack_shipped(in_project, capsys, snapshot):
    assert transcript(capsys, "policy-pack").replace(str(PROJECT), "PROJECT") == snapshot


def test_policy_pack_written(in_project, capsys, snapshot, tmp_path):
    out = tmp_path / "pack"
    text = transcript(capsys, "policy-pack", "--out", str(out))
    files = "".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(out.iterdir()))
    assert (text + files).replace(str(tmp_path), "TMP").replace(sys.prefix, "PREFIX") == snapshot
