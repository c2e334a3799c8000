"""A tiny, safe expression language for rule conditions.

Rules are data; their conditions are short Python-like expressions such as
``mf.structure.num_heads % mf.structure.num_query_groups != 0``. They are parsed with
:mod:`ast` and evaluated by walking a whitelist of node types: no names other than the
ones we bind, no calls other than a few pure helpers, no attribute access other than
into configs. ``None`` (a value that is absent or unknown) propagates, so a condition
over missing data is ``None`` and the rule stays silent instead of guessing.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from cfglint.model.values import TOLERANCE, Value


class ExprError(ValueError):
    pass


_BIN: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMP: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_FUNCS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "min": min,
    "max": max,
    "int": int,
    "float": float,
    "len": len,
    "lower": lambda s: s.lower() if isinstance(s, str) else s,
    "isclose": lambda a, b, rel=TOLERANCE: abs(a - b) <= rel * max(abs(a), abs(b), 1e-30),
}
# Calls whose arguments may be None (they exist to ask about presence).
_NULL_SAFE: dict[str, Callable[..., Any]] = {
    "known": lambda x: x is not None,
    "missing": lambda x: x is None,
    "default": lambda x, d: d if x is None else x,
}


class ConfigView:
    """Attribute access into a normalized config that yields plain values. ``unknowns``,
    when given, collects every unknown value the expression reads (``(field, Value)``), so
    that a rule whose condition depended on one can say so instead of staying silent."""

    def __init__(self, cfg: Any, unknowns: list[tuple[str, Value]] | None = None) -> None:
        self._cfg = cfg
        self._unknowns = unknowns

    def __getattr__(self, section: str) -> Any:
        if section == "is_moe":
            n = self._cfg.moe.num_experts
            if n is not None and n.branch_choice:  # the script picks MoE or dense by a branch
                if self._unknowns is not None:
                    self._unknowns.append(("moe.num_experts", n))
                return None
            return self._cfg.is_moe
        if section in ("side", "kind"):
            return getattr(self._cfg, section)
        if section == "env":
            return _EnvView(self._cfg.env)
        return _SectionView(self._cfg, section, self._unknowns)


class _SectionView:
    def __init__(
        self, cfg: Any, section: str, unknowns: list[tuple[str, Value]] | None = None
    ) -> None:
        self._cfg, self._section, self._unknowns = cfg, section, unknowns

    def __getattr__(self, name: str) -> Any:
        try:
            v = self._cfg.get(f"{self._section}.{name}")
        except KeyError:
            raise ExprError(f"unknown field {self._section}.{name}") from None
        if v is not None and (not v.known or v.branch_choice):
            # a value one of several undecided script branches chose decides nothing
            if self._unknowns is not None:
                self._unknowns.append((f"{self._section}.{name}", v))
            if v.branch_choice:
                return None
        return _plain(v)


class _EnvView:
    def __init__(self, env: dict[str, Value]) -> None:
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return _plain(self._env.get(name))


def _plain(v: Value | None) -> Any:
    if v is None or not v.known:
        return None
    return v.value


@lru_cache(maxsize=512)
def _parsed(text: str) -> ast.Expression:
    try:
        return ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"invalid expression {text!r}: {exc.msg}") from None


@lru_cache(maxsize=512)
def compile_expr(text: str) -> ast.Expression:
    """``text`` parsed, every node of it checked against the whitelist: what validating a
    rule file asks, so that a bad expression is reported when the rules are loaded."""
    tree = _parsed(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or (
                node.func.id not in _FUNCS and node.func.id not in _NULL_SAFE
            ):
                raise ExprError(f"call not allowed in {text!r}")
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise ExprError(f"private attribute in {text!r}")
        elif not isinstance(node, _ALLOWED):
            raise ExprError(f"{type(node).__name__} not allowed in {text!r}")
    return tree


_ALLOWED = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.UnaryOp,
    ast.Not,
    ast.USub,
    ast.UAdd,
    ast.BinOp,
    ast.Compare,
    ast.Name,
    ast.Load,
    ast.Attribute,
    ast.Constant,
    ast.Call,
    ast.List,
    ast.Tuple,
    ast.IfExp,
    *_BIN,
    *_CMP,
)


def evaluate(text: str, names: dict[str, Any]) -> Any:
    """``text`` evaluated over ``names``. The rules' expressions were checked when their
    files were validated (compile_expr); here each node is checked as it is evaluated,
    against the same whitelist, instead of walking every expression of the run's rules
    again first (~5 M instructions a pair lint, issue 29)."""
    return _eval(_parsed(text).body, names)


def _eval(node: ast.AST, names: dict[str, Any]) -> Any:
    """Evaluate a parsed expression; None (unknown) propagates through every operator. A
    node compile_expr refuses is an ExprError here too, before anything of it runs."""
    if not _allowed(node):
        raise ExprError(f"{type(node).__name__} not allowed: {ast.unparse(node)!r}")
    match node:
        case ast.Constant(value=v):
            return v
        case ast.Name(id=name):
            if name not in names:
                raise ExprError(f"unknown name {name!r}")
            return names[name]
        case ast.Attribute(value=base, attr=attr):
            obj = _eval(base, names)
            return None if obj is None else getattr(obj, attr)
        case ast.List(elts=elts) | ast.Tuple(elts=elts):
            return [_eval(e, names) for e in elts]
        case ast.UnaryOp(op=op, operand=operand):
            return _unary(op, _eval(operand, names))
        case ast.BoolOp(op=op, values=values):
            return _boolop(isinstance(op, ast.And), values, names)
        case ast.BinOp(left=left, op=op, right=right):
            return _binop(op, _eval(left, names), _eval(right, names))
        case ast.Compare(left=left, ops=ops, comparators=comps):
            return _compare(left, ops, comps, names)
        case ast.IfExp(test=test, body=body, orelse=orelse):
            t = _eval(test, names)
            if t is None:
                return None
            return _eval(body if t else orelse, names)
        case ast.Call(func=ast.Name(id=fname), args=args):
            return _call(fname, [_eval(a, names) for a in args])
    raise ExprError(f"cannot evaluate {ast.dump(node)}")


def _allowed(node: ast.AST) -> bool:
    """compile_expr's whitelist, for one node: its type, the operators it applies, and for
    a call a helper named without keywords; an attribute is never private."""
    match node:
        case ast.Attribute(attr=attr):
            return not attr.startswith("_")
        case ast.Call(func=ast.Name(id=fname), keywords=[]):
            return fname in _FUNCS or fname in _NULL_SAFE
        case ast.Call():
            return False
        case ast.UnaryOp(op=op) | ast.BinOp(op=op):
            return isinstance(op, _ALLOWED)
        case ast.Compare(ops=ops):
            return all(isinstance(op, _ALLOWED) for op in ops)
    return isinstance(node, _ALLOWED)


def _unary(op: ast.unaryop, v: Any) -> Any:
    if isinstance(op, ast.Not):
        return None if v is None else not v
    if v is None:
        return None
    return -v if isinstance(op, ast.USub) else +v


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    try:
        return _BIN[type(op)](a, b)
    except (ZeroDivisionError, TypeError, ValueError):
        return None


def _compare(
    left: ast.expr, ops: list[ast.cmpop], comps: list[ast.expr], names: dict[str, Any]
) -> Any:
    """A chained comparison (``a < b <= c``): False at the first that fails, None when a
    side is unknown or the two cannot be compared."""
    a = _eval(left, names)
    for op, comp in zip(ops, comps, strict=True):
        b = _eval(comp, names)
        if a is None or b is None:
            return None
        try:
            if not _CMP[type(op)](a, b):
                return False
        except TypeError:
            return None
        a = b
    return True


def _call(fname: str, vals: list[Any]) -> Any:
    if fname in _NULL_SAFE:
        return _NULL_SAFE[fname](*vals)
    if any(v is None for v in vals):
        return None
    try:
        return _FUNCS[fname](*vals)
    except (TypeError, ValueError, ZeroDivisionError):
        return None


def _boolop(is_and: bool, values: list[ast.expr], names: dict[str, Any]) -> Any:
    # Kleene logic: a definite False decides an `and`, a definite True decides an `or`.
    saw_none = False
    for node in values:
        v = _eval(node, names)
        if v is None:
            saw_none = True
        elif is_and and not v:
            return False
        elif not is_and and v:
            return v
    if saw_none:
        return None
    return is_and
