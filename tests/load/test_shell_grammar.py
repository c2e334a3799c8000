"""How the bash grammar is loaded (load/shell/base.py): tree-sitter-bash's compiled grammar
by itself, not through its package's ``__init__``, which imports importlib.resources (and
tempfile) for a highlighting query cfglint never reads (issue 29: a pair lint within 2x
yamllint's cost)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

import pytest
import tree_sitter_bash
from tree_sitter import Language

from cfglint.load.shell import base
from conftest import fresh_python


def test_parsing_a_script_runs_no_code_of_the_grammar_package() -> None:
    code = (
        "import sys\n"
        "from cfglint.load.shell.base import bash_parser\n"
        "bash_parser().parse(b'torchrun pretrain_gpt.py --num-layers 2')\n"
        "print(*(m in sys.modules for m in ('importlib.resources', 'tempfile',"
        " 'tree_sitter_bash', 'tree_sitter_bash._binding')))\n"
    )
    proc = fresh_python(code)
    assert proc.stdout.split() == ["False", "False", "False", "True"], proc.stderr[-2000:]


def test_the_grammar_is_the_installed_packages_own() -> None:
    assert Language(base.bash_grammar()) == Language(tree_sitter_bash.language())
    binding = sys.modules[base.GRAMMAR_BINDING]
    assert os.path.dirname(binding.__file__) == os.path.dirname(tree_sitter_bash.__file__)


def test_a_package_without_the_extension_is_imported_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A release laid out otherwise (no ``_binding`` extension beside its ``__init__``)
    still gives its grammar, through the package's own ``language()``."""
    monkeypatch.delitem(sys.modules, base.GRAMMAR_BINDING, raising=False)
    monkeypatch.setattr(importlib.machinery.PathFinder, "find_spec", lambda *a, **k: None)
    assert Language(base.bash_grammar()) == Language(tree_sitter_bash.language())


def test_a_missing_grammar_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, base.GRAMMAR_BINDING, raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda *a, **k: None)
    with pytest.raises(ModuleNotFoundError, match="tree-sitter-bash, which is not installed"):
        base.bash_grammar()
