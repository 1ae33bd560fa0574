"""The GitHub Action at the repository root (action.yml), its steps run as the runner runs them
(tests/support/github_actions.py), in a user's repository in a temporary directory: a clone of a bare
`origin`, the pull request's branch checked out.

The install step runs once for the module: it builds the action's checkout with pip into a
virtualenv of its own, offline (PIP_NO_INDEX) but for the build back-end, as the wheel fixture
builds; the dependencies come from the test virtualenv on PYTHONPATH (without this project's own
editable install), as a runner's index would serve them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import USERS_NODES
from support.ci_reports import sarif_errors
from support.github_actions import ACTION, REPOSITORY, evaluate, git, user_repository
from support.github_actions import ACTION_STEPS as STEPS

pytestmark = pytest.mark.packaging

MARKER = "<!-- karpenter-gitops-preview -->"

SOUND = USERS_NODES.replace("IDENTITY", "role: KarpenterNodeRole-prod")
ARN = USERS_NODES.replace("IDENTITY", "instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile")


@pytest.fixture
def repository(runner, tmp_path) -> Path:
    """A user's repository: `origin` holds main with a sound class; the pull request's branch is
    checked out in the workspace, shallow, as actions/checkout leaves it."""
    return user_repository(runner, tmp_path, {"karpenter/nodes.yaml": SOUND, "README.md": "infra\n"})


def _pull_request(head_repo: str = REPOSITORY) -> dict:
    return {"pull_request": {"number": 7, "head": {"repo": {"full_name": head_repo}}}}


def _change(workspace: Path, text: str, env: dict) -> None:
    (workspace / "karpenter" / "nodes.yaml").write_text(text)
    git(workspace, "commit", "-qam", "change the class", env=env)


def test_a_broken_change_is_annotated_previewed_commented_and_fails(runner, repository):
    _change(repository, ARN, runner.env)
    run = runner.run(
        "pull_request",
        _pull_request(),
        {"paths": "karpenter/", "release": "1.14", "preview-args": "--offline --budget 6000"},
        base_ref="main",
    )

    assert run.exit_code == 1
    assert run.outputs["validate-exit"] == "1" and run.outputs["preview-exit"] == "1"
    assert "::error file=karpenter/nodes.yaml,line=7,title=nodeclass/instance-profile-arn (karpenter-gitops)::" in run.log
    comment = (Path(run.outputs["comment-dir"]) / "comment.md").read_text()
    assert comment.startswith(MARKER + "\n### Karpenter preview: :x:")
    assert "Traceback" not in run.log
    assert run.gh_calls == [
        {"method": "GET", "endpoint": f"repos/{REPOSITORY}/issues/7/comments", "body": None, "fields": {}, "token": "ghs_test"},
        {
            "method": "POST",
            "endpoint": f"repos/{REPOSITORY}/issues/7/comments",
            "body": comment,
            "fields": {},
            "token": "ghs_test",
        },
    ]
    assert run.outputs["comment-id"] == "4242"
    assert comment in run.summary
    assert run.steps_run[-1].startswith("Fail on findings")


def test_the_existing_comment_is_updated_in_place(runner, repository):
    _change(repository, SOUND.replace("cpu: 100", "cpu: 200"), runner.env)
    others = [{"id": 11, "body": "LGTM"}, {"id": 12, "body": f"{MARKER}\n### Karpenter preview: old"}]
    run = runner.run("pull_request", _pull_request(), {"paths": "karpenter/"}, base_ref="main", gh_comments=others)

    assert run.exit_code == 0, run.log
    assert run.outputs["validate-exit"] == "0" and run.outputs["preview-exit"] == "0"
    assert [(c["method"], c["endpoint"]) for c in run.gh_calls] == [
        ("GET", f"repos/{REPOSITORY}/issues/7/comments"),
        ("PATCH", f"repos/{REPOSITORY}/issues/comments/12"),
    ]
    assert run.gh_calls[1]["body"].startswith(MARKER)
    assert run.outputs["comment-id"] == "12"


def test_a_pull_request_from_a_fork_is_validated_and_not_commented(runner, repository):
    _change(repository, ARN, runner.env)
    run = runner.run("pull_request", _pull_request(head_repo="someone/infra"), {"paths": "karpenter/"}, base_ref="main")

    assert run.exit_code == 1
    assert run.gh_calls == []
    assert "::notice title=karpenter-gitops::a pull request from a fork" in run.log
    assert MARKER in run.summary and run.outputs["comment-id"] == ""


def test_the_job_summary_holds_only_the_comment_preview_rendered(runner, repository):
    """A summary renders markdown: JSON asked for in preview-args, holding a manifest's values, is not written there."""
    _change(repository, ARN.replace("KarpenterNodeProfile", "KarpenterNodeProfile-[x](https://evil.example/p)"), runner.env)
    run = runner.run(
        "pull_request",
        _pull_request(),
        {"paths": "karpenter/", "comment": "false", "preview-args": "--offline --format json"},
        base_ref="main",
    )

    assert run.outputs["preview-exit"] == "1"
    assert json.loads((Path(run.outputs["comment-dir"]) / "comment.md").read_text())["exitCode"] == 1
    assert "evil.example" not in run.summary and run.gh_calls == []


