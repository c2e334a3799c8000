"""File-name patterns of our tables (launches.yaml's entry roles, the launcher's training
scripts), matched as ``fnmatch.fnmatchcase`` matches them.

fnmatch compiles each pattern into a regular expression on first use; a lint matches an
entry script against the ~60 patterns of one table once, so compiling them is most of the
cost (a visible part of a lint's start-up: see bench/). A pattern whose only wildcard is
``*`` is matched by its literal pieces instead, in order; any other (``?``, ``[...]``) goes
to fnmatch.
"""

from __future__ import annotations

import fnmatch
from functools import cache


def glob_match(text: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase(text, pattern)``: case-sensitive, ``*`` matches ``/`` too."""
    pieces = _pieces(pattern)
    if pieces is None:
        return fnmatch.fnmatchcase(text, pattern)
    if len(pieces) == 1:
        return text == pattern
    first, *middle, last = pieces
    if len(text) < len(first) + len(last) or not text.startswith(first):
        return False
    if not text.endswith(last):
        return False
    at, end = len(first), len(text) - len(last)
    for piece in middle:  # the leftmost place of each leaves the most room for the rest
        found = text.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


@cache
def _pieces(pattern: str) -> tuple[str, ...] | None:
    """The literal pieces between a pattern's ``*``, or None when it has other wildcards."""
    if "?" in pattern or "[" in pattern:
        return None
    return tuple(pattern.split("*"))
