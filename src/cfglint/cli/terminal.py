"""Terminal switches shared by every subcommand: colour, width, and where the report goes."""

from __future__ import annotations

import argparse
import os
import sys


def use_color(args: argparse.Namespace, *, to_file: bool = False) -> bool:
    """--no-color, then NO_COLOR, then FORCE_COLOR, then whether stdout is a terminal
    (https://no-color.org, https://force-color.org)."""
    if getattr(args, "no_color", False) or to_file:
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


# -o report.sarif with no --format (and none in [tool.cfglint]) writes what its name says
SUFFIX_FORMATS = {".sarif": "sarif", ".json": "json"}


def report_format(fmt: str | None, output: str | None) -> str | None:
    """The format asked for, else the one the output file's name implies."""
    if fmt or not output:
        return fmt
    return SUFFIX_FORMATS.get(os.path.splitext(output)[1].lower())


def write_output(text: str, output: str | None) -> None:
    """The report to ``output`` (--output, written atomically and never over an input),
    else to standard output."""
    from cfglint.report.output import write_report

    write_report(text, output)


def terminal_columns(fallback: int) -> int:
    """The columns ``shutil.get_terminal_size`` gives: COLUMNS when a positive number, else
    the width of the terminal standard output is, else ``fallback``. Read here without
    shutil, whose import (bz2, lzma and zlib with it) is ~16 M instructions of a 1,000 M pair
    lint that asks for a width only through argparse (issue 29)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or fallback
    except (AttributeError, ValueError, OSError):  # no stdout, closed, not a terminal
        return fallback


def term_width() -> int:
    """The terminal's width (COLUMNS wins), 100 when output goes to a pipe or file."""
    return max(40, terminal_columns(100))
