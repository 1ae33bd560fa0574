"""A command's output as a user sees it, for the per-command snapshot tests (``tests/cli/test_*_command.py``).

flux-local's pattern: one test module per command, and one syrupy snapshot file beside it
(``tests/cli/__snapshots__/test_<command>_command.ambr``) holding every output format the command
has. Each command runs in-process through the console entry point on the project's own examples
and stacks; its output stays byte-identical unless a change means it to move: then review the
diff and accept it with ``pytest tests/cli --snapshot-update``.
"""

from __future__ import annotations

import re
from pathlib import Path

from support.cli import run_cli


def transcript(capture, *argv: str) -> str:
    """The command line, its exit code, and what it wrote to stdout and stderr, as a snapshot holds them."""
    code, out, err = run_cli(capture, *argv)
    return f"$ karpenter-gitops {' '.join(argv)}\n(exit {code})\n--- stdout\n{out}--- stderr\n{err}"


def masked(text: str, **paths: Path | str) -> str:
    """``text`` without what differs between runs: the given paths (by their names, in order), the
    embedded AWS's port, and AWS call counts (embedded-AWS runs share the session's catalogue cache,
    so the counts depend on what it held)."""
    for name, path in paths.items():
        text = text.replace(str(path), name)
    text = re.sub(r'("awsCalls": )\{[^}]*\}', r"\1{...}", text, flags=re.S)
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)
