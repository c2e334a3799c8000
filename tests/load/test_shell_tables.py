"""The shell interpreter dispatches on tree-sitter-bash node kinds through tables: a kind
misspelt there would leave that statement, condition or arithmetic silently unread, and a
method name that is not the interpreter's would fail only on the script that has it."""

from __future__ import annotations

from typing import Any

import pytest
import tree_sitter_bash
from tree_sitter import Language

from cfglint.load.shell.arithmetic import _ARITH_NODES
from cfglint.load.shell.conditions import _STATUS
from cfglint.load.shell.parse import Interpreter
from cfglint.load.shell.statements import _STATEMENT_KINDS

BASH = Language(tree_sitter_bash.language())


@pytest.mark.parametrize(
    "table", [_STATEMENT_KINDS, _STATUS, _ARITH_NODES], ids=["statements", "status", "arith"]
)
def test_tables_name_node_kinds_of_the_bash_grammar(table: dict[str, Any]) -> None:
    assert [k for k in table if BASH.id_for_node_kind(k, True) is None] == []


def test_statement_kinds_name_methods_of_the_interpreter() -> None:
    missing = [m for m in _STATEMENT_KINDS.values() if not callable(getattr(Interpreter, m, None))]
    assert missing == []
