"""``karpenter-gitops merge``: the JSON outputs of a fleet run's shards, printed as the report of one run."""

from __future__ import annotations

import json
from pathlib import Path

import click

from karpenter_gitops.app.merge import merged, read_shard
from karpenter_gitops.core.outcome import Outcome


@click.command("merge")
@click.argument("shards", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
def merge_command(shards: tuple[Path, ...]) -> Outcome:
    """Merge the JSON outputs of a fleet run split over CI jobs into the report (and exit code) of one run.

    Each SHARD is what ``validate --all-stacks --shard I/N --format json`` (or ``plan``'s, or either with
    several ``--stack NAME``) printed for some of the fleet's stacks; every stack in one shard only. The merged report lists the stacks by
    name, as ``--all-stacks`` does, with the fleet's totals; a plan's AWS calls are the shards' sum."""
    result = merged([read_shard(shard) for shard in shards])
    click.echo(json.dumps(result.document, indent=2))
    return result.exit_code
