"""Inline suppression: ``# cfglint: disable=RULE-ID[,ROW...] [-- reason]``.

The same comment syntax works in YAML, shell and Python files, since all three use ``#``
comments. Directive and names are read in any case (``# CFGLINT: disable=opt006``); names
are separated by commas or blanks, and a reason follows ``--``. A comment on a line applies
to that line; on the last line of a ``\\``-continued command (where a comment can go: none
can sit inside the continuation) it applies to every line of that command.
``disable-file=`` anywhere in a file silences a rule for the whole file, and ``all`` matches
every rule.

As ruff's RUF100 does, a name that is no rule, row or section, and a suppression that
silenced nothing, come back as input warnings: a stale comment never hides a later finding
unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from cfglint.check.rule import Rule
from cfglint.load.safeio import text_if_small
from cfglint.model.findings import Finding, InputProblem
from cfglint.model.lazy_re import compile_on_use
from cfglint.model.record import Record

_MARK = compile_on_use(r"#\s*cfglint\s*:\s*(disable-file|disable)\s*=\s*(.*)$", re.IGNORECASE)


class _Mark(Record):
    """One suppression comment: where it is, what it names, what it covers."""

    __slots__ = ("line", "lines", "names", "path", "used", "whole_file")

    path: str
    line: int
    names: list[str]
    lines: range  # the lines it covers (a whole file: every line)
    whole_file: bool
    used: set[str]

    def __init__(
        self,
        path: str,
        line: int,
        names: list[str],
        lines: range,
        whole_file: bool = False,
        used: set[str] | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.names = names
        self.lines = lines
        self.whole_file = whole_file
        self.used = set() if used is None else used


def _names(text: str) -> list[str]:
    """The names before ``--`` (the reason): comma or blank separated."""
    names = text.split("--", 1)[0]
    return [n for n in re.split(r"[\s,]+", names) if n]


def _continued_from(lines: list[str]) -> dict[int, int]:
    """For the last line of each ``\\``-continued command, the line it starts on."""
    out: dict[int, int] = {}
    start = None
    for n, line in enumerate(lines, start=1):
        if line.rstrip().endswith("\\") and not line.lstrip().startswith("#"):
            start = n if start is None else start
        elif start is not None:
            out[n] = start
            start = None
    return out


def _marks_in(path: str) -> list[_Mark]:
    # regular text files only, size-capped: a location may be a dataset .bin
    text = text_if_small(path)
    if "cfglint" not in text.lower():
        return []
    lines = text.splitlines()
    starts = _continued_from(lines)
    out = []
    for n, line in enumerate(lines, start=1):
        # the pattern only on a line holding the three characters every mark has
        m = _MARK.search(line) if "#" in line and ":" in line and "=" in line else None
        if m is None:
            continue
        whole = m.group(1).lower() == "disable-file"
        covered = range(1, len(lines) + 1) if whole else range(starts.get(n, n), n + 1)
        out.append(_Mark(path, n, _names(m.group(2)), covered, whole))
    return out


def _hits(name: str, f: Finding, rule: Rule | None) -> bool:
    if name.lower() == "all":
        return True
    if rule is not None:
        from cfglint.check.selection import matches

        return matches(rule, name)
    return name.upper() == f.rule or name.lower() == f.row


class Suppressions:
    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        # every rule shipped: a name is known if it names any, selected or not
        self.by_id = {r.id: r for r in rules}
        self.marks: dict[str, list[_Mark]] = {}

    def load(self, path: str) -> list[_Mark]:
        if path not in self.marks:
            self.marks[path] = _marks_in(path)
        return self.marks[path]

    def silenced(self, f: Finding) -> bool:
        rule = self.by_id.get(f.rule)
        hit = False
        for loc in f.locations:
            for mark in self.load(loc.path):
                if not mark.whole_file and (loc.anchor or loc.line not in mark.lines):
                    continue
                for name in mark.names:
                    if _hits(name, f, rule):
                        mark.used.add(name)
                        hit = True
        return hit

    def problems(self, quiet_rules: set[str]) -> list[InputProblem]:
        """Unknown names, and names that silenced nothing (unless every rule they name is
        in ``quiet_rules``: deselected, undecided, or advice a single side does not get)."""
        rules = list(self.by_id.values())
        from cfglint.check.selection import matches

        out = []
        for marks in self.marks.values():
            for mark in marks:
                for name in mark.names:
                    if name in mark.used:
                        continue
                    named = [r for r in rules if matches(r, name)]
                    if name.lower() != "all" and not named:
                        why = f"unknown rule, row or section {name!r} (a reason goes after --)"
                    elif named and all(r.id in quiet_rules for r in named):
                        continue
                    else:
                        where = "in this file" if mark.whole_file else "on this line"
                        why = f"`disable={name}` suppresses nothing: no such finding {where}"
                    out.append(
                        InputProblem.model_construct(
                            path=mark.path, line=mark.line, message=why, level="warning"
                        )
                    )
        return out


def apply(
    findings: list[Finding],
    rules: Iterable[Rule] = (),
    files: Iterable[str] = (),
    ran: set[str] | None = None,
) -> tuple[list[Finding], int, list[InputProblem]]:
    """The findings no comment silences, how many were silenced, and the warnings about
    the suppression comments of ``files`` and of every file a finding points at.
    ``rules``: every rule shipped; ``ran``: the ids of the rules that were decided on
    these files (only their suppressions can be unused; None: none can)."""
    rules = tuple(rules)
    s = Suppressions(rules)
    for path in files:
        s.load(path)
    kept = [f for f in findings if not s.silenced(f)]
    quiet = {r.id for r in rules} - (ran or set())
    return kept, len(findings) - len(kept), s.problems(quiet)
