"""What a run came to, as the exit code every front end shares: CI, Argo CD plugins and scripts act on
it without parsing output (docs/concepts/exit-codes.md). Each result that decides one (a report, a
plan, a preview, a verification, a fleet) says it as an :class:`Outcome`; the CLI hands it to the
process, the Pulumi components turn it into the engine's failures."""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum


class Outcome(IntEnum):
    """The exit codes; each member's value is the process's exit status."""

    OK = 0  # no error finding; for plan and preview every EC2NodeClass predicted Ready; for verify, as predicted
    FINDINGS = 1  # an error finding or a persistent problem (a class that will not be Ready, a cluster that differs)
    UNUSABLE_INPUT = 2  # a usage error, or input that cannot be read or used: nothing was judged
    TRANSIENT = 3  # AWS or the cluster did not answer in time: nothing was decided, retry

    @classmethod
    def worst(cls, outcomes: Iterable[Outcome]) -> Outcome:
        """The outcome of runs taken together (a fleet's stacks): the highest code, so a run left undecided
        outranks one with findings, which outranks a clean one; OK when there is none."""
        return cls(max(outcomes, default=cls.OK))
