"""``cfglint show``'s report: the settings table of one pair, as text (a rich table that
fits the terminal) or JSON. What the rows are and which differ is decided in
:mod:`cfglint.check.settings`."""

from __future__ import annotations

import io
import os
from typing import Any

from cfglint.check.settings import SettingRow
from cfglint.model.config import Config
from cfglint.model.values import Value, fmt

# wide terminals get separate "from" columns; narrow ones put the origin under the value
WIDE = 120


def render_settings(
    fmt_name: str,
    mf: Config | None,
    mg: Config | None,
    rows: list[SettingRow],
    *,
    color: bool = False,
    width: int = 100,
    diff_only: bool = False,
) -> str:
    if fmt_name == "json":
        return render_json(mf, mg, rows)
    return render_text(mf, mg, rows, color=color, width=width, diff_only=diff_only)


def _cell(v: Value | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return {
        "value": v.value,
        "origin": v.origin.value,
        "where": v.where(),
        "brief": v.brief(),
        "locations": [str(loc) for loc in v.locations()],
    }


def render_json(mf: Config | None, mg: Config | None, rows: list[SettingRow]) -> str:
    from cfglint.report.json import dumps

    sides = [c for c in (mf, mg) if c is not None]
    out = {
        "inputs": [
            {"path": c.path, "kind": c.kind, "defaults": c.defaults_from}
            | ({"not_applicable": c.not_applicable} if c.not_applicable else {})
            for c in sides
        ],
        "settings": {
            r.path: {"mindformers": _cell(r.mindformers), "megatron": _cell(r.megatron)}
            for r in rows
        },
        "warnings": [w for c in sides for w in c.warnings],
    }
    return dumps(out, indent=2, default=str, ensure_ascii=False) + "\n"


def _show_cells(v: Value | None, narrow: bool = False) -> list[str]:
    from rich.markup import escape

    if v is None:
        return ["—", ""]
    if not v.known:
        return ["[red]unknown[/]", escape(v.detail)]
    val = escape(fmt(v.value))
    if v.yaml11_string:
        val = f"[red]{val!r} (string in MindFormers)[/]"
    origin = v.brief()
    if narrow and v.origin.value == "file" and v.loc is not None:
        origin = f"{os.path.basename(v.loc.path)}:{v.loc.line}"  # the key is the row already
        if v.branch_choice:
            origin += f"; {v.choice_note()}"
    return [val, escape(origin)]


def _row_cells(row: SettingRow, sides: list[tuple[Config, Value | None]], wide: bool) -> list[str]:
    from rich.markup import escape

    cells = [row.path]
    for cfg, v in sides:
        value, origin = _show_cells(v, narrow=not wide)
        if v is None and row.path in cfg.not_applicable:
            value, origin = "n/a", escape(f"not applicable: {cfg.not_applicable[row.path]}")
        cells += [value, origin] if wide else [value + (f"\n[dim]{origin}[/]" if origin else "")]
    return cells


def _table(mf: Config | None, mg: Config | None, rows: list[SettingRow], width: int) -> Any:
    from rich.markup import escape
    from rich.table import Table

    title = " vs ".join(
        f"{c.path} ({c.defaults_from or c.kind})" for c in (mf, mg) if c is not None
    )
    wide = width >= WIDE
    table = Table(title=escape(title), show_lines=not wide, expand=True, pad_edge=False)
    longest = max((len(r.path) for r in rows), default=10)
    table.add_column("setting", no_wrap=True, min_width=min(longest, width // 3))
    for cfg, name in ((mf, "MindFormers"), (mg, "Megatron")):
        if cfg is None:
            continue
        table.add_column(name, overflow="fold", ratio=3)
        if wide:
            table.add_column("from", style="dim", overflow="fold", ratio=3)
    both = mf is not None and mg is not None
    for row in rows:
        sides = [(c, v) for c, v in ((mf, row.mindformers), (mg, row.megatron)) if c is not None]
        style = "bold yellow" if both and row.differs else None
        table.add_row(*_row_cells(row, sides, wide), style=style)  # type: ignore[arg-type]
    return table


def render_text(
    mf: Config | None,
    mg: Config | None,
    rows: list[SettingRow],
    *,
    color: bool = False,
    width: int = 100,
    diff_only: bool = False,
) -> str:
    from rich.console import Console
    from rich.markup import escape

    buf = io.StringIO()
    con = Console(
        file=buf,
        highlight=False,
        soft_wrap=False,
        width=width,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
    )
    con.print(_table(mf, mg, rows, width))
    if mf is not None and mg is not None:
        n = sum(1 for r in rows if r.differs)
        con.print(
            f"{n} setting(s) differ"
            + ("" if diff_only else " (highlighted; --diff-only lists only them)")
        )
    for c in (mf, mg):
        if c is not None:
            for w in c.warnings:
                con.print(f"[yellow]warning[/] {escape(w)}", markup=True)
    return buf.getvalue()
