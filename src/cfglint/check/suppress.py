"""Inline suppression: ``# cfglint: disable=RULE-ID[,ROW...]`` on the offending line.

The same comment syntax works in YAML, shell and Python files, since all three use
``#`` comments. ``disable-file=`` anywhere in a file silences a rule for the whole file,
and ``all`` matches every rule.
"""

from __future__ import annotations

import re

from cfglint.load.safeio import text_if_small
from cfglint.model.findings import Finding

_MARK = re.compile(r"#\s*cfglint:\s*(disable|disable-file)\s*=\s*([A-Za-z0-9_.,\- ]+)")


class Suppressions:
    def __init__(self) -> None:
        self._lines: dict[str, dict[int, set[str]]] = {}
        self._file: dict[str, set[str]] = {}

    def _load(self, path: str) -> None:
        if path in self._lines:
            return
        per_line: dict[int, set[str]] = {}
        whole: set[str] = set()
        # regular text files only, size-capped: a location may be a dataset .bin
        text = text_if_small(path)
        if "cfglint:" in text:
            for n, line in enumerate(text.splitlines(), start=1):
                for m in _MARK.finditer(line):
                    names = {x.strip() for x in m.group(2).split(",") if x.strip()}
                    (
                        whole if m.group(1) == "disable-file" else per_line.setdefault(n, set())
                    ).update(names)
        self._lines[path], self._file[path] = per_line, whole

    def silenced(self, f: Finding) -> bool:
        keys = {f.rule, f.row, "all"}
        for loc in f.locations:
            self._load(loc.path)
            if keys & self._file[loc.path] or keys & self._lines[loc.path].get(loc.line, set()):
                return True
        return False


def apply(findings: list[Finding]) -> tuple[list[Finding], int]:
    s = Suppressions()
    kept = [f for f in findings if not s.silenced(f)]
    return kept, len(findings) - len(kept)
