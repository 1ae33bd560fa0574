"""The ``merge`` use case: a fleet run split over CI jobs (shards by stack), put back together.

A fleet that outgrows one runner is run as shards, each job judging some of the stacks with
``validate --all-stacks --shard I/N --format json`` or ``plan``'s (or several ``--stack NAME``). Each stack is judged on its
own in either case, so the shards' JSON holds everything one run would print: :func:`merged` gives the
document one run over every stack prints (stacks in the order ``--all-stacks`` takes them, by name, the
fleet's totals) and its exit code. A plan's AWS call counts (each stack's and the fleet's, the shards' sum)
are the exception: shards share no memo, so one run would have asked less.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.outcome import Outcome

_TOTALS = ("errors", "warnings", "objects")  # a validate fleet's summary, besides its stack count
_EXIT_CODES = {int(outcome) for outcome in Outcome}


@dataclass(frozen=True)
class Merged:
    """The one run's document, and the exit code that run gives."""

    document: dict[str, Any]
    exit_code: Outcome


@dataclass(frozen=True)
class Shard:
    """One shard's JSON output: which command wrote it, and its stacks' reports or plans by name."""

    name: str  # the file, as errors name it
    command: str  # "validate" or "plan"
    stacks: dict[str, Any]
    summary: dict[str, Any]


def read_shard(path: Path) -> Shard:
    """A shard's JSON output, read and recognised; an InputError naming the file when it is none."""
    name = str(path)
    hint = "give the output of `validate --format json` or `plan --format json` over several stacks"
    try:
        document = json.loads(path.read_bytes())
    except OSError as err:
        raise InputError(f"cannot read it: {err.strerror or err}", name) from None
    except ValueError as err:
        raise InputError(f"is not JSON ({err})", name, hint=hint) from None
    stacks = document.get("stacks") if isinstance(document, dict) else None
    summary = document.get("summary") if isinstance(document, dict) else None
    if not isinstance(stacks, dict) or not isinstance(summary, dict) or not all(isinstance(s, dict) for s in stacks.values()):
        raise InputError("is no fleet run's JSON output (no stacks and summary)", name, hint=hint)
    codes, calls = summary.get("exitCodes"), summary.get("awsCalls")
    if isinstance(codes, dict) and isinstance(calls, dict):
        if not all(code in _EXIT_CODES for code in codes.values()) or not all(isinstance(n, int) for n in calls.values()):
            raise InputError("has exit codes or AWS call counts that no plan prints", name, hint=hint)
        command = "plan"
    elif all(isinstance(summary.get(key), int) for key in _TOTALS):
        command = "validate"
    else:
        raise InputError("has a summary of neither validate's nor plan's fleet output", name, hint=hint)
    return Shard(name, command, stacks, summary)


def merged(shards: Sequence[Shard]) -> Merged:
    """The document and exit code of one run over every shard's stacks; an InputError when the shards come
    from different commands or judge a stack twice."""
    if not shards:
        raise InputError("no shard to merge", hint="give each shard's JSON output")
    commands = {shard.command for shard in shards}
    if len(commands) > 1:
        raise InputError(f"shards of {' and '.join(sorted(commands))} cannot be merged into one report", shards[0].name)
    owner: dict[str, str] = {}
    for shard in shards:
        for stack in shard.stacks:
            if stack in owner:
                raise InputError(f"stack {stack!r} is in two shards (also in {owner[stack]})", shard.name, hint="shard by stack")
            owner[stack] = shard.name
    stacks = dict(sorted((stack, report) for shard in shards for stack, report in shard.stacks.items()))
    if commands == {"plan"}:
        codes = dict(sorted((stack, code) for shard in shards for stack, code in shard.summary["exitCodes"].items()))
        calls: dict[str, int] = {}
        for shard in shards:
            for operation, count in shard.summary["awsCalls"].items():
                calls[operation] = calls.get(operation, 0) + count
        summary = {"stacks": len(stacks), "exitCodes": codes, "awsCalls": dict(sorted(calls.items()))}
        return Merged({"stacks": stacks, "summary": summary}, Outcome.worst(Outcome(code) for code in codes.values()))
    totals = {key: sum(shard.summary[key] for shard in shards) for key in _TOTALS}
    exit_code = Outcome.FINDINGS if totals["errors"] else Outcome.OK
    return Merged({"stacks": stacks, "summary": {"stacks": len(stacks), **totals}}, exit_code)
