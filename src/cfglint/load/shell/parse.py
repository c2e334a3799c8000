"""Parse a launch script and interpret it statically: the entry points of the shell loader."""

from __future__ import annotations

from cfglint.load.safeio import read_text
from cfglint.load.shell.arithmetic import Arithmetic
from cfglint.load.shell.base import ShellBase, bash_parser
from cfglint.load.shell.expansions import Expansions
from cfglint.load.shell.statements import Statements
from cfglint.load.shell.syntax import syntax_problems, warning_line
from cfglint.load.shell.variables import Variables
from cfglint.load.shell.words import ShellScript
from cfglint.model.errors import InputError


class Interpreter(Statements, Variables, Expansions, Arithmetic, ShellBase):
    """The static bash interpreter: nothing it reads is ever run."""


def parse_script(path: str) -> ShellScript:
    return parse_script_text(read_text(path, what="launch script"), path)


def parse_script_text(text: str, path: str) -> ShellScript:
    interp = Interpreter(text, path)
    tree = bash_parser().parse(interp.src)
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
    )
