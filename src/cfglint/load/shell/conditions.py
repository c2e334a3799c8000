"""Conditions: ``[ ]``, ``[[ ]]``, ``test``, ``(( ))``, ``true``/``false``, ``!`` and
``&&``/``||`` chains evaluated on known operands, the way bash does, so that a branch that
cannot run contributes nothing. An operand that is not known statically (``$4``, a value
set inside another branch, ``$(cmd)``) leaves the condition undecided, with the reason.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

from tree_sitter import Node

from cfglint.load.shell.pieces import INT_RE, UnknownValue, ValueTooLarge, first_unknown, snippet
from cfglint.model.record import Frozen

_INT_OPS = {
    "-eq": lambda a, b: a == b,
    "-ne": lambda a, b: a != b,
    "-lt": lambda a, b: a < b,
    "-le": lambda a, b: a <= b,
    "-gt": lambda a, b: a > b,
    "-ge": lambda a, b: a >= b,
}
_ARITH_OPS = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
# file and shell-state tests: they depend on the machine the job runs on
_MACHINE_TESTS = frozenset(
    [
        "-a",
        "-b",
        "-c",
        "-d",
        "-e",
        "-f",
        "-g",
        "-h",
        "-k",
        "-p",
        "-r",
        "-s",
        "-t",
        "-u",
        "-w",
        "-x",
        "-G",
        "-L",
        "-N",
        "-O",
        "-S",
        "-v",
        "-R",
    ]
)


class Verdict(Frozen):
    """True / False when the condition is decided, None when not; ``why`` names the value
    that decides it (or the one that made it known)."""

    __slots__ = ("value", "why")

    value: bool | None
    why: str

    def __init__(
        self,
        value: bool | None,
        why: str = "",
    ) -> None:
        self.value = value
        self.why = why


UNDECIDED_CMD = "the exit status of a command is not known statically"


def _and(a: Verdict, b_fn) -> Verdict:  # type: ignore[no-untyped-def]
    if a.value is False:
        return a
    b = b_fn()
    if a.value is None:
        return a if b.value is not False else b
    return b


def _or(a: Verdict, b_fn) -> Verdict:  # type: ignore[no-untyped-def]
    if a.value is True:
        return a
    b = b_fn()
    if a.value is None:
        return a if b.value is not True else b
    return b


def _not(v: Verdict) -> Verdict:
    return v if v.value is None else Verdict(not v.value, v.why)


class Conditions:
    """Bash conditions on statically known values."""

    def decide(self, nodes: list[Node]) -> Verdict:
        """The exit status of a condition's statements: the last one's, as in bash."""
        if not nodes:
            return Verdict(None, "an empty condition")
        try:
            return self.status(nodes[-1])
        except (UnknownValue, ValueTooLarge) as exc:
            return Verdict(None, str(exc) or "not known statically")

    def status(self, node: Node) -> Verdict:
        """The exit status of one statement, by its kind (``_STATUS``); any other kind of
        statement runs something whose status is not known statically."""
        decide = _STATUS.get(node.type)
        if decide is None:
            return self._undecided_command(node)
        return decide(self, node)

    def _undecided_command(self, node: Node) -> Verdict:
        return Verdict(None, f"{snippet(self.text(node))}: {UNDECIDED_CMD}")

    def _test_status(self, node: Node) -> Verdict:
        """``[ ]``, ``[[ ]]`` (one expression each) and ``(( ))``."""
        inner = [c for c in node.named_children if c.type != "comment"]
        double = bool(node.children) and node.children[0].type == "[["
        if node.children and node.children[0].type == "((":
            return self._arith_test(inner)
        if len(inner) != 1:
            return Verdict(None, f"{snippet(self.text(node))} is not evaluated")
        return self.expr(inner[0], double)

    def _compound_status(self, node: Node) -> Verdict:
        """``(( ))`` as tree-sitter-bash sometimes reads it; another ``{ }`` is a command."""
        if node.children and node.children[0].type == "((":
            return self._arith_test([c for c in node.named_children if c.type != "comment"])
        return self._undecided_command(node)

    def _negated_status(self, node: Node) -> Verdict:
        inner = [c for c in node.named_children if c.type != "comment"]
        return _not(self.status(inner[-1])) if inner else Verdict(None, "")

    def _list_status(self, node: Node) -> Verdict:
        """``a && b`` / ``a || b``, short-circuited as bash runs them."""
        kids = [c for c in node.children if c.type != "comment"]
        if len(kids) == 3:
            op = kids[1].type
            left = self.status(kids[0])
            if op == "&&":
                return _and(left, lambda: self.status(kids[2]))
            if op == "||":
                return _or(left, lambda: self.status(kids[2]))
        return Verdict(None, f"{snippet(self.text(node))} is not evaluated")

    def _redirected_status(self, node: Node) -> Verdict:
        body = node.child_by_field_name("body")
        return self.status(body) if body is not None else Verdict(None, "")

    def _command_status(self, node: Node) -> Verdict:
        name = node.child_by_field_name("name")
        if name is None:
            return Verdict(None, UNDECIDED_CMD)
        cmd = self.text(name)
        args = [
            c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "argument"
        ]
        if cmd in ("true", ":") and not args:
            return Verdict(True, cmd)
        if cmd == "false" and not args:
            return Verdict(False, cmd)
        if cmd in ("test", "["):
            words = [self.text(a) for a in args]
            if cmd == "[":
                if not words or words[-1] != "]":
                    return Verdict(None, "unterminated [")
                args = args[:-1]
            return self._test_words(args)
        return Verdict(None, f"{snippet(self.text(node))}: {UNDECIDED_CMD}")

    def _test_words(self, args: list[Node]) -> Verdict:
        """``test`` with its arguments as words (the POSIX rules by argument count)."""
        texts = [self.text(a) for a in args]
        if texts[:1] == ["!"]:
            return _not(self._test_words(args[1:]))
        if len(args) == 0:
            return Verdict(False, "test with no arguments")
        if len(args) == 1:
            s = self.operand(args[0])
            return s if isinstance(s, Verdict) else Verdict(s != "", f"{s!r}")
        if len(args) == 2:
            return self._unary(texts[0], args[1])
        if len(args) == 3:
            return self._binary(args[0], texts[1], args[2], double=False)
        return Verdict(None, f"test {' '.join(texts)} is not evaluated")

    def operand(self, node: Node) -> str | Verdict:
        """A test operand's text, or an undecided verdict naming what is not known."""
        pieces = self.expand(node, quoted=True)
        why = first_unknown(pieces)
        if why:
            return Verdict(None, why)
        cond = [p for p in pieces if p.cond]
        if cond:
            return Verdict(
                None,
                f"{snippet(self.text(node))} is set inside a branch that may not run "
                f"(line {cond[0].pos[0]})",
            )
        return "".join(p.text for p in pieces)

    def _unary(self, op: str, arg: Node) -> Verdict:
        if op in ("-z", "-n"):
            s = self.operand(arg)
            if isinstance(s, Verdict):
                return s
            empty = s == ""
            return Verdict(empty if op == "-z" else not empty, f"{self.text(arg)} is {s!r}")
        if op in _MACHINE_TESTS:
            return Verdict(None, f"{op} {snippet(self.text(arg))} depends on the machine")
        return Verdict(None, f"test {op} is not evaluated")

    def _binary(self, left: Node, op: str, right: Node, *, double: bool) -> Verdict:
        a = self.operand(left)
        if isinstance(a, Verdict):
            return a
        if op in ("=~",):
            return Verdict(None, "regular-expression matches are not evaluated")
        # in [[ ]] an unquoted right side of == / != is a pattern
        pattern = double and right.type not in ("string", "raw_string")
        b = self.operand(right)
        if isinstance(b, Verdict):
            return b
        why = f"{self.text(left)} is {a!r}"
        if op in ("=", "=="):
            return Verdict(fnmatch.fnmatchcase(a, b) if pattern else a == b, why)
        if op == "!=":
            return Verdict(not (fnmatch.fnmatchcase(a, b) if pattern else a == b), why)
        if op in _INT_OPS:
            if not (INT_RE.fullmatch(a.strip()) and INT_RE.fullmatch(b.strip())):
                return Verdict(None, f"{op} on a non-integer ({a!r}, {b!r}): bash reports an error")
            return Verdict(_INT_OPS[op](int(a.strip(), 0), int(b.strip(), 0)), why)
        if op in ("<", ">") and double:
            return Verdict(a < b if op == "<" else a > b, why)
        return Verdict(None, f"operator {op} is not evaluated")

    def expr(self, node: Node, double: bool) -> Verdict:
        """One expression inside ``[ ]`` / ``[[ ]]``."""
        t = node.type
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children if c.type != "comment"]
            return self.expr(inner[0], double) if len(inner) == 1 else Verdict(None, "")
        if t == "unary_expression":
            op_node = node.children[0]
            operand = node.named_children[-1] if node.named_child_count else None
            op = self.text(op_node)
            if operand is None:
                return Verdict(None, "")
            if op == "!":
                return _not(self.expr(operand, double))
            return self._unary(op, operand)
        if t == "binary_expression":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            op_node = node.child_by_field_name("operator")
            if left is None or right is None or op_node is None:
                return Verdict(None, f"{snippet(self.text(node))} is not evaluated")
            op = self.text(op_node)
            if op in ("&&", "-a"):
                return _and(self.expr(left, double), lambda: self.expr(right, double))
            if op in ("||", "-o"):
                return _or(self.expr(left, double), lambda: self.expr(right, double))
            return self._binary(left, op, right, double=double)
        s = self.operand(node)
        return s if isinstance(s, Verdict) else Verdict(s != "", f"{self.text(node)} is {s!r}")

    def _arith_test(self, inner: list[Node]) -> Verdict:
        """``(( expr ))``: true when the expression is non-zero."""
        if len(inner) != 1:
            return Verdict(None, "only a single arithmetic expression is evaluated")
        node = inner[0]
        branchy = self._branch_set_names(node)
        if branchy:
            return Verdict(None, f"{branchy[0]} is set inside a branch that may not run")
        if node.type == "binary_expression":
            op_node = node.child_by_field_name("operator")
            op = self.text(op_node) if op_node is not None else ""
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if op in _ARITH_OPS and left is not None and right is not None:
                try:
                    a, _ = self.arith(left)
                    b, _ = self.arith(right)
                except UnknownValue as exc:
                    return Verdict(None, str(exc))
                return Verdict(_ARITH_OPS[op](a, b), f"(( {self.text(node)} ))")
            if op in ("&&", "||") and left is not None and right is not None:
                first = self._arith_test([left])
                return (_and if op == "&&" else _or)(first, lambda: self._arith_test([right]))
        try:
            v, _ = self.arith(node)
        except UnknownValue as exc:
            return Verdict(None, str(exc))
        return Verdict(v != 0, f"(( {self.text(node)} ))")

    def _branch_set_names(self, node: Node) -> list[str]:
        """Variables an arithmetic expression reads whose value a branch may or may not
        have set (their value is one possibility, not the value)."""
        out: list[str] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "variable_name":
                var = self.vars.get(self.text(n))
                if var is not None and (
                    var.cond or any(p.cond for v in var.elements.values() for p in v)
                ):
                    out.append(self.text(n))
            stack.extend(n.children)
        return out

    def case_match(self, subject: Node, patterns: list[Node]) -> Verdict:
        """Whether a ``case`` item's patterns match its subject."""
        s = self.operand(subject)
        if isinstance(s, Verdict):
            return s
        hit = False
        for p in patterns:
            pat = self.operand(p) if p.type in ("string", "raw_string") else self.text(p)
            if isinstance(pat, Verdict):
                return pat
            literal = p.type in ("string", "raw_string")
            if (s == pat) if literal else fnmatch.fnmatchcase(s, _case_glob(pat)):
                hit = True
                break
        return Verdict(hit, f"{self.text(subject)} is {s!r}")


def _case_glob(pat: str) -> str:
    """A case pattern as fnmatch reads it (quotes of literal parts dropped)."""
    return re.sub(r"""["']""", "", pat)


# how the exit status of each kind of statement is decided
_STATUS: dict[str, Callable[[Conditions, Node], Verdict]] = {
    "test_command": Conditions._test_status,
    "compound_statement": Conditions._compound_status,
    "negated_command": Conditions._negated_status,
    "list": Conditions._list_status,
    "redirected_statement": Conditions._redirected_status,
    "command": Conditions._command_status,
}
