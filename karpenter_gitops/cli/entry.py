"""The console script's entry point: the CLI run so that a user's mistake is one line and an exit code
(0 clean, 1 findings, 2 unusable input, 3 AWS or cluster trouble), never a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from karpenter_gitops.cli.group import cli
from karpenter_gitops.core.errors import InputError, Unreachable
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.core.text import visible


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; the exit code is the command's outcome. User errors become one line on stderr and
    exit 2, an unreachable AWS or cluster one line and exit 3, never a traceback. The line quotes
    outside text (file names, AWS's words) visibly."""
    try:
        # the command's Outcome (embedded-aws: its COMMAND's exit status); click's 0 after --help or --version
        ran = cli.main(args=list(argv) if argv is not None else None, prog_name="karpenter-gitops", standalone_mode=False)
    except InputError as err:
        click.echo(f"karpenter-gitops: error: {visible(err)}", err=True)
        return Outcome.UNUSABLE_INPUT
    except Unreachable as err:
        click.echo(f"karpenter-gitops: {visible(err)}", err=True)
        return Outcome.TRANSIENT
    except click.exceptions.Abort:
        click.echo("karpenter-gitops: aborted", err=True)
        return Outcome.UNUSABLE_INPUT
    except click.ClickException as err:
        err.show()
        return Outcome.UNUSABLE_INPUT
    return int(ran)
