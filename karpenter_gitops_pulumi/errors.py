"""Stack settings the components refuse, shown by ``pulumi preview`` / ``up`` as one line.

The Python language host prints a :class:`pulumi.RunError` as its message alone and any other
exception as "Program failed with an unhandled exception" with a traceback; the core's
:class:`InputError` is not a RunError (the core never imports pulumi), so the components turn it
into one at their constructors.

A failure the engine reports (a step, a mandatory policy) ends the run: the language host then
interrupts the program with SIGINT, and Python's answer, KeyboardInterrupt raised wherever the SDK's
event loop happens to be, prints tracebacks under the engine's report (intermittently: it depends on
where the loop is). The components' constructors therefore make SIGINT end the program quietly, so a
user's program gets that whatever its ``__main__.py`` does.
"""

import contextlib
import functools
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import pulumi
from pulumi.runtime.mocks import MockMonitor

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Finding, Severity

Init = TypeVar("Init", bound=Callable[..., None])


class StackInputError(pulumi.RunError, InputError):
    """An :class:`InputError` raised while a component was built: the engine shows its one line."""


@contextlib.contextmanager
def one_line() -> Iterator[None]:
    """An InputError raised inside reaches the engine as a StackInputError (a component's constructor, or
    an ``apply`` that judges values once they are known)."""
    try:
        yield
    except StackInputError:
        raise
    except InputError as err:
        raise StackInputError(err.message, err.file, err.line, err.hint) from None


def end_quietly_when_interrupted() -> None:
    """Let SIGINT end the program with the signal's default action instead of a KeyboardInterrupt traceback.

    Only in a program the engine runs (not under ``pulumi.runtime.set_mocks``, where the process is a
    test runner whose Ctrl-C must still stop it cleanly), only where Python's own handler is in place (a
    program that installed its own keeps it), and only from the main thread, the one place a handler
    can be set."""
    monitor = pulumi.runtime.settings.get_monitor()
    if monitor is None or isinstance(monitor, MockMonitor):
        return
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_DFL)


def one_line_errors(init: Init) -> Init:
    """Wrap a component's ``__init__`` so an InputError reaches the engine as a StackInputError, and the
    engine's interrupt after a failure ends the program without a traceback."""

    @functools.wraps(init)
    def wrapped(*args, **kwargs) -> None:
        end_quietly_when_interrupted()
        with one_line():
            init(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


def refuse_errors(findings: Iterable[Finding], where: str | None) -> None:
    """Stop before anything is created when a finding is an error (one line naming each, the first one's fix
    as hint; ``where``, a stack key, leads it when the objects came from one); show the others in the
    preview, warnings as warnings and notes as info."""
    found = list(findings)
    errors = [f for f in found if f.severity is Severity.ERROR]
    if errors:
        raise InputError("; ".join(_line(f) for f in errors), where, hint=errors[0].hint)
    for finding in found:
        (pulumi.log.warn if finding.severity is Severity.WARNING else pulumi.log.info)(_line(finding))


def _line(finding: Finding) -> str:
    return f"{finding.kind} {finding.name}: {finding.path}: {finding.message} [{finding.rule}]"
