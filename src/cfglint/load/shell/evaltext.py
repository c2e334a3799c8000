"""``eval $cmd``: the second parse bash gives to the text of its arguments.

Launch scripts often build the whole command in a variable and run it with ``eval``
(``run_cmd="torchrun $DISTRIBUTED_ARGS pretrain_gpt.py ${options}"; eval ${run_cmd}``).
bash joins eval's expanded arguments with blanks and parses the result as shell input
again, so quotes written inside the variable's value are removed only now
(``--moe-layer-freq '([1]*4)'`` reaches the program as ``([1]*4)``), an unquoted newline,
``;``, ``|`` or ``&`` ends a command, ``<``/``>`` redirect and ``$``/backquotes expand a
second time. ``shlex`` splits words but does not say which characters were quoted or where
a word came from, which is what decides an expansion or a glob here and which source line
a flag is reported at; hence this small scanner of the POSIX quoting rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from cfglint.load.shell.pieces import snippet
from cfglint.load.shell.words import UNKNOWN_MARK, Word

_UNKNOWN = UNKNOWN_MARK  # stands for a first-stage word that is not known statically
_SEPARATORS = frozenset(";&|\n")
_REDIRECTS = frozenset("<>")
_GLOB = frozenset("*?[")


@dataclass
class _Token:
    chars: list[str] = field(default_factory=list)
    start: int = -1  # offset in the joined text of the first character
    end: int = -1
    unknown: str = ""
    glob: bool = False  # an unquoted glob character
    brace: bool = False  # an unquoted `{`
    redirect_target: bool = False
    fd_only: bool = True  # only digits so far (an fd before `>`)
    known_from: int = 0  # chars from here on follow the last unknown part

    def add(self, ch: str, at: int, *, quoted: bool) -> None:
        if self.start < 0:
            self.start = at
        self.end = at
        self.chars.append(ch)
        if not quoted and ch in _GLOB:
            self.glob = True
        if not quoted and ch == "{":
            self.brace = True
        if quoted or not ch.isdigit():
            self.fd_only = False

    def mark(self, reason: str, at: int) -> None:
        if self.start < 0:
            self.start = at
        self.end = max(self.end, at)
        self.unknown = self.unknown or reason
        self.known_from = len(self.chars)


def eval_commands(words: list[Word]) -> tuple[list[list[Word]], list[str]]:
    """The commands bash runs for ``eval WORDS`` (each a list of words), and warnings.

    A token whose text depends on run time (a second expansion, an unknown first-stage
    word, a glob) is an unknown word with the reason, placed where its first character
    was typed."""
    text, owner = _joined(words)
    scan = _Scan(text, words, owner)
    scan.run()
    out: list[list[Word]] = []
    for cmd in scan.commands:
        # `> log`: a file name, not an argument
        cmd_words = [
            _to_word(t, "".join(t.chars), words, owner) for t in cmd if not t.redirect_target
        ]
        if cmd_words:
            out.append(cmd_words)
    return out, scan.warnings


def _joined(words: list[Word]) -> tuple[str, list[int]]:
    """The text eval parses (its words joined with blanks, an unknown word as a mark), and
    for each offset in it the index of the first-stage word it came from (its location)."""
    text_parts: list[str] = []
    owner: list[int] = []
    for k, w in enumerate(words):
        if k:
            text_parts.append(" ")
            owner.append(k)
        part = w.text if w.text is not None else (w.template or _UNKNOWN + _plain(w.tail))
        text_parts.append(part)
        owner.extend([k] * len(part))
    return "".join(text_parts), owner


@dataclass
class _Scan:
    """The second parse of eval's text: one method per kind of character (``_STEPS``), each
    returning where the scan goes on, or None where the text ends in an unterminated quote
    (bash refuses it; the tokens so far are kept)."""

    text: str
    words: list[Word]
    owner: list[int]
    commands: list[list[_Token]] = field(default_factory=lambda: [[]])
    warnings: list[str] = field(default_factory=list)
    tok: _Token = field(default_factory=_Token)

    def run(self) -> None:
        i: int | None = 0
        while i is not None and i < len(self.text):
            i = _STEPS.get(self.text[i], _Scan.literal)(self, i)
        self.end_token()

    def end_token(self) -> None:
        if self.tok.start >= 0:  # a blank before any character keeps a pending redirect
            self.commands[-1].append(self.tok)
            self.tok = _Token()

    def unknown(self, i: int) -> int:
        self.tok.mark(self.words[self.owner[i]].unknown or "not known statically", i)
        return i + 1

    def blank(self, i: int) -> int:
        self.end_token()
        return i + 1

    def comment(self, i: int) -> int:
        """``#`` starting a word runs to the end of the line; inside one it is a letter."""
        if self.tok.start >= 0:
            return self.literal(i)
        end = self.text.find("\n", i)
        return len(self.text) if end < 0 else end

    def separator(self, i: int) -> int:
        self.end_token()
        self.tok = _Token()  # a redirect with no target is dropped
        if self.commands[-1]:
            self.commands.append([])
        return i + 1

    def redirect(self, i: int) -> int:
        if self.tok.start >= 0 and self.tok.fd_only:
            self.tok = _Token()  # `2>`: the digits name a file descriptor
        self.end_token()
        while i + 1 < len(self.text) and self.text[i + 1] in "<>&":
            i += 1
        self.tok.redirect_target = True
        return i + 1

    def subshell(self, i: int) -> int:
        self.tok.mark(f"eval runs shell syntax {snippet(self.text, 60)!r}, not followed", i)
        return i + 1

    def expansion(self, i: int) -> int:
        self.tok.mark(f"eval expands {snippet(self.text[i:], 30)!r} a second time", i)
        return i + 1

    def backslash(self, i: int) -> int:
        if i + 1 < len(self.text) and self.text[i + 1] != "\n":
            self.tok.add(self.text[i + 1], i + 1, quoted=True)
        return i + 2

    def literal(self, i: int) -> int:
        self.tok.add(self.text[i], i, quoted=False)
        return i + 1

    def single_quoted(self, i: int) -> int | None:
        close = self.text.find("'", i + 1)
        if close < 0:
            return self.unterminated(i, "single")
        if self.tok.start < 0:
            self.tok.start = i
        for j in range(i + 1, close):
            self.tok.add(self.text[j], j, quoted=True)
        self.tok.end = close
        return close + 1

    def double_quoted(self, i: int) -> int | None:
        """Inside double quotes a backslash escapes only ``$`\"\\`` and a newline, and
        ``$`` and backquotes still expand (a second time: not followed)."""
        if self.tok.start < 0:
            self.tok.start = i
        j, n = i + 1, len(self.text)
        while j < n and self.text[j] != '"':
            c = self.text[j]
            if c == "\\" and j + 1 < n and self.text[j + 1] in '$`"\\\n':
                if self.text[j + 1] != "\n":
                    self.tok.add(self.text[j + 1], j + 1, quoted=True)
                j += 2
                continue
            if c in "$`":
                self.expansion(j)
            elif c == _UNKNOWN:
                self.unknown(j)
            else:
                self.tok.add(c, j, quoted=True)
            j += 1
        if j >= n:
            return self.unterminated(i, "double")
        self.tok.end = j
        return j + 1

    def unterminated(self, i: int, which: str) -> None:
        self.tok.mark(f"eval: unterminated {which} quote", i)
        self.warnings.append(f"eval {snippet(self.text, 60)}: unterminated {which} quote")