HEAD_SHA = "9f" * 20


def _artifact(directory: Path, comment: str, number: str = "7") -> Path:
    made = directory / "preview"
    made.mkdir()
    (made / "comment.md").write_text(comment)
    (made / "pull-request").write_text(number + "\n")
    return made


def _workflow_run(pull_requests: list, head_owner: str = "someone") -> dict:
    return {
        "workflow_run": {
            "event": "pull_request",
            "head_sha": HEAD_SHA,
            "head_branch": "fix-pools",
            "head_repository": {"full_name": f"{head_owner}/infra", "owner": {"login": head_owner}},
            "pull_requests": pull_requests,
        }
    }


def _pull(number: int, sha: str = HEAD_SHA, label: str = "someone:fix-pools") -> dict:
    return {"number": number, "head": {"sha": sha, "label": label}}


def test_a_workflow_run_job_posts_a_forks_comment_on_the_pull_request_of_the_runs_head_commit(runner, tmp_path):
    """The fork-safe pair: the pull_request run uploads comment-dir, a workflow_run job downloads it and
    posts it with a write token, installing and running nothing of the pull request's. GitHub lists no
    pull request on a fork's run: the open ones from its branch are asked, and the one at the run's head
    commit gets the comment, whatever number the artifact (the fork's to write) names."""
    runner.workspace = tmp_path
    made = _artifact(tmp_path, f"{MARKER}\n### Karpenter preview: :x: 1 blocking problem(s)\n", number="8")
    pulls = [_pull(6, sha="1" * 40), _pull(7)]
    run = runner.run("workflow_run", _workflow_run([]), {"comment-from": "preview"}, steps=STEPS, gh_pulls=pulls)

    assert run.exit_code == 0, run.log
    assert run.steps_run == [
        "Post or update the pull request comment",
        "Fail on findings (validate) or blocking problems (preview)",
    ]
    lookup, _, post = run.gh_calls
    assert (lookup["endpoint"], lookup["fields"]) == (f"repos/{REPOSITORY}/pulls", {"state": "open", "head": "someone:fix-pools"})
    assert (post["method"], post["endpoint"], post["body"]) == (
        "POST",
        f"repos/{REPOSITORY}/issues/7/comments",
        (made / "comment.md").read_text(),
    )


def test_a_same_repository_run_names_its_pull_request_in_the_event(runner, tmp_path):
    runner.workspace = tmp_path
    _artifact(tmp_path, f"{MARKER}\nhi\n", number="7/../../pulls")
    event = _workflow_run([{"number": 12, "head": {"sha": HEAD_SHA}}], head_owner="acme")
    run = runner.run("workflow_run", event, {"comment-from": "preview"}, steps=STEPS)

    assert run.exit_code == 0, run.log
    assert [(c["method"], c["endpoint"]) for c in run.gh_calls] == [
        ("GET", f"repos/{REPOSITORY}/issues/12/comments"),
        ("POST", f"repos/{REPOSITORY}/issues/12/comments"),
    ]


def test_no_open_pull_request_at_the_runs_head_commit_posts_nothing(runner, tmp_path):
    """The branch moved on (or the pull request closed) since the run: its comment belongs nowhere now."""
    runner.workspace = tmp_path
    _artifact(tmp_path, f"{MARKER}\nhi\n")
    run = runner.run(
        "workflow_run", _workflow_run([]), {"comment-from": "preview"}, steps=STEPS, gh_pulls=[_pull(7, sha="2" * 40)]
    )

    assert run.exit_code == 0, run.log
    assert f"no open pull request has the run's head commit {HEAD_SHA}" in run.log
    assert [c["method"] for c in run.gh_calls] == ["GET"]


def test_comment_from_outside_a_workflow_run_job_is_refused(runner, tmp_path):
    runner.workspace = tmp_path
    _artifact(tmp_path, f"{MARKER}\nhi\n")
    run = runner.run("push", {}, {"comment-from": "preview"}, steps=STEPS)

    assert run.exit_code == 2
    assert "comment-from runs in a workflow_run job" in run.log and run.gh_calls == []


