"""The example workflows under examples/github-actions/, run step by step as a hosted runner would
(tests/support/github_actions.py) in a user's repository, on a clean pull request, a broken one and one
from a fork: each comments wherever it may, hands a fork's comment to karpenter-comment.yml, fails
the job where the change is broken, asks for no more permissions than its steps use, and pins every
action it uses by commit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT, USERS_NODES
from support.github_actions import REPOSITORY, git, user_repository

pytestmark = pytest.mark.packaging

WORKFLOWS = PROJECT / "examples" / "github-actions"
MARKER = "<!-- karpenter-gitops-preview -->"
SOUND = USERS_NODES.replace("IDENTITY", "role: KarpenterNodeRole-prod")
ARN = USERS_NODES.replace("IDENTITY", "instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile")
STACK = (PROJECT / "stacks" / "Pulumi.dev.yaml").read_text(encoding="utf-8")
BROKEN_STACK = STACK.replace("effect: NoSchedule", "effect: NoSchedul")
HEAD_SHA = "9f" * 20


def workflow(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def pull_request(fork: bool = False) -> dict:
    head = "someone/infra" if fork else REPOSITORY
    return {"pull_request": {"number": 7, "head": {"repo": {"full_name": head}, "sha": HEAD_SHA}}}


@pytest.fixture
def manifests_repository(runner, tmp_path) -> Path:
    return user_repository(runner, tmp_path, {"karpenter/nodes.yaml": SOUND, "README.md": "infra\n"})


@pytest.fixture
def pulumi_repository(runner, tmp_path) -> Path:
    """A team's Pulumi project: the program, its stack, and `origin/main` fetched (checkout's fetch-depth: 0)."""
    files = {
        "Pulumi.yaml": (PROJECT / "Pulumi.yaml").read_text(encoding="utf-8"),
        "__main__.py": "import karpenter_gitops_pulumi  # the team's program\n",
        "requirements.txt": "karpenter-gitops\n",
        "stacks/Pulumi.prod.yaml": STACK,
    }
    workspace = user_repository(runner, tmp_path, files)
    git(workspace, "fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main", env=runner.env)
    return workspace


def change(workspace: Path, env: dict, path: str, text: str) -> None:
    (workspace / path).write_text(text)
    git(workspace, "commit", "-qam", "change", env=env)


def posted(run) -> list[tuple[str, str]]:
    return [(call["method"], call["endpoint"]) for call in run.gh_calls if call["method"] != "GET"]


# --- karpenter-action.yml and karpenter-comment.yml: the action, and the comment for forks --------


@pytest.mark.parametrize(("text", "exit_code"), [(SOUND.replace("cpu: 100", "cpu: 200"), 0), (ARN, 1)], ids=["clean", "broken"])
def test_the_action_workflow_comments_on_a_pull_request_of_the_repository(runner, manifests_repository, text, exit_code):
    change(manifests_repository, runner.env, "karpenter/nodes.yaml", text)
    run = runner.run_workflow(WORKFLOWS / "karpenter-action.yml", "pull_request", pull_request(), base_ref="main")

    assert run.exit_code == exit_code, run.log
    assert posted(run) == [("POST", f"repos/{REPOSITORY}/issues/7/comments")]
    assert not (runner.artifacts / "karpenter-preview").exists()  # nothing to hand on: it commented itself


def test_a_forks_pull_request_gets_its_comment_from_the_workflow_run_job(runner, manifests_repository, tmp_path):
    change(manifests_repository, runner.env, "karpenter/nodes.yaml", ARN)
    run = runner.run_workflow(WORKFLOWS / "karpenter-action.yml", "pull_request", pull_request(fork=True), base_ref="main")

    assert run.exit_code == 1 and posted(run) == []
    comment = (runner.artifacts / "karpenter-preview" / "comment.md").read_text()
    assert comment.startswith(MARKER)

    runner.workspace = tmp_path / "comment-job"  # a fresh job: nothing checked out
    runner.workspace.mkdir()
    event = {
        "workflow_run": {
            "event": "pull_request",
            "head_sha": HEAD_SHA,
            "head_branch": "change",
            "head_repository": {"full_name": "someone/infra", "owner": {"login": "someone"}},
            "pull_requests": [],  # GitHub lists none for a fork's run
        }
    }
    pulls = [{"number": 7, "head": {"sha": HEAD_SHA, "label": "someone:change"}}]
    answered = runner.run_workflow(WORKFLOWS / "karpenter-comment.yml", "workflow_run", event, gh_pulls=pulls)

    assert answered.exit_code == 0, answered.log
    assert posted(answered) == [("POST", f"repos/{REPOSITORY}/issues/7/comments")]
    assert answered.gh_calls[-1]["body"] == comment


# --- karpenter-preview.yml: a Pulumi project's comment, rendered manifests and pulumi preview -------


def test_the_preview_workflow_comments_and_runs_pulumi_on_a_clean_pull_request(runner, pulumi_repository):
    change(pulumi_repository, runner.env, "stacks/Pulumi.prod.yaml", STACK.replace('cpu: "200"', 'cpu: "300"'))
    run = runner.run_workflow(WORKFLOWS / "karpenter-preview.yml", "pull_request", pull_request(), base_ref="main")

    assert run.exit_code == 0, run.log
    assert posted(run) == [("POST", f"repos/{REPOSITORY}/issues/7/comments")]
    assert run.gh_calls[-1]["body"].startswith(MARKER)
    assert [call[0] for call in run.pulumi_calls] == ["install", "preview"]
    assert sorted(path.name for path in (pulumi_repository / "out" / "rendered").iterdir())[0] == "ec2nodeclass-default.yaml"


def test_a_broken_pull_request_still_gets_its_comment_and_then_fails(runner, pulumi_repository):
    change(pulumi_repository, runner.env, "stacks/Pulumi.prod.yaml", BROKEN_STACK)
    run = runner.run_workflow(WORKFLOWS / "karpenter-preview.yml", "pull_request", pull_request(), base_ref="main")

    assert run.exit_code != 0
    assert posted(run) == [("POST", f"repos/{REPOSITORY}/issues/7/comments")]
    assert ":x:" in run.gh_calls[-1]["body"].splitlines()[1]
    assert run.steps_run[-1].startswith("Fail on a render refused")


def test_a_forks_pull_request_is_previewed_offline_and_handed_on(runner, pulumi_repository):
    change(pulumi_repository, runner.env, "stacks/Pulumi.prod.yaml", BROKEN_STACK)
    run = runner.run_workflow(WORKFLOWS / "karpenter-preview.yml", "pull_request", pull_request(fork=True), base_ref="main")

    assert run.exit_code != 0
    assert run.gh_calls == [] and run.pulumi_calls == []  # no write token, no secrets: nothing asked of them
    assert (runner.artifacts / "karpenter-preview" / "comment.md").read_text().startswith(MARKER)


# --- karpenter-policy.yml ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "exit_code"), [(SOUND.replace("-prod", "-dev"), 0), (ARN, 1)], ids=["clean", "broken"]
)  # the stack's controller gives the dev role its access entry
def test_the_policy_workflow_annotates_and_keeps_the_report(runner, tmp_path, text, exit_code):
    workspace = user_repository(
        runner,
        tmp_path,
        {
            "karpenter/nodes.yaml": text,
            "Pulumi.yaml": (PROJECT / "Pulumi.yaml").read_text(encoding="utf-8"),
            "stacks/Pulumi.prod.yaml": STACK,
            "policies/waivers.yaml": "waivers: []\n",
        },
    )
    run = runner.run_workflow(WORKFLOWS / "karpenter-policy.yml", "pull_request", pull_request(), base_ref="main")

    assert run.exit_code == exit_code, run.log
    assert (runner.artifacts / "policy-report" / "policy-report.json").is_file()
    if exit_code:
        assert "::error file=karpenter/nodes.yaml" in run.log
    assert workspace == runner.workspace


# --- what every example asks for ----------------------------------------------------------------

_PINNED = re.compile(r"[\w.-]+(/[\w.-]+)+@[0-9a-f]{40}")
# What each permission is for, by what a step does: a workflow asks for one only when a step needs it.
_NEEDS = {
    "pull-requests": lambda text: "issues/$PR/comments" in text or "/pulls" in text or "uses: YOUR-ORG/karpenter-gitops@" in text,
    "actions": lambda text: "run-id:" in text,
    "id-token": lambda text: "role-to-assume" in text,
    # the action uploads its findings to code scanning unless it only posts a comment or is told not to
    "security-events": lambda text: (
        "uses: YOUR-ORG/karpenter-gitops@" in text and "comment-from" not in text and "upload-sarif: 'false'" not in text
    ),
}


@pytest.mark.parametrize("name", sorted(path.name for path in WORKFLOWS.glob("*.yml")))
def test_every_example_pins_its_actions_and_asks_only_for_what_its_steps_use(name):
    spec = workflow(name)
    permissions = spec.get("permissions")
    assert isinstance(permissions, dict), f"{name}: no permissions block gives the token every default scope"
    steps = [step for job in spec["jobs"].values() for step in job["steps"]]
    text = yaml.safe_dump(steps)  # the steps that run: comments are no step
    for scope, needed in _NEEDS.items():
        assert (scope in permissions) == needed(text), f"{name}: {scope}"
    assert set(permissions) <= {"contents", *_NEEDS}, name
    for step in steps:
        uses = step.get("uses", "")
        if uses and not uses.startswith("YOUR-ORG/"):  # the user's own copy, pinned as they choose
            assert _PINNED.fullmatch(uses), f"{name}: {uses} is not pinned by commit"


def test_every_pull_request_workflow_is_run_here():
    tested = Path(__file__).read_text(encoding="utf-8")
    for path in WORKFLOWS.glob("*.yml"):
        if "pull_request" in workflow(path.name).get(True, {}):  # YAML 1.1 reads `on:` as True
            assert f'"{path.name}"' in tested, f"{path.name} runs on pull requests but no test runs it"