# what each character starts in eval's text; any other is a letter of the current word
_STEPS: dict[str, Callable[[_Scan, int], int | None]] = {
    _UNKNOWN: _Scan.unknown,
    " ": _Scan.blank,
    "\t": _Scan.blank,
    "#": _Scan.comment,
    **dict.fromkeys(_SEPARATORS, _Scan.separator),
    **dict.fromkeys(_REDIRECTS, _Scan.redirect),
    "(": _Scan.subshell,
    ")": _Scan.subshell,
    "'": _Scan.single_quoted,
    '"': _Scan.double_quoted,
    "\\": _Scan.backslash,
    "$": _Scan.expansion,
    "`": _Scan.expansion,
}


def _plain(tail: str) -> str:
    """The known end of an unknown first-stage word (``${DIR}/../../pretrain_gpt.py``), kept
    for the second parse when it holds nothing that parse would read differently."""
    return tail if re.fullmatch(r"[\w./@%+,:=-]*", tail) else ""


def _to_word(t: _Token, joined: str, words: list[Word], owner: list[int]) -> Word:
    first = words[owner[t.start]]
    spanned = {owner[k] for k in range(t.start, t.end + 1) if k < len(owner)}
    cond = any(words[k].conditional for k in spanned)
    reason = t.unknown
    if not reason and t.glob:
        reason = f"glob pattern {snippet(joined)!r} in eval's text is not expanded"
    if not reason and t.brace and ("," in joined or ".." in joined):
        reason = f"brace expansion {snippet(joined)!r} in eval's text is not expanded"
    if not reason and joined.startswith("~"):
        reason = f"tilde expansion in {snippet(joined)!r} depends on $HOME"
    # a branch-chosen word keeps its alternatives while the second parse leaves it as is
    same = len(spanned) == 1 and joined == first.text
    return Word(
        None if reason else joined,
        first.loc,
        first.via,
        reason,
        cond,
        choice=any(words[k].choice for k in spanned),
        alternatives=first.alternatives if same else (),
        tail="".join(t.chars[t.known_from :]) if reason else "",
    )
