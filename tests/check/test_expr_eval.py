"""Issue 29: evaluating a rule expression checks each node against compile_expr's whitelist
as it goes, instead of walking the whole expression again first; what the whitelist refuses
is refused at evaluation too, before any of it runs."""

from __future__ import annotations

import ast
import sys
from types import SimpleNamespace

import pytest

from cfglint.check.expr import ExprError, compile_expr, evaluate

NAMES = {"a": 4, "b": 2, "cfg": SimpleNamespace(x=3, _hidden=1), "s": "AdamW"}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a % b == 0 and known(cfg.x)", True),
        ("max(a, b) - min(a, b) >= 2 or missing(cfg.x)", True),
        ("lower(s) in ['adamw', 'adam'] and not -a > 0", True),
        ("isclose(a / b, 2.0) if a else None", True),
        ("default(None, b) ** 2 < a * 2 <= 8", True),
        ("a < b", False),
    ],
)
def test_evaluation_needs_no_walk_of_the_expression(
    text: str, value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    walked: list[str] = []
    real = ast.walk

    def watch(node: ast.AST) -> object:
        walked.append(sys._getframe(1).f_code.co_filename)
        return real(node)

    monkeypatch.setattr(ast, "walk", watch)
    got = evaluate(text, NAMES)
    monkeypatch.undo()
    assert got == value
    assert not [f for f in walked if f.endswith("expr.py")]


@pytest.mark.parametrize(
    "text",
    [
        "cfg._hidden",  # a private attribute
        "open(a)",  # a call of no helper
        "abs(x=a)",  # keywords
        "cfg.x.__class__(a)",  # a call of an attribute
        "~a",
        "a & b",
        "a is b",
        "[a][0]",
        "(lambda: a)()",
        "{a: b}",
    ],
)
def test_what_the_whitelist_refuses_is_refused_at_evaluation(text: str) -> None:
    with pytest.raises(ExprError):
        compile_expr(text)
    with pytest.raises(ExprError):
        evaluate(text, NAMES)
