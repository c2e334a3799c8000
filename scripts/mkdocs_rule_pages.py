"""mkdocs hook: one page per rule, generated at build time from ``rules/*.yaml``.

Each page gives the rule's row, severity, rationale and fix (the same text as
``cfglint explain``) and, as pylint's message pages do, a wrong and a right example: the
rule's variation cases (``rules/variations/*.yaml``, which ``tests/check/test_rule_variations.py``
runs) are one-knob edits of an aligned fixture pair, so the edited text is a known way to
trigger the rule and the fixture's original text is the aligned ("right") one.

Nothing here is written to ``docs/``: the pages are added to the build as generated files
and to the navigation under "Rules".
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:  # a checkout without an installed cfglint
    sys.path.insert(0, str(ROOT / "src"))

from cfglint.check.rulebook import load_rules  # noqa: E402
from cfglint.model.findings import SECTION_ORDER  # noqa: E402

NAV_TITLE = "Rules"
# which file of a fixture pair a variation case edits, and the language it is written in
ROLE_FILE = {
    "mf": ("the MindFormers YAML", "yaml"),
    "mg": ("the Megatron / MindSpeed-LLM launch script", "bash"),
    "launch": ("the msrun launch script", "bash"),
}
SIDE = {"mindformers": "MindFormers", "megatron": "Megatron"}


def _sorted_rules() -> list[Any]:
    return sorted(load_rules(), key=lambda r: (SECTION_ORDER.index(r.row.split(".")[0]), r.id))


def variation_cases() -> dict[str, list[dict[str, Any]]]:
    """Every variation case that expects a rule to fire, by rule id, in file order."""
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((ROOT / "rules" / "variations").glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")).get("cases") or []:
            if case.get("rule"):
                by_rule.setdefault(case["rule"], []).append(case)
    return by_rule


def _example_case(cases: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The plainest case: on an unmodified pair at the default profile when there is one."""
    return min(cases, key=lambda c: (bool(c.get("base")), bool(c.get("profile"))), default=None)


def _block(text: str, lang: str) -> list[str]:
    return [f"```{lang}", text.rstrip("\n"), "```"]


def _example(case: dict[str, Any]) -> list[str]:
    where, lang = ROLE_FILE[case["role"]]
    pair = f"the aligned `{case['pair']}` fixture pair"
    if case.get("base"):
        pair += f" (its `{case['base']}` variant)"
    out = [
        "## Example",
        "",
        f"Edited in {where} of {pair}"
        + (f", with `--profile {case['profile']}`:" if case.get("profile") else ":"),
        "",
    ]
    if "replace" in case:
        wrong, right = case["replace"]["new"], case["replace"]["old"]
        out += ["**Wrong** (the rule fires):", "", *_block(wrong, lang), ""]
        out += ["**Right** (aligned):", "", *_block(right, lang), ""]
    elif "delete" in case:
        out += [
            "**Wrong** (the rule fires): the line below left out, so the framework's default"
            " applies.",
            "",
            "**Right** (aligned): written.",
            "",
            *_block(case["delete"], lang),
            "",
        ]
    elif "append" in case:
        out += ["**Wrong** (the rule fires): these lines added:", "", *_block(case["append"], lang)]
        out += ["", "**Right** (aligned): without them.", ""]
    values = case.get("values") or {}
    if values:
        shown = ", ".join(f"{SIDE.get(side, side)} `{value}`" for side, value in values.items())
        out += [f"The finding reports {shown}.", ""]
    for phrase in case.get("says") or []:
        out += [f"- the message says: *{phrase}*"]
    if case.get("says"):
        out.append("")
    if case.get("why"):
        out += [f"Why: {' '.join(str(case['why']).split())}", ""]
    return out


def rule_page(rule: Any, cases: list[dict[str, Any]]) -> str:
    only = " *(align profile only)*" if rule.profiles == ("align",) else ""
    fa = getattr(rule, "fix_action", None)
    fixed = "no automatic fix" if fa is None else f"`--fix` writes it ({fa.safety} fix)"
    out = [
        f"# {rule.id}: {rule.title}",
        "",
        f"Row `{rule.row}` ({rule.section}) · severity **{rule.severity}** · kind {rule.kind}"
        f" · {fixed}{only}",
        "",
        "## Why it matters",
        "",
        " ".join(rule.rationale.split()),
        "",
        "## How to fix it",
        "",
        " ".join(rule.general_fix.split()),
        "",
    ]
    case = _example_case(cases)
    if case is None:
        out += [
            "## Example",
            "",
            "This rule has no variation case yet (its evidence is not a"
            " one-line edit of a fixture pair).",
            "",
        ]
    else:
        out += _example(case)
    out += [
        f"Also in the [rule reference](../rules.md#{rule.id.lower()}); "
        f"`cfglint explain {rule.id}` prints the same text.",
    ]
    return "\n".join(out) + "\n"


def _nav_sections(rules: Iterable[Any]) -> list[dict[str, list[dict[str, str]]]]:
    sections: dict[str, list[dict[str, str]]] = {}
    for r in rules:
        sections.setdefault(r.section, []).append({f"{r.id} {r.title}": f"rules/{r.id}.md"})
    return [{name: pages} for name, pages in sections.items()]


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    for entry in config.nav or []:
        if isinstance(entry, dict) and NAV_TITLE in entry:
            entry[NAV_TITLE] = list(entry[NAV_TITLE]) + _nav_sections(_sorted_rules())
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    cases = variation_cases()
    for rule in _sorted_rules():
        content = rule_page(rule, cases.get(rule.id, []))
        files.append(File.generated(config, f"rules/{rule.id}.md", content=content))
    return files
