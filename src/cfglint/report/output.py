"""Where a run's results go: a file under the one output rule of load/outputs.py (never an
input, never through a link, checked before the work, written atomically), else standard
output.

Standard output that cannot be written (``> /dev/full``) is one input-error line, exit 2.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from cfglint.load.outputs import write_atomic
from cfglint.model.errors import InputError, single_line
from cfglint.model.findings import InputProblem


def write_report(text: str, output: str | None) -> None:
    """The report to ``output`` (--output), else to standard output."""
    if output:
        write_atomic(output, text)
        return
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise stdout_error(exc) from None


def stdout_error(exc: OSError) -> InputError:
    """The one line for standard output that cannot be written; later flushes (at exit) go
    to /dev/null so the interpreter does not add its own message."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (captured by a test): nothing flushes it at exit
    return InputError(None, f"cannot write to standard output: {exc.strerror or exc}")


def flush_stdout() -> None:
    """Flush standard output now, so a failure is one line and exit 2 (not a message from
    the interpreter at exit). A command that handed stdout over and closed it (the
    language server's stream) has nothing left to flush."""
    if sys.stdout.closed:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise stdout_error(exc) from None


class StdoutError(OSError):
    """Standard output could not be written (a full disk, ``> /dev/full``)."""


class _GuardedStdout:
    """Standard output whose write failures are :class:`StdoutError`, so that the command
    line tells them from any other ``OSError`` however deep in a renderer they happen."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Install the guard on ``sys.stdout`` (a program run, not a call from Python)."""
    if not isinstance(sys.stdout, _GuardedStdout):
        sys.stdout = _GuardedStdout(sys.stdout)  # type: ignore[assignment]


def stdout_failing(exc: OSError) -> InputError | None:
    """After an ``OSError`` escaped a subcommand: the input error to report if it came
    from standard output, else None."""
    if isinstance(exc, StdoutError):
        return stdout_error(exc)
    return None


def _line(e: InputProblem) -> str:
    return single_line(f"{e.path}:{e.line}: {e.message}" if e.line else f"{e.path}: {e.message}")


def error_lines(errors: list[InputProblem], verbose: bool = False) -> list[str]:
    """What an exit 2 prints on stderr: ONE line (the first error, with how many more there
    are), every error with ``-v``. JSON and SARIF reports carry them all anyway."""
    if verbose or len(errors) <= 1:
        return [_line(e) for e in errors]
    more = len(errors) - 1
    return [
        f"{_line(errors[0])} (and {more} more input error{'s' if more > 1 else ''}; -v lists all)"
    ]
