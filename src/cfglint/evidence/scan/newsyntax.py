"""Files written for a newer Python than the one running cfglint.

Python 3.12 lets an f-string hold its own quote character inside a replacement field
(PEP 701: ``f"{d["key"]}"``); CPython 3.11's parser rejects such a file outright, so the
scan would see nothing of it, entry points included. libcst parses that syntax whatever the
running Python, so for these files (and only these: it is imported here, lazily) it finds
each f-string, the f-string is blanked to a plain string literal of the same shape (same
lines and columns), and CPython's parser reads the rest. What the f-strings held is lost,
which costs nothing here: the scanner reports no call made inside one.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
import warnings

# libcst's parser recurses per nesting level and is super-linear in it (a 2,000-deep
# bracket nest overflows its stack; a 5,000-term `a + b + ...` chain takes ~30 s): files
# past these bounds are not handed to it. Real training code stays far below them.
MAX_BRACKET_DEPTH = 100
MAX_OPERATORS = 500
_BINARY = frozenset(
    {
        *("+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^"),
        *("<", ">", "<=", ">=", "==", "!=", "and", "or", "not", "in", "is"),
    }
)


def newer_fstrings(err: SyntaxError) -> bool:
    """Is this CPython error one that Python 3.12's f-strings would explain?"""
    return sys.version_info < (3, 12) and str(err.msg).startswith("f-string")


def parse_with_fstrings_blanked(text: str) -> tuple[ast.Module, str] | None:
    """CPython's parse of ``text`` once its f-strings are blanked, and the blanked text
    (the tree's positions refer to it), or None (libcst missing, the file too deeply
    nested for it, or still not valid once blanked)."""
    if too_nested(text) is not None:
        return None
    try:
        import libcst as cst
        from libcst.metadata import MetadataWrapper, PositionProvider
    except ImportError:  # a slim install: the file stays a syntax error
        return None
    try:
        module = cst.parse_module(text)
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    except (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError):
        return None
    spans = sorted(
        ((p.start.line, p.start.column), (p.end.line, p.end.column))
        for node, p in positions.items()
        if isinstance(node, cst.FormattedString)
    )
    lines = text.splitlines(keepends=True)
    last_end = (0, 0)
    for start, end in spans:
        if start < last_end:
            continue  # an f-string inside another one: blanked with it
        if not _blank(lines, start, end):
            return None
        last_end = end
    blanked = "".join(lines)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(blanked), blanked
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _blank(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Replace the f-string at ``start``..``end`` (1-based lines, 0-based columns) by a
    string literal of the same length on the same lines."""
    (l0, c0), (l1, c1) = start, end
    if l0 == l1:
        line = lines[l0 - 1]
        width = c1 - c0
        if width < 2:
            return False
        lines[l0 - 1] = line[:c0] + '"' + " " * (width - 2) + '"' + line[c1:]
        return True
    # spans lines: a triple-quoted literal keeps every newline where it was
    first, last = lines[l0 - 1], lines[l1 - 1]
    head = len(first.rstrip("\r\n")) - c0
    if head < 3 or c1 < 3:
        return False
    lines[l0 - 1] = first[:c0] + '"""' + " " * (head - 3) + first[c0 + head :]
    for i in range(l0, l1 - 1):
        body = lines[i].rstrip("\r\n")
        lines[i] = " " * len(body) + lines[i][len(body) :]
    lines[l1 - 1] = " " * (c1 - 3) + '"""' + last[c1:]
    return True


def too_nested(text: str) -> str | None:
    """Why ``text`` is too deeply nested (or has too long an operator chain) to hand to
    libcst, from the tokenizer (strings and comments do not count); None when it is not."""
    depth = ops = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE:
                ops = 0
            elif tok.string in _BINARY and tok.type in (tokenize.OP, tokenize.NAME):
                ops += 1
                if ops > MAX_OPERATORS:
                    return f"more than {MAX_OPERATORS} operators in one statement"
            if tok.type == tokenize.OP:
                if tok.string in "([{":
                    depth += 1
                    if depth > MAX_BRACKET_DEPTH:
                        return f"more than {MAX_BRACKET_DEPTH} nested brackets"
                elif tok.string in ")]}":
                    depth = max(0, depth - 1)
    except (tokenize.TokenError, SyntaxError, RecursionError, MemoryError, ValueError):
        pass
    return None
