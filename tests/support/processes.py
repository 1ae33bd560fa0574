"""Processes as Linux's /proc shows them, for the tests that start process trees (psutil is no dependency).

A test that kills a program which starts programs of its own (the Pulumi CLI starts its language host and
plugins, each in a process group of its own) must end the whole tree: the orphans would otherwise be
re-parented and run on after the test. A tree started in a session of its own (``start_new_session``)
keeps that session whatever process groups its members make, so :func:`kill_session` reaches them all.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Process:
    pid: int
    parent: int
    group: int
    session: int
    state: str
    command: str

    @property
    def alive(self) -> bool:
        """Running or sleeping: a zombie has exited and only waits for its parent to read its status."""
        return self.state not in ("Z", "X")

    def __str__(self) -> str:
        return f"{self.pid} {self.command}"


def _read(pid: int) -> Process | None:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
        argv = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:  # exited since /proc was listed
        return None
    # The name field is in parentheses and may itself hold spaces and parentheses: the fields after it follow the last ")".
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    state, parent, group, session = stat[stat.rindex(")") + 2 :].split()[:4]
    command = " ".join(argv.decode(errors="replace").split("\0")).strip() or f"[{name}]"
    return Process(pid, int(parent), int(group), int(session), state, command)


def processes() -> list[Process]:
    """Every process this one can see."""
    found = (_read(int(entry.name)) for entry in PROC.iterdir() if entry.name.isdigit())
    return [process for process in found if process is not None]


def live_children(pid: int | None = None) -> list[Process]:
    """The live direct children of ``pid`` (this process by default)."""
    parent = os.getpid() if pid is None else pid
    return [process for process in processes() if process.parent == parent and process.alive]


def session_members(session: int) -> list[Process]:
    """The live processes of a session (its id is the pid of the process that started it)."""
    return [process for process in processes() if process.session == session and process.alive]


def kill_session(session: int, within: float = 10) -> None:
    """SIGKILL every process of ``session`` until none is left (a member may start another meanwhile)."""
    deadline = time.monotonic() + within
    while members := session_members(session):
        if time.monotonic() > deadline:
            raise TimeoutError(f"session {session} still has: {', '.join(map(str, members))}")
        for member in members:
            try:
                os.kill(member.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
