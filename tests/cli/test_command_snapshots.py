"""One snapshot per command's output, as a user sees it (flux-local's pattern).

Each command runs in-process through the console entry point on the project's own examples and
stacks; the output must stay byte-identical unless a change means it to move (then review the
diff and re-run with ``UPDATE_SNAPSHOTS=1``). Embedded-AWS runs share the session's moto server
and catalogue cache, so their AWS call counts are masked: they depend on what the cache held.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from _snapshot import assert_snapshot
from conftest import PROJECT

from karpenter_gitops.cli import main


@pytest.fixture
def in_project(monkeypatch):
    monkeypatch.chdir(PROJECT)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")


def run(capsys, *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return f"$ karpenter-gitops {' '.join(argv)}\n(exit {code})\n--- stdout\n{out}--- stderr\n{err}"


def _masked(text: str, cache=None) -> str:
    if cache is not None:
        text = text.replace(str(cache), "CACHE")
    text = re.sub(r'("awsCalls": )\{[^}]*\}', r"\1{...}", text, flags=re.S)
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)


@pytest.mark.parametrize(
    ("name", "argv"),
    [
        ("validate-stack-text", ("validate", "--stack", "demo")),
        ("validate-manifests-json", ("validate", "examples/manifests", "--format", "json")),
        ("validate-broken-text", ("validate", "examples/broken")),
        ("validate-broken-json", ("validate", "examples/broken", "--format", "json")),
        ("validate-broken-github", ("validate", "examples/broken", "--format", "github")),
        ("validate-policy-json", ("validate", "--stack", "dev", "examples/manifests", "--policy", "--format", "json")),
        ("validate-pinned-policy-text", ("validate", "--stack", "pinned", "--policy")),
        ("rules-json", ("rules", "--format", "json")),
        ("rules-one-text", ("rules", "policy/imds-hop-limit")),
    ],
)
def test_offline_commands(in_project, capsys, name, argv):
    assert_snapshot(f"cli/{name}.txt", run(capsys, *argv))


def test_plan(in_project, capsys, catalogue_cache):
    aws = ("--embedded-aws", "--cache-dir", str(catalogue_cache))
    text = run(capsys, "plan", "--stack", "demo", *aws, "--format", "json")
    assert_snapshot("cli/plan-demo-json.txt", _masked(text, catalogue_cache))
    assert_snapshot("cli/plan-demo-text.txt", _masked(run(capsys, "plan", "--stack", "demo", *aws), catalogue_cache))


def test_render_and_preview(in_project, capsys, tmp_path, catalogue_cache):
    out = tmp_path / "rendered"
    text = run(capsys, "render", "--stack", "demo", "--out", str(out)).replace(str(tmp_path), "TMP")
    files = "".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(out.iterdir()))
    assert_snapshot("cli/render-demo.txt", text + files)

    base = tmp_path / "base"
    shutil.copytree(out, base)
    nodeclass = base / "ec2nodeclass-default.yaml"
    nodeclass.write_text(nodeclass.read_text().replace("al2023@v20250201", "al2023@v20240807"))
    aws = ("--embedded-aws", "--cache-dir", str(catalogue_cache))
    full = tmp_path / "full.md"
    text = run(capsys, "preview", "--stack", "demo", "--base", str(base), *aws, "--full-report", str(full))
    assert_snapshot("cli/preview-demo.txt", _masked(text.replace(str(tmp_path), "TMP"), catalogue_cache))
    text = run(capsys, "preview", "--stack", "demo", "--base", str(base), *aws, "--format", "json")
    assert_snapshot("cli/preview-demo-json.txt", _masked(text.replace(str(tmp_path), "TMP"), catalogue_cache))


def test_bump_dry_run(in_project, capsys):
    text = run(capsys, "bump", "--stack", "pinned", "--embedded-aws", "--dry-run", "--format", "json")
    json.loads(text.split("--- stdout\n", 1)[1].split("--- stderr", 1)[0])
    assert_snapshot("cli/bump-pinned-json.txt", _masked(text))
