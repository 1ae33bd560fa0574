"""The GitHub Action at the repository root (action.yml), its steps run as the runner runs them.

Each `run:` step of the composite action is run with `bash --noprofile --norc -eo pipefail` in a
user's repository in a temporary directory (a clone of a bare `origin`, the pull request's branch
checked out), with the runner's environment: GITHUB_OUTPUT (a new file per step, read back into
`steps.<id>.outputs`), GITHUB_PATH (prepended to PATH for the steps after), GITHUB_STEP_SUMMARY,
GITHUB_WORKSPACE as the working directory, GITHUB_ACTION_PATH (a copy of this project: the
action's own checkout) and RUNNER_TEMP; `${{ }}` expressions in `env:`, `if:` and the outputs are
evaluated from the inputs (with action.yml's defaults), the event and the steps' outputs, and a
step that fails stops the rest. A fake `gh` on PATH records every call and answers as GitHub's API
would (`--jq` through the real jq).

The install step runs once for the module: it builds the action's checkout with pip into a
virtualenv of its own, offline (PIP_NO_INDEX) but for the build back-end, as the wheel fixture
builds; the dependencies come from the test virtualenv on PYTHONPATH (without this project's own
editable install), as a runner's index would serve them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from conftest import LEFT_OUT, PROJECT, USERS_NODES, dependency_site
from support.ci_reports import sarif_errors

pytestmark = pytest.mark.packaging

ACTION = yaml.safe_load((PROJECT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
REPOSITORY = "acme/infra"
MARKER = "<!-- karpenter-gitops-preview -->"

SOUND = USERS_NODES.replace("IDENTITY", "role: KarpenterNodeRole-prod")
ARN = USERS_NODES.replace("IDENTITY", "instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile")

FAKE_GH = """\
#!{python}
\"\"\"A stand-in for the GitHub CLI's `gh api`: records each call, answers as the API would.\"\"\"
import json, os, subprocess, sys
args = sys.argv[1:]
method = args[args.index("-X") + 1] if "-X" in args else "GET"
endpoint = next(a for a in args[1:] if a.startswith("repos/"))
body = None
if "-F" in args:
    field = args[args.index("-F") + 1]
    body = open(field.split("=@", 1)[1], encoding="utf-8").read()
with open(os.environ["FAKE_GH_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({{"method": method, "endpoint": endpoint, "body": body,
                          "token": os.environ.get("GH_TOKEN")}}) + "\\n")
if method == "GET":
    answer = json.loads(os.environ.get("FAKE_GH_COMMENTS", "[]"))
else:
    answer = {{"id": 4242 if method == "POST" else int(endpoint.rsplit("/", 1)[1]), "body": body}}
text = json.dumps(answer)
if "--jq" in args:
    text = subprocess.run(["jq", "-r", args[args.index("--jq") + 1]], input=text, capture_output=True,
                          text=True, check=True).stdout
print(text)
"""


# --- the expressions of action.yml ------------------------------------------------------------


_TOKEN = re.compile(r"\s*(\|\||&&|==|!=|!|\(|\)|'[^']*'|always\(\)|[A-Za-z_][\w.-]*)")


def evaluate(expression: str, context: dict) -> object:
    """The part of GitHub's expression language action.yml uses: `||` and `&&` (which return an
    operand, as GitHub's do), `==`, `!=`, `!`, parentheses, 'strings', context paths, always()."""
    tokens, position = [], 0
    while position < len(expression.rstrip()):
        match = _TOKEN.match(expression, position)
        assert match, f"cannot read {expression[position:]!r}"
        tokens.append(match.group(1))
        position = match.end()

    def take(*wanted: str) -> str | None:
        if tokens and tokens[0] in wanted:
            return tokens.pop(0)
        return None

    def joined(operator: str, operand) -> object:
        value = operand()
        while take(operator):
            right = operand()
            value = (value or right) if operator == "||" else (value and right)
        return value

    def either() -> object:
        return joined("||", both)

    def both() -> object:
        return joined("&&", compare)

    def compare() -> object:
        value = unary()
        operator = take("==", "!=")
        if operator:
            return (str(value) == str(unary())) == (operator == "==")
        return value

    def unary() -> object:
        if take("!"):
            return not unary()
        if take("("):
            value = either()
            assert take(")")
            return value
        token = tokens.pop(0)
        if token == "always()":
            return True
        if token.startswith("'"):
            return token[1:-1]
        value: object = context
        for name in token.split("."):
            value = value.get(name, "") if isinstance(value, dict) else ""
        return "" if value is None else value

    result = either()
    assert not tokens, f"unread: {tokens}"
    return result


def substitute(text: str, context: dict) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(evaluate(m.group(1), context)), str(text))


# --- the runner -------------------------------------------------------------------------------


@dataclass
class Run:
    exit_code: int
    outputs: dict[str, str]
    steps_run: list[str]
    log: str
    summary: str
    gh_calls: list[dict] = field(default_factory=list)
    uploads: list[dict] = field(default_factory=list)  # what upload-sarif was given: its inputs and the log read


