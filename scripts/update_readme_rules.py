"""Regenerate the rule reference in README.md and docs/rules.md from the rule files.

    .venv/bin/python scripts/update_readme_rules.py

The README holds the table between two HTML comments; tests fail when it is stale.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def generated() -> str:
    from cfglint.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        main(["rules", "--format", "markdown"])
    return buf.getvalue()


def main() -> int:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    new = f"{head}{START}\n{generated()}{END}{tail}"
    if new != text:
        readme.write_text(new, encoding="utf-8")
        print("README.md updated")
    from cfglint.check.rulebook import load_rules
    from cfglint.report.rules_doc import rules_page

    page = ROOT / "docs" / "rules.md"
    want = rules_page(load_rules())
    if not page.is_file() or page.read_text(encoding="utf-8") != want:
        page.parent.mkdir(exist_ok=True)
        page.write_text(want, encoding="utf-8")
        print("docs/rules.md updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
