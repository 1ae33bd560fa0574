"""A hostile pull request cannot speak through the preview comment: whatever its manifests, its base's
name and Pulumi's view of it hold, the comment (and the full report) parsed as GitHub parses it holds
only our links, headings, emphasis and HTML, every outside value is code, and it stays under
GitHub's size limit. See ``support.markdown_oracle`` for what is judged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from support.hostile import PROFILE, run
from support.markdown_oracle import HOSTILE_VALUE, check
from support.preview_objects import family, node_class, node_pool

GITHUB_LIMIT = 65_536
_PARSER = MarkdownIt("commonmark", {"html": True}).enable("table")


def _write(path: Path, docs: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True))


def _preview(folder: Path, base: list, head: list, *extra: str, base_name: str = "base") -> str:
    _write(folder / base_name / "karpenter.yaml", base)
    _write(folder / "head" / "karpenter.yaml", head)
    code, out, _ = run(
        [
            "preview",
            "--manifests",
            str(folder / "head"),
            "--base",
            str(folder / base_name),
            "--kubernetes-version",
            "1.32",
            *extra,
        ]
    )
    assert code in (0, 1), code
    return out


def _code(markdown: str) -> str:
    """Every code span's and fence's content, one after another."""
    parts = []
    for token in _PARSER.parse(markdown):
        parts += (
            [token.content] if token.type == "fence" else [c.content for c in token.children or () if c.type == "code_inline"]
        )
    return "\n".join(parts)


def test_the_issue_examples_are_inline_code_in_the_blocking_errors(tmp_path):
    """A link in an alias short enough for the CRD (``al2023@[x](https://evil.example/p)`` itself is over its
    30 bytes: the API server's refusal says so, without quoting it) and a fake approval in a profile ARN."""
    alias = node_class(amiSelectorTerms=[{"alias": "al2023@[x](https://e.vil/p)"}])
    arn = node_class("arn")
    del arn["spec"]["role"]
    arn["spec"]["instanceProfile"] = (
        "arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile | :white_check_mark: **approved** |"
    )
    out = _preview(tmp_path, [node_class(), node_pool(family("m5"))], [alias, arn, node_pool(family("m5"))])
    check(out)
    errors = out.split("#### Blocking errors")[1].split("<details>")[0]
    assert "`'[x](https://e.vil/p)'` is not a al2023 AMI version" in errors
    assert "(use `'KarpenterNodeProfile | :white_check_mark: **approved** |'`)" in errors
    assert "[x](https://e.vil/p)" in _code(errors) and "**approved**" in _code(errors)


def test_the_issue_alias_is_refused_for_its_length_and_shown_only_as_code(tmp_path):
    alias = node_class(amiSelectorTerms=[{"alias": "al2023@[x](https://evil.example/p)"}])
    out = _preview(tmp_path, [node_class(), node_pool(family("m5"))], [alias, node_pool(family("m5"))])
    check(out)
    errors = out.split("#### Blocking errors")[1].split("<details>")[0]
    assert "spec.amiSelectorTerms[0].alias: Too long: may not be more than 30 bytes [`schema/size`]" in errors
    assert "evil.example" not in errors


def test_a_name_with_a_slash_is_shown_whole_in_its_diff(tmp_path):
    out = _preview(tmp_path, [], [node_class("team/[x](https://evil.example/p)")])
    check(out)
    assert "+  name: team/[x](https://evil.example/p)" in out


def _pulumi_preview(values: list[str]) -> dict:
    step, reason, message, severity = values[:4]
    return {
        "steps": [
            {
                "op": step,
                "urn": f"urn:pulumi:demo::p::kubernetes:karpenter.sh/v1:NodePool::{step}",
                "newState": {"type": f"kubernetes:{reason}:NodePool"},
                "diffReasons": [reason],
            }
        ],
        "diagnostics": [{"message": message, "severity": severity}, {"message": message, "severity": "error"}],
        "changeSummary": {"create": 1},
    }


def _events(values: list[str]) -> str:
    pack, policy, message, level = values[4:8]
    event = {"policyEvent": {"message": message, "policyName": policy, "policyPackName": pack, "enforcementLevel": level}}
    blocking = {
        "policyEvent": {"message": message, "policyName": policy, "policyPackName": pack, "enforcementLevel": "mandatory"}
    }
    return "\n".join(json.dumps(e) for e in (event, blocking, {"summaryEvent": {"resourceChanges": {"update": 1}}})) + "\n"


@st.composite
def hostile_pull_requests(draw) -> tuple[list, list, list[str]]:
    """A base, a head whose names, alias, instance profile, tags, labels, taints, budgets and references
    carry markup, and the values a hostile Pulumi preview brings."""
    value = lambda: draw(HOSTILE_VALUE)  # noqa: E731 - one draw per field
    name, pool_name = value(), value()
    head_class = node_class(
        name, amiSelectorTerms=[{"alias": f"al2023@{value()}"}, {"name": value(), "owner": "self"}], tags={value(): value()}
    )
    if draw(st.booleans()):
        del head_class["spec"]["role"]
        head_class["spec"]["instanceProfile"] = f"arn:aws:iam::123456789012:instance-profile/{value()}"
    pool = node_pool(family("m5", value()), name=pool_name, node_class_name=draw(st.sampled_from([name, value()])))
    pool["spec"]["disruption"]["budgets"] = [{"nodes": "10%", "schedule": value(), "duration": "1h"}, {"nodes": value()}]
    pool["spec"]["template"]["spec"]["taints"] = [{"key": value(), "value": value(), "effect": "NoSchedule"}]
    pool["spec"]["template"]["metadata"] = {"labels": {value(): value()}}
    changed = node_pool(family("m5"), name="general")
    changed["spec"]["template"]["metadata"] = {"labels": {"team": value()}}
    base = [node_class(), node_pool(family("m5")), node_pool(family("m5"), name=pool_name)]
    head = [node_class(), changed, head_class, pool]
    return base, head, [value() for _ in range(8)]


@PROFILE
@given(pull_request=hostile_pull_requests(), base_name=HOSTILE_VALUE.filter(lambda name: "/" not in name and "\x00" not in name))
def test_a_hostile_pull_request_cannot_speak_through_the_comment(tmp_path_factory, pull_request, base_name):
    base, head, pulumi = pull_request
    folder = tmp_path_factory.mktemp("pr")
    (folder / "preview.json").write_text(json.dumps(_pulumi_preview(pulumi)))
    (folder / "events.jsonl").write_text(_events(pulumi))
    pulumi_args = ("--pulumi-json", str(folder / "preview.json"), "--pulumi-events", str(folder / "events.jsonl"))
    try:
        out = _preview(folder, base, head, *pulumi_args, base_name=f"base {base_name}")
    except OSError:  # a name this filesystem refuses: the directory cannot be made, nothing to preview
        return
    check(out)
    assert len(out) <= GITHUB_LIMIT
    report = folder / "full.md"
    shortened = _preview(
        folder, base, head, *pulumi_args, "--budget", "5000", "--full-report", str(report), base_name=f"base {base_name}"
    )
    check(shortened)
    assert len(shortened) <= GITHUB_LIMIT
    if report.exists():
        check(report.read_text())


@pytest.mark.slow
@PROFILE
@given(value=st.sampled_from(["x" * 70_000, "`" * 5_000, "[x](https://evil.example/p)" * 2_000, "**approved** " * 5_000]))
def test_huge_values_keep_the_comment_under_githubs_limit(tmp_path_factory, value):
    pools = [node_pool(family("m5"), name=f"pool-{i}", node_class_name=value) for i in range(30)]
    out = _preview(tmp_path_factory.mktemp("huge"), [node_class()], [node_class(), node_class(value), *pools])
    check(out)
    assert len(out) <= GITHUB_LIMIT


@pytest.mark.slow
def test_workloads_from_the_pull_request_are_code_in_the_cost_forecast(monkeypatch, tmp_path, catalogue_cache):
    """The cost section quotes the workloads' files, names and why their pods cannot be scheduled."""
    monkeypatch.chdir(PROJECT)
    assert run(["render", "--stack", "demo", "--out", str(tmp_path / "base")])[0] == 0
    nodeclass = tmp_path / "base" / "ec2nodeclass-default.yaml"
    nodeclass.write_text(nodeclass.read_text().replace("al2023@v20250201", "al2023@v20240807"))
    docs = [doc for doc in yaml.safe_load_all((PROJECT / "examples" / "workloads" / "shop.yaml").read_text()) if doc]
    deployments = [doc for doc in docs if doc["kind"] == "Deployment"]
    deployments[0]["metadata"]["name"] = "storefront **approved** @octocat"
    deployments[1]["spec"]["template"]["spec"]["nodeSelector"] = {"karpenter.sh/nodepool": "[x](https://evil.example/p)"}
    _write(tmp_path / "workloads [x](https:evil) #1" / "shop :+1:.yaml", docs)
    code, out, _ = run(
        [
            "preview",
            "--stack",
            "demo",
            "--base",
            str(tmp_path / "base"),
            "--embedded-aws",
            "--cache-dir",
            str(catalogue_cache),
            "--workloads",
            str(tmp_path / "workloads [x](https:evil) #1"),
        ],
        aws=True,
    )
    assert code == 1 and "#### Cost forecast" in out
    check(out)
    assert "Pods the head cannot schedule" in out and "[x](https://evil.example/p)" in _code(out)
