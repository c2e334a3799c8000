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
    text_parts: list[str] = []
    owner: list[int] = []  # joined-text offset -> index of the first-stage word
    for k, w in enumerate(words):
        if k:
            text_parts.append(" ")
            owner.append(k)
        part = w.text if w.text is not None else (w.template or _UNKNOWN + _plain(w.tail))
        text_parts.append(part)
        owner.extend([k] * len(part))
    text = "".join(text_parts)
    commands: list[list[_Token]] = [[]]
    warnings: list[str] = []
    tok = _Token()

    def end_token() -> None:
        nonlocal tok
        if tok.start >= 0:  # a blank before any character keeps a pending redirect
            commands[-1].append(tok)
            tok = _Token()

    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == _UNKNOWN:
            tok.mark(words[owner[i]].unknown or "not known statically", i)
        elif ch in " \t":
            end_token()
        elif ch == "#" and tok.start < 0:
            while i < n and text[i] != "\n":  # a comment runs to the end of the line
                i += 1
            continue
        elif ch in _SEPARATORS:
            end_token()
            tok = _Token()  # a redirect with no target is dropped
            if commands[-1]:
                commands.append([])
        elif ch in _REDIRECTS:
            if tok.start >= 0 and tok.fd_only:
                tok = _Token()  # `2>`: the digits name a file descriptor
            end_token()
            while i + 1 < n and text[i + 1] in "<>&":
                i += 1
            tok.redirect_target = True
        elif ch in "()":
            tok.mark(f"eval runs shell syntax {snippet(text, 60)!r}, not followed", i)
        elif ch == "'":
            close = text.find("'", i + 1)
            if close < 0:
                tok.mark("eval: unterminated single quote", i)
                warnings.append(f"eval {snippet(text, 60)}: unterminated single quote")
                break
            if tok.start < 0:
                tok.start = i
            for j in range(i + 1, close):
                tok.add(text[j], j, quoted=True)
            tok.end = close
            i = close
        elif ch == '"':
            if tok.start < 0:
                tok.start = i
            j = i + 1
            while j < n and text[j] != '"':
                c = text[j]
                if c == "\\" and j + 1 < n and text[j + 1] in '$`"\\\n':
                    if text[j + 1] != "\n":
                        tok.add(text[j + 1], j + 1, quoted=True)
                    j += 2
                    continue
                if c in "$`":
                    tok.mark(f"eval expands {snippet(text[j:], 30)!r} a second time", j)
                elif c == _UNKNOWN:
                    tok.mark(words[owner[j]].unknown or "not known statically", j)
                else:
                    tok.add(c, j, quoted=True)
                j += 1
            if j >= n:
                tok.mark("eval: unterminated double quote", i)
                warnings.append(f"eval {snippet(text, 60)}: unterminated double quote")
                break
            tok.end = j
            i = j
        elif ch == "\\":
            if i + 1 < n and text[i + 1] != "\n":
                tok.add(text[i + 1], i + 1, quoted=True)
            i += 2
            continue
        elif ch in "$`":
            tok.mark(f"eval expands {snippet(text[i:], 30)!r} a second time", i)
        else:
            tok.add(ch, i, quoted=False)
        i += 1
    end_token()

    out: list[list[Word]] = []
    for cmd in commands:
        cmd_words: list[Word] = []
        for t in cmd:
            if not t.redirect_target:  # `> log`: a file name, not an argument
                cmd_words.append(_to_word(t, "".join(t.chars), words, owner))
        if cmd_words:
            out.append(cmd_words)
    return out, warnings


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
