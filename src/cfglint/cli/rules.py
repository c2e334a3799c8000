"""``cfglint rules`` and ``cfglint explain RULE|ROW``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from cfglint.cli.common import SEVERITY_ANSI, painter
from cfglint.report.rules_doc import rules_page

if TYPE_CHECKING:
    from cfglint.check.rulebook import Rule


def cmd_rules(args: argparse.Namespace) -> int:
    from cfglint.check.rulebook import load_rules

    rules = load_rules()
    if args.format == "json":
        data = {
            "rules": [
                {
                    "id": r.id,
                    "row": r.row,
                    "severity": r.severity,
                    "title": r.title,
                    "profiles": list(r.profiles),
                }
                for r in rules
            ]
        }
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    if args.format == "markdown":  # docs/rules.md, the page SARIF helpUri points at
        sys.stdout.write(rules_page(rules))
        return 0
    paint = painter(args)
    for r in rules:
        prof = "" if "default" in r.profiles else "  [align profile]"
        sev = paint(f"{r.severity:<7}", SEVERITY_ANSI[r.severity])
        sys.stdout.write(f"{paint(r.id, '1')}  {sev}  {r.row:<36} {r.title}{prof}\n")
    return 0


def _fixable(rule: Rule) -> str:
    fa = rule.fix_action
    if fa is None:
        return ""
    if fa.safety == "safe":
        return "  `--fix` writes it (a safe fix: only this value changes).\n"
    return "  `--fix --unsafe-fixes` writes it (unsafe: it changes more of the run).\n"


def cmd_explain(args: argparse.Namespace) -> int:
    from cfglint.check.rulebook import load_rules
    from cfglint.check.selection import explain_rules

    paint = painter(args)
    blocks = [
        f"{paint(r.id + ': ' + r.title, '1')}\n"
        f"row: {r.row}   severity: {paint(r.severity, SEVERITY_ANSI[r.severity])}   "
        f"kind: {r.kind}   profiles: {', '.join(r.profiles)}\n\n"
        f"{paint('Why it matters:', '1')}\n  {' '.join(r.rationale.split())}\n\n"
        f"{paint('How to fix:', '1')}\n  {' '.join(r.general_fix.split())}\n" + _fixable(r)
        for r in explain_rules(load_rules(), args.rule)
    ]
    sys.stdout.write("\n".join(blocks))
    return 0
