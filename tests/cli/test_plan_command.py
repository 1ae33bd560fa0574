"""``karpenter-gitops plan``: the demo stack against the embedded AWS, as JSON and as text; with its workloads, the forecast."""

from __future__ import annotations

import json

import pytest
from support.command_runs import masked, transcript

from karpenter_gitops.cli import main


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_plan(in_project, capsys, snapshot, catalogue_cache, fmt):
    aws = ("--embedded-aws", "--cache-dir", str(catalogue_cache))
    argv = ("plan", "--stack", "demo", *aws, *(("--format", fmt) if fmt == "json" else ()))
    assert masked(transcript(capsys, *argv), CACHE=catalogue_cache) == snapshot


# --- --workloads: the forecast and its cost ----------------------------------------------------------

WORKLOADS = ("--workloads", "examples/workloads")


@pytest.mark.slow
def test_plan_with_workloads_text_and_picture(in_project, capsys, snapshot, catalogue_cache, tmp_path):
    picture = tmp_path / "forecast.svg"
    text = transcript(
        capsys,
        "plan",
        "--stack",
        "demo",
        "--embedded-aws",
        "--cache-dir",
        str(catalogue_cache),
        *WORKLOADS,
        "--picture",
        str(picture),
    )
    forecast = text[text.index("Forecast — ") :]
    assert masked(forecast, CACHE=catalogue_cache) == snapshot(name="text")
    assert picture.read_text() == snapshot(name="svg")


@pytest.mark.slow
def test_plan_with_workloads_json(in_project, capsys, snapshot, catalogue_cache):
    assert (
        main(["plan", "--stack", "demo", "--embedded-aws", "--cache-dir", str(catalogue_cache), *WORKLOADS, "--format", "json"])
        == 1
    )
    forecast = json.loads(capsys.readouterr().out)["forecast"]
    claims = [claim for pool in forecast["forecast"]["nodePools"] for claim in pool["nodeClaims"]]
    assert claims and all(claim["ami"] and claim["priceSource"] for claim in claims)
    for claim in claims:  # the candidates (up to 60 types × zones) are the simulation's; the snapshot keeps what the user reads
        claim["candidates"] = len(claim["candidates"])
    assert json.dumps(forecast, indent=2) == snapshot


@pytest.mark.slow
def test_plan_forecasts_the_workloads_the_stack_file_names(in_project, capsys, catalogue_cache, tmp_path):
    import yaml

    stack_file = yaml.safe_load(open("stacks/Pulumi.demo.yaml").read())
    stack_file["config"]["karpenter-gitops:workloads"] = ["examples/workloads"]
    named = tmp_path / "Pulumi.demo.yaml"
    named.write_text(yaml.safe_dump(stack_file))
    picture = tmp_path / "forecast.svg"
    main(["plan", "--manifests", str(named), "--embedded-aws", "--cache-dir", str(catalogue_cache), "--picture", str(picture)])
    assert "Forecast — " in capsys.readouterr().out and picture.read_text().startswith("<svg")
    # a stack that names none: --picture has nothing to draw, and says so before AWS is asked
    assert main(["plan", "--stack", "demo", "--embedded-aws", "--picture", str(picture)]) == 2
    assert "--picture draws the forecast" in capsys.readouterr().err
