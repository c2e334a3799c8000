"""A plain arguments file (one or many ``--flag value`` per line), tokenized the way a shell
would split it, with positions.
"""

from __future__ import annotations

import re

from cfglint.load.safeio import read_text
from cfglint.load.shell.pieces import snippet
from cfglint.load.shell.words import Pos, Word
from cfglint.model.errors import InputError
from cfglint.model.record import Record
from cfglint.model.values import Loc


class _ArgTok(Record):
    __slots__ = ("chars", "pos", "unknown")

    chars: list[str]
    pos: Pos
    unknown: str

    def __init__(
        self,
        chars: list[str] | None = None,
        pos: Pos = (1, 1),
        unknown: str = "",
    ) -> None:
        self.chars = [] if chars is None else chars
        self.pos = pos
        self.unknown = unknown


def parse_args_file(path: str) -> tuple[list[Word], str]:
    """Arguments written one or many per line, with ``#`` comments, quotes and
    backslash continuations. Nothing is expanded: ``${VAR}`` makes an unknown word."""
    text = read_text(path, what="arguments file")
    return _tokenize_args(text, path), text


def _tokenize_args(text: str, path: str) -> list[Word]:
    text = text.replace("\r\n", "\n")
    words: list[Word] = []
    cur: _ArgTok | None = None
    i, line, col, n = 0, 1, 1, len(text)

    def finish() -> None:
        nonlocal cur
        if cur is not None:
            loc = Loc.model_construct(path=path, line=cur.pos[0], column=cur.pos[1])
            value = None if cur.unknown else "".join(cur.chars)
            words.append(Word(value, loc, unknown=cur.unknown))
            cur = None

    def advance(count: int) -> None:
        nonlocal i, line, col
        for ch in text[i : i + count]:
            line, col = (line + 1, 1) if ch == "\n" else (line, col + 1)
        i += count

    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            finish()
            advance(1)
            continue
        if ch == "\\" and text[i + 1 : i + 2] == "\n":  # continuation, inside a word or not
            advance(2)
            continue
        if ch == "#" and cur is None:
            end = text.find("\n", i)
            advance((n if end < 0 else end) - i)
            continue
        if cur is None:
            cur = _ArgTok(pos=(line, col))
        if ch == "\\" and i + 1 < n:
            cur.chars.append(text[i + 1])
            advance(2)
        elif ch in "'\"":
            end = _closing_quote(text, i)
            if end < 0:
                raise InputError(path, "unterminated quote starting here", line=line)
            body = text[i + 1 : end]
            if ch == '"':
                if re.search(r"(?<!\\)[$`]", body):
                    cur.unknown = (
                        cur.unknown or f"{snippet(body)!r} is not expanded in an arguments file"
                    )
                body = re.sub(r"\\\n", "", body)
                body = re.sub(r'\\([$`"\\])', r"\1", body)
            cur.chars.append(body)
            advance(end + 1 - i)
        elif ch in "$`":
            m = re.match(r"\$\{[^}\n]*\}?|\$\([^)\n]*\)?|\$\w+|`[^`\n]*`?|\$", text[i:])
            token = m.group(0) if m else ch
            cur.unknown = cur.unknown or f"{token} is not expanded in an arguments file"
            advance(len(token))
        else:
            cur.chars.append(ch)
            advance(1)
    finish()
    return words


def _closing_quote(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\" and quote == '"':
            i += 2
            continue
        if text[i] == quote:
            return i
        i += 1
    return -1