@dataclass
class Runner:
    workspace: Path
    action_path: Path
    temp: Path
    fake_bin: Path
    env: dict[str, str]
    path: list[str] = field(default_factory=list)  # what GITHUB_PATH added, newest first

    def run(
        self,
        event_name: str,
        event: dict,
        inputs: dict[str, str],
        steps: list[dict] | None = None,
        base_ref: str = "",
        gh_comments: list | None = None,
        code_scanning: bool = True,
    ) -> Run:
        """The action's steps after the install for ``event_name``; ``code_scanning`` False: upload-sarif is
        refused, as with no `security-events: write` (the real action fails with HTTP 403)."""
        defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
        github = {
            "event_name": event_name,
            "event": event,
            "base_ref": base_ref,
            "repository": REPOSITORY,
            "token": "ghs_test",
            "action_path": str(self.action_path),
            "workspace": str(self.workspace),
        }
        context: dict = {"github": github, "steps": {}}
        context["inputs"] = {name: substitute(value, context) for name, value in {**defaults, **inputs}.items()}
        summary = self.temp / "summary.md"
        summary.write_text("")
        gh_log = self.temp / "gh.log"
        gh_log.write_text("")
        event_file = self.temp / "event.json"
        event_file.write_text(json.dumps(event))
        log, ran, exit_code, uploads = [], [], 0, []
        for index, step in enumerate(STEPS[2:] if steps is None else steps):  # Python and install ran for the module
            if "if" in step and not evaluate(step["if"], context):
                continue
            if step.get("uses", "").startswith("actions/setup-python@"):  # the runner's Python (fake-bin/python3) stands in
                ran.append(step["name"])
                continue
            if "uses" in step:  # upload-sarif: what it is given is kept, and it fails as GitHub refuses it
                assert step["uses"].startswith("github/codeql-action/upload-sarif@"), step
                given = {name: substitute(value, context) for name, value in step["with"].items()}
                uploads.append({**given, "log": json.loads(Path(given["sarif_file"]).read_text())})
                ran.append(step["name"])
                context["steps"][step["id"]] = {"outputs": {}, "outcome": "success" if code_scanning else "failure"}
                if not code_scanning:
                    log.append("Error: Resource not accessible by integration (HTTP 403)\n")
                    if substitute(step.get("continue-on-error", "false"), context).lower() != "true":
                        exit_code = 1
                        break
                continue
            output_file = self.temp / f"output-{index}"
            path_file = self.temp / f"path-{index}"
            output_file.write_text("")
            path_file.write_text("")
            env = {
                **self.env,
                **{name: substitute(value, context) for name, value in step.get("env", {}).items()},
                "PATH": os.pathsep.join([*self.path, str(self.fake_bin), self.env["PATH"]]),
                "GITHUB_OUTPUT": str(output_file),
                "GITHUB_PATH": str(path_file),
                "GITHUB_STEP_SUMMARY": str(summary),
                "GITHUB_WORKSPACE": str(self.workspace),
                "GITHUB_ACTION_PATH": str(self.action_path),
                "GITHUB_REPOSITORY": REPOSITORY,
                "GITHUB_EVENT_NAME": event_name,
                "GITHUB_EVENT_PATH": str(event_file),
                "GITHUB_BASE_REF": base_ref,
                "RUNNER_TEMP": str(self.temp),
                "FAKE_GH_LOG": str(gh_log),
                "FAKE_GH_COMMENTS": json.dumps(gh_comments or []),
                "CI": "true",
                "GITHUB_ACTIONS": "true",
            }
            assert step["shell"] == "bash"
            script = self.temp / f"step-{index}.sh"
            script.write_text(substitute(step["run"], context))
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=self.workspace,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            ran.append(step["name"])
            log.append(done.stdout + done.stderr)
            outputs = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
            if "id" in step:
                context["steps"][step["id"]] = {"outputs": outputs, "outcome": "failure" if done.returncode else "success"}
            self.path = [line for line in reversed(path_file.read_text().splitlines())] + self.path
            if done.returncode != 0:
                exit_code = done.returncode
                break
        action_outputs = {name: substitute(spec["value"], context) for name, spec in ACTION["outputs"].items()}
        calls = [json.loads(line) for line in gh_log.read_text().splitlines()]
        return Run(exit_code, action_outputs, ran, "".join(log), summary.read_text(), calls, uploads)


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> Runner:
    root = tmp_path_factory.mktemp("action")
    action_path = root / "karpenter-gitops-action"
    shutil.copytree(PROJECT, action_path, ignore=shutil.ignore_patterns(*LEFT_OUT))
    fake_bin = root / "fake-bin"
    fake_bin.mkdir()
    (fake_bin / "gh").write_text(FAKE_GH.format(python=sys.executable))
    (fake_bin / "gh").chmod(0o755)
    (fake_bin / "python3").symlink_to(sys._base_executable)  # the runner's Python, not the test virtualenv's
    temp = root / "runner-temp"
    temp.mkdir()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(root),
        "LANG": "C.UTF-8",
        "NO_COLOR": "1",
        "PYTHONPATH": str(dependency_site(root / "dependencies")),
        "PIP_NO_INDEX": "1",
        "GIT_CONFIG_GLOBAL": str(root / "gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "KARPENTER_GITOPS_AWS_DEADLINE": os.environ["KARPENTER_GITOPS_AWS_DEADLINE"],
    }
    (root / "gitconfig").write_text("[user]\n\tname = ci\n\temail = ci@example.com\n[init]\n\tdefaultBranch = main\n")
    env_for_build = {
        k: v for k, v in env.items() if k != "PIP_NO_INDEX"
    }  # setuptools, the build back-end, comes from the index as for `make dist`
    runner = Runner(root / "none", action_path, temp, fake_bin, env_for_build)
    root.joinpath("none").mkdir()
    installed = runner.run("pull_request", {}, {}, steps=STEPS[:2])
    assert installed.exit_code == 0, installed.log[-3000:]
    imported = subprocess.run(
        [Path(runner.path[0]) / "python", "-c", "import karpenter_gitops; print(karpenter_gitops.__file__)"],
        env=env,
        cwd=temp,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert imported.startswith(str(temp / "karpenter-gitops" / "lib")), imported  # the installed copy, not this checkout
    runner.env = env
    return runner


def _git(cwd: Path, *args: str, env: dict) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def repository(runner, tmp_path) -> Path:
    """A user's repository: `origin` holds main with a sound class; the pull request's branch is
    checked out in the workspace, shallow, as actions/checkout leaves it."""
    env = {**runner.env}
    seed = tmp_path / "seed"
    (seed / "karpenter").mkdir(parents=True)
    (seed / "karpenter" / "nodes.yaml").write_text(SOUND)
    (seed / "README.md").write_text("infra\n")
    _git(seed, "init", "-q", env=env)
    _git(seed, "add", ".", env=env)
    _git(seed, "commit", "-qm", "nodes", env=env)
    _git(tmp_path, "clone", "-q", "--bare", str(seed), "origin.git", env=env)
    workspace = tmp_path / "workspace"
    _git(tmp_path, "clone", "-q", "--depth=1", f"file://{tmp_path / 'origin.git'}", str(workspace), env=env)
    _git(workspace, "update-ref", "-d", "refs/remotes/origin/main", env=env)  # as a PR checkout: the base is not fetched
    _git(workspace, "checkout", "-qb", "change", env=env)
    runner.workspace = workspace
    return workspace


def _pull_request(head_repo: str = REPOSITORY) -> dict:
    return {"pull_request": {"number": 7, "head": {"repo": {"full_name": head_repo}}}}


def _change(workspace: Path, text: str, env: dict) -> None:
    (workspace / "karpenter" / "nodes.yaml").write_text(text)
    _git(workspace, "commit", "-qam", "change the class", env=env)


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
        {"method": "GET", "endpoint": f"repos/{REPOSITORY}/issues/7/comments", "body": None, "token": "ghs_test"},
        {"method": "POST", "endpoint": f"repos/{REPOSITORY}/issues/7/comments", "body": comment, "token": "ghs_test"},
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


def test_a_workflow_run_job_posts_the_comment_a_forks_run_made(runner, tmp_path):
    """The fork-safe pair: the pull_request run uploads comment-dir, a workflow_run job downloads it
    and posts it with a write token, installing and running nothing of the pull request's."""
    runner.workspace = tmp_path
    made = tmp_path / "preview"
    made.mkdir()
    (made / "comment.md").write_text(f"{MARKER}\n### Karpenter preview: :x: 1 blocking problem(s)\n")
    (made / "pull-request").write_text("7\n")
    event = {"workflow_run": {"head_repository": {"full_name": "someone/infra"}}}
    run = runner.run("workflow_run", event, {"comment-from": "preview"}, steps=STEPS)

    assert run.exit_code == 0, run.log
    assert run.steps_run == [
        "Post or update the pull request comment",
        "Fail on findings (validate) or blocking problems (preview)",
    ]
    assert [(c["method"], c["endpoint"], c["body"]) for c in run.gh_calls][1] == (
        "POST",
        f"repos/{REPOSITORY}/issues/7/comments",
        (made / "comment.md").read_text(),
    )


@pytest.mark.parametrize(
    ("comment", "number", "refusal"),
    [
        (f"{MARKER}\nhi\n", "7/../../pulls", "holds no pull request number"),
        (
            "LGTM\n(a maintainer's comment starts so: a fork's artifact must not pick what is edited)\n",
            "7",
            "is no karpenter-gitops preview",
        ),
    ],
)
def test_an_artifact_that_is_no_preview_is_refused(runner, tmp_path, comment, number, refusal):
    runner.workspace = tmp_path
    made = tmp_path / "preview"
    made.mkdir()
    (made / "comment.md").write_text(comment)
    (made / "pull-request").write_text(number + "\n")
    run = runner.run("workflow_run", {}, {"comment-from": "preview"}, steps=STEPS, gh_comments=[{"id": 11, "body": "LGTM"}])

    assert run.exit_code == 2
    assert refusal in run.log and run.gh_calls == []


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
