"""The bash grammar is taken from tree-sitter-bash's compiled binding, without running the
package's __init__ (it imports importlib.resources, tempfile, shutil, bz2 and lzma for
queries cfglint never reads: ~10 M instructions of a pair lint, issue 29)."""

from __future__ import annotations

import subprocess
import sys
from importlib.machinery import PathFinder

import pytest
import tree_sitter_bash
from tree_sitter import Language

from cfglint.load.shell import grammar
from conftest import ROOT


def test_the_binding_alone_is_the_packages_grammar_and_imports_no_resources() -> None:
    code = (
        "import sys\n"
        "from tree_sitter import Language\n"
        "from cfglint.load.shell.grammar import bash_language\n"
        "lang = Language(bash_language())\n"
        "print(sorted(m for m in ('tree_sitter_bash', 'importlib.resources', 'shutil')"
        " if m in sys.modules))\n"
        "import tree_sitter_bash\n"
        "print(lang == Language(tree_sitter_bash.language()), lang.name)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.stdout.splitlines() == ["[]", "True bash"], proc.stderr[-2000:]


def test_an_install_the_path_finder_cannot_read_gets_the_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(sys.modules, "tree_sitter_bash")

    class Unreadable(PathFinder):  # as for a zip: no binding found on the package's path
        @classmethod
        def find_spec(cls, *args: object, **kwargs: object) -> None:
            return None

    monkeypatch.setattr(grammar, "PathFinder", Unreadable)
    lang = Language(grammar.bash_language())
    assert lang == Language(tree_sitter_bash.language())
    assert "tree_sitter_bash" in sys.modules
