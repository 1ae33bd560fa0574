"""Fleet runs: several stacks in one command, each judged as its own cluster, one report, the worst exit."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import PROJECT


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the project's stacks, plus one stack with an error, as the working directory."""
    (tmp_path / "Pulumi.yaml").write_text((PROJECT / "Pulumi.yaml").read_text())
    (tmp_path / "stacks").mkdir()
    for name in ("demo", "dev"):
        (tmp_path / "stacks" / f"Pulumi.{name}.yaml").write_text((PROJECT / "stacks" / f"Pulumi.{name}.yaml").read_text())
    broken = yaml.safe_load((PROJECT / "stacks" / "Pulumi.dev.yaml").read_text())
    broken["config"]["karpenter-gitops:nodeClasses"]["default"]["amiSelectorTerms"] = [{"alias": "al2023"}]
    (tmp_path / "stacks" / "Pulumi.broken.yaml").write_text(yaml.safe_dump(broken))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_all_stacks_are_judged_each_on_its_own_with_a_fleet_summary_and_the_worst_exit(project, cli):
    code, out, _ = cli("validate", "--all-stacks")
    assert code == 1
    assert [line for line in out.splitlines() if line.startswith("== stack")] == [
        "== stack broken",
        "== stack demo",
        "== stack dev",
    ]
    assert out.splitlines()[-1].startswith("fleet: 3 stack(s)") and out.splitlines()[-1].endswith("stacks with errors: broken")


def test_json_is_keyed_by_stack(project, cli):
    code, out, _ = cli("validate", "--stack", "demo", "--stack", "dev", "--format", "json")
    body = json.loads(out)
    assert code == 0 and list(body["stacks"]) == ["demo", "dev"]
    assert body["summary"]["stacks"] == 2 and body["summary"]["errors"] == 0
    assert body["stacks"]["demo"]["summary"]["objects"] == 6


def test_one_stack_is_not_a_fleet_and_paths_do_not_join_one(project, cli):
    code, out, _ = cli("validate", "--stack", "demo")
    assert code == 0 and "== stack" not in out and "fleet:" not in out
    code, _, err = cli("validate", "--stack", "demo", "--stack", "dev", "x.yaml")
    assert code == 2 and "PATHS cannot be combined with several stacks" in err


@pytest.mark.slow
def test_a_fleet_plan_asks_aws_once_for_queries_its_stacks_share(project, cli):
    """A twin of the demo stack (another cluster, same selectors) costs no AWS call of its own."""
    (project / "stacks" / "Pulumi.twin.yaml").write_text((project / "stacks" / "Pulumi.demo.yaml").read_text())
    _, alone, _ = cli("plan", "--stack", "demo", "--embedded-aws", "--format", "json")
    code, out, _ = cli("plan", "--stack", "demo", "--stack", "twin", "--embedded-aws", "--format", "json")
    body = json.loads(out)
    assert list(body["stacks"]) == ["demo", "twin"] and code == max(body["summary"]["exitCodes"].values())
    assert body["stacks"]["twin"]["nodeClasses"] == body["stacks"]["demo"]["nodeClasses"]
    single = json.loads(alone)["awsCalls"]
    assert body["summary"]["awsCalls"]["DescribeImages"] == single["DescribeImages"] > 0  # not twice
    assert all(count <= single.get(operation, 0) for operation, count in body["summary"]["awsCalls"].items())


def test_a_fleet_renders_each_stack_into_its_directory_and_refuses_the_broken_one(project, cli):
    code, out, err = cli("render", "--all-stacks", "--out", "rendered")
    assert code == 1 and "refusing to render" in err
    assert sorted(p.name for p in (project / "rendered").iterdir()) == ["demo", "dev"]  # broken: nothing written
    assert sorted(p.name for p in (project / "rendered" / "dev").iterdir()) == [
        "ec2nodeclass-default.yaml",
        "nodeoverlay-prefer-graviton.yaml",
        "nodepool-batch.yaml",
        "nodepool-general.yaml",
    ]
    assert out.splitlines()[-1] == "fleet: 3 stack(s) rendered into rendered; refused: broken"
    code, _, err = cli("render", "--all-stacks", "--out", "-")
    assert code == 2 and "a fleet renders into directories" in err


