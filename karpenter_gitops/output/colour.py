"""Whether output is coloured: the one answer every command's printing asks for.

The user decides first (``--color``/``--no-color``), then the conventions of the environment:
``NO_COLOR`` (any non-empty value, https://no-color.org) turns colour off, ``FORCE_COLOR`` turns it
on where it would be off (a CI log that renders escape codes); without either, a stream is coloured
when it is a terminal. Kept apart from :mod:`~karpenter_gitops.output.terminal` so that deciding
does not import rich: ``validate`` of one file prints through click alone.
"""

from __future__ import annotations

import os
from typing import TextIO

import click


def chosen(flag: bool | None) -> bool | None:
    """Colour as the flag or the environment decide it, or None when neither does (then each stream
    is coloured when it is a terminal). The group sets this as click's ``Context.color``, which
    ``click.echo`` and :func:`wanted` read in every command."""
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return None


def wanted(stream: TextIO) -> bool:
    """Whether what is written to ``stream`` is coloured, as click.echo decides it for the same stream."""
    context = click.get_current_context(silent=True)
    decided = context.color if context is not None and context.color is not None else chosen(None)
    return stream.isatty() if decided is None else decided
