"""A newcomer forecasts karpenter-blueprints' od-spot-split: their own repository in a temporary directory,
the blueprint's NodePools and workload as they copied them, ``plan --workloads --embedded-aws`` through the
installed console script. One Solve of Karpenter's scheduler would leave 6 of the 10 pods pending; what
Karpenter ends up running, over its rounds, is all 10."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from support.sim_worlds import OD_SPOT_SPLIT, OD_SPOT_WORKLOAD
from test_newcomer_repositories import karpenter_gitops

pytestmark = pytest.mark.packaging


@pytest.fixture
def blueprint(tmp_path) -> Path:
    root = tmp_path / "infra"
    assert not root.is_relative_to(PROJECT)
    (root / "karpenter").mkdir(parents=True)
    (root / "karpenter" / "od-spot.yaml").write_text(yaml.safe_dump_all(OD_SPOT_SPLIT))
    (root / "apps").mkdir()
    (root / "apps" / "workload.yaml").write_text(yaml.safe_dump(OD_SPOT_WORKLOAD))
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_plan_forecasts_every_pod_of_the_split_running_and_the_rounds_it_takes(blueprint):
    code, out, err = karpenter_gitops(blueprint, "plan", "karpenter", "--workloads", "apps", "--embedded-aws")
    assert code == 0, out + err
    text = " ".join(out.split())  # as read, whatever the terminal's line breaks
    assert "cannot schedule" not in text and "exceed limits" not in text
    assert "Karpenter's provisioning takes 3 rounds" in text
    assert "round 1 made 4 NodeClaim(s) and left 6 pod(s) pending" in text
    assert "total: 9 NodeClaim(s) for 10 pod(s)" in text


def test_the_json_forecast_lists_the_rounds_and_each_nodeclaims_round(blueprint):
    code, out, _ = karpenter_gitops(blueprint, "plan", "karpenter", "--workloads", "apps", "--embedded-aws", "--format", "json")
    assert code == 0
    forecast = json.loads(out)["forecast"]["forecast"]
    assert forecast["unschedulable"] == [] and forecast["settled"] is True
    assert [r["podsPending"] for r in forecast["rounds"]] == [6, 2, 0, 0]
    claims = [c for pool in forecast["nodePools"] for c in pool["nodeClaims"]]
    assert sum(len(c["pods"]) for c in claims) == 10
    assert sorted({c["round"] for c in claims}) == [1, 2, 3]
    assert all(c["name"].startswith(f"r0{c['round']}-{c['nodePool']}-") for c in claims)
