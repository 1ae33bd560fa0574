"""GitHub Actions as a hosted runner runs them: the action at the repository root (action.yml) and the
example workflows under examples/github-actions/, step by step, for tests/test_action.py and
tests/test_example_workflows.py.

Each `run:` step runs with the shell the runner picks (`bash -e` when none is named,
`bash --noprofile --norc -eo pipefail` for `shell: bash`) in the user's repository (the workspace),
with the runner's environment: GITHUB_OUTPUT (a new file per step, read back into
`steps.<id>.outputs`), GITHUB_PATH (prepended to PATH for the steps after), GITHUB_STEP_SUMMARY,
GITHUB_EVENT_PATH, GITHUB_WORKSPACE, GITHUB_ACTION_PATH (a copy of this project: the action's own
checkout) and RUNNER_TEMP. `${{ }}` expressions in `env:`, `with:`, `if:`, `run:` and the outputs are
evaluated from the inputs, the event, the secrets and variables and the steps' outputs; a step's `if:`
without a status function runs only while no step has failed, as GitHub's does.

Actions a workflow uses are stood in for: checkout (the test prepares the workspace), setup-python
and configure-aws-credentials (the runner's Python and no AWS), upload- and download-artifact (a
directory per artifact name), pulumi/actions (a stand-in `pulumi` on PATH), and this project's own
action, whose steps run as above. A stand-in `gh` records every call and answers as GitHub's API
would (`--jq` through the real jq); a stand-in `pip` records installs (the tool is installed once per
module, from the action's checkout).
"""

from __future__ import annotations

import hashlib
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
from conftest import LEFT_OUT, PROJECT, dependency_site

ACTION = yaml.safe_load((PROJECT / "action.yml").read_text(encoding="utf-8"))
ACTION_STEPS = ACTION["runs"]["steps"]
OWN_ACTION = "YOUR-ORG/karpenter-gitops"
REPOSITORY = "acme/infra"

FAKE_GH = """\
#!{python}
\"\"\"A stand-in for the GitHub CLI's `gh api`: records each call, answers as the API would.\"\"\"
import json, os, subprocess, sys
args = sys.argv[1:]
method = args[args.index("-X") + 1] if "-X" in args else "GET"
endpoint = next(a for a in args[1:] if a.startswith("repos/"))
fields = dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "-f")
body = None
if "-F" in args:
    field = args[args.index("-F") + 1]
    body = open(field.split("=@", 1)[1], encoding="utf-8").read()
with open(os.environ["FAKE_GH_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({{"method": method, "endpoint": endpoint, "body": body, "fields": fields,
                          "token": os.environ.get("GH_TOKEN")}}) + "\\n")
if method == "GET" and endpoint.endswith("/pulls"):
    answer = [p for p in json.loads(os.environ.get("FAKE_GH_PULLS", "[]"))
              if "head" not in fields or p["head"]["label"] == fields["head"]]
elif method == "GET":
    answer = json.loads(os.environ.get("FAKE_GH_COMMENTS", "[]"))
else:
    answer = {{"id": 4242 if method == "POST" else int(endpoint.rsplit("/", 1)[1]), "body": body}}
text = json.dumps(answer)
if "--jq" in args:
    text = subprocess.run(["jq", "-r", args[args.index("--jq") + 1]], input=text, capture_output=True,
                          text=True, check=True).stdout
print(text)
"""

# `pulumi` as the CLI behaves for these workflows: a project whose Pulumi.yaml names a virtualenv runs
# only once `pulumi install` made it, and a policy pack must be a directory.
FAKE_PULUMI = """\
#!{python}
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
with open(os.environ["FAKE_PULUMI_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(args) + "\\n")
project = Path("Pulumi.yaml").read_text() if Path("Pulumi.yaml").exists() else ""
if args[:1] == ["install"]:
    Path(".venv/bin").mkdir(parents=True, exist_ok=True)
    sys.exit(0)
if "virtualenv: .venv" in project and not Path(".venv/bin").is_dir():
    sys.exit('error: The \\'virtualenv\\' option in Pulumi.yaml is set to ".venv", but ".venv" does not exist; run `pulumi install`')
if "--policy-pack" in args and not Path(args[args.index("--policy-pack") + 1]).is_dir():
    sys.exit("error: the policy pack is no directory")
print("Previewing update (prod)")
sys.exit(int(os.environ.get("FAKE_PULUMI_EXIT", "0")))
"""

