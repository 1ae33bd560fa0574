"""Time one whole process and read its own peak memory, with a cap on how long it may run.

The peak is the child's ``ru_maxrss`` as ``wait4`` returns it for that child alone, so several
processes timed in one benchmark never mix their figures (``RUSAGE_CHILDREN`` keeps the largest of
all children so far). CPU time is reported beside wall time: on a shared machine a busy spell
stretches wall time, and a program with several threads (kubeconform's workers) suffers most.
Output goes to a file, not a pipe, so a talkative child never blocks.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path


def user_environment(**extra: str) -> dict[str, str]:
    """This environment as a user's shell has it: Python's bytecode cache on (a sandbox or CI may switch it off
    with PYTHONDONTWRITEBYTECODE, and every start would then compile again whatever changed since the cache was
    written), plus ``extra``."""
    kept = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**kept, **extra}


def install() -> str:
    """How the console script next to this interpreter is installed. Users run a regular install (pip compiles
    the bytecode); an editable one (``make test``'s) adds its import hook to every start, so figures to compare
    with another tool come from a regular one: ``python3 -m venv /tmp/kg && /tmp/kg/bin/pip install .``."""
    import karpenter_gitops

    editable = "site-packages" not in karpenter_gitops.__file__
    return "editable (adds its import hook to every start)" if editable else "regular"


def console_script() -> Path:
    """The ``karpenter-gitops`` console script next to this interpreter."""
    return Path(sys.executable).with_name("karpenter-gitops")


@dataclass(frozen=True)
class Run:
    argv: tuple[str, ...]
    seconds: float  # wall time
    cpu_seconds: float  # user + system time of the child and what it waited for
    rss_mib: float
    returncode: int | None  # None when the cap stopped it
    stdout: str
    stderr: str

    @property
    def capped(self) -> bool:
        return self.returncode is None


def run(
    argv: list[str], *, cap_seconds: float | None = None, cap_mib: int | None = None, env: dict[str, str] | None = None
) -> Run:
    """Run ``argv`` to its end (or stop its process group after ``cap_seconds``): wall time, peak RSS, output.

    ``cap_mib`` limits the child's address space, so a run that would take the shared machine's
    memory fails inside the child (a MemoryError) instead.
    """
    limit = None
    if cap_mib:
        size = cap_mib * 1024 * 1024
        limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (size, size))  # noqa: E731
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, env=env, start_new_session=True, preexec_fn=limit)
        stopped = threading.Event()

        def stop() -> None:
            stopped.set()
            try:
                os.killpg(child.pid, signal.SIGKILL)  # the group this call started, nothing else
            except ProcessLookupError:
                pass  # it ended as the cap came

        timer = threading.Timer(cap_seconds, stop) if cap_seconds else None
        if timer:
            timer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)
        finally:
            if timer:
                timer.cancel()
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here; Popen must not wait again
        out.seek(0)
        err.seek(0)
        return Run(
            tuple(argv),
            seconds,
            usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024,
            None if stopped.is_set() and child.returncode == -signal.SIGKILL else child.returncode,
            out.read(),
            err.read(),
        )
