"""Which Pulumi project the engine is running: where a policy pack learns its project directory.

The engine starts a policy pack in the pack's own directory and tells it the stack's name and config,
never the project's directory, which a relative waiver path and the project's default waiver file are
relative to. The process that starts the pack does run there: the language host (or, with older
engines, the CLI) works in the project directory, or below it when the CLI was started in a
subdirectory; the project is the nearest directory holding ``Pulumi.yaml`` above that one, as the CLI
finds it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from karpenter_gitops.load.files import enclosing_project


def parent_working_directory() -> Path | None:
    """The working directory of the process that started this one: from ``/proc`` on Linux, ``lsof`` elsewhere
    (macOS); None when neither can tell."""
    parent = os.getppid()
    try:
        return Path(os.readlink(f"/proc/{parent}/cwd"))
    except OSError:
        pass
    try:
        listed = subprocess.run(
            ["lsof", "-a", "-p", str(parent), "-d", "cwd", "-Fn"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    names = [line[1:] for line in listed.splitlines() if line.startswith("n")]
    return Path(names[0]) if names else None


def engine_project() -> Path | None:
    """The directory of the Pulumi project the engine that started this process runs, if it can be told."""
    started_in = parent_working_directory()
    return enclosing_project(started_in) if started_in is not None else None
