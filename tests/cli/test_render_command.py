"""``karpenter-gitops render``: what it says, and every file it writes."""

from __future__ import annotations

from support.command_runs import transcript


def test_render(in_project, capsys, snapshot, tmp_path):
    out = tmp_path / "rendered"
    text = transcript(capsys, "render", "--stack", "demo", "--out", str(out)).replace(str(tmp_path), "TMP")
    files = "".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(out.iterdir()))
    assert text + files == snapshot
