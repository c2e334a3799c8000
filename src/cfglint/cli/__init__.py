"""Command line: argument parsing and the subcommands.

``run`` is the program (the ``cfglint`` command, ``python -m cfglint``): one command line per
process. ``main`` is the same command line called from Python: it returns the exit code and
leaves the caller's process as it found it. Importing this package imports neither: the
command line (``cli/app.py`` and the lint path behind it) is imported on the first call.
"""

import atexit
import gc
import os
import sys
from types import ModuleType
from typing import NoReturn

__all__ = ["GC_THRESHOLD", "command_line", "main", "run"]

# the young generation's collection threshold of a program run (Python's default is 700)
GC_THRESHOLD = 50_000


def command_line() -> ModuleType:
    """``cfglint.cli.app``, imported with the cyclic collector paused.

    The lint path's modules (pydantic, its models, ~110 of ours) are hundreds of thousands of
    objects that live until the process ends: the collector would walk them again and again
    while they are created (~19 M instructions of a ~1,100 M pair lint, issue 29) and find
    nothing to free. It is restored as it was, so a program that calls ``main`` keeps its
    own setting."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        from cfglint.cli import app
    finally:
        if collecting:
            gc.enable()
    return app


def main(argv: list[str] | None = None) -> int:
    """Run one command line (``sys.argv[1:]`` when ``argv`` is None); the exit code."""
    return command_line().main(argv)


def run() -> NoReturn:
    """The program: one command line, then the process ends with its exit code."""
    # Paused here and not turned back on by command_line(): re-enabling it after the imports
    # would start a collection over everything they created at the next allocation (~10 ms
    # of CPU, bench/results/fresh_env.md). Frozen first, those objects are never walked.
    gc.disable()
    app = command_line()
    gc.freeze()
    # A young collection every 50,000 new objects, not 700: a pair lint allocates about a
    # million, nearly all freed by their reference counts, and each young collection walks
    # every live young object again (memory-bound: at 10,000, two of them were ~1% of a pair
    # lint's CPU). Cycles are still collected, tens of thousands of objects later, so memory
    # on large input stays bounded (a few MB more at most).
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    gc.enable()
    _leave(app.main())


def _leave(code: int) -> NoReturn:
    """End the process with ``code``. Once the command's output is flushed and nothing is
    left to run at exit, the interpreter's teardown (freeing every module and object one by
    one, then a last full collection) does nothing a user can see: it is skipped, as mypy
    does (~30 M instructions of a pair lint). Otherwise the process exits as usual."""
    if _nothing_runs_at_exit():
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # the usual exit reports a failed write as it always has
        else:
            os._exit(code)
    sys.exit(code)


def _nothing_runs_at_exit() -> bool:
    """No exit function is registered (a profiler's report, coverage's data file, a process
    pool's clean-up), no tracer or profiler runs, and no other thread is alive."""
    # CPython's count of atexit functions (no public API); without it, exit as usual
    count = getattr(atexit, "_ncallbacks", None)
    threading = sys.modules.get("threading")
    return (
        count is not None
        and count() == 0
        and sys.gettrace() is None
        and sys.getprofile() is None
        and (threading is None or threading.active_count() == 1)
    )
