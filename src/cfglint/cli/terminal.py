"""Terminal switches shared by every subcommand: colour, width, and where the report goes."""

from __future__ import annotations

import os
import sys
from typing import Any


def use_color(args: Any, *, to_file: bool = False) -> bool:
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
    """The report to ``output`` (--output), else to standard output. The file is replaced
    whole: a reader (a CI upload step) never sees half a report."""
    if not output:
        sys.stdout.write(text)
        return
    import tempfile

    from cfglint.model.errors import InputError

    folder = os.path.dirname(os.path.abspath(output))
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".cfglint-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # a new file's usual mode, not mkstemp's 0600
            os.replace(tmp, output)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        raise InputError(output, f"cannot write report: {exc.strerror}") from None


def term_width() -> int:
    """The terminal's width (COLUMNS wins), 100 when output goes to a pipe or file."""
    import shutil

    return max(40, shutil.get_terminal_size((100, 24)).columns)
