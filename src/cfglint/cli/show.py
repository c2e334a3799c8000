"""``cfglint show``: every setting, its value on each side and where it came from."""

from __future__ import annotations

import argparse
import sys

from cfglint.cli.common import load_pair


def cmd_show(args: argparse.Namespace) -> int:
    from cfglint.check.rulebook import load_rules
    from cfglint.check.settings import setting_rows
    from cfglint.cli.terminal import term_width, use_color
    from cfglint.report.settings import render_settings

    mf, mg = load_pair(args)
    rows = setting_rows(mf, mg, load_rules(), everything=args.all, diff_only=args.diff_only)
    sys.stdout.write(
        render_settings(
            args.format or "text",
            mf,
            mg,
            rows,
            color=use_color(args) if args.format != "json" else False,
            width=term_width(),
            diff_only=args.diff_only,
        )
    )
    return 0
