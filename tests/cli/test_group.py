"""``karpenter-gitops --help``: every command listed with its summary; a command's own help; a command it
does not have. The group imports a command only when it runs, so its table must name every command
module and hold each command's own summary."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from support.command_runs import transcript

from karpenter_gitops.cli import cli, group


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("--help",), id="group-help"),
        pytest.param(("rules", "-h"), id="command-help"),
        pytest.param(("valdate", "x.yaml"), id="unknown-command"),
    ],
)
def test_help(in_project, capsys, snapshot, argv):
    assert transcript(capsys, *argv) == snapshot


@pytest.mark.parametrize("name", sorted(group.COMMANDS))
def test_each_summary_opens_its_commands_help(name):
    command = cli.commands[name]
    first_paragraph = " ".join(inspect.cleandoc(command.help).split("\n\n")[0].split())
    assert (command.name, group.COMMANDS[name][1]) == (name, first_paragraph)


def test_every_command_module_is_in_the_table():
    modules = {f"karpenter_gitops.cli.{path.stem}" for path in Path(group.__file__).parent.glob("*_command.py")}
    assert {where.split(":")[0] for where, _ in group.COMMANDS.values()} == modules
