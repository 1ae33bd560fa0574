"""The benchmarks still run (on tiny inputs): a figure in docs/project/benchmarks.md must come from a script that works.

Their timings are not asserted here; ``make bench`` prints them.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
import yaml
from conftest import PROJECT
from support.real_tools import TOOLS_BIN

from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch

pytestmark = pytest.mark.packaging
SIDE_BY_SIDE = PROJECT / "benchmarks" / "validate_side_by_side.py"


def side_by_side_sides() -> list[str]:
    """The script's sides (its SIDES literal, read without importing the script)."""
    tree = ast.parse(SIDE_BY_SIDE.read_text())
    assigned = (node for node in tree.body if isinstance(node, ast.Assign))
    return list(next(ast.literal_eval(node.value) for node in assigned if ast.unparse(node.targets[0]) == "SIDES"))


# kubectl-validate takes minutes to build and make tools leaves it out: its side has a test of its own below.
BUILT_SIDES = [side for side in side_by_side_sides() if side != "kubectl-validate"]


@pytest.mark.parametrize(
    "argv",
    [
        ["benchmarks/validate_side_by_side.py", "--sizes", "20", "--rounds", "1", "--sides", *BUILT_SIDES],
        ["benchmarks/validate_scale.py", "--sizes", "20", "40"],
        ["benchmarks/startup.py", "--runs", "1", "--files", "2"],
        ["benchmarks/plan_scale.py", "--sizes", "1"],
        ["benchmarks/fleet_scale.py", "--stacks", "2", "--classes", "1", "--pools", "1"],
        ["benchmarks/plan_faults.py", "--runs", "1", "--deadline", "60", "--down-deadline", "1"],
        ["benchmarks/simulation_scale.py", "--pods", "200", "--pools", "3"],
    ],
    ids=lambda argv: " ".join(argv[0 : min(len(argv), 5)]),
)
def test_benchmark_runs(argv):
    result = subprocess.run([sys.executable, *argv], cwd=PROJECT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip()


@pytest.mark.real
def test_side_by_side_checks_kubectl_validate_refuses_what_validate_crd_does_before_timing_them():
    """The kubectl-validate table, where the benchmark has built kubectl-validate before. It is no tool make tools
    builds, so a machine without it skips this even where the real tier is required."""
    if not (TOOLS_BIN / "kubectl-validate").is_file():
        pytest.skip(
            "kubectl-validate is not built: `python3 tools/build.py kubectl-validate` (the benchmark builds it on first use)"
        )
    argv = [sys.executable, str(SIDE_BY_SIDE), "--sides", "kubectl-validate", "--peer-size", "20", "--rounds", "1"]
    result = subprocess.run(argv, cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for side in ("validate --crd", "kubectl-validate"):
        assert f"  {side}: refuses those 10, passes the other 20" in result.stdout
    assert "target: validate --crd ≥ 20× kubectl-validate: " in result.stdout


def test_corpus_script_reads_a_mirror_and_tells_a_false_alarm_from_an_expected_error(tmp_path):
    """The corpus figures in docs/concepts/validation.md come from benchmarks/corpus.py; here it runs on a one-repository mirror."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "pool.yaml").write_text(yaml.safe_dump(dict(BASE_NODEPOOL)))
    (work / "typo.yaml").write_text(yaml.safe_dump(merge_patch(BASE_NODECLASS, {"spec": {"detailedMonitring": True}})))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for step in (["init", "-q"], ["add", "."], ["commit", "-qm", "manifests"]):
        subprocess.run([*git, "-C", str(work), *step], check=True)
    commit = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    mirror = tmp_path / "mirror"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirror / "team+manifests" / "repo")], check=True)
    sources = [
        {"repo": "team/manifests", "commit": commit, "path": "pool.yaml"},
        {"repo": "team/manifests", "commit": commit, "path": "typo.yaml", "errors": ["schema/unknown-field"]},
    ]
    listing = tmp_path / "corpus.yaml"
    listing.write_text(yaml.safe_dump({"sources": sources}))
    argv = [sys.executable, "benchmarks/corpus.py", "--mirror", str(mirror), "--list", str(listing)]
    done = subprocess.run(argv, cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "files: 2, objects: 2" in done.stdout and "false alarms or missed mistakes: 0" in done.stdout
    listing.write_text(yaml.safe_dump({"sources": sources[:1] + [{**sources[1], "errors": []}]}))
    assert subprocess.run(argv, cwd=PROJECT, capture_output=True, text=True, timeout=300).returncode == 1
