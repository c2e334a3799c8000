"""Shared pieces of the scanner's full pass over CPython's ``ast`` tree: literal reading,
argument lookup, source text of a node, the frame of a function being summarized. Split
out of the single visitor so each concern (seeding, dropout, weight decay, custom backward)
lives in its own module."""

from __future__ import annotations

import ast
from typing import Any

from cfglint.evidence.scan.engines import Engines, dotted
from cfglint.evidence.scan.model import Arg, FunctionSummary, GroupEvidence, SrcLoc
from cfglint.evidence.scan.triage import annotation_class

NO = object()  # "not a literal"

_ARITH: dict[type, Any] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def literal(node: ast.AST | None) -> Any:
    """The value of a literal (numbers, strings, bytes, True/False/None, constant
    arithmetic); NO for anything else."""
    if node is None:
        return NO
    c = node.__class__
    if c is ast.Constant:
        v = node.value  # type: ignore[attr-defined]
        if isinstance(v, str):
            try:
                v.encode("utf-8")  # "\ud800" escapes: not storable, and never a seed
            except UnicodeEncodeError:
                return NO
            return v
        if v is None or isinstance(v, (bool, int, float, bytes)):
            return v
        return NO  # complex, Ellipsis
    if c is ast.UnaryOp and isinstance(node.op, ast.USub):  # type: ignore[attr-defined]
        v = literal(node.operand)  # type: ignore[attr-defined]
        return -v if _number(v) else NO
    if c is ast.BinOp:
        op = _ARITH.get(node.op.__class__)  # type: ignore[attr-defined]
        if op is None:
            return NO
        a, b = literal(node.left), literal(node.right)  # type: ignore[attr-defined]
        if not (_number(a) and _number(b)):
            return NO
        try:
            return op(a, b)
        except ZeroDivisionError:
            return NO
    return NO


def strings(node: ast.AST | None) -> list[str] | None:
    """The items of a list/tuple/set of string literals (or one string)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        v = literal(node)
        return [v] if isinstance(v, str) else None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out = []
        for el in node.elts:
            v = literal(el)
            if not isinstance(v, str):
                return None
            out.append(v)
        return out
    return None


def positional(node: ast.Call) -> list[ast.expr]:
    """The positional arguments as written, ``*args`` left out."""
    return [a for a in node.args if a.__class__ is not ast.Starred]


def call_arg(node: ast.Call, index: int, keyword: str) -> ast.expr | None:
    for k in node.keywords:
        if k.arg == keyword:
            return k.value
    pos = positional(node)
    return pos[index] if index < len(pos) else None


def n_args(node: ast.Call) -> int:
    """Every argument as written (positional, keyword, starred)."""
    return len(node.args) + len(node.keywords)


def short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Source:
    """The text of nodes as written, from ast's positions (line numbers from 1, columns
    in UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)

    def segment(self, node: ast.AST) -> str:
        try:
            l0, c0 = node.lineno - 1, node.col_offset  # type: ignore[attr-defined]
            l1, c1 = node.end_lineno - 1, node.end_col_offset  # type: ignore[attr-defined]
        except AttributeError:
            return ""
        if l1 is None or c1 is None or l0 >= len(self.lines) or l1 >= len(self.lines):
            return ""
        if l0 == l1:
            return _cut(self.lines[l0], c0, c1)
        first = _cut(self.lines[l0], c0, None)
        last = _cut(self.lines[l1], 0, c1)
        return first + "".join(self.lines[l0 + 1 : l1]) + last


def _cut(line: str, start: int, end: int | None) -> str:
    if line.isascii():
        return line[start:end]
    return line.encode("utf-8")[start:end].decode("utf-8", "replace")


class Frame:
    """A function being summarized (also used for module top level and the main block)."""

    def __init__(
        self,
        qualname: str,
        line: int,
        params: list[str],
        defaults: dict[str, Arg],
        backward: str | None = None,
    ) -> None:
        self.summary = FunctionSummary(
            qualname=qualname, loc=SrcLoc(line=line), params=params, defaults=defaults
        )
        self.cond = 0
        self.literals: dict[str, Any] = {}
        self.assigns: dict[str, ast.expr] = {}
        self.str_lists: dict[str, list[str]] = {}
        self.iter_of: dict[str, str] = {}  # comprehension/loop target -> iterated name
        self.name_vars: set[str] = set()  # loop targets that hold parameter names
        self.groups = GroupEvidence()
        self.optimizers: list[tuple[ast.Call, int, str]] = []
        # custom backward being analysed ("torch" / "mindspore"), and transposed names
        self.backward = backward
        self.tainted: set[str] = set()
        # the `if` tests this point sits behind, innermost last, as written
        self.conds: list[str] = []
        self.if_counted: list[bool] = []  # per enclosing `if`: does it make code conditional
        # `trainer = Trainer(...)`: trainer.train() calls Trainer.train
        self.instances: dict[str, str] = {}
        # `trainer: Trainer | None = None`: the class a variable is declared to hold
        self.declared: dict[str, str] = {}
        # `optimizer_cls = torch.optim.AdamW`: name -> qualified class
        self.aliases: dict[str, str] = {}
        # every value a name is given, with the condition it is given under
        self.assign_all: dict[str, list[tuple[ast.expr, str]]] = {}
        # names holding named_parameters() (or a list of them)
        self.param_lists: set[str] = set()
        # decay-building branches: "decay" / "no_decay" for the `if` bodies being walked
        self.branches: list[str | None] = []
        # tuples of module classes: name -> class names (minGPT's blacklist)
        self.type_tuples: dict[str, list[str]] = {}
        # names holding an optimizer or a training engine, by the value that made them
        self.engines = Engines()


def annotated_class(node: ast.expr | None) -> str | None:
    """``fabric: L.Fabric``, ``Optional[Trainer]``, ``Trainer | None`` -> the class."""
    if node is None:
        return None
    if isinstance(node, ast.Subscript) and dotted(node.value) in ("Optional", "typing.Optional"):
        node = node.slice
        if isinstance(node, ast.Tuple):
            return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [x for x in (node.left, node.right) if dotted(x) != "None" and not _none(x)]
        if len(sides) != 1:
            return None
        node = sides[0]
    return annotation_class(dotted(node))


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
