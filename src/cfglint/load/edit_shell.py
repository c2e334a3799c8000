"""Edits of a launch script at the line a setting was typed on.

The shell loader records where each argument's text was typed (``Value.loc``) and the
variable definitions it passed through (``Value.via``). An edit replaces that text where it
stands: a value typed after its flag, the right side of the ``NAME=...`` that a ``$NAME``
expands, the inside of quotes (quotes kept). A flag that is not in the script is added on
a line of its own next to another flag of the same command, in that command's style
(indentation, ``\\`` continuation or a line inside a quoted block or an array); an
environment variable is exported next to the script's other exports. Nothing is run.
"""

from __future__ import annotations

import re
from typing import Any

from cfglint.model.edits import TextEdit
from cfglint.model.values import Loc

# a word bash takes as it is, inside or outside double quotes
_PLAIN = re.compile(r"^[A-Za-z0-9_.,:/+=@%-]+$")
_VAR_USE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
_DEFAULT_OF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=]")
_WORD_END = re.compile(r"[\s\"'\\;|&()<>`}]")


def shell_word(v: Any) -> str | None:
    """``v`` as one shell word that needs no quoting; None when it would need quotes."""
    if isinstance(v, bool):
        text = "true" if v else "false"
    elif isinstance(v, float):
        text = repr(v)
    else:
        text = str(v)
    return text if _PLAIN.match(text) else None


