"""Statements: blocks, branches (every branch taken, its output marked conditional), loops,
commands, builtins and recording the training invocation.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence

from tree_sitter import Node

from cfglint.load.extensions import SHELL_EXT
from cfglint.load.shell.base import REDIRECTS, STATEMENTS
from cfglint.load.shell.launcher import (
    LAUNCHERS,
    SHELLS,
    WRAPPERS,
    find_launcher,
    is_python,
    split_launch,
)
from cfglint.load.shell.pieces import (
    COMMAND_LIMIT,
    IFS_CHAR,
    MAX_CALL_DEPTH,
    NAME_RE,
    TOO_LARGE,
    Ctx,
    Piece,
    StopScript,
    ValueTooLarge,
    Var,
    first_unknown,
    known_head,
    known_tail,
    merge_positions,
    snippet,
    split_words,
    template_of,
    word_problem,
)
from cfglint.load.shell.words import Invocation, Word
from cfglint.model.values import Loc

MAX_SOURCED = 16


def _sourced_path(script: str, pieces: Sequence[Piece]) -> str | None:
    """Where a sourced file is. ``$(dirname "$0")/x.sh`` and ``$SCRIPT_DIR/x.sh`` are
    unknown statically, so the known tail after the last unknown piece is looked up next
    to the script and in each folder above it (scripts are often run from the repository
    root: ``source examples/fsdp2/env_config.sh``)."""
    import os

    known = not any(p.unknown for p in pieces)
    tail = known_tail(pieces).lstrip("/")
    # launch settings live in shell files; a virtualenv's `activate` or a ~/.bashrc does
    # not hold a training run's arguments
    if not tail.endswith(SHELL_EXT):
        return None
    if known and os.path.isabs(tail):
        return tail if os.path.isfile(tail) else None
    here = os.path.dirname(os.path.abspath(script))
    while True:
        cand = os.path.join(here, tail)
        if os.path.isfile(cand):
            return os.path.relpath(cand) if not os.path.isabs(script) else cand
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


class Statements:
    """Statements: blocks, branches, loops, commands, builtins and the training invocation."""

    # -- statements -------------------------------------------------------------------

    def run(self, root: Node) -> None:
        with contextlib.suppress(StopScript):
            self.block(root.children, Ctx())

    def block(self, nodes: Iterable[Node], ctx: Ctx) -> None:
        for node in nodes:
            if node.type in STATEMENTS or node.type == "case_item":
                self.stmt(node, ctx)

    def stmt(self, node: Node, ctx: Ctx) -> None:
        """One statement, by its kind (``_STATEMENT_KINDS``); other kinds (a comment, a
        here-document body) change nothing cfglint reads."""
        method = _STATEMENT_KINDS.get(node.type)
        if method is not None:
            getattr(self, method)(node, ctx)

    def _assignments(self, node: Node, ctx: Ctx) -> None:
        for c in node.named_children:
            if c.type == "variable_assignment":
                self.assign(c, ctx)

    def _redirected(self, node: Node, ctx: Ctx) -> None:
        body = node.child_by_field_name("body")
        if body is not None:
            self.stmt(body, ctx)

    def _pipeline(self, node: Node, ctx: Ctx) -> None:
        parts = [c for c in node.named_children if c.type in STATEMENTS]
        for k, part in enumerate(parts):
            # bash runs every part in a subshell; the first part stays in scope because
            # tree-sitter-bash may glue the assignments of earlier lines onto it.
            if k:
                self.scoped(part, ctx)
            else:
                self.stmt(part, ctx)

    def _group(self, node: Node, ctx: Ctx) -> None:
        """``{ }``, ``!``, a loop's body, and the statements tree-sitter could read inside an
        ERROR: run in place."""
        self.block(node.children, ctx)

    def _case_item(self, node: Node, ctx: Ctx) -> None:
        self.block(node.children, ctx.into(node.id, 0))

    def _function_definition(self, node: Node, ctx: Ctx) -> None:
        """A function is read where it is called (``_builtin``), not where it is defined."""
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is not None and body is not None:
            self.functions[self.text(name)] = body

    def scoped(self, node: Node, ctx: Ctx) -> None:
        """Run ``node`` in a subshell: its variable changes do not reach the caller."""
        saved = dict(self.vars), set(self.exported), dict(self.env)
        try:
            if node.type == "subshell":
                self.block(node.children, ctx)
            else:
                self.stmt(node, ctx)
        finally:
            self.vars, self.exported, self.env = saved

    def if_statement(self, node: Node, ctx: Ctx) -> None:
        """Clauses in order, as bash runs them: one whose condition is known to be false
        contributes nothing; the first known to be true ends the statement; an undecided
        one is taken as a possibility (its output marked conditional, -v says why)."""
        k = 0
        plain = True  # every earlier condition is known to be false
        undecided: dict[str, list[int]] = {}  # reason -> lines of the clauses it leaves open
        try:
            for kind, cond, body in self._clauses(node):
                if kind != "if":
                    k += 1
                here = ctx if plain else ctx.into(node.id, k)
                if kind == "else":
                    self.block(body, here)
                    return
                self.block(cond, here)
                verdict = self.decide(cond)
                line = self.npos(cond[0])[0] if cond else self.npos(node)[0]
                if verdict.value is False:
                    self.warn(
                        line, f"{kind} branch not taken: its condition is false ({verdict.why})"
                    )
                    continue
                if verdict.value is True:
                    self.block(body, here)
                    return
                undecided.setdefault(verdict.why, []).append(line)
                plain = False
                self.block(body, ctx.into(node.id, k))
        finally:
            for why, lines in undecided.items():
                where = (
                    "branch"
                    if len(lines) == 1
                    else f"branches at lines {', '.join(map(str, lines))}"
                )
                self.warn(lines[0], f"{where} not decided, each taken as possible: {why}")

    def case_statement(self, node: Node, ctx: Ctx) -> None:
        """``case``: the first item whose pattern matches runs; known non-matches do not."""
        subject = node.child_by_field_name("value")
        plain = True
        items = [c for c in node.named_children if c.type == "case_item"]
        for k, item in enumerate(items):
            pats = [
                c for i, c in enumerate(item.children) if item.field_name_for_child(i) == "value"
            ]
            verdict = self.case_match(subject, pats) if subject is not None else None
            if verdict is not None and verdict.value is False:
                continue
            if verdict is not None and verdict.value is True:
                self.block(item.children, ctx if plain else ctx.into(node.id, k))
                return
            if plain and verdict is not None:
                self.warn(
                    self.npos(node)[0],
                    f"case branch not decided, each taken as possible: {verdict.why}",
                )
            plain = False
            self.block(item.children, ctx.into(node.id, k))

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
                elif c.type in STATEMENTS:
                    (body if seen_then else cond).append(c)
            return cond, body

        yield ("if", *split_then(node))
        for c in node.named_children:
            if c.type == "elif_clause":
                yield ("elif", *split_then(c))
            elif c.type == "else_clause":
                yield "else", [], [s for s in c.children if s.type in STATEMENTS]

    def loop(self, node: Node, ctx: Ctx) -> None:
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

    def and_or(self, node: Node, ctx: Ctx) -> None:
        """``a && b || c``: each part after the first runs, is skipped or may run, from the
        chain's status so far (``_runs_next``); what may run is marked conditional."""
        head, items = _and_or_chain(node)
        if head.type == "list":  # a shape we do not know: its statements, in order
            self.block(head.children, ctx)
        else:
            self.stmt(head, ctx)
        conditional = False
        # the chain's status so far: True / False when known, None when not; a plain
        # command is taken to succeed for && (`cd dir && torchrun ...` always runs)
        status = self.status(head).value if self._is_test(head) else None
        ran_ok = not self._is_test(head)
        for k, (op, item) in enumerate(items, start=1):
            runs = _runs_next(op, status, ran_ok)
            if runs is False:
                continue  # bash skips it
            conditional = conditional or runs is None
            self.stmt(item, ctx.into(node.id, k) if conditional else ctx)
            if self._is_test(item):
                status, ran_ok = self.status(item).value, False
            else:
                status, ran_ok = None, True

    def _is_test(self, node: Node) -> bool:
        if node.type in ("test_command", "negated_command"):
            return True
        if node.type == "command":
            name = node.child_by_field_name("name")
            return name is not None and self.text(name) in ("[", "[[", "test")
        return False

    # -- commands ---------------------------------------------------------------------

    def command(self, node: Node, ctx: Ctx) -> None:
        """A simple command: its assignments, a builtin that matters statically, or a
        launch (directly, or inside a wrapper's ``bash -c``) recorded as an invocation."""
        prefix, name_node, args = _command_parts(node)
        prefix = self._standalone_assignments(prefix, name_node, ctx)
        if name_node is None:
            return
        name = self._command_name(name_node)
        base = (name or "").rsplit("/", 1)[-1]
        if name is not None and self._builtin(base, name_node, args, node, ctx):
            return
        if name is not None and not _may_launch(name, base):
            return
        words = self.command_words(name_node, args, ctx)
        at = _wrapped_shell(words) if base in WRAPPERS else None
        if at is not None:
            # `srun ... bash -c "$LAUNCHER ... $CMD"`: the wrapped shell runs the string
            self._shell_c(words, at, node, ctx, self.npos(node)[0])
            return
        self.record_invocation(words, node, ctx, prefix, raw_name=self.text(name_node))

    def _command_name(self, name_node: Node) -> str | None:
        """The command's name as bash expands it, or None when it is not known statically."""
        saved, self._left = self._left, COMMAND_LIMIT
        try:
            name_pieces = self.expand(name_node, quoted=False)
        except ValueTooLarge:
            name_pieces = [self.unknown_piece(TOO_LARGE, self.npos(name_node))]
        finally:
            self._left = saved
        return None if first_unknown(name_pieces) else "".join(p.text for p in name_pieces)

    def _shell_c(self, words: list[Word], at: int, node: Node, ctx: Ctx, line: int) -> None:
        """``bash -c STRING``: the string is parsed as a script of its own, as ``eval``
        parses its text (the outer expansions are done; what the inner shell expands,
        like an escaped ``\\$SLURM_PROCID``, is unknown here)."""
        from cfglint.load.shell.evaltext import eval_commands

        commands, warnings = eval_commands(words[at + 2 : at + 3])
        for w in warnings:
            self.warn(line, w)
        found = False
        for cmd in commands:
            cmd = _after_assignments(cmd)
            if cmd and cmd[0].text in ("cd", "pushd"):
                self.cwd = _cd_target(cmd[1:], self.cwd)
            elif cmd and find_launcher(cmd) is not None:
                self.record_invocation(cmd, node, ctx, [], raw_name=cmd[0].text or "bash")
                found = True
        if not found:
            self.warn(line, f"{words[at].text} -c is not followed: it runs no launcher")

    def _standalone_assignments(
        self, prefix: list[Node], name_node: Node | None, ctx: Ctx
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

    def _assign_all(self, nodes: list[Node], ctx: Ctx) -> None:
        for c in nodes:
            if c.type == "variable_assignment":
                self.assign(c, ctx)

    def _builtin(self, base: str, name_node: Node, args: list[Node], node: Node, ctx: Ctx) -> bool:
        """Shell builtins that matter statically; True when handled."""
        line = self.npos(node)[0]
        argtext = " ".join(self.text(a) for a in args)
        if base in self.functions and len(self.calls) < MAX_CALL_DEPTH:
            if base in self.calls:
                self.warn(line, f"recursive call of function {base} is not followed")
                return True
            self.calls.append(base)
            try:
                self.block([self.functions[base]], ctx.replace(in_function=True))
            finally:
                self.calls.pop()
            return True
        if base in ("source", "."):
            why = self._follow_source(args, line, ctx)
            if why:
                self.warn(line, f"{base} {snippet(argtext, 60)} is not followed: {why}")
                if why != "already read":
                    self.unfollowed.append(f"`{base} {snippet(argtext, 40)}` (line {line})")
        elif base == "eval":
            self._eval(args, node, ctx, line, argtext)
        elif base in ("cd", "pushd"):
            words = self.command_words(name_node, args, ctx, patterns=False)[1:]
            self.cwd = _cd_target(words, self.cwd)
        elif base in SHELLS:
            if len(args) > 1 and self.text(args[0]) == "-c":
                words = self.command_words(name_node, args, ctx, patterns=False)
                self._shell_c(words, 0, node, ctx, line)
            elif args:
                self.warn(line, f"{base} {snippet(argtext, 60)} is not followed")
        elif base in ("read", "readarray", "mapfile", "let", "getopts", "printf"):
            self._set_at_runtime(base, args, line, ctx)
        elif base == "exit" and not ctx.cond and not ctx.in_function:
            self.warn(line, "exit: the rest of the script never runs and is not analyzed")
            raise StopScript
        elif self.text(name_node).startswith("--"):
            self.warn(
                line,
                f"{snippet(self.text(name_node))!r} is run as a command: a line"
                " continuation above is probably broken (a space after the backslash?)",
            )
        else:
            return False
        return True

    def _eval(self, args: list[Node], node: Node, ctx: Ctx, line: int, argtext: str) -> None:
        """``eval $cmd``: its arguments' text parsed a second time, as bash does; a training
        launch in it is recorded like one typed directly (flags keep the line they were
        written at)."""
        from cfglint.load.shell.evaltext import eval_commands

        if not args:
            return
        words = self.command_words(args[0], args[1:], ctx, patterns=False)
        commands, warnings = eval_commands(words)
        for w in warnings:
            self.warn(line, w)
        found = False
        for cmd in commands:
            cmd = _after_assignments(cmd)
            if cmd and cmd[0].text in ("cd", "pushd"):
                self.cwd = _cd_target(cmd[1:], self.cwd)
            elif cmd and find_launcher(cmd) is not None:
                self.record_invocation(cmd, node, ctx, [], raw_name=cmd[0].text or "eval")
                found = True
        if not found:
            reason = next((w.unknown for c in commands for w in c if w.unknown), "")
            why = f": {reason}" if reason else ": it runs no launcher"
            self.warn(line, f"eval {snippet(argtext, 60)} is not followed{why}")
            self.unfollowed.append(f"`eval {snippet(argtext, 40)}` (line {line})")

    def _set_at_runtime(self, base: str, args: list[Node], line: int, ctx: Ctx) -> None:
        texts = [self.text(a) for a in args]
        names: list[str] = []
        if base == "read":
            names = [t for t in texts if NAME_RE.fullmatch(t)]
        elif base in ("readarray", "mapfile") and texts and NAME_RE.fullmatch(texts[-1]):
            names = [texts[-1]]
        elif base == "let":
            names = [t.split("=", 1)[0] for t in texts if "=" in t]
        elif base == "printf" and "-v" in texts[:-1]:
            names = [texts[texts.index("-v") + 1]]
        for name in names:
            if NAME_RE.fullmatch(name):
                piece = self.unknown_piece(f"{name} is set by {base} at run time", (line, 1))
                self.set_var(name, {0: (piece,)}, False, (line, 1), ctx)

    def command_words(
        self, name_node: Node, args: list[Node], ctx: Ctx, *, patterns: bool = True
    ) -> list[Word]:
        words: list[Word] = []
        saved, self._left = self._left, COMMAND_LIMIT
        try:
            for node in [name_node, *args]:
                try:
                    pieces = self.expand(node, quoted=False)
                except ValueTooLarge:
                    pieces = [self.unknown_piece(TOO_LARGE, self.npos(node))]
                words.extend(self.word(w, ctx, patterns) for w in split_words(pieces))
        finally:
            self._left = saved
        return words

    def word(self, pieces: Sequence[Piece], ctx: Ctx, patterns: bool = True) -> Word:
        """One expanded word. ``patterns=False`` (eval's arguments) leaves globs and
        braces to the second parse, which decides which of them are quoted."""
        at = pieces[0].pos
        reason = first_unknown(pieces) or word_problem(pieces, patterns=patterns)
        text = None if reason else "".join(p.text for p in pieces)
        via = tuple(self.loc(v) for v in merge_positions(*(p.via for p in pieces), exclude=at))
        cond = ctx.cond or any(p.cond for p in pieces)
        choices = [k for k, p in enumerate(pieces) if p.pos in self.branch_choices]
        if choices:
            alternatives = self._alternatives(pieces, choices, text)
            return Word(
                text, self.loc(at), via, reason, cond, choice=True, alternatives=alternatives
            )
        if not reason:
            return Word(text, self.loc(at), via, reason, cond)
        return Word(
            text,
            self.loc(at),
            via,
            reason,
            cond,
            tail=known_tail(pieces),
            head=known_head(pieces),
            template=template_of(pieces),
        )

    def _alternatives(
        self, pieces: Sequence[Piece], choices: list[int], text: str | None
    ) -> tuple[tuple[str, Loc], ...]:
        """A word built from one branch-chosen value: its text with each branch's value in
        its place (none when several such values, or an unknown part, make it ambiguous)."""
        alts = self.branch_choices[pieces[choices[0]].pos]
        if len(choices) != 1 or text is None or pieces[choices[0]].text not in dict(alts):
            return ()
        k = choices[0]
        head = "".join(p.text for p in pieces[:k])
        tail = "".join(p.text for p in pieces[k + 1 :])
        return tuple((head + t + tail, self.loc(pos)) for t, pos in alts)

    def _follow_source(self, args: list[Node], line: int, ctx: Ctx) -> str:
        """Read a sourced file in place, as bash does: its variables, exports, functions
        and launch commands become the script's. Returns why it was not followed, or ""."""
        import os

        from cfglint.load.safeio import read_text
        from cfglint.load.shell.base import SOURCE_LINES, bash_parser
        from cfglint.model.errors import InputError

        if not args:
            return "no file named"
        if len(self.sourced) > MAX_SOURCED or self._line_base:
            return "sourced files are followed one level deep, at most 16 per script"
        try:
            pieces = self.expand(args[0], quoted=False)
        except ValueTooLarge:
            return "name too long"
        target = _sourced_path(self.path, pieces)
        if target is None:
            return "no .sh file found next to the script or in a folder above it"
        if any(os.path.samefile(target, p) for p in self.sourced if os.path.exists(p)):
            return "already read"
        try:
            text = read_text(target, what="sourced script")
        except InputError as exc:
            return exc.message
        tree = bash_parser().parse(text.replace("\r\n", "\n").encode("utf-8"))
        if tree.root_node.has_error:
            return f"{target} has a syntax error"
        saved = (self.src, self.line_starts, self._char_cols, self._line_base)
        self.sourced.append(target)
        self._source_line = line
        self.src = text.replace("\r\n", "\n").encode("utf-8")
        self.line_starts = [0] + [i + 1 for i, b in enumerate(self.src) if b == 10]
        self._char_cols = {}
        self._line_base = (len(self.sourced) - 1) * SOURCE_LINES
        try:
            self.block(tree.root_node.children, ctx)
        finally:
            self.src, self.line_starts, self._char_cols, self._line_base = saved
        return ""

    def record_invocation(
        self, words: list[Word], node: Node, ctx: Ctx, prefix: list[Node], raw_name: str
    ) -> None:
        found = find_launcher(words)
        if found is None:
            return
        kind, at, env_words = found
        launcher, launcher_args, script, rest = split_launch(kind, words[at + 1 :])
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
                cwd=self.cwd,
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
                var = Var(elements, is_array, (pos,), ctx.cond, ctx.branch, pos[0])
                self.env[self.text(name_node)] = self.var_word(var)


# the method that runs each kind of statement (``Statements.stmt``), by name: assignments
# are the Variables mixin's, found on the interpreter
_STATEMENT_KINDS: dict[str, str] = {
    "command": "command",
    "variable_assignment": "assign",
    "variable_assignments": "_assignments",
    "declaration_command": "declare",
    "unset_command": "unset",
    "redirected_statement": "_redirected",
    "pipeline": "_pipeline",
    "list": "and_or",
    "subshell": "scoped",
    "compound_statement": "_group",
    "negated_command": "_group",
    "do_group": "_group",
    "ERROR": "_group",
    "case_item": "_case_item",
    "if_statement": "if_statement",
    "case_statement": "case_statement",
    "for_statement": "loop",
    "c_style_for_statement": "loop",
    "while_statement": "loop",
    "function_definition": "_function_definition",
}


def _and_or_chain(node: Node) -> tuple[Node, list[tuple[str, Node]]]:
    """The first statement of a left-nested ``&&``/``||`` list and each later one with the
    operator before it, in order (iterated, not recursed: a chain can be long)."""
    items: list[tuple[str, Node]] = []
    head = node
    while head.type == "list":
        kids = [c for c in head.children if c.type != "comment"]
        if len(kids) != 3:
            break
        items.append((kids[1].type, kids[2]))
        head = kids[0]
    items.reverse()
    return head, items


def _runs_next(op: str, status: bool | None, ran_ok: bool) -> bool | None:
    """Whether the statement after ``op`` runs (True), is skipped (False) or may run (None),
    given the chain's status so far (None: not known) and whether that came from a plain
    command, taken to succeed."""
    if (op == "&&" and status is False) or (op == "||" and (status is True or ran_ok)):
        # `cmd || X=1`: a plain command may fail; a known status skips it
        return None if op == "||" and ran_ok and status is None else False
    if op == "||" or (op == "&&" and status is None and not ran_ok):
        return None
    return True


def _command_parts(node: Node) -> tuple[list[Node], Node | None, list[Node]]:
    """A command's assignments and redirections before its name, its name, its arguments."""
    prefix: list[Node] = []
    name_node: Node | None = None
    args: list[Node] = []
    for i, c in enumerate(node.children):
        fname = node.field_name_for_child(i)
        if fname == "name":
            name_node = c
        elif fname == "argument":
            args.append(c)
        elif c.type == "variable_assignment" or (c.type in REDIRECTS and name_node is None):
            prefix.append(c)
    return prefix, name_node, args


def _may_launch(name: str, base: str) -> bool:
    """Whether a command with a known name may run a training launch: a launcher, a
    wrapper, python, or a name that word splitting turns into several words (or none:
    `$PREFIX torchrun ...` with PREFIX empty runs torchrun)."""
    return (
        base in LAUNCHERS
        or base in WRAPPERS
        or is_python(base)
        or bool(IFS_CHAR.search(name.strip()))
        or not name.strip()
    )


def _wrapped_shell(words: list[Word]) -> int | None:
    """Where a wrapper's words hold ``bash -c STRING`` (the index of the shell)."""
    return next(
        (
            i
            for i, w in enumerate(words[:-2])
            if (w.text or "").rsplit("/", 1)[-1] in SHELLS and words[i + 1].text == "-c"
        ),
        None,
    )


def _after_assignments(cmd: list[Word]) -> list[Word]:
    """The command after its leading ``NAME=value`` words: in eval's text they are
    assignments for the command (``$OPTIONS_NCCL deepspeed ...`` with
    ``OPTIONS_NCCL="NCCL_DEBUG=info ..."``), not its name."""
    k = 0
    while k < len(cmd) and cmd[k].text and "=" in cmd[k].text:
        if not NAME_RE.fullmatch(cmd[k].text.split("=", 1)[0]):
            break
        k += 1
    return cmd[k:]


def _cd_target(words: list[Word], cwd: Word | None) -> Word | None:
    """Where ``cd WORDS`` moves to: its folder word (options skipped); ``cd -`` and a bare
    ``cd`` (the home folder) leave nothing cfglint can follow. A relative folder is
    relative to the previous ``cd``'s, when that one is known."""
    args = [w for w in words if not (w.text or "").startswith("-")]
    if not args or (words and words[0].text == "-"):
        return None
    target = args[0]
    text = target.text
    if text is not None and not text.startswith("/") and cwd is not None and cwd.text:
        return target.replace(text=cwd.text.rstrip("/") + "/" + text)
    return target
