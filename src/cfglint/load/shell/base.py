"""The bash grammar (tree-sitter-bash) and the interpreter's shared state: positions,
warnings, and the size budget.
"""

from __future__ import annotations

import bisect
import functools
import re

from tree_sitter import Language, Node, Parser

from cfglint.load.shell.grammar import bash_language
from cfglint.load.shell.pieces import TOTAL_LIMIT, VALUE_LIMIT, ValueTooLarge, Var
from cfglint.load.shell.words import Invocation, Pos, Word
from cfglint.model.values import Loc

STATEMENTS = frozenset(
    {
        "command",
        "variable_assignment",
        "variable_assignments",
        "declaration_command",
        "unset_command",
        "pipeline",
        "list",
        "redirected_statement",
        "if_statement",
        "case_statement",
        "for_statement",
        "c_style_for_statement",
        "while_statement",
        "compound_statement",
        "subshell",
        "function_definition",
        "negated_command",
        "test_command",
        "do_group",
        "ERROR",
    }
)


# Tokens that may sit between statements inside an ERROR node without being the error.
SEPARATORS = frozenset({"comment", "case_item", ";", ";;", "&", "&&", "||", "|", "\n"})


REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


# Parameters whose value changes between runs even when the script never sets them.
DYNAMIC = frozenset(
    {
        "RANDOM",
        "SRANDOM",
        "SECONDS",
        "EPOCHSECONDS",
        "EPOCHREALTIME",
        "BASHPID",
        "PPID",
    }
)


@functools.cache
def bash_parser() -> Parser:
    return Parser(Language(bash_language()))


# Line numbers of a sourced file are offset by a multiple of this (no script is this long).
SOURCE_LINES = 10_000_000


class ShellBase:
    """Positions, warnings and the size budget shared by every part of the interpreter."""

    def __init__(self, text: str, path: str) -> None:
        self.path = path
        self.warnings: list[str] = []
        if "\r\n" in text:
            # bash itself chokes on CR; users mostly mean LF, so read it that way.
            self.warnings.append("line 1: file has CRLF line endings; read as LF")
            text = text.replace("\r\n", "\n")
        self.src = text.encode("utf-8")
        self.line_starts = [0]
        for m in re.finditer(rb"\n", self.src):
            self.line_starts.append(m.end())
        self._char_cols: dict[int, list[int]] = {}
        self._locs: dict[Pos, Loc] = {}
        self.vars: dict[str, Var] = {}
        # position of a chosen branch value's piece -> every branch's (text, position);
        # an empty tuple when a branch that sets nothing is among them
        self.branch_choices: dict[Pos, tuple[tuple[str, Pos], ...]] = {}
        self.exported: set[str] = set()
        self.env: dict[str, Word] = {}
        self.functions: dict[str, Node] = {}
        self.calls: list[str] = []
        # `source` / eval the script runs that cfglint could not read: any variable they
        # may set is unknown, not unset
        self.unfollowed: list[str] = []
        self.invocations: list[Invocation] = []
        self.cwd: Word | None = None  # the last `cd` target, for the entry script's path
        self._left = VALUE_LIMIT
        self._total = TOTAL_LIMIT
        self._exhausted = False
        # Files read with `source`: positions inside the k-th one carry line k * SOURCE_LINES
        # + line, so the path-less (line, column) pairs of words and variables still name
        # their file (see loc()).
        self._line_base = 0
        self.sourced: list[str] = [path]
        self._source_line = 0  # the main script's line of the `source` being read

    # -- positions --------------------------------------------------------------------

    def pos_of(self, byte: int) -> Pos:
        row = bisect.bisect_right(self.line_starts, byte) - 1
        start = self.line_starts[row]
        return self._line_base + row + 1, self._char_col(row, byte - start)

    def _char_col(self, row: int, bcol: int) -> int:
        start = self.line_starts[row]
        end = self.line_starts[row + 1] if row + 1 < len(self.line_starts) else len(self.src)
        line = self.src[start:end]
        if line.isascii():
            return bcol + 1
        table = self._char_cols.get(row)
        if table is None:
            # Byte column -> character column, built once per non-ASCII line.
            table = []
            col = 0
            for ch in line.decode("utf-8", "replace"):
                table.extend([col] * len(ch.encode("utf-8")))
                col += 1
            table.append(col)
            self._char_cols[row] = table
        return table[min(bcol, len(table) - 1)] + 1

    def npos(self, node: Node) -> Pos:
        return self.pos_of(node.start_byte)

    def loc(self, pos: Pos) -> Loc:
        got = self._locs.get(pos)
        if got is None:
            k, line = divmod(pos[0], SOURCE_LINES)
            path = self.sourced[k] if k < len(self.sourced) else self.path
            got = self._locs[pos] = Loc.model_construct(path=path, line=line, column=pos[1])
        return got

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def warn(self, line: int, message: str) -> None:
        k, line = divmod(line, SOURCE_LINES)
        if k:
            message = f"{message} (in sourced {self.sourced[k]}, line {line})"
            line = self._source_line
        self.warnings.append(f"line {line}: {message}")

    # -- budget -----------------------------------------------------------------------

    def charge(self, n: int, *, total: bool = True) -> None:
        self._left -= n
        if total:  # source text is bounded by the file size; only expansions can explode
            self._total -= n
        if self._total < 0 and not self._exhausted:
            self._exhausted = True
            self.warnings.append(
                "line 1: the script expands to more than "
                f"{TOTAL_LIMIT >> 20} MiB; later values are unknown"
            )
        if self._left < 0 or (total and self._total < 0):
            raise ValueTooLarge
