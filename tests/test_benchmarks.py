"""The benchmarks still run (on tiny inputs): a figure in docs/project/benchmarks.md must come from a script that works.

Their timings are not asserted here; ``make bench`` prints them.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml
from conftest import PROJECT

from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch

pytestmark = pytest.mark.packaging


@pytest.mark.parametrize(
    "argv",
    [
        ["benchmarks/validate_side_by_side.py", "--sizes", "20", "--rounds", "1"],
        ["benchmarks/validate_scale.py", "--sizes", "20", "40"],
        ["benchmarks/startup.py", "--runs", "1", "--files", "2"],
        ["benchmarks/plan_scale.py", "--sizes", "1"],
        ["benchmarks/fleet_scale.py", "--stacks", "2", "--classes", "1", "--pools", "1"],
        ["benchmarks/plan_faults.py", "--runs", "1", "--deadline", "60", "--down-deadline", "1"],
        ["benchmarks/simulation_scale.py", "--pods", "200", "--pools", "3"],
    ],
    ids=lambda argv: " ".join(argv[0:1] + argv[2:]),
)
def test_benchmark_runs(argv):
    result = subprocess.run([sys.executable, *argv], cwd=PROJECT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip()


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
