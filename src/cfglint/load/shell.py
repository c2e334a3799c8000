"""Launch-script parser: Megatron-LM / MindSpeed-LLM / MindFormers launch scripts.

Scripts are parsed with the real bash grammar (tree-sitter-bash) and *interpreted*
statically: nothing is ever run. Variables, arrays, ``${VAR:-default}``, ``$((...))``
on known integers and word splitting follow bash closely enough to recover the
argument list of the training command together with where each token was typed.
Whatever cannot be known without running something (``$1``, ``$(date)``, unset
variables, globs, ``$RANDOM``) becomes an *unknown* word carrying the reason; it is
never guessed.

Locations: a word's ``loc`` is where its text was typed, so it points at the line a
user must edit; ``via`` lists the use sites and variable definitions the text passed
through, innermost first. A variable whose value is a single token (``TP=1``) is
reported at its use site, with its definition in ``via``; a multi-token value (a
``GPT_ARGS="..."`` block, an array) keeps the locations inside the definition, with
the use site in ``via``.

Branches: every branch of an ``if``/``case``/loop/``||`` is taken and what it produces
is marked conditional. When sibling branches give a variable different values, the
later one is used (a warning names both lines), except that a non-empty value wins
over an empty one: ``EXTRA="--use-flash-attn"`` / ``EXTRA=""`` keeps the flag visible.
"""

from __future__ import annotations

import bisect
import contextlib
import fnmatch
import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from cfglint.load.safeio import read_text
from cfglint.model.errors import InputError
from cfglint.model.values import Loc

__all__ = [
    "Invocation",
    "ShellScript",
    "Word",
    "main_invocation",
    "parse_args_file",
    "parse_script",
    "parse_script_text",
]

# -- public model -----------------------------------------------------------------------


@dataclass(frozen=True)
class Word:
    """One argument word after expansion and splitting."""

    text: str | None  # None when unknown
    loc: Loc  # where the text was typed: the line to edit
    via: tuple[Loc, ...] = ()  # use sites and variable definitions it passed through
    unknown: str = ""  # why text is None
    conditional: bool = False  # from an if/case/loop branch, or a variable set in one


@dataclass
class Invocation:
    """A launcher or python command, split into launcher options, script and arguments."""

    launcher: str  # "torchrun", "python -m torch.distributed.run", "msrun", "python", ...
    launcher_args: list[Word]
    script: Word | None
    args: list[Word]
    loc: Loc
    conditional: bool = False


@dataclass
class ShellScript:
    path: str
    invocations: list[Invocation]  # in order of appearance
    env: dict[str, Word]  # exported variables, and `VAR=val` prefixes of launch commands
    variables: dict[str, Word]  # final values; arrays joined with blanks
    warnings: list[str]  # "line N: ..."
    text: str


# -- limits -----------------------------------------------------------------------------

# Sizes count characters plus PIECE_COST per fragment, so that values made of many
# small, empty or unknown fragments (and arrays of many elements) are bounded too.
VALUE_LIMIT = 64 * 1024
PIECE_COST = 16  # so that a value holds at most a few thousand fragments
COMMAND_LIMIT = 1024 * 1024
TOTAL_LIMIT = 8 * 1024 * 1024
MAX_CALL_DEPTH = 16
# Provenance chains (X=$((Y+1)) over thousands of lines) must not grow without bound.
MAX_VIA = 16
_TOO_LARGE = "value too large (over 64 KiB)"

# -- vocabulary -------------------------------------------------------------------------

