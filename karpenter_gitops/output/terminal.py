"""The terminal: the one place output/ and cli/ talk to rich, so outside text is data, never markup.

What the tool prints quotes what it did not write: AMI names and descriptions, tags, SSM values,
AWS's error messages, object and file names. AWS allows ``[`` and ``]`` in an AMI name, and rich
reads ``[bold]`` as a style and ``[/x86]`` as a closing tag that does not match (a MarkupError, a
traceback); ``:name:`` would become an emoji. So every console made here reads neither: a string is
shown as it is, and our own styles come only from the ``(text, style)`` pairs of :func:`line`.

Control characters are made visible (:func:`~karpenter_gitops.core.text.visible`): every part
of a :func:`line` passes through it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from karpenter_gitops.core.text import visible
from karpenter_gitops.output import colour

Part = str | tuple[str, str]  # text as it is, or (text, style)


def line(*parts: Part) -> Text:
    """One line of output from parts: plain strings are shown as they are (after :func:`visible`),
    ``(text, style)`` pairs carry our style. Nothing in a part is read as markup."""
    text = Text()
    for part in parts:
        if isinstance(part, tuple):
            text.append(visible(part[0]), style=part[1])
        else:
            text.append(visible(part))
    return text


class Terminal:
    """A rich console that prints only :func:`line` s: no markup, no emoji codes, no highlighting; coloured
    as :func:`~karpenter_gitops.output.colour.wanted` says (rich's own reading of the environment would
    let ``NO_COLOR`` keep bold and dim, and know nothing of ``--no-color``)."""

    def __init__(self, *, stderr: bool = False, width: int | None = None, record: bool = False, wrap: bool = True):
        coloured = colour.wanted(sys.stderr if stderr else sys.stdout)
        self.console = Console(
            stderr=stderr,
            width=width,
            record=record,
            markup=False,
            emoji=False,
            highlight=False,
            force_terminal=coloured or None,
            no_color=not coloured,
            color_system="auto" if coloured else None,
            soft_wrap=not wrap,
        )  # without wrapping, a line stays one line whatever its length

    @classmethod
    def for_stdout(cls) -> Terminal:
        """Standard output, 120 columns when it is not a terminal (a CI log), as the docs show it."""
        return cls(width=None if sys.stdout.isatty() else 120)

    def print(self, *parts: Part) -> None:
        self.console.print(line(*parts))

    def blank(self) -> None:
        self.console.print()

    def rule(self, *parts: Part, align: str = "left") -> None:
        self.console.rule(line(*parts), align=align)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[Part | Sequence[Part]]], *, indent: int = 0) -> None:
        """Columns without borders, ``indent`` columns in; every cell is a :func:`line` of one part or a list of parts.
        A word wider than its column is folded onto the next lines, never cut: an AWS message may end in one long
        token the user needs whole (an encoded authorization message to decode, an ARN)."""
        table = Table(box=None, pad_edge=False)
        for title in header:
            table.add_column(title, overflow="fold")
        for row in rows:
            table.add_row(*(line(*cell) if isinstance(cell, list) else line(cell) for cell in row))
        self.console.print(Padding(table, (0, 0, 0, indent)) if indent else table)


@contextlib.contextmanager
def waiting(message: str, *, shown: bool = True) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr while a command waits (on AWS), only when stderr is a terminal (and
    ``shown``); yields the function that changes its message (a no-op without a spinner, so a log
    or a piped run stays clean)."""
    console = Terminal(stderr=True).console
    if not (shown and sys.stderr.isatty()):  # FORCE_COLOR colours a log; it must not animate one
        yield lambda _message: None
        return
    with console.status(line(message)) as status:
        yield lambda message: status.update(line(message))
