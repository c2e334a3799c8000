"""``cfglint show``: every setting, its value on each side and where it came from."""

from __future__ import annotations

import os
import sys
from typing import Any

from cfglint.cli.common import load_pair
from cfglint.model.config import Config
from cfglint.model.errors import InputError
from cfglint.model.values import Value, fmt


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


def cmd_show(args: Any) -> int:
    mf, mg = load_pair(args)
    rows = []
    for path in Config.field_paths():
        a = mf.get(path) if mf else None
        b = mg.get(path) if mg else None
        if not args.all and a is None and b is None:
            continue
        rows.append((path, a, b))
    env_names = sorted(set((mf.env if mf else {}) | (mg.env if mg else {})))
    for name in env_names:
        rows.append(
            (f"env.{name}", mf.env.get(name) if mf else None, mg.env.get(name) if mg else None)
        )
    if args.format == "json":
        out = {
            "inputs": [
                {"path": c.path, "kind": c.kind, "defaults": c.defaults_from}
                | ({"not_applicable": c.not_applicable} if c.not_applicable else {})
                for c in (mf, mg)
                if c is not None
            ],
            "settings": {p: {"mindformers": _cell(a), "megatron": _cell(b)} for p, a, b in rows},
            "warnings": [w for c in (mf, mg) if c is not None for w in c.warnings],
        }
        from cfglint.report.json import dumps

        sys.stdout.write(dumps(out, indent=2, default=str, ensure_ascii=False) + "\n")
        return 0
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from cfglint.cli.terminal import term_width, use_color

    color = use_color(args)
    width = term_width()
    con = Console(
        highlight=False,
        soft_wrap=False,
        width=width,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
    )
    both = mf is not None and mg is not None
    if args.diff_only:
        if not both:
            raise InputError(None, "--diff-only compares two sides: give both")
        rows = [r for r in rows if _differs(r[1], r[2])]
    title = " vs ".join(
        f"{c.path} ({c.defaults_from or c.kind})" for c in (mf, mg) if c is not None
    )
    # Wide terminals get separate "from" columns; narrow ones put the origin under the value.
    wide = width >= 120
    table = Table(title=escape(title), show_lines=not wide, expand=True, pad_edge=False)
    longest = max((len(r[0]) for r in rows), default=10)
    table.add_column("setting", no_wrap=True, min_width=min(longest, width // 3))
    for cfg, name in ((mf, "MindFormers"), (mg, "Megatron")):
        if cfg is None:
            continue
        table.add_column(name, overflow="fold", ratio=3)
        if wide:
            table.add_column("from", style="dim", overflow="fold", ratio=3)
    for path, a, b in rows:
        cells = [path]
        for cfg, v in ((mf, a), (mg, b)):
            if cfg is None:
                continue
            value, origin = _show_cells(v, narrow=not wide)
            if v is None and path in cfg.not_applicable:
                value, origin = "n/a", escape(f"not applicable: {cfg.not_applicable[path]}")
            cells += (
                [value, origin] if wide else [value + (f"\n[dim]{origin}[/]" if origin else "")]
            )
        table.add_row(*cells, style="bold yellow" if both and _differs(a, b) else None)
    con.print(table)
    if both:
        n = sum(1 for _, a, b in rows if _differs(a, b))
        con.print(
            f"{n} setting(s) differ"
            + ("" if args.diff_only else " (highlighted; --diff-only lists only them)")
        )
    for c in (mf, mg):
        if c is not None:
            for w in c.warnings:
                con.print(f"[yellow]warning[/] {escape(w)}", markup=True)
    return 0


def _differs(a: Value | None, b: Value | None) -> bool:
    """Both sides set the setting and their values differ (numbers within 1e-9)."""
    if a is None or b is None or not a.known or not b.known:
        return False
    x, y = a.value, b.value
    if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
        return abs(x - y) > 1e-9 * max(abs(x), abs(y), 1e-300)
    return fmt(x) != fmt(y)


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
