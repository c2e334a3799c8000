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
from cfglint.model.findings import Finding


def split(values: Iterable[str]) -> list[str]:
    return [x.strip() for v in values for x in v.split(",") if x.strip()]


def _fields(rule: Rule) -> set[str]:
    out = {x.rpartition(":")[2] for x in rule.locate}
    field = getattr(rule, "field", None)  # compare and recommend rules read one setting
    if field:
        out.add(field)
    return out


def specificity(rule: Rule, selector: str) -> int:
    """How narrowly ``selector`` names ``rule``: 0 when it does not; a section or an id
    family least, then longer id prefixes, a row or a setting, and the rule's own id most.
    Between --select and --ignore the more specific wins, as in ruff (a tie: ignore)."""
    s = selector.strip()
    up = s.upper()
    if rule.id == up:
        return 30
    if up.isalnum() and rule.id.startswith(up) and not up.isdigit():
        return 10 + len(up)  # OPT 13, DET01 15
    low = s.lower()
    if low == rule.row or low in _fields(rule):
        return 20
    if low == rule.section or rule.row.startswith(low + "."):
        return 10
    return 0


def matches(rule: Rule, selector: str) -> bool:
    return specificity(rule, selector) > 0


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


# what `cfglint explain NAME` accepts: a rule id, or a row or setting (every rule of it)
_EXPLAINED = 20


def explain_rules(rules: tuple[Rule, ...], name: str) -> tuple[Rule, ...]:
    """The rules ``cfglint explain NAME`` prints: the rule with that id (any case), else
    every rule of the checklist row or setting ``NAME`` (the names ``--select`` takes). An
    unknown name is a usage error naming the closest ids and rows."""
    up = name.strip().upper()
    exact = tuple(r for r in rules if r.id == up)
    if exact:
        return exact
    named = tuple(r for r in rules if specificity(r, name) == _EXPLAINED)
    if named:
        return named
    import difflib
    import re

    known = {v.lower(): v for r in rules for v in (r.id, r.row)}
    close = [known[c] for c in difflib.get_close_matches(name.lower(), list(known), n=3)]
    m = re.fullmatch(r"([A-Z]+)0*(\d{1,3})", up)
    padded = f"{m.group(1)}{int(m.group(2)):03d}" if m else ""
    if padded in known.values():  # OPT6, OPT06: the id with its zeros first
        close = [padded, *[c for c in close if c != padded]][:3]
    hint = f"did you mean {', '.join(close)}?" if close else "`cfglint rules` lists them"
    raise InputError(None, f"no rule or row {name!r}; {hint}")


def select_rules(rules: tuple[Rule, ...], select: list[str], ignore: list[str]) -> tuple[Rule, ...]:
    sel, ign = split(select), split(ignore)

    def kept(r: Rule) -> bool:
        chosen = max((specificity(r, s) for s in sel), default=0) if sel else 1
        dropped = max((specificity(r, s) for s in ign), default=0)
        return chosen > 0 and chosen > dropped

    return tuple(r for r in rules if kept(r))


class PerFileIgnores:
    """``per-file-ignores`` of ``[tool.cfglint]``: a finding in a file that matches a
    pattern is dropped when a selector of that pattern names its rule (with the same
    specificity as --ignore against a --select that names it more narrowly)."""

    def __init__(self, table: dict[str, list[str]], base: str, select: list[str]) -> None:
        import pathspec

        self.base = base
        self.select = split(select)
        self.specs = [
            (pathspec.GitIgnoreSpec.from_lines([pattern]), split(names))
            for pattern, names in table.items()
        ]

    def _names_for(self, path: str) -> list[str]:
        import os

        rel = os.path.relpath(os.path.abspath(path), self.base)
        if rel.startswith(".."):
            return []
        return [n for spec, names in self.specs if spec.match_file(rel) for n in names]

    def drops(self, finding: Finding, rule: Rule | None) -> bool:
        if rule is None:
            return False
        chosen = max((specificity(rule, s) for s in self.select), default=1)
        # where the finding's values are written; a default's place (an anchor) only for
        # a finding that has no written value at all
        located = [loc for loc in finding.locations if not loc.anchor] or finding.locations
        for path in {loc.path for loc in located}:
            names = self._names_for(path)
            if names and max(specificity(rule, n) for n in names) >= chosen:
                return True
        return False
