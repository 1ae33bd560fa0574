"""Fleet runs: several stacks in one command, each judged as its own cluster, one report.

Each stack keeps its own release, policy block and waivers (it is run exactly as ``--stack NAME``
alone would run it); the fleet adds the grouping, a summary line and the exit code, which is the
worst of the stacks' (transient AWS trouble, 3, outranks findings, 1). AWS look-ups are shared
between stacks through the session's memo and the on-disk catalogue cache, so identical queries
are asked once per run.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.load.stacks import stack_names

if TYPE_CHECKING:
    from karpenter_gitops.adapters.aws.target import Target

Result = TypeVar("Result")


@dataclass(frozen=True)
class FleetRun(Generic[Result]):
    """Each stack's result, in the order given, and the fleet's exit code."""

    results: dict[str, Result]
    exit_codes: dict[str, Outcome]

    @property
    def exit_code(self) -> Outcome:
        return Outcome.worst(self.exit_codes.values())


def chosen_stacks(stacks: Sequence[str], all_stacks: bool) -> list[str]:
    """The stacks a fleet run covers: those named, or every stack of the project."""
    return stack_names() if all_stacks else list(dict.fromkeys(stacks))


def run_fleet(stacks: Sequence[str], run: Callable[[str], tuple[Result, Outcome]], progress=None) -> FleetRun[Result]:
    """``run(stack)`` for each stack, its result and exit code kept; ``progress(stack)`` before each."""
    results, codes = {}, {}
    for stack in stacks:
        if progress is not None:
            progress(stack)
        results[stack], codes[stack] = run(stack)
    return FleetRun(results, codes)


@dataclass
class SharedTargets:
    """The AWS a run reads, opened once per region and shared by every stack of that region (the
    embedded world has one region, so one target): its session's memo answers a query two stacks
    make. Close it with the run (``with SharedTargets(...) as targets``)."""

    embedded: bool
    fixture: str | None = None
    _open: dict[str | None, Target] = field(default_factory=dict)  # by the stack's aws: settings
    _scope: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    def __enter__(self) -> SharedTargets:
        return self

    def __exit__(self, *exc) -> None:
        self._scope.close()

    def for_stack(self, aws_config: Mapping[str, Any]) -> Target:
        """The target for a stack's ``aws:`` settings: stacks that share them share one session."""
        from karpenter_gitops.adapters.aws.target import aws_target  # botocore only when AWS is read

        key = None if self.embedded else json.dumps(aws_config, sort_keys=True, default=str)
        if key not in self._open:
            self._open[key] = self._scope.enter_context(aws_target(self.embedded, self.fixture, aws_config))
        return self._open[key]

    def call_counts(self) -> dict[str, int]:
        """AWS calls of the run so far, per operation, over every region."""
        calls: dict[str, int] = {}
        for target in self._open.values():
            for operation, count in target.session.call_counts().items():
                calls[operation] = calls.get(operation, 0) + count
        return dict(sorted(calls.items()))