def test_a_fleet_preview_has_a_section_per_stack_against_the_base(project, cli):
    import subprocess

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(project)]
    for step in (["init", "-q"], ["add", "."], ["commit", "-qm", "base"]):
        subprocess.run([*git, *step], check=True)
    dev = project / "stacks" / "Pulumi.dev.yaml"
    dev.write_text(dev.read_text().replace("al2023@v20240807", "al2023@v20250201"))
    code, out, _ = cli("preview", "--stack", "demo", "--stack", "dev", "--base", "HEAD", "--format", "json")
    body = json.loads(out)
    assert list(body["stacks"]) == ["demo", "dev"] and code == max(body["summary"]["exitCodes"].values())
    code, out, _ = cli("preview", "--stack", "demo", "--stack", "dev", "--base", "HEAD")
    assert [line for line in out.splitlines() if line.startswith("## Stack")] == ["## Stack `demo`", "## Stack `dev`"]
    assert "al2023@v20250201" in out.split("## Stack `dev`")[1]


def test_an_unreadable_stack_ends_a_fleet_plan_before_anything_is_printed(project, cli):
    (project / "stacks" / "Pulumi.torn.yaml").write_text("config: [unclosed\n")
    code, out, err = cli("plan", "--all-stacks", "--embedded-aws", "--format", "json")
    assert (code, out) == (2, "") and "Pulumi.torn.yaml" in err


def _released_one_after_another(monkeypatch, module, name: str, tracked) -> list[bool]:
    """Wraps ``module.name`` so that each call first checks, after a collection, whether what the calls before
    the last one handled (``tracked(args, result)``) is gone: the last stack's may still be held where it was printed,
    none before it; the list of those checks, one per call from the third."""
    import gc
    import weakref

    made: list[weakref.ref] = []
    gone: list[bool] = []
    original = getattr(module, name)

    def watched(*args, **kwargs):
        if len(made) >= 2:
            gc.collect()
            gone.append(all(ref() is None for ref in made[:-1]))
        result = original(*args, **kwargs)
        made.append(weakref.ref(tracked(args, result)))
        return result

    monkeypatch.setattr(module, name, watched)
    return gone


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_fleet_validate_lets_each_stack_go_before_it_judges_the_next(project, cli, fmt, monkeypatch):
    """Memory bounded by one stack: of a judged stack only its counts (and, in JSON, its printed text) stay."""
    from karpenter_gitops.app import validate_strategies

    for twin in ("dev2", "dev3"):
        (project / "stacks" / f"Pulumi.{twin}.yaml").write_text((project / "stacks" / "Pulumi.dev.yaml").read_text())
    gone = _released_one_after_another(monkeypatch, validate_strategies, "whole", lambda _, verdict: verdict.report)
    code, out, _ = cli("validate", "--all-stacks", "--format", fmt)
    assert code == 1 and gone == [True, True, True]
    if fmt == "json":
        body = json.loads(out)
        assert list(body["stacks"]) == ["broken", "demo", "dev", "dev2", "dev3"] and body["summary"]["stacks"] == 5
        assert body["summary"]["errors"] == sum(stack["summary"]["errors"] for stack in body["stacks"].values()) > 0