FAKE_PIP = """\
#!/bin/sh
echo "$*" >> "$FAKE_PIP_LOG"
"""


# --- the expressions --------------------------------------------------------------------------


_TOKEN = re.compile(r"\s*(\|\||&&|==|!=|!|\(|\)|,|'[^']*'|[A-Za-z_][\w.-]*)")
_STATUS = re.compile(r"\b(always|success|failure|cancelled)\(\)")


def evaluate(expression: str, context: dict) -> object:
    """The part of GitHub's expression language the action and the workflows use: `||` and `&&` (which
    return an operand, as GitHub's do), `==`, `!=`, `!`, parentheses, 'strings', context paths, the status
    functions and hashFiles()."""
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

    def call(name: str) -> object:
        arguments = []
        while not take(")"):
            arguments.append(either())
            take(",")
        functions = {
            "always": lambda: True,
            "success": lambda: not context.get("failed"),
            "failure": lambda: bool(context.get("failed")),
            "cancelled": lambda: False,
            "hashFiles": lambda *patterns: hash_files(Path(context["github"]["workspace"]), patterns),
        }
        return functions[name](*arguments)

    def unary() -> object:
        if take("!"):
            return not unary()
        if take("("):
            value = either()
            assert take(")")
            return value
        token = tokens.pop(0)
        if take("("):
            return call(token)
        if token.startswith("'"):
            return token[1:-1]
        value: object = context
        for name in token.split("."):
            value = value.get(name, "") if isinstance(value, dict) else ""
        return "" if value is None else value

    result = either()
    assert not tokens, f"unread: {tokens}"
    return result


def hash_files(workspace: Path, patterns) -> str:
    found = sorted(path for pattern in patterns for path in workspace.glob(pattern) if path.is_file())
    return hashlib.sha256(b"".join(path.read_bytes() for path in found)).hexdigest() if found else ""


def substitute(text: object, context: dict) -> str:
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: as_string(evaluate(m.group(1), context)), str(text))


