"""The terminal's width is read as shutil reads it, without importing shutil (with bz2,
lzma and zlib, ~16 M instructions of a pair lint that asks for a width only through
argparse's help formatter, issue 29)."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

import pytest

from cfglint.cli.commands import sub_parser
from cfglint.cli.parsers import lint_parser
from cfglint.cli.terminal import terminal_columns
from conftest import ROOT


@pytest.mark.parametrize("columns", [None, "57", "0", "-3", "wide", ""])
def test_the_width_is_shutils(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    for fallback in (80, 100):
        assert terminal_columns(fallback) == shutil.get_terminal_size((fallback, 24)).columns


def test_a_terminal_gives_its_own_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((133, 40)))
    assert terminal_columns(80) == 133
    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((0, 0)))
    assert terminal_columns(80) == 80


@pytest.mark.parametrize("columns", ["61", "143"])
def test_help_wraps_as_argparse_would(monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    for parser, plain in (
        (lint_parser(), argparse.RawDescriptionHelpFormatter),
        (sub_parser("show"), argparse.HelpFormatter),
    ):
        ours = parser.format_help()
        parser.formatter_class = plain  # argparse's own, which reads the width with shutil
        assert ours == parser.format_help()


def test_parsing_a_command_line_imports_no_shutil() -> None:
    code = (
        "import sys\nfrom cfglint.cli.commands import parse\n"
        "parse(['a.yaml', '--megatron', 'b.sh'])\nprint('shutil' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.stdout.split() == ["False"], proc.stderr[-2000:]
