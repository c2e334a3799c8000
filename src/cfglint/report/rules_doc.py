"""The rule reference as Markdown: docs/rules.md and the tables of docs/rule-index.md."""

from __future__ import annotations

from typing import Any

from cfglint.model.findings import SECTION_ORDER

_UNSAFE = " `--unsafe-fixes` (it changes more of the run)"


def rules_page(rules: Any) -> str:
    """docs/rules.md: every rule under its own anchor (the SARIF helpUri points there)."""
    out = [
        "# cfglint rules",
        "",
        "Generated from `rules/*.yaml` (`cfglint rules --format markdown`, written by",
        "`scripts/update_readme_rules.py`); do not edit by hand.",
        "A rule marked *align profile* runs only with `--profile align`; a recommendation",
        "(kind `recommend` or `env`) runs for a pair, and on a single side with `--profile align`.",
    ]
    section = None
    for r in sorted(rules, key=lambda r: (SECTION_ORDER.index(r.row.split(".")[0]), r.id)):
        if r.section != section:
            section = r.section
            out += ["", f"## {section}"]
        only = " *(align profile)*" if r.profiles == ("align",) else ""
        fa = getattr(r, "fix_action", None)
        fixed = (
            "" if fa is None else f" · fixed by `--fix`{_UNSAFE if fa.safety == 'unsafe' else ''}"
        )
        out += [
            "",
            f'<a id="{r.id.lower()}"></a>',
            f"### {r.id}: {r.title}{only}",
            "",
            f"Row `{r.row}` · severity {r.severity} · kind {r.kind}{fixed}",
            "",
            " ".join(r.rationale.split()),
            "",
            f"**Fix:** {' '.join(r.general_fix.split())}",
        ]
    return "\n".join(out) + "\n"


def rules_markdown(rules: Any) -> str:
    """The rule index (docs/rule-index.md), one table per checklist section."""
    out: list[str] = []
    section = None
    for r in sorted(rules, key=lambda r: (SECTION_ORDER.index(r.row.split(".")[0]), r.id)):
        if r.section != section:
            section = r.section
            out += [
                "",
                f"#### {section}",
                "",
                "| rule | row | severity | what it reports |",
                "|---|---|---|---|",
            ]
        only = " *(align profile)*" if r.profiles == ("align",) else ""
        out.append(f"| {r.id} | `{r.row}` | {r.severity} | {r.title}{only} |")
    return "\n".join(out).lstrip("\n") + "\n"
