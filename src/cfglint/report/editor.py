"""What an editor shows of a lint: diagnostics, code actions and hover text, without the
protocol (``cfglint server`` speaks it) and without linting (the lints come from
:class:`cfglint.check.workspace.Workspace`, which calls the same library API as the
command line; this module only renders them).

Positions here are 0-based lines and UTF-16 columns, as the Language Server Protocol
counts them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from cfglint.check.context import Context, label
from cfglint.model.config import Config
from cfglint.model.edits import TextEdit
from cfglint.model.findings import Finding, Report
from cfglint.model.values import Value, fmt

if TYPE_CHECKING:
    from cfglint.check.fixes import Fix

# a file's text for positions: an open document's buffer, else the file on disk
TextOf = Callable[[str], "str | None"]


class Linted(Protocol):
    """One lint as rendered here (cfglint.check.workspace.Linted is one)."""

    report: Report
    ctx: Context

    def files(self) -> list[str]: ...


@dataclass
class Diagnostic:
    line: int
    column: int
    end_column: int
    severity: str  # error | warning | note
    code: str
    message: str
    fixable: bool = False


@dataclass
class Action:
    title: str
    rule: str
    safe: bool
    # path -> [(start line, start col, end line, end col, new text)]
    edits: dict[str, list[tuple[int, int, int, int, str]]] = field(default_factory=dict)


def diagnostics(
    path: str, lints: list[Linted], fixable: set[str], text_of: TextOf
) -> dict[str, list[Diagnostic]]:
    """Every file of every lint ``path`` belongs to -> its diagnostics (each file of a
    pair changes when either side does); ``fixable``: the rules a fix is offered for."""
    out: dict[str, list[Diagnostic]] = {}
    for linted in lints:
        for f in linted.files():
            out.setdefault(f, [])
        for e in linted.report.errors:
            target = os.path.abspath(e.path) if e.path else os.path.abspath(path)
            line = (e.line or 1) - 1
            out.setdefault(target, []).append(Diagnostic(line, 0, 0, "error", "input", e.message))
        for finding in linted.report.findings:
            for d_path, diag in _finding_diagnostics(finding, finding.rule in fixable, text_of):
                out.setdefault(d_path, []).append(diag)
    return out


def _finding_diagnostics(
    f: Finding, fixable: bool, text_of: TextOf
) -> list[tuple[str, Diagnostic]]:
    """One diagnostic per file the finding points into, at its first location there."""
    seen: set[str] = set()
    out = []
    for loc in f.locations:
        full = os.path.abspath(loc.path)
        if full in seen:
            continue
        seen.add(full)
        line, col, end = _span(text_of(full), loc.line, loc.column, loc.anchor)
        out.append((full, Diagnostic(line, col, end, f.severity, f.rule, f.message, fixable)))
    return out


def _span(text: str | None, line: int, column: int, anchor: bool) -> tuple[int, int, int]:
    """0-based line, UTF-16 start and end of the word at ``line``:``column``."""
    lines = text.split("\n") if text is not None else []
    row = max(line - 1, 0)
    if row >= len(lines):
        return row, 0, 0
    src = lines[row]
    if anchor:
        return row, 0, _u16(src, len(src))
    start = min(max(column - 1, 0), len(src))
    end = start
    while end < len(src) and not src[end].isspace() and src[end] not in ",]}#":
        end += 1
    return row, _u16(src, start), _u16(src, max(end, start + 1) if end < len(src) else end)


def code_actions(
    path: str, first: int, last: int, planned: list[list[Fix]], text_of: TextOf
) -> list[Action]:
    """The fixes (``planned``: each lint's) of the findings that point at lines
    ``first``..``last`` (0-based) of ``path``; and one action per lint that applies every
    safe fix of the pair."""
    full = os.path.abspath(path)
    out: list[Action] = []
    for fixes in planned:
        safe: list[Fix] = []
        for fx in fixes:
            here = [
                loc
                for loc in fx.finding.locations
                if os.path.abspath(loc.path) == full and first <= loc.line - 1 <= last
            ]
            if fx.safety == "safe":
                safe.append(fx)
            if here:
                out.append(_action(fx, text_of))
        if len(safe) > 1:
            out.append(_merge(safe, text_of))
    return out


def _action(fx: Fix, text_of: TextOf) -> Action:
    unsafe = "" if fx.safety == "safe" else " (unsafe: changes more than this value)"
    act = Action(f"cfglint {fx.rule}: {fx.title}{unsafe}", fx.rule, fx.safety == "safe")
    for e in fx.edits:
        act.edits.setdefault(os.path.abspath(e.path), []).append(_range(e, text_of))
    return act


def _merge(fixes: list[Fix], text_of: TextOf) -> Action:
    act = Action(f"cfglint: apply all {len(fixes)} safe fixes of this pair", "", True)
    for fx in fixes:
        for e in fx.edits:
            act.edits.setdefault(os.path.abspath(e.path), []).append(_range(e, text_of))
    return act


def _range(e: TextEdit, text_of: TextOf) -> tuple[int, int, int, int, str]:
    text = text_of(os.path.abspath(e.path)) or ""
    a, b = _position(text, e.start), _position(text, e.end)
    return (*a, *b, e.text)


def hover(path: str, line: int, lints: list[Linted]) -> str | None:
    """The setting written on ``line`` (0-based) of ``path``: its value and origin on
    this side and the other side's, for every field it feeds."""
    full = os.path.abspath(path)
    for linted in lints:
        ctx = linted.ctx
        for mine, other in ((ctx.mf, ctx.mg), (ctx.mg, ctx.mf)):
            if mine is None:
                continue
            found = _fields_at(mine, full, line + 1)
            if found:
                return _hover_text(found, mine, other)
    return None


def _u16(line: str, index: int) -> int:
    """UTF-16 code units before character ``index`` of ``line``."""
    head = line[:index]
    return len(head) + sum(1 for ch in head if ord(ch) > 0xFFFF)


def _position(text: str, offset: int) -> tuple[int, int]:
    row = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return row, _u16(text[start:offset], offset - start)


def _fields_at(cfg: Config, path: str, line: int) -> list[tuple[str, Value]]:
    """The fields typed on ``line``, then those it feeds (a variable a flag expands, an
    input of a derived value)."""
    own, fed = [], []
    for name in Config.field_paths():
        v = cfg.get(name)
        if v is None:
            continue
        here = [loc for loc in v.locations() if os.path.abspath(loc.path) == path]
        if v.loc is not None and v.loc in here and v.loc.line == line:
            own.append((name, v))
        elif any(loc.line == line for loc in here):
            fed.append((name, v))
    return own or fed[:6]


def _hover_text(found: list[tuple[str, Value]], mine: Config, other: Config | None) -> str:
    parts = []
    for name, v in found:
        lines = [f"**{name}**", f"- {label(mine)}: `{fmt(v.value)}` ({v.where()})"]
        if other is not None:
            o = other.get(name)
            if o is None:
                lines.append(f"- {label(other)}: no such setting")
            else:
                lines.append(f"- {label(other)}: `{fmt(o.value)}` ({o.where()})")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
