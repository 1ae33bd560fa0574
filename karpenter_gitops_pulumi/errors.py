"""Stack settings the components refuse, shown by ``pulumi preview`` / ``up`` as one line.

The Python language host prints a :class:`pulumi.RunError` as its message alone and any other
exception as "Program failed with an unhandled exception" with a traceback; the core's
:class:`InputError` is not a RunError (the core never imports pulumi), so the components turn it
into one at their constructors.
"""

import functools
from collections.abc import Callable
from typing import TypeVar

import pulumi

from karpenter_gitops.core.errors import InputError

Init = TypeVar("Init", bound=Callable[..., None])


class StackInputError(pulumi.RunError, InputError):
    """An :class:`InputError` raised while a component was built: the engine shows its one line."""


def one_line_errors(init: Init) -> Init:
    """Wrap a component's ``__init__`` so an InputError reaches the engine as a StackInputError."""

    @functools.wraps(init)
    def wrapped(*args, **kwargs) -> None:
        try:
            init(*args, **kwargs)
        except StackInputError:
            raise
        except InputError as err:
            raise StackInputError(err.message, err.file, err.line, err.hint) from None

    return wrapped  # type: ignore[return-value]
