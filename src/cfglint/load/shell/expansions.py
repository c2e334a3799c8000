"""Word expansion: literals, quoting, ``$VAR``, ``${...}`` operators and ANSI-C strings."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable

from tree_sitter import Node

from cfglint.load.shell.base import DYNAMIC
from cfglint.load.shell.pieces import (
    BREAK_PIECE,
    IFS_CHAR,
    NAME_RE,
    PIECE_COST,
    Ctx,
    Piece,
    UnknownValue,
    Value,
    Var,
    at_expansion,
    first_unknown,
    merge_positions,
    pieces_size,
    snippet,
    storable,
)
from cfglint.load.shell.words import Pos, never_set


class Expansions:
    """Word expansion: literals, quoting, parameters and ``${...}`` operators."""

    # -- expansion --------------------------------------------------------------------

    def unknown_piece(self, reason: str, pos: Pos, *, quoted: bool = True) -> Piece:
        return Piece("", pos, unknown=reason, split=not quoted)

    def literal(
        self, a: int, b: int, *, dq: bool, split: bool, glob: bool, raw: bool = False
    ) -> list[Piece]:
        """Source text between bytes a and b with bash quoting rules, one piece per run
        of plain characters, so that every piece knows its own line and column."""
        if b <= a:
            return []
        s = self.src[a:b].decode("utf-8", "replace")
        self.charge(len(s) + PIECE_COST, total=False)
        line, col = self.pos_of(a)
        if "\n" not in s and (raw or "\\" not in s):
            return [Piece(s, (line, col), split=split, glob=glob, exact=True)]
        out: list[Piece] = []
        buf: list[str] = []
        start = (line, col)

        def flush() -> None:
            if buf:
                out.append(Piece("".join(buf), start, split=split, glob=glob, exact=True))
                buf.clear()

        i, n = 0, len(s)
        while i < n:
            ch = s[i]
            if ch == "\\" and not raw and i + 1 < n:
                nxt = s[i + 1]
                if nxt == "\n":  # line continuation: both characters vanish
                    flush()
                    i, line, col = i + 2, line + 1, 1
                    continue
                if not (dq and nxt not in '$`"\\'):
                    flush()
                    out.append(Piece(nxt, (line, col + 1)))
                    i, col = i + 2, col + 2
                    continue
            if not buf:
                start = (line, col)
            buf.append(ch)
            i += 1
            if ch == "\n":
                flush()
                line, col = line + 1, 1
            else:
                col += 1
        flush()
        return out

    def expand(self, node: Node, *, quoted: bool, operand: bool = False) -> list[Piece]:
        t = node.type
        if t in (
            "word",
            "number",
            "regex",
            "extglob_pattern",
            "variable_name",
            "string_content",
            "special_variable_name",
        ):
            return self.literal(
                node.start_byte,
                node.end_byte,
                dq=quoted,
                split=operand and not quoted,
                glob=not quoted,
            )
        if t == "string":
            return self.string(node)
        if t == "raw_string":
            if quoted:  # single quotes are ordinary characters inside "..."
                return self.literal(
                    node.start_byte, node.end_byte, dq=True, split=False, glob=False
                )
            return self.literal(
                node.start_byte + 1, node.end_byte - 1, dq=False, split=False, glob=False, raw=True
            ) or [Piece("", self.npos(node))]
        if t == "ansi_c_string":
            body = self.text(node)[2:-1]
            self.charge(len(body) + PIECE_COST)
            return [Piece(_ansi_c(body), self.npos(node))]
        if t in ("concatenation", "command_name"):
            return self.parts(
                node.start_byte, node.end_byte, node.children, quoted=quoted, operand=operand
            )
        if t == "simple_expansion":
            return self.simple_expansion(node, quoted)
        if t == "expansion":
            return self.param_expansion(node, quoted)
        if t == "arithmetic_expansion":
            return [self.arith_expansion(node, quoted)]
        start = self.pos_of(self.real_start(node))
        what = snippet(self.text(node).strip())
        if t == "command_substitution":
            reason = f"command substitution {what} is not evaluated"
        elif t == "process_substitution":
            reason = f"process substitution {what} is not evaluated"
        elif t == "brace_expression":
            reason = f"brace expansion {what} is not expanded"
        elif t == "ERROR":
            reason = f"cannot parse {what!r}"
        else:
            reason = f"unsupported shell syntax {what!r}"
        return [self.unknown_piece(reason, start, quoted=quoted)]

    def real_start(self, node: Node) -> int:
        """tree-sitter-bash lets ``$((``/``$(`` swallow preceding blanks inside strings."""
        a, b = node.start_byte, node.end_byte
        while a < b and self.src[a : a + 1] in (b" ", b"\t", b"\n"):
            a += 1
        return a

    def parts(
        self, a: int, b: int, children: Iterable[Node], *, quoted: bool, operand: bool
    ) -> list[Piece]:
        """Expand ``children`` in order; text between them is literal."""
        out: list[Piece] = []
        at = a
        for c in children:
            if not c.is_named or c.type in ("comment", "string_content"):
                continue
            start = max(self.real_start(c), at)
            out += self.literal(at, start, dq=quoted, split=operand and not quoted, glob=not quoted)
            out += self.expand(c, quoted=quoted, operand=operand)
            at = max(at, c.end_byte)
        out += self.literal(at, b, dq=quoted, split=operand and not quoted, glob=not quoted)
        return out

    def string(self, node: Node) -> list[Piece]:
        kids = node.children
        a = node.start_byte + 1
        b = (
            node.end_byte - 1
            if kids and kids[-1].type == '"' and not kids[-1].is_missing
            else node.end_byte
        )
        out = self.parts(a, b, kids, quoted=True, operand=False)
        if not out and not any(c.type != "string_content" for c in node.named_children):
            out = [Piece("", self.npos(node))]  # "" is an empty word, not no word
        return out

    def simple_expansion(self, node: Node, quoted: bool) -> list[Piece]:
        target = node.named_children[0] if node.named_child_count else None
        pos = self.npos(node)
        if target is None:
            return [self.unknown_piece("a lone $ is not supported", pos, quoted=quoted)]
        name = self.text(target)
        special = self.special(name, pos, quoted)
        if special is not None:
            return [special]
        got = self.lookup(name, None, quoted, pos)
        if got is None:
            return [self.unknown_piece(never_set(name, self.unfollowed), pos, quoted=quoted)]
        return got

    def special(self, name: str, pos: Pos, quoted: bool) -> Piece | None:
        if name.isdigit() or name in ("@", "*", "#"):
            reason = (
                "$0 is the script's path at run time"
                if name == "0"
                else f"${name} is a positional parameter"
            )
        elif name in ("?", "$", "!", "-", "_"):
            reason = f"${name} is only known at run time"
        elif name in DYNAMIC and name not in self.vars:
            reason = f"${name} changes on every run"
        else:
            return None
        return self.unknown_piece(reason, pos, quoted=quoted)

    def lookup(self, name: str, index: Node | None, quoted: bool, pos: Pos) -> list[Piece] | None:
        """The value of ``name`` (or one element / all elements) at a use site;
        None when unset."""
        var = self.vars.get(name)
        if var is None:
            return None
        idx = self.text(index) if index is not None else ""
        if idx in ("@", "*"):
            return self.array_use(var, idx, quoted, pos)
        if index is None:
            value = var.scalar()
        else:
            try:
                k, _ = self.arith(index)
            except UnknownValue as exc:
                return [self.unknown_piece(str(exc), pos, quoted=quoted)]
            if k < 0:
                k = max(var.elements, default=-1) + 1 + k
            value = var.elements.get(k)
        if value is None:
            return None
        return self.scalar_use(value, var.defs, quoted, pos)

    def scalar_use(
        self, value: Value, defs: tuple[Pos, ...], quoted: bool, pos: Pos
    ) -> list[Piece]:
        self.charge(pieces_size(value))
        active = not quoted
        joined = "".join(p.text for p in value)
        if not IFS_CHAR.search(joined.strip()):
            # One token: report it where it is used; the definition goes to via.
            via = merge_positions(defs, *(p.via for p in value), exclude=pos)
            hit = next((p for p in value if p.pos in self.branch_choices), None)
            if hit is not None:  # still one of several branch values, now at the use site
                alts = self.branch_choices[hit.pos]
                self.branch_choices[pos] = alts if hit.text == joined else ()
            return [
                Piece(
                    joined,
                    pos,
                    via,
                    first_unknown(value),
                    any(p.cond for p in value),
                    split=active,
                    glob=active,
                )
            ]
        return [p.used(pos, active) for p in value]

    def array_use(self, var: Var, kind: str, quoted: bool, pos: Pos) -> list[Piece]:
        self.charge(var.size())
        active = not quoted
        out: list[Piece] = []
        for k, value in enumerate(var.ordered()):
            if k:
                out.append(Piece(" ", pos) if quoted and kind == "*" else BREAK_PIECE)
            if quoted and kind == "@":  # keeps an empty element as an empty word
                out.append(
                    Piece("", value[0].pos, cond=var.cond)
                    if value
                    else Piece("", pos, cond=var.cond)
                )
            out.extend(p.used(pos, active) for p in value)
        return out

    def param_expansion(self, node: Node, quoted: bool) -> list[Piece]:
        """``${...}``: a parameter's value, its length (``${#X}``), an indirection
        (``${!X}``), or an operator applied to it (a default, a pattern, a substring)."""
        pos = self.npos(node)
        prefix, inner = _param_parts(node)
        if not inner or not inner[0].is_named:
            if prefix == "#" and not inner:  # ${#}: the number of positional parameters
                return [self.unknown_piece("$# is a positional parameter", pos, quoted=quoted)]
            return [self.cannot(node, pos, quoted)]
        name, index = self._param_target(inner[0])
        rest = inner[1:]
        special = self.special(name, pos, quoted)
        op = rest[0].type if rest and not rest[0].is_named else ""
        if special is not None and op not in _DEFAULT_OPS:
            return [special]
        if prefix == "#":
            return [self.length(name, index, pos, quoted)]
        if prefix == "!":
            return self.indirect(name, index, node, pos, quoted)
        value = [special] if special is not None else self.lookup(name, index, quoted, pos)
        if op:
            return self._param_operator(op, name, index, value, rest, node, pos, quoted)
        if value is None:
            return [self.unknown_piece(never_set(name, self.unfollowed), pos, quoted=quoted)]
        return value

    def _param_target(self, target: Node) -> tuple[str, Node | None]:
        """The parameter's name, and its index when it is an array element (``${A[1]}``)."""
        if target.type != "subscript":
            return self.text(target), None
        base = target.child_by_field_name("name")
        index = target.child_by_field_name("index")
        return (self.text(base) if base is not None else ""), index

    def _param_operator(
        self,
        op: str,
        name: str,
        index: Node | None,
        value: list[Piece] | None,
        rest: list[Node],
        node: Node,
        pos: Pos,
        quoted: bool,
    ) -> list[Piece]:
        """The operator after the name: its operand is the source between it and the
        closing brace."""
        kids = node.children
        close = kids[-1].start_byte if kids[-1].type == "}" else node.end_byte
        if op in _DEFAULT_OPS:
            return self.default_op(
                op, name, index, value, list(rest[1:]), rest[0].end_byte, close, node, pos, quoted
            )
        return self.string_op(op, name, value, rest[0].end_byte, close, node, pos, quoted)

    def cannot(self, node: Node, pos: Pos, quoted: bool) -> Piece:
        reason = f"parameter expansion {snippet(self.text(node))} is not evaluated"
        return self.unknown_piece(reason, pos, quoted=quoted)

    def default_op(
        self,
        op: str,
        name: str,
        index: Node | None,
        value: list[Piece] | None,
        operands: list[Node],
        a: int,
        b: int,
        node: Node,
        pos: Pos,
        quoted: bool,
    ) -> list[Piece]:
        unset = value is None
        empty = (
            not unset and not first_unknown(value or []) and not any(p.text for p in value or [])
        )
        use_operand = unset or (op.startswith(":") and empty)
        kind = op.lstrip(":")
        if kind == "+":
            return (
                []
                if use_operand
                else at_expansion(self.parts(a, b, operands, quoted=quoted, operand=True), pos)
            )
        if not use_operand:
            return value or []
        if kind == "?":
            message = self.src[a:b].decode("utf-8", "replace").strip() or "not set"
            state = "is never set" if unset else "is empty"
            reason = f"variable {name} {state} (the script stops: {snippet(message)})"
            return [self.unknown_piece(reason, pos, quoted=quoted)]
        default = self.parts(a, b, operands, quoted=quoted, operand=True)
        if kind == "=" and index is None and NAME_RE.fullmatch(name):
            stored = storable(default)
            self.set_var(name, {0: stored}, False, pos, Ctx())
        return at_expansion(default, pos)

    def length(self, name: str, index: Node | None, pos: Pos, quoted: bool) -> Piece:
        var = self.vars.get(name)
        active = not quoted
        if index is not None and self.text(index) in ("@", "*"):
            count = len(var.elements) if var is not None else 0
            via = var.defs if var is not None else ()
            return Piece(str(count), pos, via, split=active, glob=active)
        value = self.lookup(name, index, True, pos)
        if value is None:
            return self.unknown_piece(never_set(name, self.unfollowed), pos, quoted=quoted)
        reason = first_unknown(value)
        if reason:
            return self.unknown_piece(reason, pos, quoted=quoted)
        via = merge_positions(*(p.via for p in value), exclude=pos)
        return Piece(str(len("".join(p.text for p in value))), pos, via, split=active, glob=active)

    def indirect(
        self, name: str, index: Node | None, node: Node, pos: Pos, quoted: bool
    ) -> list[Piece]:
        value = self.lookup(name, index, True, pos) if index is None else None
        target = "".join(p.text for p in value) if value and not first_unknown(value) else ""
        if not NAME_RE.fullmatch(target):
            return [self.cannot(node, pos, quoted)]
        got = self.lookup(target, None, quoted, pos)
        if got is None:
            return [self.unknown_piece(never_set(target, self.unfollowed), pos, quoted=quoted)]
        return got

    def string_op(
        self,
        op: str,
        name: str,
        value: list[Piece] | None,
        a: int,
        b: int,
        node: Node,
        pos: Pos,
        quoted: bool,
    ) -> list[Piece]:
        """``${X%pat}``, ``${X/a/b}``, ``${X:1:2}``, ``${X^^}`` on known values only."""
        if value is None:
            return [self.unknown_piece(never_set(name, self.unfollowed), pos, quoted=quoted)]
        reason = first_unknown(value)
        if reason:
            return [self.unknown_piece(reason, pos, quoted=quoted)]
        arg = self.src[a:b].decode("utf-8", "replace")
        text = "".join(p.text for p in value)
        result = (
            None
            if re.search(r"[$`'\"\\]", arg) or len(text) > 4096
            else _apply_string_op(op, text, arg)
        )
        if result is None:
            return [self.cannot(node, pos, quoted)]
        via = merge_positions(*(p.via for p in value), exclude=pos)
        active = not quoted
        return [Piece(result, pos, via, cond=any(p.cond for p in value), split=active, glob=active)]


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A bash glob as an unanchored regex (fnmatch wraps it as ``(?s:...)\\Z``)."""
    translated = fnmatch.translate(pattern)
    m = re.fullmatch(r"\(\?s:(.*)\)\\[Zz]", translated, re.S)
    return re.compile(m.group(1) if m else translated, re.S)


def _param_parts(node: Node) -> tuple[str, list[Node]]:
    """A ``${...}``'s prefix operator (``#`` or ``!``, else "") and the nodes inside its
    braces after it."""
    kids = node.children
    inner = kids[1:-1] if kids and kids[-1].type == "}" else kids[1:]
    if inner and not inner[0].is_named and inner[0].type in ("#", "!"):
        return inner[0].type, inner[1:]
    return "", inner


# the operators that give a default or an alternative value, or stop on an unset one
_DEFAULT_OPS = frozenset({":-", "-", ":=", "=", ":+", "+", ":?", "?"})


def _apply_string_op(op: str, text: str, arg: str) -> str | None:
    """``op`` with its argument ``arg`` applied to a known value, as bash does; None when
    it is one cfglint does not evaluate (``_STRING_OPS``)."""
    apply = _STRING_OPS.get(op)
    return None if apply is None else apply(op, text, arg)


def _remove_affix(op: str, text: str, arg: str) -> str:
    """``${X#pat}``, ``${X##pat}`` (prefix), ``${X%pat}``, ``${X%%pat}`` (suffix)."""
    rx = _pattern_regex(arg)
    n = len(text)
    # Shortest match first for # and %%, longest first for ## and %.
    shortest_first = op in ("#", "%%")
    cuts: Iterable[int] = range(n + 1) if shortest_first else range(n, -1, -1)
    for i in cuts:
        if op.startswith("#") and rx.fullmatch(text[:i]):
            return text[i:]
        if op.startswith("%") and rx.fullmatch(text[i:]):
            return text[:i]
    return text


def _replace(op: str, text: str, arg: str) -> str:
    """``${X/pat/rep}`` (first), ``${X//pat/rep}`` (all), ``/#`` / ``/%`` (anchored)."""
    pat, _, rep = arg.partition("/")
    if not pat:
        return text
    rx = _pattern_regex(pat).pattern
    if op == "/#":
        rx = "^(?:" + rx + ")"
    elif op == "/%":
        rx = "(?:" + rx + ")$"
    return re.sub(rx, lambda _m: rep, text, count=0 if op == "//" else 1, flags=re.S)


def _change_case(op: str, text: str, arg: str) -> str | None:
    """``${X^^}``, ``${X,,}``, ``${X^}``, ``${X,}``; with a pattern, not evaluated."""
    if arg:
        return None
    if op == "^^":
        return text.upper()
    if op == ",,":
        return text.lower()
    return (text[:1].upper() if op == "^" else text[:1].lower()) + text[1:]


def _substring(op: str, text: str, arg: str) -> str | None:
    """``${X:start}`` / ``${X:start:length}`` with literal integers (negative ones count
    from the end)."""
    m = re.fullmatch(r"\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?", arg)
    if not m:
        return None
    start = int(m.group(1))
    start = max(len(text) + start, 0) if start < 0 else start
    if m.group(2) is None:
        return text[start:]
    length = int(m.group(2))
    end = len(text) + length if length < 0 else start + length
    return text[start:end]


_STRING_OPS: dict[str, Callable[[str, str, str], str | None]] = {
    **dict.fromkeys(("#", "##", "%", "%%"), _remove_affix),
    **dict.fromkeys(("/", "//", "/#", "/%"), _replace),
    **dict.fromkeys(("^^", ",,", "^", ","), _change_case),
    ":": _substring,
}


_ANSI = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            m = re.match(r"x([0-9a-fA-F]{1,2})|([0-7]{1,3})", body[i + 1 :])
            if nxt in _ANSI:
                out.append(_ANSI[nxt])
                i += 2
                continue
            if m:
                out.append(chr(int(m.group(1), 16) if m.group(1) else int(m.group(2), 8)))
                i += 1 + len(m.group(0))
                continue
        out.append(ch)
        i += 1
    return "".join(out)