@pytest.mark.slow
def test_a_fleet_plan_lets_each_plan_go_before_it_plans_the_next(project, cli, monkeypatch):
    """Each stack's plan is printed (JSON too) when it is made and let go: none is held for the end."""
    from karpenter_gitops.cli import plan_command

    gone = _released_one_after_another(monkeypatch, plan_command, "print_plan", lambda args, _: args[0])
    (project / "stacks" / "Pulumi.broken.yaml").unlink()
    for twin in ("dev2", "dev3"):
        (project / "stacks" / f"Pulumi.{twin}.yaml").write_text((project / "stacks" / "Pulumi.dev.yaml").read_text())
    _, out, _ = cli("plan", "--all-stacks", "--embedded-aws")
    assert gone == [True, True] and "fleet: 4 stack(s)" in out


def _shards(project, cli, command: str, count: int, *extra: str) -> list:
    """``command --all-stacks --shard I/count --format json`` for each I, each output in a file, last first."""
    paths = []
    for index in range(count, 0, -1):
        code, out, _ = cli(command, "--all-stacks", "--shard", f"{index}/{count}", *extra, "--format", "json")
        assert code in (0, 1) and len(json.loads(out)["stacks"]) >= 1
        (path := project / f"shard-{index}.json").write_text(out)
        paths.append(path)
    return paths


def test_shards_of_a_fleet_validate_merge_into_the_report_and_exit_of_one_run(project, cli):
    """A CI matrix job per shard, then `merge`: the same document, byte for byte, and the same exit code."""
    (project / "stacks" / "Pulumi.dev2.yaml").write_text((project / "stacks" / "Pulumi.dev.yaml").read_text())
    one = cli("validate", "--all-stacks", "--format", "json")
    merged = cli("merge", *map(str, _shards(project, cli, "validate", 3)))
    assert one.code == 1 and (merged.code, merged.out) == (one.code, one.out)


@pytest.mark.slow
def test_shards_of_a_fleet_plan_merge_into_the_plans_and_exit_of_one_run(project, cli):
    one = cli("plan", "--all-stacks", "--embedded-aws", "--format", "json")
    merged = cli("merge", *map(str, _shards(project, cli, "plan", 2, "--embedded-aws")))
    whole, joined = json.loads(one.out), json.loads(merged.out)

    def plans(document: dict) -> dict:  # each stack's plan without its AWS calls: shards share no memo
        return {stack: {k: v for k, v in plan.items() if k != "awsCalls"} for stack, plan in document["stacks"].items()}

    assert merged.code == one.code and plans(joined) == plans(whole) and list(joined["stacks"]) == list(whole["stacks"])
    assert joined["summary"]["exitCodes"] == whole["summary"]["exitCodes"]
    assert all(joined["summary"]["awsCalls"][op] >= count for op, count in whole["summary"]["awsCalls"].items())  # no shared memo


def test_merge_refuses_shards_that_would_not_make_one_run(project, cli):
    validated, planned, torn = project / "v.json", project / "p.json", project / "torn.json"
    validated.write_text(cli("validate", "--stack", "demo", "--stack", "dev", "--format", "json").out)
    planned.write_text(json.dumps({"stacks": {"x": {}}, "summary": {"stacks": 1, "exitCodes": {"x": 0}, "awsCalls": {}}}))
    torn.write_text('{"stacks": ')
    for shards, says in (
        ([validated, validated], "stack 'demo' is in two shards"),
        ([validated, planned], "shards of plan and validate cannot be merged"),
        ([torn], "torn.json: is not JSON"),
        ([project / "missing.json"], "missing.json: cannot read it"),
    ):
        code, out, err = cli("merge", *map(str, shards))
        assert (code, out) == (2, "") and says in err and len(err.strip().splitlines()) == 1


def test_a_shard_is_a_share_of_all_stacks(project, cli):
    code, _, err = cli("validate", "--all-stacks", "--shard", "4/4")
    assert code == 2 and "only 3 stack(s)" in err
    code, _, err = cli("validate", "--stack", "demo", "--stack", "dev", "--shard", "1/2")
    assert code == 2 and "give --all-stacks" in err
    code, _, err = cli("validate", "--all-stacks", "--shard", "3/2")
    assert code == 2 and "'3/2' is not I/N" in err
