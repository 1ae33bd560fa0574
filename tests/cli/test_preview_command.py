"""``karpenter-gitops preview``: an AMI bump of the demo stack against a base directory, as markdown and as JSON."""

from __future__ import annotations

import json

import pytest
from support.command_runs import masked, transcript

from karpenter_gitops.cli import main


@pytest.fixture
def base(in_project, capsys, tmp_path):
    """The demo stack rendered, with the default class one AMI release back: the pull request bumps it."""
    base = tmp_path / "base"
    assert main(["render", "--stack", "demo", "--out", str(base)]) == 0
    capsys.readouterr()
    nodeclass = base / "ec2nodeclass-default.yaml"
    nodeclass.write_text(nodeclass.read_text().replace("al2023@v20250201", "al2023@v20240807"))
    return base


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_preview(base, capsys, snapshot, tmp_path, catalogue_cache, fmt):
    aws = ("--embedded-aws", "--cache-dir", str(catalogue_cache))
    shown = ("--full-report", str(tmp_path / "full.md")) if fmt == "markdown" else ("--format", "json")
    text = transcript(capsys, "preview", "--stack", "demo", "--base", str(base), *aws, *shown)
    assert masked(text, TMP=tmp_path, CACHE=catalogue_cache) == snapshot


@pytest.mark.slow
def test_preview_with_workloads(base, capsys, snapshot, tmp_path, catalogue_cache):
    """The AMI bump makes arm64 types launchable on the general pool: the comment says what that does to the cost."""
    aws = ("--embedded-aws", "--cache-dir", str(catalogue_cache))
    text = transcript(
        capsys,
        "preview",
        "--stack",
        "demo",
        "--base",
        str(base),
        *aws,
        "--workloads",
        "examples/workloads",
        "--full-report",
        str(tmp_path / "full.md"),
    )
    summary = next(line for line in text.splitlines() if line.startswith("**Monthly cost**"))
    section = text[text.index("#### Cost forecast") : text.index("#### Node impact")]
    assert masked(f"{summary}\n\n{section}", TMP=tmp_path, CACHE=catalogue_cache) == snapshot


def test_preview_workloads_need_aws(base, capsys):
    assert main(["preview", "--stack", "demo", "--base", str(base), "--workloads", "examples/workloads"]) == 2
    assert "add --reconcile or --embedded-aws" in capsys.readouterr().err


@pytest.mark.slow
def test_preview_draws_the_heads_forecast(base, capsys, tmp_path, catalogue_cache):
    picture = tmp_path / "head.svg"
    argv = [
        "preview",
        "--stack",
        "demo",
        "--base",
        str(base),
        "--embedded-aws",
        "--cache-dir",
        str(catalogue_cache),
        "--workloads",
        "examples/workloads",
        "--format",
        "json",
        "--picture",
        str(picture),
    ]
    assert main(argv) == 1
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert picture.read_text().count("<title>") >= cost["head"]["forecast"]["nodePools"][0]["pods"] > 0
    assert cost["newlyUnschedulable"] == [] and [p["nodePool"] for p in cost["nodePools"]] == ["general", "gpu", "payments"]


@pytest.mark.slow
def test_preview_forecasts_the_workloads_the_stack_file_names(base, capsys, tmp_path, catalogue_cache):
    import yaml

    stack_file = yaml.safe_load(open("stacks/Pulumi.demo.yaml").read())
    stack_file["config"]["karpenter-gitops:workloads"] = ["examples/workloads"]
    named = tmp_path / "Pulumi.demo.yaml"
    named.write_text(yaml.safe_dump(stack_file))
    argv = [
        "preview",
        "--manifests",
        str(named),
        "--base",
        str(base),
        "--embedded-aws",
        "--cache-dir",
        str(catalogue_cache),
        "--format",
        "json",
    ]
    main(argv)
    assert [p["nodePool"] for p in json.loads(capsys.readouterr().out)["cost"]["nodePools"]] == ["general", "gpu", "payments"]


def test_an_offline_preview_of_a_stack_with_workloads_says_its_cost_is_not_known(base, capsys, tmp_path):
    """No AWS, no prices: the comment says the cost is not known and how to get it, never a $0 forecast."""
    import yaml

    stack_file = yaml.safe_load(open("stacks/Pulumi.demo.yaml").read())
    stack_file["config"]["karpenter-gitops:workloads"] = ["examples/workloads"]
    named = tmp_path / "Pulumi.demo.yaml"
    named.write_text(yaml.safe_dump(stack_file))
    main(["preview", "--manifests", str(named), "--base", str(base)])
    out = capsys.readouterr().out
    assert (
        "**Monthly cost**: not known: an offline preview reads no prices; add --embedded-aws or --reconcile to forecast "
        "the stack's workloads." in out
    )
    assert "#### Cost forecast" not in out and "$0" not in out
    main(["preview", "--manifests", str(named), "--base", str(base), "--format", "json"])
    assert json.loads(capsys.readouterr().out)["costNote"].startswith("an offline preview reads no prices")
