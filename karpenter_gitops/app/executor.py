"""Running work in this process and, on the second core, in a forked copy of it.

An :class:`Executor` holds a sequence of workers and runs a step on each, every other worker in a forked
copy, the results given in input order as soon as each is known. The copy lives as long as the executor,
so a worker can keep what one step built for the next: ``validate`` reads and loads each part of a run in
one step and judges it in the next (:mod:`karpenter_gitops.app.validate_pipeline`), its models staying
where they were built. :func:`ordered_map` maps a function over many items, the second half in the copy
(``validate --crd``'s check of a run judged in one part: schema and CEL rules per object).

A fork inherits the loaded objects and the compiled rules, so nothing but a step, its argument and its
results crosses between the processes. The native libraries the work calls (cel-expr-python,
jsonschema-rs) start no threads of their own. The results come back in input order, so the output is
the same as one process's. One worker, machines with one core, and systems where fork is not the safe
default (macOS, Windows) run every step here. A copy that cannot start or dies leaves its workers to
this process: its end of the pipe reads as closed the moment it is gone, and this process's own copies
of those workers, untouched until then, take the step, so a worker must do, when a step finds it
untouched, whatever an earlier step did in the copy. (concurrent.futures' process pool was used before
and is not: a worker that died while work was still being handed to it could leave a future that never
resolves, and the run waited for ever.)
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

Worker = TypeVar("Worker")
Argument = TypeVar("Argument")
Item = TypeVar("Item")
Result = TypeVar("Result")

#: Below this many items, :func:`ordered_map` stays in this process: forking costs about what it saves.
THRESHOLD = 2_000

_copy = False  # this process is a forked copy: it forks no copy of its own (two cores, two processes)


def _forking() -> bool:
    """Whether this process may fork a copy to share the work: on Linux (fork is the safe default nowhere
    else), with a second core, and not itself a copy."""
    return sys.platform == "linux" and (os.cpu_count() or 1) >= 2 and not _copy


class Executor(Generic[Worker]):
    """Steps run on ``workers``, the odd-numbered ones in a forked copy (``with Executor(workers) as ...``).
    A step is a function of a worker and an argument that pickle can send (a module's function, a class's
    method); only its argument and results cross between the processes."""

    def __init__(self, workers: Sequence[Worker]) -> None:
        self.workers = workers
        self._scope = contextlib.ExitStack()
        self._copy: _Partner | None = None

    def __enter__(self) -> Executor[Worker]:
        if len(self.workers) > 1:
            self._copy = self._scope.enter_context(_partner(partial(_take_steps, self.workers)))
        return self

    def __exit__(self, *exc: object) -> None:
        self._copy = None
        self._scope.close()

    def each(self, step: Callable[[Worker, Argument], Result], argument: Argument) -> Iterator[Result]:
        """``step(worker, argument)`` for each worker, in their order, each as soon as it is known. Stopped
        before its end, the step leaves the copy answering it: no later step asks the copy anything."""
        copy = self._copy
        if copy is not None:
            copy.send((step, argument))
        finished = False
        try:
            for index, worker in enumerate(self.workers):
                answer = (
                    copy.receive() if copy is not None and index % 2 else None
                )  # in a tuple: a result of None is not the copy gone
                yield answer[0] if answer is not None else step(worker, argument)
            finished = True
        finally:
            if not finished:
                self._copy = None


def _take_steps(workers: Sequence[Any], channel: Connection) -> None:
    """The copy's side: each step asked for on the odd-numbered workers, each result sent as it is known."""
    while (message := channel.recv()) is not None:
        step, argument = message
        for index in range(1, len(workers), 2):
            channel.send((step(workers[index], argument),))


@dataclass(frozen=True)
class _Share(Generic[Item, Result]):
    """Some of :func:`ordered_map`'s items, with the function to map over them."""

    function: Callable[[Item], Result]
    items: Sequence[Item]

    def mapped(self, _: None) -> list[Result]:
        return [self.function(item) for item in self.items]


def ordered_map(function: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]:
    """``[function(item) for item in items]``, the second half computed in a forked copy when it pays."""
    if len(items) < THRESHOLD:
        return [function(item) for item in items]
    middle = len(items) // 2
    with Executor([_Share(function, items[:middle]), _Share(function, items[middle:])]) as executor:
        return [result for share in executor.each(_Share.mapped, None) for result in share]


class _Partner:
    """This process's end of the conversation with a forked copy. Every answer is None once the copy is
    gone (it died, or failed and left): the caller then does the copy's part itself."""

    def __init__(self, channel: Connection) -> None:
        self._channel: Connection | None = channel

    def receive(self) -> Any:
        """The copy's next message, or None when it is gone."""
        if self._channel is None:
            return None
        try:
            return self._channel.recv()
        except (EOFError, OSError):
            self._channel = None
            return None

    def send(self, message: Any) -> None:
        """Send ``message``; if the copy is gone, its answer will be None."""
        if self._channel is None:
            return
        try:
            self._channel.send(message)
        except (OSError, ValueError):  # a broken pipe, or a message too large for it
            self._channel = None


@contextlib.contextmanager
def _partner(serve: Callable[[Connection], None]) -> Iterator[_Partner | None]:
    """A forked copy of this process running ``serve(its end of a pipe)``, or None where forking is not
    safe or no process can be forked now. The copy is stopped when the block ends: its end of the pipe
    reads None, then it has a few seconds to leave before it is killed."""
    if not _forking():
        yield None
        return
    import multiprocessing  # only for runs that fork: a one-file start-up never pays for it

    context = multiprocessing.get_context("fork")
    mine, theirs = context.Pipe()
    process = context.Process(target=_serve, args=(serve, theirs), daemon=True)
    try:
        process.start()
    except OSError:  # no process can be forked now (memory, a process limit)
        yield None
        return
    theirs.close()
    try:
        yield _Partner(mine)
    finally:
        with contextlib.suppress(OSError, ValueError):
            mine.send(None)
        mine.close()
        process.join(5)
        if process.is_alive():
            process.kill()
            process.join()


def _serve(serve: Callable[[Connection], None], channel: Connection) -> None:
    """The copy's life: serve, then leave without a word on any error (the caller does the work itself),
    and without the exit handlers of the process it was copied from."""
    global _copy
    _copy = True
    code = 0
    try:
        serve(channel)
    except BaseException:  # the caller redoes the work, and says what went wrong there
        code = 1
    finally:
        channel.close()
        os._exit(code)
