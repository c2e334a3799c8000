"""The interpreter's internal value model: fragments of text with positions, variables,
word splitting, and the size limits that keep hostile scripts bounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from cfglint.load.shell.words import Pos
from cfglint.model.lazy_re import compile_on_use
from cfglint.model.record import Frozen, Record

# Sizes count characters plus PIECE_COST per fragment, so that values made of many
# small, empty or unknown fragments (and arrays of many elements) are bounded too.
VALUE_LIMIT = 64 * 1024


PIECE_COST = 16  # so that a value holds at most a few thousand fragments


COMMAND_LIMIT = 1024 * 1024


TOTAL_LIMIT = 8 * 1024 * 1024


MAX_CALL_DEPTH = 16


# Provenance chains (X=$((Y+1)) over thousands of lines) must not grow without bound.
MAX_VIA = 16


TOO_LARGE = "value too large (over 64 KiB)"


_IFS_SPLIT = compile_on_use(r"([ \t\n]+)")


IFS_CHAR = re.compile(r"[ \t\n]")


_GLOB_RE = compile_on_use(r"[*?]|\[[^\]]*\]")


_BRACE_RE = compile_on_use(r"\{[^{}\x00]*(,|\.\.)[^{}\x00]*\}")


INT_RE = compile_on_use(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


NAME_RE = compile_on_use(r"[A-Za-z_][A-Za-z_0-9]*")


class Piece(Record):  # not Frozen: never mutated, and not hashed
    """A fragment of an expanded word and where it came from."""

    __slots__ = ("brk", "cond", "exact", "glob", "pos", "split", "text", "unknown", "via")

    text: str
    pos: Pos
    via: tuple[Pos, ...]
    unknown: str
    cond: bool
    split: bool  # subject to field splitting where it is used
    glob: bool  # pattern characters are active where it is used
    exact: bool  # text maps onto source columns starting at pos
    brk: bool  # a hard word boundary, between elements of "${ARR[@]}"

    def __init__(
        self,
        text: str,
        pos: Pos,
        via: tuple[Pos, ...] = (),
        unknown: str = "",
        cond: bool = False,
        split: bool = False,
        glob: bool = False,
        exact: bool = False,
        brk: bool = False,
    ) -> None:
        self.text = text
        self.pos = pos
        self.via = via
        self.unknown = unknown
        self.cond = cond
        self.split = split
        self.glob = glob
        self.exact = exact
        self.brk = brk

    # Direct constructor calls: replace() is too slow for the hot paths.
    def used(self, at: Pos, active: bool) -> Piece:
        """This stored piece expanded at use site ``at``."""
        via = self.via if at in self.via else (*self.via[: MAX_VIA - 1], at)
        return Piece(self.text, self.pos, via, self.unknown, self.cond, active, active, self.exact)

    def stored(self, *, cond: bool = False) -> Piece:
        return Piece(
            self.text, self.pos, self.via, self.unknown, self.cond or cond, exact=self.exact
        )


BREAK_PIECE = Piece("", (0, 0), brk=True)


Value = tuple[Piece, ...]


class Var(Record):
    __slots__ = ("alts", "branch", "cond", "defs", "elements", "is_array", "line")

    elements: dict[int, Value]  # a scalar is element 0 of a one-element array
    is_array: bool
    defs: tuple[Pos, ...]
    cond: bool
    branch: tuple[tuple[int, int], ...]
    line: int
    # Set by sibling branches of an if/case whose condition is not decided statically:
    # every branch's (text, position), the chosen one included; () when not a choice.
    alts: tuple[tuple[str | None, Pos], ...]

    def __init__(
        self,
        elements: dict[int, Value],
        is_array: bool,
        defs: tuple[Pos, ...],
        cond: bool,
        branch: tuple[tuple[int, int], ...],
        line: int,
        alts: tuple[tuple[str | None, Pos], ...] = (),
    ) -> None:
        self.elements = elements
        self.is_array = is_array
        self.defs = defs
        self.cond = cond
        self.branch = branch
        self.line = line
        self.alts = alts

    def scalar(self) -> Value | None:
        return self.elements.get(0)

    def ordered(self) -> list[Value]:
        return [self.elements[k] for k in sorted(self.elements)]

    def size(self) -> int:
        return sum(pieces_size(v) for v in self.elements.values())


class Ctx(Frozen):
    __slots__ = ("branch", "cond", "in_function")

    cond: bool
    branch: tuple[tuple[int, int], ...]
    in_function: bool

    def __init__(
        self,
        cond: bool = False,
        branch: tuple[tuple[int, int], ...] = (),
        in_function: bool = False,
    ) -> None:
        self.cond = cond
        self.branch = branch
        self.in_function = in_function

    def into(self, block: int, k: int) -> Ctx:
        return Ctx(True, (*self.branch, (block, k)), self.in_function)


class ValueTooLarge(Exception):
    pass


class UnknownValue(Exception):
    """Arithmetic or an index that cannot be evaluated; the message says why."""


class StopScript(Exception):
    """An unconditional top-level ``exit``: nothing after it runs."""


def pieces_size(value: Iterable[Piece]) -> int:
    return sum(len(p.text) + PIECE_COST for p in value)


def merge_positions(*groups: Iterable[Pos], exclude: Pos | None = None) -> tuple[Pos, ...]:
    seen: dict[Pos, None] = {}
    for group in groups:
        for p in group:
            if p != exclude:
                seen.setdefault(p, None)
                if len(seen) >= MAX_VIA:
                    return tuple(seen)
    return tuple(seen)


def snippet(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shift(p: Piece, text: str, offset: int) -> Piece:
    if offset == 0 and text == p.text:
        return p
    pos = (p.pos[0], p.pos[1] + offset) if p.exact else p.pos
    return p.replace(text=text, pos=pos)


def split_words(pieces: Iterable[Piece]) -> list[list[Piece]]:
    """Field splitting: unquoted expansion results split on blanks, the rest do not."""
    words: list[list[Piece]] = []
    cur: list[Piece] | None = None
    for p in pieces:
        if p.brk:
            if cur is not None:
                words.append(cur)
                cur = None
        elif p.unknown or not p.split or not IFS_CHAR.search(p.text):
            if p.split and not p.text and not p.unknown:
                continue  # an empty unquoted expansion is no word at all
            if cur is None:
                cur = []
            cur.append(p)
        else:
            offset = 0
            for k, part in enumerate(_IFS_SPLIT.split(p.text)):
                if k % 2:
                    if cur is not None:
                        words.append(cur)
                        cur = None
                elif part:
                    if cur is None:
                        cur = []
                    cur.append(_shift(p, part, offset))
                offset += len(part)
    if cur is not None:
        words.append(cur)
    return words


def word_problem(pieces: Sequence[Piece], *, patterns: bool = True) -> str:
    """Why a word cannot be known statically even though all its text is known."""
    active = "".join(p.text if p.glob else "\x00" * len(p.text) for p in pieces)
    shown = "".join(p.text for p in pieces)
    if active.startswith("~"):
        return f"tilde expansion in {snippet(shown)!r} depends on $HOME"
    if not patterns:
        return ""
    # each pattern only where the word holds a character it needs: most words hold none,
    # and a script without braces or globs never compiles them
    if "{" in active and _BRACE_RE.search(active):
        return f"brace expansion {snippet(shown)!r} is not expanded"
    if ("*" in active or "?" in active or "[" in active) and _GLOB_RE.search(active):
        return f"glob pattern {snippet(shown)!r} is not expanded"
    return ""


def at_expansion(pieces: list[Piece], pos: Pos) -> list[Piece]:
    """A one-token operand of ``${X:-...}`` is reported at the ``${``, like a variable."""
    joined = "".join(p.text for p in pieces)
    if not pieces or IFS_CHAR.search(joined.strip()) or any(p.brk for p in pieces):
        return pieces
    via = merge_positions(*(p.via for p in pieces), exclude=pos)
    return [
        Piece(
            joined,
            pos,
            via,
            first_unknown(pieces),
            any(p.cond for p in pieces),
            split=any(p.split for p in pieces),
            glob=any(p.glob for p in pieces),
        )
    ]


def first_unknown(pieces: Iterable[Piece]) -> str:
    return next((p.unknown for p in pieces if p.unknown), "")


def known_head(pieces: Sequence[Piece]) -> str:
    """The text before the first unknown piece of a word."""
    first = next((k for k, p in enumerate(pieces) if p.unknown), len(pieces))
    return "".join(p.text for p in pieces[:first])


def template_of(pieces: Sequence[Piece]) -> str:
    """A word's text with each unknown piece as one UNKNOWN_MARK (words.Word.template)."""
    from cfglint.load.shell.words import UNKNOWN_MARK

    return "".join(UNKNOWN_MARK if p.unknown else p.text for p in pieces)


def known_tail(pieces: Sequence[Piece]) -> str:
    """The text after the last unknown piece of a word."""
    last = max((k for k, p in enumerate(pieces) if p.unknown), default=-1)
    return "".join(p.text for p in pieces[last + 1 :])


def storable(pieces: Iterable[Piece]) -> Value:
    """A value as stored in a variable: no splitting marks; array breaks become blanks."""
    out = []
    for p in pieces:
        if p.brk:
            out.append(Piece(" ", out[-1].pos if out else (1, 1)))
        else:
            out.append(p.stored())
    return tuple(out)
