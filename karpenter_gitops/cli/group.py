"""The ``karpenter-gitops`` command group: each command's module imported only when that command runs.

A command's module imports its use case at the top (``plan``'s brings boto3 and the simulation), so
``validate`` of one file, a pre-commit hook's unit of work, must not import the others: the group
finds a command by name in :data:`COMMANDS` ("module:function", as click's documentation lays out
lazily loaded subcommands), and ``--help`` lists every command from its summary there, importing none.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

import click

from karpenter_gitops.output import colour

# name: ("module:function", summary). The summary is the first paragraph of the command's docstring, which
# --help shortens to fit; tests/cli/test_group.py fails when the two differ.
COMMANDS: Mapping[str, tuple[str, str]] = {
    "bump": (
        "karpenter_gitops.cli.bump_command:bump_command",
        "Move AMI pins to the newest safe images as an edit of the stack file, for review.",
    ),
    "embedded-aws": (
        "karpenter_gitops.cli.embedded_aws_command:embedded_aws_command",
        "Run COMMAND with AWS pointing at moto on 127.0.0.1, seeded from a world fixture.",
    ),
    "merge": (
        "karpenter_gitops.cli.merge_command:merge_command",
        "Merge the JSON outputs of a fleet run split over CI jobs into the report (and exit code) of one run.",
    ),
    "pack-config": (
        "karpenter_gitops.cli.pack_config_command:pack_config_command",
        "Print the pack config (JSON) that makes the policy pack judge as a policy file or a stack's policy "
        "block says (both: the stack's block wins key by key).",
    ),
    "plan": (
        "karpenter_gitops.cli.plan_command:plan_command",
        "Resolve what Karpenter will resolve from AWS and predict its status, before anything is applied.",
    ),
    "policy-pack": (
        "karpenter_gitops.cli.policy_pack_command:policy_pack_command",
        "Print the path of a policy pack directory that runs with this command's Python environment.",
    ),
    "preview": (
        "karpenter_gitops.cli.preview_command:preview_command",
        "Print a PR comment (or JSON) on what the change does compared with --base.",
    ),
    "render": (
        "karpenter_gitops.cli.render_command:render_command",
        "Write the desired manifests to DIR for Argo CD / Flux: one file per object, byte-stable, atomic.",
    ),
    "rules": (
        "karpenter_gitops.cli.rules_command:rules_command",
        "List the rule catalogue, or explain one rule (its fix and examples) with RULE_ID.",
    ),
    "validate": (
        "karpenter_gitops.cli.validate_command:validate_command",
        "Check manifests and stack config offline with Karpenter's rules and stricter ones.",
    ),
    "verify": (
        "karpenter_gitops.cli.verify_command:verify_command",
        "Compare the live cluster with Git and with plan's prediction. Read-only: get and list, nothing else.",
    ),
}


class ImportedOnUse(Mapping[str, click.Command]):
    """Commands by name, each imported from its "module:function" when asked for. As the group's
    ``commands`` it serves click's own look-up, listing and did-you-mean suggestion for a mistyped name."""

    def __init__(self, table: Mapping[str, tuple[str, str]]):
        self._table = table

    def __getitem__(self, name: str) -> click.Command:
        module, function = self._table[name][0].split(":")
        return getattr(importlib.import_module(module), function)

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


class LazyGroup(click.Group):
    """A group over :data:`COMMANDS`: a command is imported when it runs (or its own help is asked for)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, commands=ImportedOnUse(COMMANDS), **kwargs)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands with their summaries, laid out by click as it lays out loaded ones."""
        listed = [click.Command(name, help=summary) for name, (_, summary) in COMMANDS.items()]
        click.Group(commands=listed).format_commands(ctx, formatter)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="karpenter-gitops")
@click.option(
    "--color/--no-color",
    "colour_flag",
    default=None,
    help="Colour the output, or not, whatever the environment says (default: colour on a terminal, none "
    "when NO_COLOR is set; FORCE_COLOR colours a pipe).",
)
@click.pass_context
def cli(context: click.Context, colour_flag: bool | None) -> None:
    """Make Karpenter EC2NodeClass / NodePool changes safe to ship through Git."""
    context.color = colour.chosen(colour_flag)  # every subcommand's context inherits it
