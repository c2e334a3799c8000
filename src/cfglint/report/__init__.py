"""Reports: one table of output formats, each a module with the same ``render`` signature.

A format's module is imported only when that format is asked for, so a text lint never
loads the SARIF writer (or the rule table it needs).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from cfglint.model.findings import Report


class RenderOptions(NamedTuple):
    verbose: bool = False
    color: bool = False
    width: int = 100  # text wraps here: the terminal's width, or 100 for a pipe
    # several files were linted: each finding's header names its file
    name_files: bool = False


# format name -> module under cfglint.report that defines render(report, options) -> str
FORMATS = {"text": "text", "concise": "concise", "json": "json", "sarif": "sarif"}


def render(fmt: str, report: Report, options: RenderOptions) -> str:
    module = importlib.import_module(f"cfglint.report.{FORMATS[fmt]}")
    return module.render(report, options)