def test_an_artifact_that_is_no_preview_is_refused(runner, tmp_path):
    """A maintainer's comment starts so too: a fork's artifact must not pick what is edited."""
    runner.workspace = tmp_path
    _artifact(tmp_path, "LGTM\n")
    run = runner.run(
        "workflow_run",
        _workflow_run([]),
        {"comment-from": "preview"},
        steps=STEPS,
        gh_comments=[{"id": 11, "body": "LGTM"}],
        gh_pulls=[_pull(7)],
    )

    assert run.exit_code == 2
    assert "is no karpenter-gitops preview" in run.log
    assert [c["method"] for c in run.gh_calls] == ["GET"]  # the pull request looked up; nothing edited


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("inputs.a == 'x' && (inputs.b != '' || steps.s.outputs.o != '')", True),
        ("inputs.a == 'y' || inputs.b", "b"),
        ("!(inputs.a == 'x')", False),
        ("github.event.pull_request.number", ""),
    ],
)
def test_the_expressions_are_read_as_github_reads_them(expression, expected):
    context = {"inputs": {"a": "x", "b": "b"}, "steps": {"s": {"outputs": {"o": "1"}}}, "github": {"event": {}}}
    assert evaluate(expression, context) == expected


def test_a_push_validates_only(runner, repository):
    run = runner.run("push", {}, {"paths": "karpenter/", "format": "text"})

    assert run.exit_code == 0, run.log
    assert run.outputs == {"validate-exit": "0", "preview-exit": "", "comment-dir": "", "comment-id": ""}
    assert "2 object(s) checked" in run.log
    assert run.gh_calls == []


def test_pull_request_target_is_refused_before_anything_is_installed(runner, repository):
    run = runner.run(
        "pull_request_target", _pull_request(head_repo="someone/infra"), {"paths": "karpenter/"}, steps=STEPS, base_ref="main"
    )

    assert run.exit_code == 2
    assert run.steps_run == ["Install karpenter-gitops from the action's checkout"]
    assert "::error title=karpenter-gitops::refusing to run under pull_request_target" in run.log
    assert run.gh_calls == []


def test_the_findings_go_to_code_scanning_as_a_valid_sarif_log_on_their_lines(runner, repository):
    _change(repository, ARN, runner.env)
    run = runner.run("push", {}, {"paths": "karpenter/", "release": "1.14"})

    assert run.exit_code == 1 and run.outputs["validate-exit"] == "1"  # the findings still fail the job
    (upload,) = run.uploads
    assert upload["category"] == "karpenter-gitops" and sarif_errors(upload["log"]) == []
    (result,) = [r for r in upload["log"]["runs"][0]["results"] if r["ruleId"] == "nodeclass/instance-profile-arn"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "karpenter/nodes.yaml" and physical["region"]["startLine"] == 7
    assert "::error file=karpenter/nodes.yaml,line=7," in run.log  # the annotations as before
    assert run.steps_run[-1].startswith("Fail on findings")


@pytest.mark.parametrize("upload", ["auto", "true"])
def test_a_refused_upload_is_a_notice_with_auto_and_fails_with_true(runner, repository, upload):
    """No `security-events: write`: code scanning answers 403. The action cannot see the permissions
    beforehand, so auto goes on with a notice of what to grant; true fails the job there."""
    run = runner.run("push", {}, {"paths": "karpenter/", "upload-sarif": upload}, code_scanning=False)

    assert len(run.uploads) == 1
    if upload == "auto":
        assert run.exit_code == 0 and run.steps_run[-1].startswith("Fail on findings")
        assert "::notice title=karpenter-gitops::code scanning refused the SARIF upload" in run.log
        assert "security-events: write" in run.log
    else:
        assert run.exit_code == 1 and run.steps_run[-1] == "Upload the findings to code scanning"


def test_nothing_is_uploaded_when_switched_off_or_from_a_forks_pull_request(runner, repository):
    off = runner.run("push", {}, {"paths": "karpenter/", "upload-sarif": "false"})
    fork = runner.run(
        "pull_request", _pull_request(head_repo="someone/infra"), {"paths": "karpenter/", "preview": "false"}, base_ref="main"
    )

    assert off.exit_code == 0 and fork.exit_code == 0
    assert off.uploads == [] and fork.uploads == []
    assert not any(name.startswith("Say why") for name in off.steps_run + fork.steps_run)


def test_actions_from_elsewhere_that_see_the_token_are_pinned_to_a_commit():
    """upload-sarif gets the job's token: a moved tag must not change what runs with it."""
    (upload,) = [step["uses"] for step in STEPS if "upload-sarif" in step.get("uses", "")]
    assert re.fullmatch(r"github/codeql-action/upload-sarif@[0-9a-f]{40}", upload)


def test_the_action_asks_for_no_more_than_it_needs():
    """Inputs reach the scripts through env: only (a path or ref spliced into a script could run as code)."""
    for step in STEPS:
        assert "${{" not in step.get("run", ""), step["name"]
    assert ACTION["runs"]["using"] == "composite"
    for step in STEPS:  # a tag can be moved to other code; a commit cannot
        assert re.fullmatch(r"[\w.-]+(/[\w.-]+)+@[0-9a-f]{40}", step.get("uses", "a/b@" + "0" * 40)), step["name"]
