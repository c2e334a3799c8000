"""``cfglint rules`` and ``cfglint explain RULE``."""

from __future__ import annotations

import json
import sys
from typing import Any

from cfglint.cli.common import SEVERITY_ANSI, painter
from cfglint.model.errors import InputError
from cfglint.report.rules_doc import rules_page


def cmd_rules(args: Any) -> int:
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


def _fixable(rule: Any) -> str:
    fa = rule.fix_action
    if fa is None:
        return ""
    if fa.safety == "safe":
        return "  `--fix` writes it (a safe fix: only this value changes).\n"
    return "  `--fix --unsafe-fixes` writes it (unsafe: it changes more of the run).\n"


def cmd_explain(args: Any) -> int:
    from cfglint.check.rulebook import load_rules

    want = args.rule.upper()
    paint = painter(args)
    for r in load_rules():
        if r.id == want:
            sys.stdout.write(
                f"{paint(r.id + ': ' + r.title, '1')}\n"
                f"row: {r.row}   severity: {paint(r.severity, SEVERITY_ANSI[r.severity])}   "
                f"kind: {r.kind}   profiles: {', '.join(r.profiles)}\n\n"
                f"{paint('Why it matters:', '1')}\n  {' '.join(r.rationale.split())}\n\n"
                f"{paint('How to fix:', '1')}\n  {' '.join(r.general_fix.split())}\n" + _fixable(r)
            )
            return 0
    import difflib
    import re

    ids = [r.id for r in load_rules()]
    close = difflib.get_close_matches(want, ids, n=3, cutoff=0.6)
    m = re.fullmatch(r"([A-Z]+)0*(\d{1,3})", want)
    padded = f"{m.group(1)}{int(m.group(2)):03d}" if m else ""
    if padded in ids:  # OPT6, OPT06: the id with its zeros first
        close = [padded, *[c for c in close if c != padded]][:3]
    hint = f"did you mean {', '.join(close)}?" if close else "`cfglint rules` lists them"
    raise InputError(None, f"no rule {args.rule!r}; {hint}")
