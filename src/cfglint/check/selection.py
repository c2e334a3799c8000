"""``--select`` / ``--ignore`` (and their ``[tool.cfglint]`` twins), the way ruff reads them.

A selector is a rule id (``OPT006``, any case), an id prefix naming a family (``OPT``,
``DET01``), a checklist row (``optimizer.beta2``), a section (``optimizer``), or a setting
that ``cfglint show`` prints (``optimizer.lr_decay_style``): it selects the rules that read
that setting. Anything else is a usage error naming the closest known names, never a
selection that silently matches nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from cfglint.check.rulebook import Rule
from cfglint.model.errors import InputError


def split(values: Iterable[str]) -> list[str]:
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


def _fields(rule: Rule) -> set[str]:
    out = {x.rpartition(":")[2] for x in rule.locate}
    field = getattr(rule, "field", None)  # compare and recommend rules read one setting
    if field:
        out.add(field)
    return out


def matches(rule: Rule, selector: str) -> bool:
    s = selector.strip()
    up = s.upper()
    if rule.id == up or (up.isalnum() and rule.id.startswith(up) and not up.isdigit()):
        return True
    low = s.lower()
    if low in (rule.row, rule.section) or rule.row.startswith(low + "."):
        return True
    return low in _fields(rule)


def vocabulary(rules: Iterable[Rule]) -> list[str]:
    names: set[str] = set()
    for r in rules:
        names.update({r.id, r.row, r.section, *_fields(r)})
    return sorted(names)


def check_known(selectors: list[str], rules: tuple[Rule, ...], where: str) -> None:
    """Raise a usage error for a selector that names nothing."""
    for s in selectors:
        if any(matches(r, s) for r in rules):
            continue
        # only a bad selector needs the vocabulary and the fuzzy match (imported here: a lint
        # that names nothing wrong never pays for them)
        import difflib

        lowered = {v.lower(): v for v in vocabulary(rules)}
        close = difflib.get_close_matches(s.lower(), list(lowered), n=3, cutoff=0.6)
        hint = (
            f"; did you mean {', '.join(lowered[c] for c in close)}?"
            if close
            else "; `cfglint rules` lists the rule ids and rows"
        )
        raise InputError(None, f"{where}: unknown rule, row or section {s!r}{hint}")


def select_rules(rules: tuple[Rule, ...], select: list[str], ignore: list[str]) -> tuple[Rule, ...]:
    sel, ign = split(select), split(ignore)
    return tuple(
        r
        for r in rules
        if (not sel or any(matches(r, s) for s in sel)) and not any(matches(r, s) for s in ign)
    )
