"""Input errors: everything a user can get wrong in what they hand us.

They are reported as one line (``path:line: message``) with exit code 2, never as a
traceback, so every loader raises :class:`InputError` instead of letting library
exceptions escape.
"""

from __future__ import annotations


class InputError(Exception):
    """A problem with a file the user gave us (or with how they called us)."""

    def __init__(self, path: str | None, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.message = message
        self.line = line

    def one_line(self) -> str:
        where = self.path or "cfglint"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}"

    def __str__(self) -> str:
        return self.one_line()
