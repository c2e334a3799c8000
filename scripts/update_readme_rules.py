"""Regenerate what README.md and docs/ derive from the code and the rule files.

    .venv/bin/python scripts/update_readme_rules.py          # rewrite what is stale
    .venv/bin/python scripts/update_readme_rules.py --check  # exit 1 if anything is stale

A page holds each generated part between two HTML comments (``PAGES`` says which part is on
which page): the Quickstart example's per-rule counts in the README (``example``, from
running it), the lint's option table on docs/commands/lint.md (``options``, from the argument
parser) and the rule tables on docs/rule-index.md (``rules``). docs/rules.md is what
``cfglint rules --format markdown`` prints. Tests fail when any of them is stale.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = [
    "fixtures/examples/llama2_7b/pretrain_llama2_7b.yaml",
    "--megatron",
    "fixtures/examples/llama2_7b/pretrain_llama2_7b.sh",
]


def _cli(*argv: str) -> str:
    from cfglint.cli import main

    buf = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)  # the example's paths are relative to the checkout
    try:
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            main(list(argv))
    finally:
        os.chdir(cwd)
    return buf.getvalue()


def rules_tables() -> str:
    from cfglint.check.rulebook import load_rules
    from cfglint.report.rules_doc import rules_markdown

    return rules_markdown(load_rules())


def rules_page() -> str:
    return _cli("rules", "--format", "markdown")


def _option_cell(action: argparse.Action) -> str:
    names = ", ".join(f"`{s}`" for s in action.option_strings)
    if action.nargs == 0:
        return names
    if action.choices:
        choices = "\\|".join(map(str, action.choices))
        return f"{names} `{choices}`"
    meta = str(action.metavar or action.dest.upper()).replace("|", "\\|")
    return f"{names} `{meta}`"


def options_table() -> str:
    """The lint's options as ``cfglint --help`` lists them, one row each."""
    from cfglint.cli.app import lint_parser

    rows = ["| option | meaning |", "|---|---|"]
    for action in lint_parser()._actions:  # argparse keeps no public list of options
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        if action.dest in ("help", "version"):
            continue
        text = " ".join((action.help or "").replace("|", "\\|").split())
        rows.append(f"| {_option_cell(action)} | {text} |")
    return "\n".join(rows) + "\n"


def example_block() -> str:
    """The Quickstart example's findings per rule, exactly as ``--statistics`` prints them
    (it prints no summary line: nothing is added that the command does not print)."""
    counts = _cli(*EXAMPLE, "--statistics")
    return f"```text\n$ cfglint {' '.join(EXAMPLE)} --statistics\n{counts}```\n"


PARTS = {"rules": rules_tables, "options": options_table, "example": example_block}
# page (relative to the checkout) -> the generated parts it holds
PAGES = {
    "README.md": ("example",),
    "docs/commands/lint.md": ("options",),
    "docs/rule-index.md": ("rules",),
}


def with_parts(text: str, page: str = "README.md") -> str:
    """``text`` of ``page`` with each of its generated parts made afresh."""
    for name in PAGES[page]:
        make = PARTS[name]
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        head, found, rest = text.partition(start)
        if not found:
            raise SystemExit(f"{page} has no {start}")
        _, _, tail = rest.partition(end)
        text = f"{head}{start}\n{make()}{end}{tail}"
    return text


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    stale = []
    for name in PAGES:
        path = ROOT / name
        text = path.read_text(encoding="utf-8")
        new = with_parts(text, name)
        if new != text:
            stale.append(name)
            if not check:
                path.write_text(new, encoding="utf-8")
    page = ROOT / "docs" / "rules.md"
    want = rules_page()
    if not page.is_file() or page.read_text(encoding="utf-8") != want:
        stale.append("docs/rules.md")
        if not check:
            page.parent.mkdir(exist_ok=True)
            page.write_text(want, encoding="utf-8")
    for name in stale:
        print(f"{name} {'is stale' if check else 'updated'}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