def _offset(text: str, line: int, column: int) -> int | None:
    """Character offset of 1-based ``line``:``column``; None when outside the text."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines) or column - 1 > len(lines[line - 1]):
        return None
    return sum(len(ln) + 1 for ln in lines[: line - 1]) + column - 1


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def set_value_at(
    text: str,
    path: str,
    loc: Loc,
    via: tuple[Loc, ...],
    value: Any,
    flag: str,
    raw: str | None = None,
) -> TextEdit | None:
    """Replace the value typed at ``loc`` (after ``flag``, or as ``flag=value``); a
    ``$NAME`` there is followed to the assignment of NAME among ``via``. ``raw``, the text
    the lint read there, must be what is found: anything else is refused."""
    word = shell_word(value)
    start = _offset(text, loc.line, loc.column)
    if word is None or start is None:
        return None
    if text.startswith(flag + "=", start):
        start += len(flag) + 1
    use = _VAR_USE.match(text, start)
    if use is not None:
        at_assignment = _set_assignment(text, path, use.group(1), via, word, raw)
        return at_assignment or _replace_word(text, path, start, word, raw)
    return _replace_word(text, path, start, word, raw)


def _replace_word(
    text: str, path: str, start: int, word: str, raw: str | None = None
) -> TextEdit | None:
    """The word at ``start``: plain, inside its quotes, or the default of a
    ``${NAME:-default}`` (what the script uses when NAME is not set, as cfglint reads it)."""
    default = _DEFAULT_OF.match(text, start)
    if default is not None:
        start = default.end()
    quote = text[start] if start < len(text) and text[start] in "\"'" else ""
    if quote:
        end = text.find(quote, start + 1)
        if end < 0:
            return None
        inner = text[start + 1 : end]
        if "$" in inner or "\n" in inner:
            return None
        start += 1
    else:
        m = _WORD_END.search(text, start)
        end = m.start() if m else len(text)
        if "$" in text[start:end] or end == start:
            return None
    if raw is not None and text[start:end] != raw:
        return None
    return TextEdit.model_construct(
        path=path, start=start, end=end, text=word, line=_line_of(text, start)
    )


def _set_assignment(
    text: str, path: str, name: str, via: tuple[Loc, ...], word: str, raw: str | None = None
) -> TextEdit | None:
    """The value of ``NAME=...`` at one of the ``via`` positions."""
    pattern = re.compile(
        rf"(?:(?:export|local|declare|readonly)\s+(?:-\w+\s+)*)?{re.escape(name)}="
    )
    for loc in via:
        if loc.path != path:
            continue
        at = _offset(text, loc.line, loc.column)
        if at is None:
            continue
        m = pattern.match(text, at)
        if m is not None:
            return _replace_word(text, path, m.end(), word, raw)
    return None


def remove_flag_at(text: str, path: str, loc: Loc, flag: str) -> TextEdit | None:
    """Remove the switch ``flag`` typed at ``loc``: its whole line when nothing else is on
    it but a continuation, else the word and one blank next to it."""
    start = _offset(text, loc.line, loc.column)
    if start is None or not text.startswith(flag, start):
        return None
    end = start + len(flag)
    if end < len(text) and not _WORD_END.match(text[end]):
        return None  # a longer flag that starts with this one
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    before, after = text[line_start:start], text[end:line_end]
    if not before.strip() and after.strip() in ("", "\\"):
        prev_end = line_start - 1
        prev = text[text.rfind("\n", 0, max(prev_end, 0)) + 1 : max(prev_end, 0)]
        if not after.strip() and prev.rstrip().endswith("\\"):
            # the last line of a continued command: the line before must stop continuing
            cut = prev.rstrip()[:-1].rstrip()
            head = text.rfind("\n", 0, max(prev_end, 0)) + 1
            return TextEdit.model_construct(
                path=path, start=head, end=line_end, text=cut, line=_line_of(text, head)
            )
        return TextEdit.model_construct(
            path=path,
            start=line_start,
            end=min(line_end + 1, len(text)),
            text="",
            line=loc.line,
        )
    if end < len(text) and text[end] == " ":
        end += 1
    elif start > 0 and text[start - 1] == " ":
        start -= 1
    return TextEdit.model_construct(path=path, start=start, end=end, text="", line=loc.line)


def add_flag(
    text: str, path: str, anchors: list[int], flag: str, value: Any | None
) -> TextEdit | None:
    """A new line ``flag [value]`` before the first of the ``anchors`` (lines of other
    flags of the same command) that holds flags alone, indented like it and continued
    like the line before it."""
    word = "" if value is None else shell_word(value)
    if word is None:
        return None
    lines = text.split("\n")
    for line in anchors:
        if not 2 <= line <= len(lines):
            continue
        cur, prev = lines[line - 1], lines[line - 2]
        if not cur.lstrip().startswith("--"):
            continue
        indent = cur[: len(cur) - len(cur.lstrip())]
        body = f"{flag} {word}" if word else flag
        cont = " \\" if prev.rstrip().endswith("\\") else ""
        at = sum(len(ln) + 1 for ln in lines[: line - 1])
        eol = "\r\n" if cur.endswith("\r") else "\n"
        return TextEdit.model_construct(
            path=path, start=at, end=at, text=f"{indent}{body}{cont}{eol}", line=line
        )
    return None


def add_export(text: str, path: str, name: str, value: Any, before: int | None) -> TextEdit | None:
    """``export NAME=VALUE`` after the last top-level ``export`` above line ``before`` (the
    training command), else after the opening comments."""
    word = shell_word(value)
    if word is None:
        return None
    lines = text.split("\n")
    head = lines[: before - 1] if before else lines
    after = max((i + 1 for i, ln in enumerate(head) if ln.startswith("export ")), default=0)
    if after == 0:  # no export yet: after the shebang and the opening comments
        while after < len(lines) - 1 and lines[after].startswith("#"):
            after += 1
    at = sum(len(ln) + 1 for ln in lines[:after])
    at = min(at, len(text))
    eol = "\r\n" if "\r\n" in text else "\n"
    prefix = "" if at == 0 or text[at - 1] == "\n" else eol
    return TextEdit.model_construct(
        path=path, start=at, end=at, text=f"{prefix}export {name}={word}{eol}", line=after + 1
    )


def set_export_at(text: str, loc: Loc, name: str, value: Any) -> TextEdit | None:
    """The value of the ``NAME=...`` (``export NAME=...``) typed at ``loc``."""
    word = shell_word(value)
    return None if word is None else _set_assignment(text, loc.path, name, (loc,), word)
