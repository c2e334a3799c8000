"""Shared pieces of the libcst scanner: literal reading, argument lookup, the frame of a
function being summarized. Split out of the single visitor so each concern (seeding,
dropout, weight decay, custom backward) lives in its own module."""

from __future__ import annotations

from typing import Any

import libcst as cst

from cfglint.evidence.scan.model import Arg, FunctionSummary, GroupEvidence, SrcLoc
from cfglint.evidence.scan.triage import annotation_class

NO = object()  # "not a literal"


def dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def literal(node: cst.BaseExpression | None) -> Any:
    """The value of a literal (numbers, strings, True/False/None, constant arithmetic)."""
    if node is None:
        return NO
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, cst.SimpleString):
        try:
            v = node.evaluated_value
            if isinstance(v, str):
                v.encode("utf-8")  # "\ud800" escapes: not storable, and never a seed
            return v
        except Exception:  # odd prefixes, lone surrogates: not a value we need
            return NO
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        v = literal(node.expression)
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else NO
    if isinstance(node, cst.BinaryOperation):
        a, b = literal(node.left), literal(node.right)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
            return NO
        op = node.operator
        try:
            if isinstance(op, cst.Add):
                return a + b
            if isinstance(op, cst.Subtract):
                return a - b
            if isinstance(op, cst.Multiply):
                return a * b
            if isinstance(op, cst.Divide):
                return a / b
        except ZeroDivisionError:
            return NO
    return NO


def strings(node: cst.BaseExpression | None) -> list[str] | None:
    """The items of a list/tuple/set of string literals (or one string)."""
    if node is None:
        return None
    if isinstance(node, cst.SimpleString):
        v = literal(node)
        return [v] if isinstance(v, str) else None
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        out = []
        for el in node.elements:
            v = literal(el.value) if isinstance(el, cst.Element) else NO
            if not isinstance(v, str):
                return None
            out.append(v)
        return out
    return None


def call_arg(node: cst.Call, index: int, keyword: str) -> cst.BaseExpression | None:
    for a in node.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    positional = [a for a in node.args if a.keyword is None and not a.star]
    return positional[index].value if index < len(positional) else None


def newlines_in_parens(node: cst.CSTNode) -> int:
    """Newlines inside a node's own opening parentheses (before its first token)."""
    n = 0
    for lp in getattr(node, "lpar", ()):
        ws = lp.whitespace_after
        if isinstance(ws, cst.ParenthesizedWhitespace):
            n += 1 + len(ws.empty_lines)
        elif isinstance(ws, cst.SimpleWhitespace):
            n += ws.value.count("\n")
    return n


def short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        self.assigns: dict[str, cst.BaseExpression] = {}
        self.str_lists: dict[str, list[str]] = {}
        self.iter_of: dict[str, str] = {}  # comprehension/loop target -> iterated name
        self.name_vars: set[str] = set()  # loop targets that hold parameter names
        self.groups = GroupEvidence()
        self.optimizers: list[tuple[cst.Call, int, str]] = []
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
        self.assign_all: dict[str, list[tuple[cst.BaseExpression, str]]] = {}
        # names holding named_parameters() (or a list of them)
        self.param_lists: set[str] = set()
        # decay-building branches: "decay" / "no_decay" for the `if` bodies being walked
        self.branches: list[str | None] = []
        # tuples of module classes: name -> class names (minGPT's blacklist)
        self.type_tuples: dict[str, list[str]] = {}


def annotated_class(annotation: cst.Annotation | None) -> str | None:
    """``fabric: L.Fabric``, ``Optional[Trainer]``, ``Trainer | None`` -> the class."""
    if annotation is None:
        return None
    node: cst.BaseExpression = annotation.annotation
    if isinstance(node, cst.Subscript) and dotted(node.value) in ("Optional", "typing.Optional"):
        inner = node.slice[0].slice if len(node.slice) == 1 else None
        if not isinstance(inner, cst.Index):
            return None
        node = inner.value
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        sides = [x for x in (node.left, node.right) if dotted(x) != "None"]
        if len(sides) != 1:
            return None
        node = sides[0]
    return annotation_class(dotted(node))
