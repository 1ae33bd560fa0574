"""Every `karpenter-gitops` command the GitHub Actions examples and deploy/ run is one our CLI accepts,
and every input they give the action is one action.yml declares: an option renamed in the code fails
here, not in a user's pipeline."""

from __future__ import annotations

import re
import shlex

import click
import pytest
import yaml
from conftest import PROJECT

from karpenter_gitops.cli import cli

WORKFLOWS = sorted((PROJECT / "examples" / "github-actions").glob("*.yml"))
_SHELL_TAIL = re.compile(r"\s*(?:>|\||;|&&|2>).*$")  # redirections and what follows the command


def commands(script: str) -> list[list[str]]:
    joined = script.replace("\\\n", " ")
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line.startswith("karpenter-gitops "):  # a command of its own (not `pip install karpenter-gitops`)
            found.append(shlex.split(_SHELL_TAIL.sub("", line))[1:])
    return found


def test_every_workflow_command_parses():
    checked = 0
    for workflow in WORKFLOWS:
        for job in yaml.safe_load(workflow.read_text())["jobs"].values():
            for step in job["steps"]:
                for argv in commands(step.get("run", "")):
                    group = click.Context(cli, **cli.context_settings)  # as the CLI makes it: -h beside --help
                    command = cli.get_command(group, argv[0])
                    assert command is not None, f"{workflow.name}: no command {argv[0]!r}"
                    command.make_context(argv[0], argv[1:], parent=group)
                    checked += 1
    assert checked >= 5


@pytest.mark.parametrize(
    "script, expected",
    [
        (
            "karpenter-gitops verify --stack prod --wait 300 \\\n  --format comment > out/verify.md",
            [["verify", "--stack", "prod", "--wait", "300", "--format", "comment"]],
        ),
        ('pulumi up --policy-pack "$(karpenter-gitops policy-pack)"', []),
        ("pip install karpenter-gitops -r requirements.txt", []),
    ],
)
def test_commands_are_found_in_shell_steps(script, expected):
    assert commands(script) == expected


def test_every_use_of_the_action_gives_inputs_it_declares():
    inputs = set(yaml.safe_load((PROJECT / "action.yml").read_text())["inputs"])
    uses = [
        (workflow.name, step.get("with", {}))
        for workflow in WORKFLOWS
        for job in yaml.safe_load(workflow.read_text())["jobs"].values()
        for step in job["steps"]
        if step.get("uses", "").startswith("YOUR-ORG/karpenter-gitops@")
    ]
    assert len(uses) >= 2
    for name, given in uses:
        assert set(given) <= inputs, f"{name}: {set(given) - inputs} are no inputs of action.yml"