def as_string(value: object) -> str:
    """A value as GitHub writes it into text: booleans as `true` and `false`."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def runs_now(step: dict, context: dict) -> bool:
    """A step's `if:`, with GitHub's implicit success() where it names no status function."""
    condition = str(step.get("if", "success()")).strip()
    condition = condition[3:-2] if condition.startswith("${{") else condition
    if not _STATUS.search(condition):
        condition = f"success() && ({condition})"
    return bool(evaluate(condition, context))


# --- the runner -------------------------------------------------------------------------------


@dataclass
class Run:
    exit_code: int
    outputs: dict[str, str]
    steps_run: list[str]
    log: str
    summary: str
    gh_calls: list[dict] = field(default_factory=list)
    pulumi_calls: list[list[str]] = field(default_factory=list)
    pip_calls: list[str] = field(default_factory=list)
    uploads: list[dict] = field(default_factory=list)  # what upload-sarif was given: its inputs and the log read


@dataclass
class Runner:
    """One runner: its temporary directory and tools, and the workspace of the job it runs next."""

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
        gh_pulls: list | None = None,
        code_scanning: bool = True,
    ) -> Run:
        """The action's steps (but its Python and install, which ran for the module) for ``event``;
        ``code_scanning`` False: upload-sarif is refused, as without `security-events: write` (HTTP 403)."""
        job = _Job(self, event_name, event, base_ref, gh_comments, gh_pulls, secrets={}, variables={})
        job.code_scanning = code_scanning
        outputs = job.composite(ACTION_STEPS[2:] if steps is None else steps, inputs)
        return job.finish(outputs)

    def run_workflow(
        self,
        workflow: Path,
        event_name: str,
        event: dict,
        base_ref: str = "",
        gh_comments: list | None = None,
        gh_pulls: list | None = None,
        secrets: dict[str, str] | None = None,
        variables: dict[str, str] | None = None,
    ) -> Run:
        """The one job of an example workflow, its steps in order."""
        document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
        (spec,) = document["jobs"].values()  # the examples have one job each
        job = _Job(self, event_name, event, base_ref, gh_comments, gh_pulls, secrets or {}, variables or {})
        for scope in (document, spec):
            job.context["env"] |= {name: substitute(value, job.context) for name, value in scope.get("env", {}).items()}
        if "if" in spec and not evaluate(str(spec["if"]), job.context):
            return job.finish({})
        job.workflow(spec["steps"])
        return job.finish({})

    @property
    def artifacts(self) -> Path:
        return self.temp / "artifacts"


class _Job:
    def __init__(self, runner: Runner, event_name, event, base_ref, gh_comments, gh_pulls, secrets, variables) -> None:
        self.runner = runner
        self.temp = runner.temp
        github = {
            "event_name": event_name,
            "event": event,
            "base_ref": base_ref,
            "repository": REPOSITORY,
            "token": "ghs_test",
            "sha": "0" * 40,
            "action_path": str(runner.action_path),
            "workspace": str(runner.workspace),
        }
        self.context: dict = {"github": github, "steps": {}, "secrets": secrets, "vars": variables, "env": {}, "failed": False}
        self.summary = self.temp / "summary.md"
        self.summary.write_text("")
        self.logs = {name: self.temp / f"{name}.log" for name in ("gh", "pulumi", "pip")}
        for log in self.logs.values():
            log.write_text("")
        self.event_file = self.temp / "event.json"
        self.event_file.write_text(json.dumps(event))
        self.gh_comments, self.gh_pulls = gh_comments or [], gh_pulls or []
        self.log: list[str] = []
        self.ran: list[str] = []
        self.exit_code = 0
        self.extra_path: list[str] = []  # a workflow's stand-ins (pip, pulumi) before the runner's PATH
        self.code_scanning = True
        self.uploads: list[dict] = []
        self.counter = 0

    def composite(self, steps: list[dict], inputs: dict[str, str]) -> dict[str, str]:
        """The action's steps with ``inputs`` (action.yml's defaults for the rest); its outputs."""
        outer = self.context
        defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
        assert set(inputs) <= set(defaults), f"no such inputs of action.yml: {set(inputs) - set(defaults)}"
        inner = {**outer, "steps": {}}
        inner["inputs"] = {name: substitute(value, inner) for name, value in {**defaults, **inputs}.items()}
        self.context = inner
        try:
            for step in steps:
                if not runs_now(step, inner):
                    continue
                if step.get("uses", "").startswith("actions/setup-python@"):  # the runner's Python stands in for it
                    self.ran.append(step["name"])
                elif "uses" in step:
                    self._upload_sarif(step)
                else:
                    self._shell(step)
            return {name: substitute(spec["value"], inner) for name, spec in ACTION["outputs"].items()}
        finally:
            outer["failed"] = inner["failed"]
            self.context = outer

    def workflow(self, steps: list[dict]) -> None:
        self.extra_path.insert(0, str(self.runner.fake_bin / "workflow"))  # its `pip install` lines
        for step in steps:
            if not runs_now(step, self.context):
                continue
            if "uses" in step:
                self._action(step)
            else:
                self._shell(step)

    def _action(self, step: dict) -> None:
        name, _, _ = step["uses"].partition("@")
        given = {key: substitute(value, self.context) for key, value in step.get("with", {}).items()}
        self.ran.append(step.get("name", step["uses"]))
        outcome = 0
        if name == OWN_ACTION:
            outputs = self.composite(ACTION_STEPS[2:], given)
            if "id" in step:
                self.context["steps"][step["id"]] = {"outputs": outputs}
            return
        if name == "actions/upload-artifact":
            outcome = self._upload(given)
        elif name == "actions/download-artifact":
            stored = self.runner.artifacts / given["name"]
            if stored.is_dir():
                shutil.copytree(stored, self.runner.workspace / given.get("path", "."), dirs_exist_ok=True)
            else:
                self.log.append(f"Unable to download artifact(s): Artifact not found for name: {given['name']}\n")
                outcome = 1
        elif name == "pulumi/actions":
            assert "command" not in given, "the examples install the CLI only"
            self.extra_path.insert(0, str(self.runner.fake_bin / "pulumi-cli"))
        else:
            assert name in ("actions/checkout", "actions/setup-python", "aws-actions/configure-aws-credentials"), name
        self._ended(step, outcome)

    def _upload_sarif(self, step: dict) -> None:
        """github/codeql-action/upload-sarif: what it is given is kept, and it fails as code scanning refuses it."""
        assert step["uses"].startswith("github/codeql-action/upload-sarif@"), step
        given = {name: substitute(value, self.context) for name, value in step["with"].items()}
        self.uploads.append({**given, "log": json.loads(Path(given["sarif_file"]).read_text())})
        self.ran.append(step["name"])
        if not self.code_scanning:
            self.log.append("Error: Resource not accessible by integration (HTTP 403)\n")
        self.context["steps"][step["id"]] = {"outputs": {}, "outcome": "success" if self.code_scanning else "failure"}
        self._ended(step, 0 if self.code_scanning else 1)

    def _upload(self, given: dict) -> int:
        source = self.runner.workspace / given["path"]
        if not source.exists():
            missing = given.get("if-no-files-found", "warn")
            self.log.append(f"No files were found with the provided path: {given['path']} ({missing})\n")
            return 1 if missing == "error" else 0
        target = self.runner.artifacts / given["name"]
        shutil.rmtree(target, ignore_errors=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            target.mkdir(parents=True)
            shutil.copy(source, target)
        return 0

    def _shell(self, step: dict) -> None:
        self.counter += 1
        index = self.counter
        output_file = self.temp / f"output-{index}"
        path_file = self.temp / f"path-{index}"
        output_file.write_text("")
        path_file.write_text("")
        env = {
            **self.runner.env,
            **self.context["env"],
            **{name: substitute(value, self.context) for name, value in step.get("env", {}).items()},
            "PATH": os.pathsep.join([*self.extra_path, *self.runner.path, str(self.runner.fake_bin), self.runner.env["PATH"]]),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_PATH": str(path_file),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_WORKSPACE": str(self.runner.workspace),
            "GITHUB_ACTION_PATH": str(self.runner.action_path),
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_SHA": self.context["github"]["sha"],
            "GITHUB_EVENT_NAME": self.context["github"]["event_name"],
            "GITHUB_EVENT_PATH": str(self.event_file),
            "GITHUB_BASE_REF": self.context["github"]["base_ref"],
            "RUNNER_TEMP": str(self.temp),
            "FAKE_GH_LOG": str(self.logs["gh"]),
            "FAKE_GH_COMMENTS": json.dumps(self.gh_comments),
            "FAKE_GH_PULLS": json.dumps(self.gh_pulls),
            "FAKE_PULUMI_LOG": str(self.logs["pulumi"]),
            "FAKE_PIP_LOG": str(self.logs["pip"]),
            "CI": "true",
            "GITHUB_ACTIONS": "true",
        }
        shell = ["bash", "--noprofile", "--norc", "-eo", "pipefail"] if step.get("shell") == "bash" else ["bash", "-e"]
        assert step.get("shell", "bash") == "bash", step
        script = self.temp / f"step-{index}.sh"
        script.write_text(substitute(step["run"], self.context))
        done = subprocess.run(
            [*shell, str(script)],
            cwd=self.runner.workspace / step.get("working-directory", "."),
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        self.ran.append(step.get("name", step["run"].splitlines()[0]))
        self.log.append(done.stdout + done.stderr)
        outputs = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
        if "id" in step:
            self.context["steps"][step["id"]] = {"outputs": outputs, "outcome": "failure" if done.returncode else "success"}
        self.runner.path = list(reversed(path_file.read_text().splitlines())) + self.runner.path
        self._ended(step, done.returncode)

    def _ended(self, step: dict, code: int) -> None:
        if code and substitute(step.get("continue-on-error", False), self.context).lower() != "true":
            self.context["failed"] = True
            self.exit_code = self.exit_code or code

    def finish(self, outputs: dict[str, str]) -> Run:
        read = {name: log.read_text().splitlines() for name, log in self.logs.items()}
        return Run(
            self.exit_code,
            outputs,
            self.ran,
            "".join(self.log),
            self.summary.read_text(),
            [json.loads(line) for line in read["gh"]],
            [json.loads(line) for line in read["pulumi"]],
            read["pip"],
            self.uploads,
        )


def install_stand_ins(fake_bin: Path) -> None:
    """`gh` and the runner's `python3` on the runner's PATH; `pip` before it in a workflow's steps; `pulumi`
    where pulumi/actions puts it."""
    fake_bin.mkdir()
    (fake_bin / "gh").write_text(FAKE_GH.format(python=sys.executable))
    (fake_bin / "python3").symlink_to(sys._base_executable)  # the runner's Python, not the test virtualenv's
    (fake_bin / "pulumi-cli").mkdir()
    (fake_bin / "pulumi-cli" / "pulumi").write_text(FAKE_PULUMI.format(python=sys.executable))
    (fake_bin / "workflow").mkdir()
    (fake_bin / "workflow" / "pip").write_text(FAKE_PIP)
    for tool in (fake_bin / "gh", fake_bin / "pulumi-cli" / "pulumi", fake_bin / "workflow" / "pip"):
        tool.chmod(0o755)


@pytest.fixture(scope="session")
def runner(tmp_path_factory) -> Runner:
    """A runner with this project's action installed from a copy of its checkout (the action's own first
    steps, run once), offline but for the build back-end (setuptools, from the index as for `make dist`):
    the dependencies come from the test virtualenv on PYTHONPATH, as a runner's index would serve them."""
    root = tmp_path_factory.mktemp("action")
    action_path = root / "karpenter-gitops-action"
    shutil.copytree(PROJECT, action_path, ignore=shutil.ignore_patterns(*LEFT_OUT))
    fake_bin = root / "fake-bin"
    install_stand_ins(fake_bin)
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
    built = Runner(root / "none", action_path, temp, fake_bin, {k: v for k, v in env.items() if k != "PIP_NO_INDEX"})
    root.joinpath("none").mkdir()
    installed = built.run("pull_request", {}, {}, steps=ACTION_STEPS[:2])
    assert installed.exit_code == 0, installed.log[-3000:]
    imported = subprocess.run(
        [Path(built.path[0]) / "python", "-c", "import karpenter_gitops; print(karpenter_gitops.__file__)"],
        env=env,
        cwd=temp,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert imported.startswith(str(temp / "karpenter-gitops" / "lib")), imported  # the installed copy, not this checkout
    built.env = env
    return built


def git(cwd: Path, *args: str, env: dict) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def user_repository(runner: Runner, tmp_path: Path, files: dict[str, str]) -> Path:
    """A user's repository: `origin` holds main with ``files``; the pull request's branch `change` is
    checked out in the workspace, shallow, as actions/checkout leaves it; the runner works there next."""
    env = {**runner.env}
    seed = tmp_path / "seed"
    for name, text in files.items():
        (seed / name).parent.mkdir(parents=True, exist_ok=True)
        (seed / name).write_text(text)
    git(seed, "init", "-q", env=env)
    git(seed, "add", ".", env=env)
    git(seed, "commit", "-qm", "nodes", env=env)
    git(tmp_path, "clone", "-q", "--bare", str(seed), "origin.git", env=env)
    workspace = tmp_path / "workspace"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{tmp_path / 'origin.git'}", str(workspace), env=env)
    git(workspace, "update-ref", "-d", "refs/remotes/origin/main", env=env)  # as a PR checkout: the base is not fetched
    git(workspace, "checkout", "-qb", "change", env=env)
    runner.workspace = workspace
    return workspace
