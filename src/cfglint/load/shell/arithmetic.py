"""``$((...))`` on known integers, with bash's 64-bit wrap-around."""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from cfglint.load.shell.base import DYNAMIC
from cfglint.load.shell.pieces import (
    INT_RE,
    NAME_RE,
    TOO_LARGE,
    Piece,
    UnknownValue,
    ValueTooLarge,
    first_unknown,
    merge_positions,
    snippet,
)
from cfglint.load.shell.words import Pos, never_set


class Arithmetic:
    """``$((...))`` on known integers, with bash's 64-bit wrap-around."""

    # -- arithmetic -------------------------------------------------------------------

    def arith_expansion(self, node: Node, quoted: bool) -> Piece:
        pos = self.pos_of(self.real_start(node))
        exprs = [c for c in node.named_children if c.type != "comment"]
        try:
            if len(exprs) != 1:
                raise UnknownValue("only a single expression is evaluated")
            value, via = self.arith(exprs[0])
        except UnknownValue as exc:
            what = snippet(self.text(node).strip())
            return self.unknown_piece(
                f"arithmetic {what} is not evaluated: {exc}", pos, quoted=quoted
            )
        active = not quoted
        return Piece(str(value), pos, merge_positions(via, exclude=pos), split=active, glob=active)

    def arith(self, node: Node) -> tuple[int, tuple[Pos, ...]]:
        """A tiny evaluator over tree-sitter arithmetic nodes (64-bit, like bash): each kind
        of node has its method (``_ARITH_NODES``); any other is not evaluated."""
        evaluate = _ARITH_NODES.get(node.type)
        if evaluate is None:
            raise UnknownValue(f"{snippet(self.text(node))} is not supported in arithmetic")
        return evaluate(self, node)

    def arith_word(self, node: Node) -> tuple[int, tuple[Pos, ...]]:
        """A number, or a bare variable name (bash reads ``TP*2`` as ``$TP*2``)."""
        text = self.text(node).strip()
        if NAME_RE.fullmatch(text):
            return self.arith_var(text)
        return _bash_int(text), ()

    def arith_expanded(self, node: Node) -> tuple[int, tuple[Pos, ...]]:
        """``$X`` / ``${X}`` inside the expression: its known text must be an integer."""
        try:
            pieces = self.expand(node, quoted=True)
        except ValueTooLarge:
            raise UnknownValue(TOO_LARGE) from None
        if first_unknown(pieces):
            raise UnknownValue(f"{snippet(self.text(node))} is unknown")
        via = merge_positions(*(p.via for p in pieces))
        return _bash_int("".join(p.text for p in pieces).strip()), via

    def arith_parenthesized(self, node: Node) -> tuple[int, tuple[Pos, ...]]:
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            raise UnknownValue(f"{snippet(self.text(node))} is not supported")
        return self.arith(inner[0])

    def arith_unary(self, node: Node) -> tuple[int, tuple[Pos, ...]]:
        """A sign; ``!``, ``~`` and increments are not evaluated."""
        op = next((c.type for c in node.children if not c.is_named), "")
        operand = node.named_children[-1] if node.named_child_count else None
        if operand is None or op not in ("-", "+"):
            raise UnknownValue(f"operator {op or '?'} is not evaluated")
        value, via = self.arith(operand)
        return _wrap(-value if op == "-" else value), via

    def arith_binary(self, node: Node) -> tuple[int, tuple[Pos, ...]]:
        """The arithmetic operators (``_binop``); comparisons, bit and logical operators
        are not evaluated."""
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        op_node = node.child_by_field_name("operator")
        op = op_node.type if op_node is not None else ""
        if left is None or right is None or op not in ("+", "-", "*", "/", "%", "**"):
            raise UnknownValue(f"operator {op or '?'} is not evaluated")
        lv, lvia = self.arith(left)
        rv, rvia = self.arith(right)
        return _binop(op, lv, rv), merge_positions(lvia, rvia)

    def arith_var(self, name: str) -> tuple[int, tuple[Pos, ...]]:
        var = self.vars.get(name)
        if name in DYNAMIC and var is None:
            raise UnknownValue(f"${name} changes on every run")
        value = var.scalar() if var is not None else None
        if var is None or value is None:
            raise UnknownValue(never_set(name, self.unfollowed))
        if first_unknown(value):
            # Name the variable rather than nest its reason: chains stay short.
            raise UnknownValue(f"{name} is unknown")
        text = "".join(p.text for p in value).strip()
        try:
            number = _bash_int(text)
        except UnknownValue:
            raise UnknownValue(f"value of {name} ({snippet(text)!r}) is not an integer") from None
        return number, merge_positions(var.defs, *(p.via for p in value))


# how each kind of tree-sitter arithmetic node is evaluated
_ARITH_NODES: dict[str, Callable[[Arithmetic, Node], tuple[int, tuple[Pos, ...]]]] = {
    "number": Arithmetic.arith_word,
    "word": Arithmetic.arith_word,
    "variable_name": Arithmetic.arith_word,
    "simple_expansion": Arithmetic.arith_expanded,
    "expansion": Arithmetic.arith_expanded,
    "parenthesized_expression": Arithmetic.arith_parenthesized,
    "unary_expression": Arithmetic.arith_unary,
    "binary_expression": Arithmetic.arith_binary,
}


def _bash_int(text: str) -> int:
    if not INT_RE.fullmatch(text):
        raise UnknownValue(f"{snippet(text)!r} is not an integer")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits[:2].lower() == "0x":
        value = int(digits, 16)
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits, 8)  # bash reads a leading 0 as octal
    else:
        # bash accumulates in a 64-bit integer that wraps (expr.c strlong); so do we, in
        # chunks, since int() refuses more than 4,300 decimal digits at once
        value = 0
        for k in range(0, len(digits), 1000):
            part = digits[k : k + 1000]
            value = (value * 10 ** len(part) + int(part)) % (1 << 64)
    return _wrap(sign * value)


def _wrap(v: int) -> int:
    return ((v + (1 << 63)) % (1 << 64)) - (1 << 63)


def _binop(op: str, a: int, b: int) -> int:
    if op == "+":
        return _wrap(a + b)
    if op == "-":
        return _wrap(a - b)
    if op == "*":
        return _wrap(a * b)
    if op == "**":
        if b < 0:
            raise UnknownValue("negative exponent")
        return _wrap(pow(a, b, 1 << 64))
    if b == 0:
        raise UnknownValue("division by zero")
    q = abs(a) // abs(b)
    q = q if (a >= 0) == (b >= 0) else -q  # bash truncates toward zero
    return _wrap(q) if op == "/" else _wrap(a - b * q)
