"""Syntax errors: tree-sitter's ERROR and MISSING nodes turned into one line naming the
file and line, or a warning where bash itself would still run the script.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from tree_sitter import Node

from cfglint.load.shell.base import SEPARATORS, STATEMENTS, ShellBase
from cfglint.load.shell.launcher import LAUNCH_WORD_RE
from cfglint.load.shell.pieces import snippet
from cfglint.model.errors import InputError
from cfglint.model.lazy_re import compile_on_use


def syntax_problems(interp: ShellBase, root: Node, path: str) -> None:
    """Raise for unterminated quotes and for unparsable launch commands; warn for the rest."""
    if not root.has_error:
        return
    stack = [root]
    problems: list[tuple[int, str, bool]] = []  # (line, what, fatal)
    words = _LaunchWords(interp.src)
    # a file of garbage has thousands of errors; the first ones say enough
    while stack and len(problems) < MAX_PROBLEMS:
        node = stack.pop()
        if node.is_missing:
            _missing(interp, node, path, problems, words)
            continue
        if node.type == "ERROR":
            _error(interp, node, path, problems, words)
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    if not problems:
        return
    problems.sort()
    statements = [c for c in _statement_nodes(root)]
    for line, what, fatal in problems:
        if fatal or not statements:
            raise InputError(path, f"cannot parse shell: {what}", line=line)
    for line, what, _ in problems:
        interp.warn(line, f"cannot parse shell syntax ({what}); that part is skipped")


def _statement_nodes(root: Node) -> Iterator[Node]:
    for c in root.children:
        if c.type == "ERROR":
            yield from (g for g in c.children if g.type in STATEMENTS)
        elif c.type in STATEMENTS:
            yield c


def _missing(
    interp: ShellBase,
    node: Node,
    path: str,
    problems: list[tuple[int, str, bool]],
    words: _LaunchWords,
) -> None:
    parent = node.parent
    if node.type in ('"', "'", "`") or (
        parent is not None
        and parent.type in ("string", "raw_string", "command_substitution")
        and node.type in ('"', "`")
    ):
        start = parent if parent is not None else node
        if not quotes_balanced(interp.src.decode("utf-8", "replace")):
            raise InputError(path, "unterminated quote starting here", line=interp.npos(start)[0])
        # bash closes every quote here: tree-sitter-bash misread valid syntax
        problems.append((interp.npos(start)[0], "construct tree-sitter-bash cannot read", False))
        return
    region = parent if parent is not None else node
    fatal = words.within(region.start_byte, region.end_byte)
    what = (
        "here-document is never closed" if node.type == "heredoc_end" else f"missing {node.type!r}"
    )
    problems.append((interp.npos(region)[0], what, fatal))


def _error(
    interp: ShellBase,
    node: Node,
    path: str,
    problems: list[tuple[int, str, bool]],
    words: _LaunchWords,
) -> None:
    """One problem per outermost ERROR node; fatal when it touches a launch command."""
    if node.parent is not None and _inside_error(node.parent):
        return
    bad = _bad_items(node)
    for item in bad:
        stripped = interp.text(item).lstrip("$")
        if (
            stripped[:1] in ("'", '"', "`")
            and _unbalanced(stripped)
            and not quotes_balanced(interp.src.decode("utf-8", "replace"))
        ):
            raise InputError(path, "unterminated quote starting here", line=interp.npos(item)[0])
    # the lines the bad parts span, searched once (per item, a long broken line was
    # searched once per word: quadratic)
    first = interp.line_starts[interp.npos(bad[0])[0] - 1]
    end_line = max(interp.pos_of(item.end_byte)[0] for item in bad)
    last = interp.line_starts[end_line] if end_line < len(interp.line_starts) else len(interp.src)
    fatal = words.within(first, last)
    what = f"unexpected {snippet(interp.text(bad[0]), 30)!r}"
    problems.append((interp.npos(bad[0])[0], what, fatal))


MAX_PROBLEMS = 200
_LAUNCH_WORD_BYTES = compile_on_use(LAUNCH_WORD_RE.pattern.encode())


class _LaunchWords:
    """Where launcher words (torchrun, python, ...) are, found once per script: searching
    each error's region anew was quadratic on a script with thousands of errors."""

    def __init__(self, src: bytes) -> None:
        found = [(m.start(), m.end()) for m in _LAUNCH_WORD_BYTES.finditer(src)]
        self.starts = [a for a, _ in found]
        self.ends = [b for _, b in found]

    def within(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.starts, start)
        return i < len(self.starts) and self.ends[i] <= end


def _inside_error(node: Node | None) -> bool:
    while node is not None:
        if node.type == "ERROR":
            return True
        node = node.parent
    return False


