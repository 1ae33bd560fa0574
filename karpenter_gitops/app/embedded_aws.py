"""``embedded-aws``: another program (``pulumi preview``, a test script) against the embedded AWS."""

from __future__ import annotations

from karpenter_gitops.adapters.aws import embedded


def run(command: list[str], fixture: str | None) -> int:
    """The command's exit code; the embedded AWS lives exactly as long as the command."""
    return embedded.run_against(command, fixture)
