"""Input errors: everything a user can get wrong in what they hand us.

They are reported as one line (``path:line: message``) with exit code 2, never as a
traceback, so every loader raises :class:`InputError` instead of letting library
exceptions escape.
"""

from __future__ import annotations

# C0 controls and DEL: a newline (or a carriage return, or an escape sequence) in a file
# name must not split or repaint the one line an error is
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)} | {
    0x0A: "\\n",
    0x0D: "\\r",
    0x09: "\\t",
}


def single_line(text: str) -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\x1b``)."""
    return text.translate(_CONTROLS)


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
        return single_line(f"{where}: {self.message}")

    def __str__(self) -> str:
        return self.one_line()