def _bad_items(node: Node) -> list[Node]:
    """The parts of an ERROR node that are not whole statements, nested ERRORs included."""
    out: list[Node] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        items = [
            c for c in cur.children if c.type == "ERROR" or c.type not in (*STATEMENTS, *SEPARATORS)
        ]
        if not items and cur is node:
            # nothing but statements inside: the node itself is the bad part (pushing it back
            # onto the stack looped forever on `a | b |`)
            return [node]
        out.extend(i for i in items if i.type != "ERROR" or not i.children)
        stack.extend(reversed([i for i in items if i.type == "ERROR" and i.children]))
    return sorted(out, key=lambda n: n.start_byte) or [node]


def _unbalanced(text: str) -> bool:
    quote = text[0]
    if quote == "'":
        return text.count("'") % 2 == 1
    body = re.sub(r"\\.", "", text, flags=re.S)
    return body.count(quote) % 2 == 1


def warning_line(message: str) -> int:
    m = re.match(r"line (\d+):", message)
    return int(m.group(1)) if m else 0


_HEREDOC = compile_on_use(r"""<<(-?)[ \t]*(['"]?)([A-Za-z0-9_.-]+)\2""")


def quotes_balanced(text: str) -> bool:
    """Whether every quote, backquote, ``$(``, ``${`` and here-document of ``text`` is
    closed, lexed the way bash reads them (comments, escapes, nesting). tree-sitter-bash
    reports "unterminated" quotes on some scripts ``bash -n`` accepts; its verdict only
    stands when this independent reading agrees."""
    return _QuoteScan(text).balanced()


class _QuoteScan:
    """bash's lexing of quotes, reduced to what opens and closes: ``stack`` holds the open
    quotes and substitutions, innermost last; ``pending`` the here-documents whose bodies
    start at the next newline. Each step returns where the scan goes on, or None where the
    text ends inside something open."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[str] = []
        self.pending: list[tuple[str, bool]] = []  # (delimiter, <<- strips leading tabs)

    def balanced(self) -> bool:
        i: int | None = 0
        while i is not None and i < len(self.text):
            i = self.step(i)
        return i is not None and not self.stack and not self.pending

    def step(self, i: int) -> int | None:
        """One step from ``i``: the open construct decides how its characters read."""
        c, text = self.text[i], self.text
        top = self.stack[-1] if self.stack else ""
        if top == "'":
            return self.single_quoted(i)
        if c == "\\":
            return i + 2  # escapes the next character, in code and in double quotes alike
        if top == '"':
            return self.double_quoted(i, c)
        if c == "\n" and self.pending:
            return self.heredoc_bodies(i)
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;(|&"):
            j = text.find("\n", i)  # a comment runs to the end of the line
            return len(text) if j < 0 else j
        return self.code(i, c, top)

    def single_quoted(self, i: int) -> int | None:
        """Nothing is special inside single quotes up to the closing one."""
        j = self.text.find("'", i)
        if j < 0:
            return None
        self.stack.pop()
        return j + 1

    def double_quoted(self, i: int, c: str) -> int:
        """Inside double quotes only the closing quote, backquotes and ``$(``/``${`` count."""
        if c == '"':
            self.stack.pop()
        elif c == "`":
            self.stack.append("`")
        elif self.text.startswith(("$(", "${"), i):
            self.stack.append(self.text[i : i + 2])
            return i + 2
        return i + 1

    def heredoc_bodies(self, i: int) -> int | None:
        """The bodies of the here-documents opened on the line ending at ``i``, in order,
        each up to the line that is its delimiter (tabs stripped for ``<<-``)."""
        text, n = self.text, len(self.text)
        for word, dash in self.pending:
            while True:
                j = text.find("\n", i + 1)
                line = text[i + 1 : n if j < 0 else j]
                if (line.lstrip("\t") if dash else line) == word:
                    i = n if j < 0 else j
                    break
                if j < 0:
                    return None
                i = j
        self.pending.clear()
        return i + 1

    def code(self, i: int, c: str, top: str) -> int:
        """Outside quotes: what opens or closes a quote, a substitution or a subshell, and
        the start of a here-document (``<<<`` is a here-string)."""
        text, stack = self.text, self.stack
        if c in "'\"":
            stack.append(c)
        elif c == "`":
            if top == "`":
                stack.pop()
            else:
                stack.append("`")
        elif text.startswith(("$(", "${"), i):
            stack.append(text[i : i + 2])
            return i + 2
        elif c == "(" and top in ("$(", "("):
            stack.append("(")
        elif (c == ")" and top in ("$(", "(")) or (c == "}" and top == "${"):
            stack.pop()
        elif text.startswith("<<", i) and not text.startswith("<<<", i):
            m = _HEREDOC.match(text, i)
            if m:
                self.pending.append((m.group(3), m.group(1) == "-"))
                return m.end()
            return i + 2
        return i + 1
