"""Where a run's results go: never into a file the run reads, never half-written.

Every subcommand that writes a file (``-o`` reports of lint and probe, ``lr --plot``) checks
its target with :func:`check_target` before any work and writes through :func:`write_file`:

* a target that is the same file as an input (by device and inode, so a symbolic or hard
  link to ``c.yaml`` is ``c.yaml``) is refused: issue 20 saw ``-o c.yaml`` replace the
  config with its own report;
* a FIFO, device or socket is refused without opening it (opening a FIFO with no reader
  blocks forever);
* the bytes go to a temporary file beside the target that is renamed over it, so a full
  disk leaves the previous report whole (load/safeio.py, ``atomic_write``).

Standard output that cannot be written (``> /dev/full``) is one input-error line, exit 2.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from typing import Any

from cfglint.load.safeio import atomic_write, kind_of, was_read
from cfglint.model.errors import InputError
from cfglint.model.findings import InputProblem

# argparse destinations that name files or folders a run reads, in every subcommand
_INPUT_ARGS = ("files", "megatron", "launch", "source", "loss_log", "tokenizer", "config")
# the destinations that name files a run writes
OUTPUT_ARGS = ("output", "plot")


def named_inputs(args: Any) -> list[str]:
    """Every path named on the command line as something to read (a dataset prefix with
    its ``.bin`` and ``.idx``)."""
    out: list[str] = []
    for name in _INPUT_ARGS:
        v = getattr(args, name, None)
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, str))
    data = getattr(args, "data", None)
    if isinstance(data, str):
        out += [data, data + ".bin", data + ".idx"]
    return [p for p in out if p and p != "-"]


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def check_target(output: str, inputs: Iterable[str] = (), *, what: str = "report") -> None:
    """Refuse (one :class:`InputError`) an output that is not a regular file, that resolves
    to one of ``inputs`` or to any file this run has read, or whose folder does not exist."""
    try:
        st = os.stat(output)
    except FileNotFoundError:
        folder = os.path.dirname(os.path.realpath(output)) or "."
        if not os.path.isdir(folder):
            raise InputError(output, f"cannot write the {what}: no such folder") from None
        return
    except OSError as exc:
        raise InputError(output, f"cannot write the {what}: {exc.strerror or exc}") from None
    except ValueError:
        raise InputError(output, f"is not a valid path for the {what}") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            output, f"is {kind_of(st.st_mode)}; the {what} is written to a regular file only"
        )
    for p in inputs:
        other = _stat(p)
        if other is not None and (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino):
            raise InputError(output, _same_file(what, p, output))
    if was_read(st):
        raise InputError(output, _same_file(what, None, output))


def _same_file(what: str, name: str | None, output: str) -> str:
    which = f" ({name})" if name and name != output else ""
    return (
        f"is an input of this run{which}; writing the {what} there would replace it: "
        "give another file"
    )


def _walked_by(target: str, inputs: list[str]) -> str | None:
    """The named folder whose walk would read an existing ``target`` (a config or script
    name under it, or a Python file under a --source folder), if any."""
    from cfglint.load.walk import WALK_EXT

    if not os.path.isfile(target) or not target.lower().endswith((*WALK_EXT, ".py")):
        return None
    real = os.path.realpath(target)
    for p in inputs:
        if os.path.isdir(p):
            top = os.path.realpath(p).rstrip(os.sep) + os.sep
            if real.startswith(top):
                return p
    return None


def check_targets(args: Any) -> None:
    """Before any work: each output of this command line against its named inputs (and
    the files a named folder's walk would read)."""
    inputs = named_inputs(args)
    for name in OUTPUT_ARGS:
        target = getattr(args, name, None)
        if isinstance(target, str) and target:
            what = "plot" if name == "plot" else "report"
            check_target(target, inputs, what=what)
            folder = _walked_by(target, inputs)
            if folder is not None:
                raise InputError(target, _same_file(what, folder, target))


def write_file(data: str | bytes, output: str, *, what: str = "report") -> None:
    """Write ``data`` to ``output`` atomically, after checking it again against every file
    the run has read (a folder lint learns its inputs while it runs)."""
    check_target(output, what=what)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        atomic_write(output, raw)
    except OSError as exc:
        raise InputError(output, f"cannot write the {what}: {exc.strerror or exc}") from None


def write_report(text: str, output: str | None) -> None:
    """The report to ``output`` (--output), else to standard output."""
    if output:
        write_file(text, output)
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
    return f"{e.path}:{e.line}: {e.message}" if e.line else f"{e.path}: {e.message}"


def error_lines(errors: list[InputProblem], verbose: bool = False) -> list[str]:
    """What an exit 2 prints on stderr: ONE line (the first error, with how many more there
    are), every error with ``-v``. JSON and SARIF reports carry them all anyway."""
    if verbose or len(errors) <= 1:
        return [_line(e) for e in errors]
    more = len(errors) - 1
    return [
        f"{_line(errors[0])} (and {more} more input error{'s' if more > 1 else ''}; -v lists all)"
    ]
