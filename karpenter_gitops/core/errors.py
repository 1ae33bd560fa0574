"""User-facing input errors: one line naming the file (and line), the object, the field and a fix."""

from __future__ import annotations

from karpenter_gitops.core.text import visible


class InputError(Exception):
    """Input the tool cannot read or use; the CLI prints ``str(err)`` and exits 2."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None, hint: str | None = None):
        super().__init__(message)
        self.message, self.file, self.line, self.hint = message, file, line, hint

    def __reduce__(
        self,
    ) -> tuple[
        type[InputError], tuple[str, str | None, int | None, str | None]
    ]:  # pickled whole (by default only the message would cross from a forked worker)
        return type(self), (self.message, self.file, self.line, self.hint)

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        hint = f" (hint: {self.hint})" if self.hint else ""
        return visible(f"{where}{self.message}{hint}")  # one line: a key or value with a newline shows it as \n


class Unreachable(Exception):
    """A service the run needs (AWS, the cluster) did not answer at all; the CLI prints ``str(err)`` as
    one line and exits 3 (retry), before anything was decided."""