_STATEMENTS = frozenset(
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
_SEPARATORS = frozenset({"comment", "case_item", ";", ";;", "&", "&&", "||", "|", "\n"})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
# Parameters whose value changes between runs even when the script never sets them.
_DYNAMIC = frozenset(
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
_LAUNCHERS = frozenset({"torchrun", "msrun", "deepspeed"})
_PYTHON_RE = re.compile(r"python(\d+(\.\d+)*)?")
# Commands that run their argument list as another command.
_WRAPPERS = frozenset(
    {
        "nohup",
        "exec",
        "env",
        "time",
        "command",
        "stdbuf",
        "numactl",
        "taskset",
        "mpirun",
        "mpiexec",
        "srun",
        "timeout",
        "nice",
        "ionice",
        "setsid",
        "unbuffer",
        "builtin",
    }
)
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
# Launcher options that take no value; every other option is assumed to take one.
_TORCHRUN_FLAGS = frozenset(
    {
        "--standalone",
        "--no_python",
        "--no-python",
        "-m",
        "--module",
        "--run_path",
        "--run-path",
        "--use_env",
        "--use-env",
    }
)
_DEEPSPEED_FLAGS = frozenset(
    {
        "--no_ssh_check",
        "--no_local_rank",
        "--no_python",
        "--module",
        "--force_multi",
        "--save_pid",
        "--enable_each_rank_log",
        "--bind_cores_to_rank",
        "--no_ssh",
    }
)
_PYTHON_VALUE_OPTS = frozenset({"-W", "-X", "-Q"})
_TRAIN_PATTERNS = (
    "pretrain_*.py",
    "posttrain*.py",
    "train*.py",
    "finetune*.py",
    "run_mindformer.py",
)
_LAUNCH_WORD_RE = re.compile(r"(?<![\w.-])(torchrun|msrun|deepspeed|python[\d.]*)(?![\w-])")
_IFS_SPLIT = re.compile(r"([ \t\n]+)")
_IFS = re.compile(r"[ \t\n]")
_GLOB_RE = re.compile(r"[*?]|\[[^\]]*\]")
_BRACE_RE = re.compile(r"\{[^{}\x00]*(,|\.\.)[^{}\x00]*\}")
_INT_RE = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")

Pos = tuple[int, int]  # (line, column), both 1-based


@functools.cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


# -- internal value model ---------------------------------------------------------------


@dataclass(slots=True)  # not frozen: frozen __init__ is several times slower; never mutated
class _Piece:
    """A fragment of an expanded word and where it came from."""

    text: str
    pos: Pos
    via: tuple[Pos, ...] = ()
    unknown: str = ""
    cond: bool = False
    split: bool = False  # subject to field splitting where it is used
    glob: bool = False  # pattern characters are active where it is used
    exact: bool = False  # text maps onto source columns starting at pos
    brk: bool = False  # a hard word boundary, between elements of "${ARR[@]}"

    # Direct constructor calls: dataclasses.replace is too slow for the hot paths.
    def used(self, at: Pos, active: bool) -> _Piece:
        """This stored piece expanded at use site ``at``."""
        via = self.via if at in self.via else (*self.via[: MAX_VIA - 1], at)
        return _Piece(self.text, self.pos, via, self.unknown, self.cond, active, active, self.exact)

    def stored(self, *, cond: bool = False) -> _Piece:
        return _Piece(
            self.text, self.pos, self.via, self.unknown, self.cond or cond, exact=self.exact
        )


_BRK = _Piece("", (0, 0), brk=True)
Value = tuple[_Piece, ...]


@dataclass(slots=True)
class _Var:
    elements: dict[int, Value]  # a scalar is element 0 of a one-element array
    is_array: bool
    defs: tuple[Pos, ...]
    cond: bool
    branch: tuple[tuple[int, int], ...]
    line: int

    def scalar(self) -> Value | None:
        return self.elements.get(0)

    def ordered(self) -> list[Value]:
        return [self.elements[k] for k in sorted(self.elements)]

    def size(self) -> int:
        return sum(_size(v) for v in self.elements.values())


@dataclass(frozen=True, slots=True)
class _Ctx:
    cond: bool = False
    branch: tuple[tuple[int, int], ...] = ()
    in_function: bool = False

    def into(self, block: int, k: int) -> _Ctx:
        return _Ctx(True, (*self.branch, (block, k)), self.in_function)


class _TooLarge(Exception):
    pass


class _Unknown(Exception):
    """Arithmetic or an index that cannot be evaluated; the message says why."""


class _Stop(Exception):
    """An unconditional top-level ``exit``: nothing after it runs."""


def _size(value: Iterable[_Piece]) -> int:
    return sum(len(p.text) + PIECE_COST for p in value)


def _merge(*groups: Iterable[Pos], exclude: Pos | None = None) -> tuple[Pos, ...]:
    seen: dict[Pos, None] = {}
    for group in groups:
        for p in group:
            if p != exclude:
                seen.setdefault(p, None)
                if len(seen) >= MAX_VIA:
                    return tuple(seen)
    return tuple(seen)


def _snippet(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- word splitting and words -----------------------------------------------------------


def _shift(p: _Piece, text: str, offset: int) -> _Piece:
    if offset == 0 and text == p.text:
        return p
    pos = (p.pos[0], p.pos[1] + offset) if p.exact else p.pos
    return replace(p, text=text, pos=pos)


def _split_words(pieces: Iterable[_Piece]) -> list[list[_Piece]]:
    """Field splitting: unquoted expansion results split on blanks, the rest do not."""
    words: list[list[_Piece]] = []
    cur: list[_Piece] | None = None
    for p in pieces:
        if p.brk:
            if cur is not None:
                words.append(cur)
                cur = None
        elif p.unknown or not p.split or not _IFS.search(p.text):
            if p.split and not p.text and not p.unknown:
                continue  # an empty unquoted expansion is no word at all
            if cur is None:
                cur = []
            cur.append(p)
        else:
            offset = 0
            for k, part in enumerate(_IFS_SPLIT.split(p.text)):
                if k % 2:
                    if cur is not None:
                        words.append(cur)
                        cur = None
                elif part:
                    if cur is None:
                        cur = []
                    cur.append(_shift(p, part, offset))
                offset += len(part)
    if cur is not None:
        words.append(cur)
    return words


def _word_problem(pieces: Sequence[_Piece], *, patterns: bool = True) -> str:
    """Why a word cannot be known statically even though all its text is known."""
    active = "".join(p.text if p.glob else "\x00" * len(p.text) for p in pieces)
    shown = "".join(p.text for p in pieces)
    if active.startswith("~"):
        return f"tilde expansion in {_snippet(shown)!r} depends on $HOME"
    if patterns and _BRACE_RE.search(active):
        return f"brace expansion {_snippet(shown)!r} is not expanded"
    if patterns and _GLOB_RE.search(active):
        return f"glob pattern {_snippet(shown)!r} is not expanded"
    return ""


def _at_expansion(pieces: list[_Piece], pos: Pos) -> list[_Piece]:
    """A one-token operand of ``${X:-...}`` is reported at the ``${``, like a variable."""
    joined = "".join(p.text for p in pieces)
    if not pieces or _IFS.search(joined.strip()) or any(p.brk for p in pieces):
        return pieces
    via = _merge(*(p.via for p in pieces), exclude=pos)
    return [
        _Piece(
            joined,
            pos,
            via,
            _first_unknown(pieces),
            any(p.cond for p in pieces),
            split=any(p.split for p in pieces),
            glob=any(p.glob for p in pieces),
        )
    ]


def _first_unknown(pieces: Iterable[_Piece]) -> str:
    return next((p.unknown for p in pieces if p.unknown), "")


def _storable(pieces: Iterable[_Piece]) -> Value:
    """A value as stored in a variable: no splitting marks; array breaks become blanks."""
    out = []
    for p in pieces:
        if p.brk:
            out.append(_Piece(" ", out[-1].pos if out else (1, 1)))
        else:
            out.append(p.stored())
    return tuple(out)


# -- the interpreter --------------------------------------------------------------------


class _Interp:
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
        self.vars: dict[str, _Var] = {}
        self.exported: set[str] = set()
        self.env: dict[str, Word] = {}
        self.functions: dict[str, Node] = {}
        self.calls: list[str] = []
        self.invocations: list[Invocation] = []
        self._left = VALUE_LIMIT
        self._total = TOTAL_LIMIT
        self._exhausted = False

    # -- positions --------------------------------------------------------------------

    def pos_of(self, byte: int) -> Pos:
        row = bisect.bisect_right(self.line_starts, byte) - 1
        start = self.line_starts[row]
        return row + 1, self._char_col(row, byte - start)

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
            got = self._locs[pos] = Loc(path=self.path, line=pos[0], column=pos[1])
        return got

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def warn(self, line: int, message: str) -> None:
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
            raise _TooLarge

    # -- statements -------------------------------------------------------------------

    def run(self, root: Node) -> None:
        with contextlib.suppress(_Stop):
            self.block(root.children, _Ctx())

    def block(self, nodes: Iterable[Node], ctx: _Ctx) -> None:
        for node in nodes:
            if node.type in _STATEMENTS or node.type == "case_item":
                self.stmt(node, ctx)

    def stmt(self, node: Node, ctx: _Ctx) -> None:
        t = node.type
        if t == "command":
            self.command(node, ctx)
        elif t == "variable_assignment":
            self.assign(node, ctx)
        elif t == "variable_assignments":
            for c in node.named_children:
                if c.type == "variable_assignment":
                    self.assign(c, ctx)
        elif t == "declaration_command":
            self.declare(node, ctx)
        elif t == "unset_command":
            self.unset(node, ctx)
        elif t == "redirected_statement":
            body = node.child_by_field_name("body")
            if body is not None:
                self.stmt(body, ctx)
        elif t == "pipeline":
            parts = [c for c in node.named_children if c.type in _STATEMENTS]
            for k, part in enumerate(parts):
                # bash runs every part in a subshell; the first part stays in scope because
                # tree-sitter-bash may glue the assignments of earlier lines onto it.
                if k:
                    self.scoped(part, ctx)
                else:
                    self.stmt(part, ctx)
        elif t == "list":
            self.and_or(node, ctx)
        elif t == "subshell":
            self.scoped(node, ctx)
        elif t in ("compound_statement", "negated_command", "do_group", "ERROR"):
            self.block(node.children, ctx)
        elif t == "case_item":
            self.block(node.children, ctx.into(node.id, 0))
        elif t == "if_statement":
            self.if_statement(node, ctx)
        elif t == "case_statement":
            for k, item in enumerate(c for c in node.named_children if c.type == "case_item"):
                self.block(item.children, ctx.into(node.id, k))
        elif t in ("for_statement", "c_style_for_statement", "while_statement"):
            self.loop(node, ctx)
        elif t == "function_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if name is not None and body is not None:
                self.functions[self.text(name)] = body

    def scoped(self, node: Node, ctx: _Ctx) -> None:
        """Run ``node`` in a subshell: its variable changes do not reach the caller."""
        saved = dict(self.vars), set(self.exported), dict(self.env)
        try:
            if node.type == "subshell":
                self.block(node.children, ctx)
            else:
                self.stmt(node, ctx)
        finally:
            self.vars, self.exported, self.env = saved

    def if_statement(self, node: Node, ctx: _Ctx) -> None:
        k = 0
        cond_ctx = ctx
        for part in self._clauses(node):
            kind, cond, body = part
            if kind != "if":
                k += 1
                cond_ctx = ctx.into(node.id, k)
            self.block(cond, cond_ctx)
            self.block(body, ctx.into(node.id, k))

    @staticmethod
    def _clauses(node: Node) -> Iterator[tuple[str, list[Node], list[Node]]]:
        """(kind, condition statements, body statements) for if / elif / else."""

        def split_then(n: Node) -> tuple[list[Node], list[Node]]:
            cond: list[Node] = []
            body: list[Node] = []
            seen_then = False
            for c in n.children:
                if c.type == "then":
                    seen_then = True
                elif c.type in ("elif_clause", "else_clause"):
                    continue
                elif c.type in _STATEMENTS:
                    (body if seen_then else cond).append(c)
            return cond, body

        yield ("if", *split_then(node))
        for c in node.named_children:
            if c.type == "elif_clause":
                yield ("elif", *split_then(c))
            elif c.type == "else_clause":
                yield "else", [], [s for s in c.children if s.type in _STATEMENTS]

    def loop(self, node: Node, ctx: _Ctx) -> None:
        body_ctx = ctx.into(node.id, 0)
        if node.type == "for_statement":
            var = node.child_by_field_name("variable")
            if var is not None:
                name = self.text(var)
                reason = f"loop variable {name} takes several values"
                self.set_var(
                    name,
                    {0: (self.unknown_piece(reason, self.npos(var)),)},
                    False,
                    self.npos(node),
                    body_ctx,
                )
        elif node.type == "c_style_for_statement":
            init = node.child_by_field_name("initializer")
            if init is not None and init.type == "variable_assignment":
                name_node = init.child_by_field_name("name")
                if name_node is not None:
                    name = self.text(name_node)
                    reason = f"loop variable {name} takes several values"
                    self.set_var(
                        name,
                        {0: (self.unknown_piece(reason, self.npos(init)),)},
                        False,
                        self.npos(node),
                        body_ctx,
                    )
        else:
            self.block(node.children_by_field_name("condition"), ctx)
        body = node.child_by_field_name("body")
        if body is not None:
            self.block(body.children, body_ctx)

    def and_or(self, node: Node, ctx: _Ctx) -> None:
        items: list[tuple[str, Node]] = []
        head = node
        while head.type == "list":  # left-nested: iterate, do not recurse
            kids = [c for c in head.children if c.type != "comment"]
            if len(kids) != 3:
                break
            items.append((kids[1].type, kids[2]))
            head = kids[0]
        items.reverse()
        if head.type == "list":  # a shape we do not know: its statements, in order
            self.block(head.children, ctx)
        else:
            self.stmt(head, ctx)
        conditional = False
        prev = head
        for k, (op, item) in enumerate(items, start=1):
            # `cd dir && torchrun ...` always runs; `[ -z "$X" ] && X=1` may not.
            if op == "||" or (op == "&&" and self._is_test(prev)):
                conditional = True
            self.stmt(item, ctx.into(node.id, k) if conditional else ctx)
            prev = item

    def _is_test(self, node: Node) -> bool:
        if node.type in ("test_command", "negated_command"):
            return True
        if node.type == "command":
            name = node.child_by_field_name("name")
            return name is not None and self.text(name) in ("[", "[[", "test")
        return False

    # -- assignments ------------------------------------------------------------------

    def assign(self, node: Node, ctx: _Ctx, *, export: bool = False, integer: bool = False) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        value_node = node.child_by_field_name("value")
        append = any(c.type == "+=" for c in node.children)
        pos = self.npos(node)
        index: int | None = None
        if name_node.type == "subscript":
            base = name_node.child_by_field_name("name")
            idx = name_node.child_by_field_name("index")
            if base is None or idx is None:
                return
            name = self.text(base)
            try:
                index, _ = self.arith(idx)
            except _Unknown as exc:
                self.set_var(name, {0: (self.unknown_piece(str(exc), pos),)}, False, pos, ctx)
                return
        else:
            name = self.text(name_node)
        elements, is_array = self.assigned_value(value_node, pos, integer)
        old = self.vars.get(name)
        if index is not None:
            base_elems = dict(old.elements) if old else {}
            k = index if index >= 0 else max(base_elems, default=-1) + 1 + index
            base_elems[k] = (*base_elems.get(k, ()), *elements[0]) if append else elements[0]
            elements, is_array = base_elems, True
        elif append and old is not None:
            elements, is_array = self._append(old, elements, is_array)
        defs = (pos,)
        if (append or index is not None) and old:  # the base assignment and recent appends
            defs = (*old.defs[:1], *old.defs[1:][-(MAX_VIA - 2) :], pos)
        if sum(_size(v) for v in elements.values()) > VALUE_LIMIT:
            elements, is_array = {0: (self.unknown_piece(_TOO_LARGE, pos),)}, False
        self.set_var(name, elements, is_array, pos, ctx, defs=defs)
        if export:
            self.export(name)

    @staticmethod
    def _append(
        old: _Var, new: dict[int, Value], new_is_array: bool
    ) -> tuple[dict[int, Value], bool]:
        if new_is_array:
            base = dict(old.elements)
            nxt = max(base, default=-1) + 1
            for k, v in enumerate(new[i] for i in sorted(new)):
                base[nxt + k] = v
            return base, True
        base = dict(old.elements)
        base[0] = (*base.get(0, ()), *new.get(0, ()))
        return base, old.is_array

    def assigned_value(
        self, node: Node | None, pos: Pos, integer: bool
    ) -> tuple[dict[int, Value], bool]:
        """The value on the right of ``=``: not split, not globbed; arrays per element."""
        if node is None:
            return {0: ()}, False
        saved, self._left = self._left, VALUE_LIMIT
        try:
            if node.type == "array":
                return dict(enumerate(self.array_elements(node))), True
            pieces = self.expand(node, quoted=False)
            problem = _word_problem(pieces, patterns=False)
            if problem:
                return {0: (self.unknown_piece(problem, self.npos(node)),)}, False
            value = _storable(pieces)
            if integer and not _INT_RE.fullmatch("".join(p.text for p in value).strip()):
                reason = "arithmetic of a `declare -i` variable is not evaluated"
                value = (self.unknown_piece(reason, self.npos(node)),)
            return {0: value}, False
        except _TooLarge:
            return {0: (self.unknown_piece(_TOO_LARGE, pos),)}, False
        finally:
            self._left = saved

    def array_elements(self, node: Node) -> list[Value]:
        out: list[Value] = []
        for child in node.named_children:
            if child.type == "comment":
                continue
            for word in _split_words(self.expand(child, quoted=False)):
                problem = _word_problem(word)
                if problem:
                    out.append((self.unknown_piece(problem, word[0].pos),))
                else:
                    out.append(_storable(word))
        return out

    def set_var(
        self,
        name: str,
        elements: dict[int, Value],
        is_array: bool,
        pos: Pos,
        ctx: _Ctx,
        *,
        defs: tuple[Pos, ...] | None = None,
    ) -> None:
        if ctx.cond:
            elements = {k: tuple(p.stored(cond=True) for p in v) for k, v in elements.items()}
        new = _Var(elements, is_array, defs or (pos,), ctx.cond, ctx.branch, pos[0])
        old = self.vars.get(name)
        if old is not None and self._sibling_branches(old.branch, ctx.branch):
            new = self._resolve_branches(name, old, new)
        self.vars[name] = new
        if name in self.exported:
            self.env[name] = self.var_word(new)

    @staticmethod
    def _sibling_branches(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
        return any(x[0] == y[0] and x[1] != y[1] for x in a for y in b)

    def _resolve_branches(self, name: str, old: _Var, new: _Var) -> _Var:
        """Two branches of one if/case set ``name``: keep both visible, never pick silently."""
        old_text, new_text = self._joined(old), self._joined(new)
        if old_text == new_text:
            return new
        if new_text is not None and not new_text.strip() and (old_text or "").strip():
            # `if ...; then X="--flag"; else X=""; fi`: keep the flag, marked conditional,
            # so that rules can still see it might be set.
            self.warn(
                new.line,
                f"{name} is set differently in another branch (line "
                f"{old.line}); the non-empty value from line {old.line} is used and "
                "marked conditional",
            )
            return old
        self.warn(
            new.line,
            f"{name} is set differently in another branch (line {old.line});"
            f" the value from line {new.line} is used and marked conditional",
        )
        return new

    @staticmethod
    def _joined(var: _Var) -> str | None:
        pieces = [p for v in var.ordered() for p in v]
        return (
            None
            if _first_unknown(pieces)
            else " ".join("".join(p.text for p in v) for v in var.ordered())
        )

    def export(self, name: str) -> None:
        self.exported.add(name)
        var = self.vars.get(name)
        if var is not None:
            self.env[name] = self.var_word(var)

    def declare(self, node: Node, ctx: _Ctx) -> None:
        kids = node.children
        if not kids:
            return
        keyword = kids[0].type
        export = keyword == "export"
        unexport = integer = False
        for c in kids[1:]:
            text = self.text(c)
            if c.type == "word" and text[:1] in "-+" and len(text) > 1:
                if "f" in text:
                    return  # export -f / declare -f: functions, not variables
                export = export or (text[0] == "-" and "x" in text)
                unexport = (keyword == "export" and "n" in text) or (text[0] == "+" and "x" in text)
                integer = integer or (text[0] == "-" and "i" in text)
            elif c.type == "variable_assignment":
                self.assign(c, ctx, export=export and not unexport, integer=integer)
            elif c.type == "variable_name":
                if unexport:
                    self.exported.discard(text)
                    self.env.pop(text, None)
                elif export:
                    self.export(text)

    def unset(self, node: Node, ctx: _Ctx) -> None:
        for c in node.named_children:
            name = self.text(c)
            if c.type not in ("variable_name", "word") or not _NAME_RE.fullmatch(name):
                continue
            var = self.vars.get(name)
            if ctx.cond:
                # Unset in one branch only: the value may still be there; say so.
                if var is not None:
                    self.set_var(
                        name, var.elements, var.is_array, self.npos(node), ctx, defs=var.defs
                    )
                continue
            self.vars.pop(name, None)
            self.exported.discard(name)
            self.env.pop(name, None)

    def var_word(self, var: _Var) -> Word:
        values = var.ordered()
        pieces = [p for v in values for p in v]
        reason = _first_unknown(pieces)
        text = None if reason else " ".join("".join(p.text for p in v) for v in values)
        at = var.defs[0]
        via = _merge(var.defs[1:], *(p.via for p in pieces), exclude=at)
        cond = var.cond or any(p.cond for p in pieces)
        return Word(text, self.loc(at), tuple(self.loc(v) for v in via), reason, cond)

    # -- commands ---------------------------------------------------------------------

    def command(self, node: Node, ctx: _Ctx) -> None:
        prefix: list[Node] = []
        name_node: Node | None = None
        args: list[Node] = []
        for i, c in enumerate(node.children):
            fname = node.field_name_for_child(i)
            if fname == "name":
                name_node = c
            elif fname == "argument":
                args.append(c)
            elif c.type == "variable_assignment" or (c.type in _REDIRECTS and name_node is None):
                prefix.append(c)
        prefix = self._standalone_assignments(prefix, name_node, ctx)
        if name_node is None:
            return
        saved, self._left = self._left, COMMAND_LIMIT
        try:
            name_pieces = self.expand(name_node, quoted=False)
        except _TooLarge:
            name_pieces = [self.unknown_piece(_TOO_LARGE, self.npos(name_node))]
        finally:
            self._left = saved
        name = None if _first_unknown(name_pieces) else "".join(p.text for p in name_pieces)
        base = (name or "").rsplit("/", 1)[-1]
        if name is not None and self._builtin(base, name_node, args, node, ctx):
            return
        if (
            name is not None
            and base not in _LAUNCHERS
            and base not in _WRAPPERS
            and not _PYTHON_RE.fullmatch(base)
            and not _IFS.search(name.strip())
        ):
            return
        words = self.command_words(name_node, args, ctx)
        self.record_invocation(words, node, ctx, prefix, raw_name=self.text(name_node))

    def _standalone_assignments(
        self, prefix: list[Node], name_node: Node | None, ctx: _Ctx
    ) -> list[Node]:
        """tree-sitter-bash sometimes glues ``A=1 B=2<newline>C=3<newline>cmd`` into one
        command; bash ends a command at an unescaped newline, so split it back."""
        group: list[Node] = []
        for c in [*prefix, name_node]:
            if c is None:
                break
            if group and self._newline_between(group[-1], c):
                self._assign_all(group, ctx)
                group = []
            if c is not name_node:
                group.append(c)
        if name_node is None:
            self._assign_all(group, ctx)
            return []
        return group

    def _newline_between(self, a: Node, b: Node) -> bool:
        gap = self.src[a.end_byte : b.start_byte].replace(b"\\\n", b"")
        return b"\n" in gap

    def _assign_all(self, nodes: list[Node], ctx: _Ctx) -> None:
        for c in nodes:
            if c.type == "variable_assignment":
                self.assign(c, ctx)

    def _builtin(self, base: str, name_node: Node, args: list[Node], node: Node, ctx: _Ctx) -> bool:
        """Shell builtins that matter statically; True when handled."""
        line = self.npos(node)[0]
        argtext = " ".join(self.text(a) for a in args)
        if base in self.functions and len(self.calls) < MAX_CALL_DEPTH:
            if base in self.calls:
                self.warn(line, f"recursive call of function {base} is not followed")
                return True
            self.calls.append(base)
            try:
                self.block([self.functions[base]], replace(ctx, in_function=True))
            finally:
                self.calls.pop()
            return True
        if base in ("source", "."):
            self.warn(line, f"{base} {_snippet(argtext, 60)} is not followed")
        elif base == "eval":
            self.warn(line, f"eval {_snippet(argtext, 60)} is not evaluated")
        elif base in _SHELLS:
            if args:
                self.warn(line, f"{base} {_snippet(argtext, 60)} is not followed")
        elif base in ("read", "readarray", "mapfile", "let", "getopts", "printf"):
            self._set_at_runtime(base, args, line, ctx)
        elif base == "exit" and not ctx.cond and not ctx.in_function:
            self.warn(line, "exit: the rest of the script never runs and is not analyzed")
            raise _Stop
        elif self.text(name_node).startswith("--"):
            self.warn(
                line,
                f"{_snippet(self.text(name_node))!r} is run as a command: a line"
                " continuation above is probably broken (a space after the backslash?)",
            )
        else:
            return False
        return True

    def _set_at_runtime(self, base: str, args: list[Node], line: int, ctx: _Ctx) -> None:
        texts = [self.text(a) for a in args]
        names: list[str] = []
        if base == "read":
            names = [t for t in texts if _NAME_RE.fullmatch(t)]
        elif base in ("readarray", "mapfile") and texts and _NAME_RE.fullmatch(texts[-1]):
            names = [texts[-1]]
        elif base == "let":
            names = [t.split("=", 1)[0] for t in texts if "=" in t]
        elif base == "printf" and "-v" in texts[:-1]:
            names = [texts[texts.index("-v") + 1]]
        for name in names:
            if _NAME_RE.fullmatch(name):
                piece = self.unknown_piece(f"{name} is set by {base} at run time", (line, 1))
                self.set_var(name, {0: (piece,)}, False, (line, 1), ctx)

    def command_words(self, name_node: Node, args: list[Node], ctx: _Ctx) -> list[Word]:
        words: list[Word] = []
        saved, self._left = self._left, COMMAND_LIMIT
        try:
            for node in [name_node, *args]:
                try:
                    pieces = self.expand(node, quoted=False)
                except _TooLarge:
                    pieces = [self.unknown_piece(_TOO_LARGE, self.npos(node))]
                words.extend(self.word(w, ctx) for w in _split_words(pieces))
        finally:
            self._left = saved
        return words

    def word(self, pieces: Sequence[_Piece], ctx: _Ctx) -> Word:
        at = pieces[0].pos
        reason = _first_unknown(pieces) or _word_problem(pieces)
        text = None if reason else "".join(p.text for p in pieces)
        via = _merge(*(p.via for p in pieces), exclude=at)
        cond = ctx.cond or any(p.cond for p in pieces)
        return Word(text, self.loc(at), tuple(self.loc(v) for v in via), reason, cond)

    def record_invocation(
        self, words: list[Word], node: Node, ctx: _Ctx, prefix: list[Node], raw_name: str
    ) -> None:
        found = _find_launcher(words)
        if found is None:
            return
        kind, at, env_words = found
        launcher, launcher_args, script, rest = _split_launch(kind, words[at + 1 :])
        if kind == "?":
            launcher = raw_name
        self.invocations.append(
            Invocation(
                launcher=launcher,
                launcher_args=launcher_args,
                script=script,
                args=rest,
                loc=self.loc(self.npos(node)),
                conditional=ctx.cond,
            )
        )
        self.env.update(env_words)
        for c in prefix:
            if c.type == "variable_assignment":
                name_node = c.child_by_field_name("name")
                if name_node is None or name_node.type != "variable_name":
                    continue
                pos = self.npos(c)
                elements, is_array = self.assigned_value(c.child_by_field_name("value"), pos, False)
                var = _Var(elements, is_array, (pos,), ctx.cond, ctx.branch, pos[0])
                self.env[self.text(name_node)] = self.var_word(var)

    # -- expansion --------------------------------------------------------------------

    def unknown_piece(self, reason: str, pos: Pos, *, quoted: bool = True) -> _Piece:
        return _Piece("", pos, unknown=reason, split=not quoted)

    def literal(
        self, a: int, b: int, *, dq: bool, split: bool, glob: bool, raw: bool = False
    ) -> list[_Piece]:
        """Source text between bytes a and b with bash quoting rules, one piece per run
        of plain characters, so that every piece knows its own line and column."""
        if b <= a:
            return []
        s = self.src[a:b].decode("utf-8", "replace")
        self.charge(len(s) + PIECE_COST, total=False)
        line, col = self.pos_of(a)
        if "\n" not in s and (raw or "\\" not in s):
            return [_Piece(s, (line, col), split=split, glob=glob, exact=True)]
        out: list[_Piece] = []
        buf: list[str] = []
        start = (line, col)

        def flush() -> None:
            if buf:
                out.append(_Piece("".join(buf), start, split=split, glob=glob, exact=True))
                buf.clear()

        i, n = 0, len(s)
        while i < n:
            ch = s[i]
            if ch == "\\" and not raw and i + 1 < n:
                nxt = s[i + 1]
                if nxt == "\n":  # line continuation: both characters vanish
                    flush()
                    i, line, col = i + 2, line + 1, 1
                    continue
                if not (dq and nxt not in '$`"\\'):
                    flush()
                    out.append(_Piece(nxt, (line, col + 1)))
                    i, col = i + 2, col + 2
                    continue
            if not buf:
                start = (line, col)
            buf.append(ch)
            i += 1
            if ch == "\n":
                flush()
                line, col = line + 1, 1
            else:
                col += 1
        flush()
        return out

    def expand(self, node: Node, *, quoted: bool, operand: bool = False) -> list[_Piece]:
        t = node.type
        if t in (
            "word",
            "number",
            "regex",
            "extglob_pattern",
            "variable_name",
            "string_content",
            "special_variable_name",
        ):
            return self.literal(
                node.start_byte,
                node.end_byte,
                dq=quoted,
                split=operand and not quoted,
                glob=not quoted,
            )
        if t == "string":
            return self.string(node)
        if t == "raw_string":
            if quoted:  # single quotes are ordinary characters inside "..."
                return self.literal(
                    node.start_byte, node.end_byte, dq=True, split=False, glob=False
                )
            return self.literal(
                node.start_byte + 1, node.end_byte - 1, dq=False, split=False, glob=False, raw=True
            ) or [_Piece("", self.npos(node))]
        if t == "ansi_c_string":
            body = self.text(node)[2:-1]
            self.charge(len(body) + PIECE_COST)
            return [_Piece(_ansi_c(body), self.npos(node))]
        if t in ("concatenation", "command_name"):
            return self.parts(
                node.start_byte, node.end_byte, node.children, quoted=quoted, operand=operand
            )
        if t == "simple_expansion":
            return self.simple_expansion(node, quoted)
        if t == "expansion":
            return self.param_expansion(node, quoted)
        if t == "arithmetic_expansion":
            return [self.arith_expansion(node, quoted)]
        start = self.pos_of(self.real_start(node))
        what = _snippet(self.text(node).strip())
        if t == "command_substitution":
            reason = f"command substitution {what} is not evaluated"
        elif t == "process_substitution":
            reason = f"process substitution {what} is not evaluated"
        elif t == "brace_expression":
            reason = f"brace expansion {what} is not expanded"
        elif t == "ERROR":
            reason = f"cannot parse {what!r}"
        else:
            reason = f"unsupported shell syntax {what!r}"
        return [self.unknown_piece(reason, start, quoted=quoted)]

    def real_start(self, node: Node) -> int:
        """tree-sitter-bash lets ``$((``/``$(`` swallow preceding blanks inside strings."""
        a, b = node.start_byte, node.end_byte
        while a < b and self.src[a : a + 1] in (b" ", b"\t", b"\n"):
            a += 1
        return a

    def parts(
        self, a: int, b: int, children: Iterable[Node], *, quoted: bool, operand: bool
    ) -> list[_Piece]:
        """Expand ``children`` in order; text between them is literal."""
        out: list[_Piece] = []
        at = a
        for c in children:
            if not c.is_named or c.type in ("comment", "string_content"):
                continue
            start = max(self.real_start(c), at)
            out += self.literal(at, start, dq=quoted, split=operand and not quoted, glob=not quoted)
            out += self.expand(c, quoted=quoted, operand=operand)
            at = max(at, c.end_byte)
        out += self.literal(at, b, dq=quoted, split=operand and not quoted, glob=not quoted)
        return out

    def string(self, node: Node) -> list[_Piece]:
        kids = node.children
        a = node.start_byte + 1
        b = (
            node.end_byte - 1
            if kids and kids[-1].type == '"' and not kids[-1].is_missing
            else node.end_byte
        )
        out = self.parts(a, b, kids, quoted=True, operand=False)
        if not out and not any(c.type != "string_content" for c in node.named_children):
            out = [_Piece("", self.npos(node))]  # "" is an empty word, not no word
        return out

    def simple_expansion(self, node: Node, quoted: bool) -> list[_Piece]:
        target = node.named_children[0] if node.named_child_count else None
        pos = self.npos(node)
        if target is None:
            return [self.unknown_piece("a lone $ is not supported", pos, quoted=quoted)]
        name = self.text(target)
        special = self.special(name, pos, quoted)
        if special is not None:
            return [special]
        got = self.lookup(name, None, quoted, pos)
        if got is None:
            return [self.unknown_piece(f"variable {name} is never set", pos, quoted=quoted)]
        return got

    def special(self, name: str, pos: Pos, quoted: bool) -> _Piece | None:
        if name.isdigit() or name in ("@", "*", "#"):
            reason = (
                "$0 is the script's path at run time"
                if name == "0"
                else f"${name} is a positional parameter"
            )
        elif name in ("?", "$", "!", "-", "_"):
            reason = f"${name} is only known at run time"
        elif name in _DYNAMIC and name not in self.vars:
            reason = f"${name} changes on every run"
        else:
            return None
        return self.unknown_piece(reason, pos, quoted=quoted)

    def lookup(self, name: str, index: Node | None, quoted: bool, pos: Pos) -> list[_Piece] | None:
        """The value of ``name`` (or one element / all elements) at a use site;
        None when unset."""
        var = self.vars.get(name)
        if var is None:
            return None
        idx = self.text(index) if index is not None else ""
        if idx in ("@", "*"):
            return self.array_use(var, idx, quoted, pos)
        if index is None:
            value = var.scalar()
        else:
            try:
                k, _ = self.arith(index)
            except _Unknown as exc:
                return [self.unknown_piece(str(exc), pos, quoted=quoted)]
            if k < 0:
                k = max(var.elements, default=-1) + 1 + k
            value = var.elements.get(k)
        if value is None:
            return None
        return self.scalar_use(value, var.defs, quoted, pos)

    def scalar_use(
        self, value: Value, defs: tuple[Pos, ...], quoted: bool, pos: Pos
    ) -> list[_Piece]:
        self.charge(_size(value))
        active = not quoted
        joined = "".join(p.text for p in value)
        if not _IFS.search(joined.strip()):
            # One token: report it where it is used; the definition goes to via.
            via = _merge(defs, *(p.via for p in value), exclude=pos)
            return [
                _Piece(
                    joined,
                    pos,
                    via,
                    _first_unknown(value),
                    any(p.cond for p in value),
                    split=active,
                    glob=active,
                )
            ]
        return [p.used(pos, active) for p in value]

    def array_use(self, var: _Var, kind: str, quoted: bool, pos: Pos) -> list[_Piece]:
        self.charge(var.size())
        active = not quoted
        out: list[_Piece] = []
        for k, value in enumerate(var.ordered()):
            if k:
                out.append(_Piece(" ", pos) if quoted and kind == "*" else _BRK)
            if quoted and kind == "@":  # keeps an empty element as an empty word
                out.append(
                    _Piece("", value[0].pos, cond=var.cond)
                    if value
                    else _Piece("", pos, cond=var.cond)
                )
            out.extend(p.used(pos, active) for p in value)
        return out

    def param_expansion(self, node: Node, quoted: bool) -> list[_Piece]:
        pos = self.npos(node)
        kids = node.children
        inner = kids[1:-1] if kids and kids[-1].type == "}" else kids[1:]
        prefix = ""
        if inner and not inner[0].is_named and inner[0].type in ("#", "!"):
            prefix, inner = inner[0].type, inner[1:]
        if not inner or not inner[0].is_named:
            if prefix == "#" and not inner:  # ${#}: the number of positional parameters
                return [self.unknown_piece("$# is a positional parameter", pos, quoted=quoted)]
            return [self.cannot(node, pos, quoted)]
        target, rest = inner[0], inner[1:]
        if target.type == "subscript":
            base = target.child_by_field_name("name")
            index = target.child_by_field_name("index")
            name = self.text(base) if base is not None else ""
        else:
            name, index = self.text(target), None
        special = self.special(name, pos, quoted)
        op = rest[0].type if rest and not rest[0].is_named else ""
        if special is not None and op not in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            return [special]
        if prefix == "#":
            return [self.length(name, index, pos, quoted)]
        if prefix == "!":
            return self.indirect(name, index, node, pos, quoted)
        value = [special] if special is not None else self.lookup(name, index, quoted, pos)
        if not op:
            if value is None:
                return [self.unknown_piece(f"variable {name} is never set", pos, quoted=quoted)]
            return value
        close = kids[-1].start_byte if kids[-1].type == "}" else node.end_byte
        operands = list(rest[1:])
        if op in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            return self.default_op(
                op, name, index, value, operands, rest[0].end_byte, close, node, pos, quoted
            )
        return self.string_op(op, name, value, rest[0].end_byte, close, node, pos, quoted)

    def cannot(self, node: Node, pos: Pos, quoted: bool) -> _Piece:
        reason = f"parameter expansion {_snippet(self.text(node))} is not evaluated"
        return self.unknown_piece(reason, pos, quoted=quoted)

    def default_op(
        self,
        op: str,
        name: str,
        index: Node | None,
        value: list[_Piece] | None,
        operands: list[Node],
        a: int,
        b: int,
        node: Node,
        pos: Pos,
        quoted: bool,
    ) -> list[_Piece]:
        unset = value is None
        empty = (
            not unset and not _first_unknown(value or []) and not any(p.text for p in value or [])
        )
        use_operand = unset or (op.startswith(":") and empty)
        kind = op.lstrip(":")
        if kind == "+":
            return (
                []
                if use_operand
                else _at_expansion(self.parts(a, b, operands, quoted=quoted, operand=True), pos)
            )
        if not use_operand:
            return value or []
        if kind == "?":
            message = self.src[a:b].decode("utf-8", "replace").strip() or "not set"
            state = "is never set" if unset else "is empty"
            reason = f"variable {name} {state} (the script stops: {_snippet(message)})"
            return [self.unknown_piece(reason, pos, quoted=quoted)]
        default = self.parts(a, b, operands, quoted=quoted, operand=True)
        if kind == "=" and index is None and _NAME_RE.fullmatch(name):
            stored = _storable(default)
            self.set_var(name, {0: stored}, False, pos, _Ctx())
        return _at_expansion(default, pos)

    def length(self, name: str, index: Node | None, pos: Pos, quoted: bool) -> _Piece:
        var = self.vars.get(name)
        active = not quoted
        if index is not None and self.text(index) in ("@", "*"):
            count = len(var.elements) if var is not None else 0
            via = var.defs if var is not None else ()
            return _Piece(str(count), pos, via, split=active, glob=active)
        value = self.lookup(name, index, True, pos)
        if value is None:
            return self.unknown_piece(f"variable {name} is never set", pos, quoted=quoted)
        reason = _first_unknown(value)
        if reason:
            return self.unknown_piece(reason, pos, quoted=quoted)
        via = _merge(*(p.via for p in value), exclude=pos)
        return _Piece(str(len("".join(p.text for p in value))), pos, via, split=active, glob=active)

    def indirect(
        self, name: str, index: Node | None, node: Node, pos: Pos, quoted: bool
    ) -> list[_Piece]:
        value = self.lookup(name, index, True, pos) if index is None else None
        target = "".join(p.text for p in value) if value and not _first_unknown(value) else ""
        if not _NAME_RE.fullmatch(target):
            return [self.cannot(node, pos, quoted)]
        got = self.lookup(target, None, quoted, pos)
        if got is None:
            return [self.unknown_piece(f"variable {target} is never set", pos, quoted=quoted)]
        return got

    def string_op(
        self,
        op: str,
        name: str,
        value: list[_Piece] | None,
        a: int,
        b: int,
        node: Node,
        pos: Pos,
        quoted: bool,
    ) -> list[_Piece]:
        """``${X%pat}``, ``${X/a/b}``, ``${X:1:2}``, ``${X^^}`` on known values only."""
        if value is None:
            return [self.unknown_piece(f"variable {name} is never set", pos, quoted=quoted)]
        reason = _first_unknown(value)
        if reason:
            return [self.unknown_piece(reason, pos, quoted=quoted)]
        arg = self.src[a:b].decode("utf-8", "replace")
        text = "".join(p.text for p in value)
        result = (
            None
            if re.search(r"[$`'\"\\]", arg) or len(text) > 4096
            else _apply_string_op(op, text, arg)
        )
        if result is None:
            return [self.cannot(node, pos, quoted)]
        via = _merge(*(p.via for p in value), exclude=pos)
        active = not quoted
        return [
            _Piece(result, pos, via, cond=any(p.cond for p in value), split=active, glob=active)
        ]

    # -- arithmetic -------------------------------------------------------------------

    def arith_expansion(self, node: Node, quoted: bool) -> _Piece:
        pos = self.pos_of(self.real_start(node))
        exprs = [c for c in node.named_children if c.type != "comment"]
        try:
            if len(exprs) != 1:
                raise _Unknown("only a single expression is evaluated")
            value, via = self.arith(exprs[0])
        except _Unknown as exc:
            what = _snippet(self.text(node).strip())
            return self.unknown_piece(
                f"arithmetic {what} is not evaluated: {exc}", pos, quoted=quoted
            )
        active = not quoted
        return _Piece(str(value), pos, _merge(via, exclude=pos), split=active, glob=active)

    def arith(self, node: Node) -> tuple[int, tuple[Pos, ...]]:
        """A tiny evaluator over tree-sitter arithmetic nodes (64-bit, like bash)."""
        t = node.type
        if t in ("number", "word", "variable_name"):
            text = self.text(node).strip()
            if _NAME_RE.fullmatch(text):
                return self.arith_var(text)
            return _bash_int(text), ()
        if t in ("simple_expansion", "expansion"):
            try:
                pieces = self.expand(node, quoted=True)
            except _TooLarge:
                raise _Unknown(_TOO_LARGE) from None
            if _first_unknown(pieces):
                raise _Unknown(f"{_snippet(self.text(node))} is unknown")
            via = _merge(*(p.via for p in pieces))
            return _bash_int("".join(p.text for p in pieces).strip()), via
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children if c.type != "comment"]
            if len(inner) != 1:
                raise _Unknown(f"{_snippet(self.text(node))} is not supported")
            return self.arith(inner[0])
        if t == "unary_expression":
            op = next((c.type for c in node.children if not c.is_named), "")
            operand = node.named_children[-1] if node.named_child_count else None
            if operand is None or op not in ("-", "+"):
                raise _Unknown(f"operator {op or '?'} is not evaluated")
            value, via = self.arith(operand)
            return _wrap(-value if op == "-" else value), via
        if t == "binary_expression":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            op_node = node.child_by_field_name("operator")
            op = op_node.type if op_node is not None else ""
            if left is None or right is None or op not in ("+", "-", "*", "/", "%", "**"):
                raise _Unknown(f"operator {op or '?'} is not evaluated")
            lv, lvia = self.arith(left)
            rv, rvia = self.arith(right)
            return _binop(op, lv, rv), _merge(lvia, rvia)
        raise _Unknown(f"{_snippet(self.text(node))} is not supported in arithmetic")

    def arith_var(self, name: str) -> tuple[int, tuple[Pos, ...]]:
        var = self.vars.get(name)
        if name in _DYNAMIC and var is None:
            raise _Unknown(f"${name} changes on every run")
        value = var.scalar() if var is not None else None
        if var is None or value is None:
            raise _Unknown(f"variable {name} is never set")
        if _first_unknown(value):
            # Name the variable rather than nest its reason: chains stay short.
            raise _Unknown(f"{name} is unknown")
        text = "".join(p.text for p in value).strip()
        try:
            number = _bash_int(text)
        except _Unknown:
            raise _Unknown(f"value of {name} ({_snippet(text)!r}) is not an integer") from None
        return number, _merge(var.defs, *(p.via for p in value))


# -- helpers outside the interpreter ----------------------------------------------------


def _bash_int(text: str) -> int:
    if not _INT_RE.fullmatch(text):
        raise _Unknown(f"{_snippet(text)!r} is not an integer")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits[:2].lower() == "0x":
        value = int(digits, 16)
    elif len(digits) > 1 and digits[0] == "0":
        value = int(digits, 8)  # bash reads a leading 0 as octal
    else:
        value = int(digits)
    return _wrap(sign * value)


def _wrap(v: int) -> int:
    return ((v + (1 << 63)) % (1 << 64)) - (1 << 63)


def _binop(op: str, a: int, b: int) -> int:
    if op == "+":
        return _wrap(a + b)
    if op == "-":
        return _wrap(a - b)
    if op == "*":
        return _wrap(a * b)
    if op == "**":
        if b < 0:
            raise _Unknown("negative exponent")
        return _wrap(pow(a, b, 1 << 64))
    if b == 0:
        raise _Unknown("division by zero")
    q = abs(a) // abs(b)
    q = q if (a >= 0) == (b >= 0) else -q  # bash truncates toward zero
    return _wrap(q) if op == "/" else _wrap(a - b * q)


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A bash glob as an unanchored regex (fnmatch wraps it as ``(?s:...)\\Z``)."""
    translated = fnmatch.translate(pattern)
    m = re.fullmatch(r"\(\?s:(.*)\)\\[Zz]", translated, re.S)
    return re.compile(m.group(1) if m else translated, re.S)


def _apply_string_op(op: str, text: str, arg: str) -> str | None:
    if op in ("#", "##", "%", "%%"):
        rx = _pattern_regex(arg)
        n = len(text)
        # Shortest match first for # and %%, longest first for ## and %.
        shortest_first = op in ("#", "%%")
        cuts: Iterable[int] = range(n + 1) if shortest_first else range(n, -1, -1)
        for i in cuts:
            if op.startswith("#") and rx.fullmatch(text[:i]):
                return text[i:]
            if op.startswith("%") and rx.fullmatch(text[i:]):
                return text[:i]
        return text
    if op in ("/", "//", "/#", "/%"):
        pat, _, rep = arg.partition("/")
        if not pat:
            return text
        rx = _pattern_regex(pat).pattern
        if op == "/#":
            rx = "^(?:" + rx + ")"
        elif op == "/%":
            rx = "(?:" + rx + ")$"
        return re.sub(rx, lambda _m: rep, text, count=0 if op == "//" else 1, flags=re.S)
    if op in ("^^", ",,", "^", ",") and not arg:
        if op == "^^":
            return text.upper()
        if op == ",,":
            return text.lower()
        return (text[:1].upper() if op == "^" else text[:1].lower()) + text[1:]
    if op == ":":
        m = re.fullmatch(r"\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?", arg)
        if not m:
            return None
        start = int(m.group(1))
        start = max(len(text) + start, 0) if start < 0 else start
        if m.group(2) is None:
            return text[start:]
        length = int(m.group(2))
        end = len(text) + length if length < 0 else start + length
        return text[start:end]
    return None


_ANSI = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _ansi_c(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            m = re.match(r"x([0-9a-fA-F]{1,2})|([0-7]{1,3})", body[i + 1 :])
            if nxt in _ANSI:
                out.append(_ANSI[nxt])
                i += 2
                continue
            if m:
                out.append(chr(int(m.group(1), 16) if m.group(1) else int(m.group(2), 8)))
                i += 1 + len(m.group(0))
                continue
        out.append(ch)
        i += 1
    return "".join(out)


def _launcher_kind(text: str | None) -> str | None:
    if text is None:
        return None
    base = text.rsplit("/", 1)[-1]
    if base in _LAUNCHERS:
        return base
    if _PYTHON_RE.fullmatch(base):
        return "python"
    return None


def _find_launcher(words: list[Word]) -> tuple[str, int, dict[str, Word]] | None:
    """(launcher kind, index of the launcher word, env from ``env X=1``) or None.
    Kind "?" means the command name is unknown but a .py script follows."""
    if not words:
        return None
    kind = _launcher_kind(words[0].text)
    if kind is not None:
        return kind, 0, {}
    if words[0].text is None:
        if any(w.text and w.text.endswith(".py") for w in words[1:]):
            return "?", 0, {}
        return None
    wrapper = words[0].text.rsplit("/", 1)[-1]
    if wrapper not in _WRAPPERS:
        return None
    if wrapper == "command" and len(words) > 1 and (words[1].text or "").startswith("-"):
        return None  # `command -v torchrun` looks a launcher up, it does not run it
    env: dict[str, Word] = {}
    for i, w in enumerate(words[1:], start=1):
        kind = _launcher_kind(w.text)
        if kind is not None:
            return kind, i, env
        if w.text and _NAME_RE.fullmatch(w.text.split("=", 1)[0]) and "=" in w.text:
            name, _, value = w.text.partition("=")
            env[name] = replace(w, text=value)
    return None


def _split_launch(kind: str, words: list[Word]) -> tuple[str, list[Word], Word | None, list[Word]]:
    """(launcher, launcher args, script, script args) for the words after the launcher."""
    if kind == "python":
        return _split_python(words)
    if kind == "?":
        i = next(i for i, w in enumerate(words) if w.text and w.text.endswith(".py"))
        return kind, words[:i], words[i], words[i + 1 :]
    flags = {"torchrun": _TORCHRUN_FLAGS, "deepspeed": _DEEPSPEED_FLAGS}.get(kind, frozenset())
    return (kind, *_split_options(words, flags))


def _split_python(words: list[Word]) -> tuple[str, list[Word], Word | None, list[Word]]:
    i = 0
    while i < len(words):
        t = words[i].text
        if t is None:
            break
        if t == "-m" and i + 1 < len(words):
            module = words[i + 1]
            if module.text in ("torch.distributed.launch", "torch.distributed.run"):
                return (
                    f"python -m {module.text}",
                    *_split_options(words[i + 2 :], _TORCHRUN_FLAGS),
                )
            return "python", words[: i + 1], module, words[i + 2 :]
        if t == "-c":
            return "python", words[: i + 2], None, words[i + 2 :]
        if t in _PYTHON_VALUE_OPTS:
            i += 2
        elif t.startswith("-") and t != "-":
            i += 1
        else:
            break
    if i < len(words):
        return "python", words[:i], words[i], words[i + 1 :]
    return "python", words, None, []


def _split_options(
    words: list[Word], flags: frozenset[str]
) -> tuple[list[Word], Word | None, list[Word]]:
    # The first .py token is the script; else skip options (with their values).
    for i, w in enumerate(words):
        if w.text is not None and w.text.endswith(".py") and not w.text.startswith("-"):
            return words[:i], w, words[i + 1 :]
    i = 0
    while i < len(words):
        t = words[i].text
        if t is None or not t.startswith("-"):
            if t is None and i == 0:
                break
            return words[:i], words[i], words[i + 1 :]
        if "=" in t or t in flags:
            i += 1
        else:  # an option with its value; an unknown value is still a value
            nxt = words[i + 1] if i + 1 < len(words) else None
            i += 1 if nxt is None or (nxt.text or "").startswith("-") else 2
    return words, None, []


# -- syntax errors ----------------------------------------------------------------------


def _syntax_problems(interp: _Interp, root: Node, path: str) -> None:
    """Raise for unterminated quotes and for unparsable launch commands; warn for the rest."""
    if not root.has_error:
        return
    stack = [root]
    problems: list[tuple[int, str, bool]] = []  # (line, what, fatal)
    while stack:
        node = stack.pop()
        if node.is_missing:
            _missing(interp, node, path, problems)
            continue
        if node.type == "ERROR":
            _error(interp, node, path, problems)
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    if not problems:
        return
    problems.sort()
    statements = [c for c in _statement_nodes(root)]
    for line, what, fatal in problems:
        if fatal or not statements:
            raise InputError(path, f"cannot parse shell: {what}", line=line)
    for line, what, _ in problems:
        interp.warn(line, f"cannot parse shell syntax ({what}); that part is skipped")


def _statement_nodes(root: Node) -> Iterator[Node]:
    for c in root.children:
        if c.type == "ERROR":
            yield from (g for g in c.children if g.type in _STATEMENTS)
        elif c.type in _STATEMENTS:
            yield c


def _missing(interp: _Interp, node: Node, path: str, problems: list[tuple[int, str, bool]]) -> None:
    parent = node.parent
    if node.type in ('"', "'", "`") or (
        parent is not None
        and parent.type in ("string", "raw_string", "command_substitution")
        and node.type in ('"', "`")
    ):
        start = parent if parent is not None else node
        raise InputError(path, "unterminated quote starting here", line=interp.npos(start)[0])
    region = parent if parent is not None else node
    fatal = bool(_LAUNCH_WORD_RE.search(interp.text(region)))
    what = (
        "here-document is never closed" if node.type == "heredoc_end" else f"missing {node.type!r}"
    )
    problems.append((interp.npos(region)[0], what, fatal))


def _error(interp: _Interp, node: Node, path: str, problems: list[tuple[int, str, bool]]) -> None:
    """One problem per outermost ERROR node; fatal when it touches a launch command."""
    if node.parent is not None and _inside_error(node.parent):
        return
    bad = _bad_items(node)
    fatal = False
    for item in bad:
        text = interp.text(item)
        stripped = text.lstrip("$")
        if stripped[:1] in ("'", '"', "`") and _unbalanced(stripped):
            raise InputError(path, "unterminated quote starting here", line=interp.npos(item)[0])
        first = interp.line_starts[interp.npos(item)[0] - 1]
        end_line = interp.pos_of(item.end_byte)[0]
        last = (
            interp.line_starts[end_line] if end_line < len(interp.line_starts) else len(interp.src)
        )
        lines = interp.src[first:last].decode("utf-8", "replace")
        fatal = fatal or bool(_LAUNCH_WORD_RE.search(lines))
    what = f"unexpected {_snippet(interp.text(bad[0]), 30)!r}"
    problems.append((interp.npos(bad[0])[0], what, fatal))


def _inside_error(node: Node | None) -> bool:
    while node is not None:
        if node.type == "ERROR":
            return True
        node = node.parent
    return False


def _bad_items(node: Node) -> list[Node]:
    """The parts of an ERROR node that are not whole statements, nested ERRORs included."""
    out: list[Node] = []
    stack = [node]
    while stack:
        cur = stack.pop()
        items = [
            c
            for c in cur.children
            if c.type == "ERROR" or c.type not in (*_STATEMENTS, *_SEPARATORS)
        ]
        if not items and cur is node:
            items = [node]
        out.extend(i for i in items if i.type != "ERROR" or not i.children)
        stack.extend(reversed([i for i in items if i.type == "ERROR" and i.children]))
    return sorted(out, key=lambda n: n.start_byte) or [node]


def _unbalanced(text: str) -> bool:
    quote = text[0]
    if quote == "'":
        return text.count("'") % 2 == 1
    body = re.sub(r"\\.", "", text, flags=re.S)
    return body.count(quote) % 2 == 1


# -- public API -------------------------------------------------------------------------


def _warning_line(message: str) -> int:
    m = re.match(r"line (\d+):", message)
    return int(m.group(1)) if m else 0


def parse_script(path: str) -> ShellScript:
    return parse_script_text(read_text(path, what="launch script"), path)


def parse_script_text(text: str, path: str) -> ShellScript:
    interp = _Interp(text, path)
    tree = _parser().parse(interp.src)
    try:
        _syntax_problems(interp, tree.root_node, path)
        interp.run(tree.root_node)
        variables = {name: interp.var_word(var) for name, var in interp.vars.items()}
        # Syntax warnings come first from the pre-pass; report all in line order.
        interp.warnings.sort(key=_warning_line)
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


def main_invocation(script: ShellScript) -> Invocation | None:
    """The invocation that runs the training job."""
    if not script.invocations:
        return None

    def is_training(inv: Invocation) -> bool:
        name = inv.script.text if inv.script is not None and inv.script.text else ""
        base = name.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(base, p) for p in _TRAIN_PATTERNS)

    pool = [inv for inv in script.invocations if is_training(inv)] or script.invocations
    return max(pool, key=lambda inv: sum(1 for w in inv.args if (w.text or "").startswith("--")))


# -- plain argument files ---------------------------------------------------------------


@dataclass
class _ArgTok:
    chars: list[str] = field(default_factory=list)
    pos: Pos = (1, 1)
    unknown: str = ""


def parse_args_file(path: str) -> tuple[list[Word], str]:
    """Arguments written one or many per line, with ``#`` comments, quotes and
    backslash continuations. Nothing is expanded: ``${VAR}`` makes an unknown word."""
    text = read_text(path, what="arguments file")
    return _tokenize_args(text, path), text


def _tokenize_args(text: str, path: str) -> list[Word]:
    text = text.replace("\r\n", "\n")
    words: list[Word] = []
    cur: _ArgTok | None = None
    i, line, col, n = 0, 1, 1, len(text)

    def finish() -> None:
        nonlocal cur
        if cur is not None:
            loc = Loc(path=path, line=cur.pos[0], column=cur.pos[1])
            value = None if cur.unknown else "".join(cur.chars)
            words.append(Word(value, loc, unknown=cur.unknown))
            cur = None

    def advance(count: int) -> None:
        nonlocal i, line, col
        for ch in text[i : i + count]:
            line, col = (line + 1, 1) if ch == "\n" else (line, col + 1)
        i += count

    while i < n:
        ch = text[i]
        if ch in " \t\r\n":
            finish()
            advance(1)
            continue
        if ch == "\\" and text[i + 1 : i + 2] == "\n":  # continuation, inside a word or not
            advance(2)
            continue
        if ch == "#" and cur is None:
            end = text.find("\n", i)
            advance((n if end < 0 else end) - i)
            continue
        if cur is None:
            cur = _ArgTok(pos=(line, col))
        if ch == "\\" and i + 1 < n:
            cur.chars.append(text[i + 1])
            advance(2)
        elif ch in "'\"":
            end = _closing_quote(text, i)
            if end < 0:
                raise InputError(path, "unterminated quote starting here", line=line)
            body = text[i + 1 : end]
            if ch == '"':
                if re.search(r"(?<!\\)[$`]", body):
                    cur.unknown = (
                        cur.unknown or f"{_snippet(body)!r} is not expanded in an arguments file"
                    )
                body = re.sub(r"\\\n", "", body)
                body = re.sub(r'\\([$`"\\])', r"\1", body)
            cur.chars.append(body)
            advance(end + 1 - i)
        elif ch in "$`":
            m = re.match(r"\$\{[^}\n]*\}?|\$\([^)\n]*\)?|\$\w+|`[^`\n]*`?|\$", text[i:])
            token = m.group(0) if m else ch
            cur.unknown = cur.unknown or f"{token} is not expanded in an arguments file"
            advance(len(token))
        else:
            cur.chars.append(ch)
            advance(1)
    finish()
    return words


def _closing_quote(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\" and quote == '"':
            i += 2
            continue
        if text[i] == quote:
            return i
        i += 1
    return -1
