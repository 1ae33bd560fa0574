"""The console script's entry point: the CLI run so that a user's mistake is one line and an exit code
(0 clean, 1 findings, 2 unusable input, 3 AWS or cluster trouble), never a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

from karpenter_gitops.cli.group import EXIT_OK, EXIT_TRANSIENT, EXIT_USAGE, cli
from karpenter_gitops.core.errors import InputError, Unreachable
from karpenter_gitops.output.escape import visible


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; user errors become one line on stderr and exit 2, an unreachable AWS or cluster one
    line and exit 3, never a traceback. The line quotes outside text (file names, AWS's words) visibly."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="karpenter-gitops", standalone_mode=False)
    except InputError as err:
        click.echo(f"karpenter-gitops: error: {visible(err)}", err=True)
        return EXIT_USAGE
    except Unreachable as err:
        click.echo(f"karpenter-gitops: {visible(err)}", err=True)
        return EXIT_TRANSIENT
    except click.exceptions.Abort:
        click.echo("karpenter-gitops: aborted", err=True)
        return EXIT_USAGE
    except click.ClickException as err:
        err.show()
        return EXIT_USAGE
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return EXIT_OK
