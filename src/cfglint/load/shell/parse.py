"""Parse a launch script and interpret it statically: the entry points of the shell loader."""

from __future__ import annotations

import re
import time

from tree_sitter import Tree

from cfglint.load.safeio import read_text
from cfglint.load.shell.arithmetic import Arithmetic
from cfglint.load.shell.base import ShellBase, bash_parser
from cfglint.load.shell.conditions import Conditions
from cfglint.load.shell.expansions import Expansions
from cfglint.load.shell.statements import Statements
from cfglint.load.shell.syntax import syntax_problems, warning_line
from cfglint.load.shell.variables import Variables
from cfglint.load.shell.words import ShellScript
from cfglint.model.errors import InputError
from cfglint.model.lazy_re import compile_on_use


class Interpreter(Statements, Conditions, Variables, Expansions, Arithmetic, ShellBase):
    """The static bash interpreter: nothing it reads is ever run."""


def parse_script(path: str) -> ShellScript:
    return parse_script_text(read_text(path, what="launch script"), path)


# tree-sitter-bash parses a real launch script in milliseconds, but its error recovery is
# super-linear in time and memory on text that is not bash (200 KB of Python: > 30 s,
# ~150 MB a second); the parse gets a budget.
PARSE_SECONDS = 2.0


def _parse_tree(src: bytes, path: str) -> Tree:
    """tree-sitter's tree of ``src``, fed through a read callback that ends the input once
    the budget is spent (tree-sitter then stops); that case is one clear input error."""
    deadline = time.monotonic() + PARSE_SECONDS
    late = False

    def read(offset: int, _point: object) -> bytes:
        nonlocal late
        if late or time.monotonic() > deadline:
            late = True
            return b""
        return src[offset : offset + 65536]

    tree = bash_parser().parse(read)
    if late:
        raise InputError(
            path, f"cannot parse shell: gave up after {PARSE_SECONDS:g} s (is it a shell script?)"
        )
    return tree


# bash's extended globs (`rm -rf ./out/!(rank_*)` after `shopt -s extglob`, as MindFormers'
# scripts/run_distribute.sh @ v1.3.2 does) are not in tree-sitter-bash's grammar. With extglob
# on, each pattern is parsed as a plain word of the same length: node offsets stay those of
# the real text, from which every word is read.
_EXTGLOB_ON = compile_on_use(rb"^\s*shopt\s+-s\s+(\w+\s+)*extglob\b", re.M)
_EXTGLOB = compile_on_use(rb"(?:[!@]|(?<=[\s/])[?*+])\([^()\n\s]*\)")


def _parsable(src: bytes) -> bytes:
    # the pattern only for a script that names extglob at all (most do not)
    if b"extglob" not in src or not _EXTGLOB_ON.search(src):
        return src
    return _EXTGLOB.sub(lambda m: b"_" * len(m.group(0)), src)


def parse_script_text(text: str, path: str) -> ShellScript:
    interp = Interpreter(text, path)
    tree = _parse_tree(_parsable(interp.src), path)
    try:
        syntax_problems(interp, tree.root_node, path)
        interp.run(tree.root_node)
        variables = {name: interp.var_word(var) for name, var in interp.vars.items()}
        # Syntax warnings come first from the pre-pass; report all in line order.
        interp.warnings.sort(key=warning_line)
    except RecursionError:
        raise InputError(path, "cannot parse shell: nesting too deep") from None
    return ShellScript(
        path=path,
        invocations=interp.invocations,
        env=dict(interp.env),
        variables=variables,
        warnings=interp.warnings,
        text=text,
        unfollowed=list(interp.unfollowed),
    )
