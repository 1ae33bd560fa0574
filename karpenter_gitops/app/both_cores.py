"""Work on both cores: a forked copy of this process takes half.

Three shapes, all one forked copy talking over a pipe (:func:`partner`). :func:`ordered_map` maps a
function over many items, the second half in the copy: ``validate --crd`` uses it for the CRD check
(schema and CEL rules per object, about half of such a run: 23 % less wall time at 10,000 objects).
:func:`partner` itself serves a conversation: ``validate`` of many files has the copy read, load and
judge the first half of the files while this process does the second, the two exchanging only what
the other half needs (:mod:`karpenter_gitops.app.validate_halves`). :func:`interleaved_map` gives
every other item to the copy and yields the results in order as they come (``validate``'s stream of
parts).

A fork inherits the loaded objects and the compiled rules, so nothing but the results crosses
between the processes. The native libraries the work calls (cel-expr-python, jsonschema-rs) start no
threads of their own. The results come back in input order, so the output is the same as one
process's. Small runs, machines with one core, and systems where fork is not the safe default
(macOS, Windows) use a plain map. A copy that cannot start or dies leaves its part to this process:
its end of the pipe reads as closed the moment it is gone. (concurrent.futures' process pool was
used before and is not: a worker that died while work was still being handed to it could leave a
future that never resolves, and the run waited for ever.)
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

Item = TypeVar("Item")
Result = TypeVar("Result")

#: Below this many items, forking a process costs about what it saves.
THRESHOLD = 2_000

_copy = False  # this process is a partner: it forks no copy of its own (two cores, two processes)


def _forking() -> bool:
    """Whether this process may fork a copy to share the work: on Linux (fork is the safe default nowhere
    else), with a second core, and not itself a copy."""
    return sys.platform == "linux" and (os.cpu_count() or 1) >= 2 and not _copy


def ordered_map(function: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]:
    """``[function(item) for item in items]``, the second half computed in a forked copy when it pays."""
    if len(items) < THRESHOLD:
        return [function(item) for item in items]
    middle = len(items) // 2

    def second_half() -> list[Result]:
        return [function(items[index]) for index in range(middle, len(items))]

    with partner(lambda channel: channel.send(second_half())) as copy:
        first = [function(items[index]) for index in range(middle)]
        rest = copy.receive() if copy is not None else None
    return first + (rest if rest is not None else second_half())


def interleaved_map(function: Callable[[Item], Result], items: Sequence[Item]) -> Iterator[Result]:
    """``function(item)`` for each item, yielded in input order as soon as it is known, every other item
    computed in a forked copy: the items are parts of a run printed as each is judged
    (:mod:`karpenter_gitops.app.validate_stream`), each about as costly as the next."""
    if len(items) < 2:
        yield from (function(item) for item in items)
        return

    def odd_items(channel: Connection) -> None:
        for index in range(1, len(items), 2):
            channel.send((function(items[index]),))  # in a tuple: a result of None is not the copy gone

    with partner(odd_items) as copy:
        for index, item in enumerate(items):
            answer = copy.receive() if copy is not None and index % 2 else None
            yield answer[0] if answer is not None else function(item)


class Partner:
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

    def ask(self, message: Any) -> Any:
        """Send ``message`` and wait for the answer (None when the copy is gone)."""
        self.send(message)
        return self.receive()


@contextlib.contextmanager
def partner(serve: Callable[[Connection], None]) -> Iterator[Partner | None]:
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
        yield Partner(mine)
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
