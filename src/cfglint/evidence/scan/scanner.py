"""One file's text -> :class:`~cfglint.evidence.scan.model.FileSummary`, with libcst.

Static only: the scanned code is parsed, never imported or run. The summary is built in a
single walk over the tree. Line numbers are counted from the newlines in whitespace and
string tokens as the walk goes through the tree in lexical order, which costs a fraction
of libcst's PositionProvider (that one re-generates the code with position tracking).
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable
from typing import Any

import libcst as cst

from cfglint.evidence.scan import common, known, triage
from cfglint.evidence.scan.backward import BackwardMixin
from cfglint.evidence.scan.common import (
    NO,
    Frame,
    call_arg,
    dotted,
    literal,
    newlines_in_parens,
    short,
    strings,
)
from cfglint.evidence.scan.decay import DECAY_LIST_HINTS, DecayMixin, all_params
from cfglint.evidence.scan.dropout import DropoutMixin
from cfglint.evidence.scan.model import (
    Arg,
    BackwardSite,
    CallSite,
    DecaySite,
    DropoutSite,
    Effect,
    Evidence,
    FileSummary,
    FunctionSummary,
    ImportRef,
    SrcLoc,
)
from cfglint.evidence.scan.seeding import SeedingMixin


def summarize(text: str, deep: bool = True) -> FileSummary:
    """Summary of one file's text; a syntax error becomes ``error`` / ``error_line``.

    ``deep=False``: the call graph only, whatever the file holds (test suites: never an
    entry point, their optimizers and layers are not the training job's).
    Never raises: one odd file must not stop a scan of a whole repository.
    """
    try:
        tree = _ast_tree(text)
        if tree is not None:
            # nothing libcst would find: the ast call graph is all the linker needs
            light = triage.summarize_tree(tree, triage=deep)
            if light is not None:
                return light
        return _summarize(text, tree)
    except Exception as exc:  # a scanner bug on exotic input: report the file, go on
        return FileSummary(error=f"could not be analysed ({type(exc).__name__}: {exc})")


def _ast_tree(text: str) -> ast.Module | None:
    """CPython's own parse (cheap); None when it fails (libcst then words the error)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in old code
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


# libcst's native parser recurses once per nesting level and is super-linear in it: 2,000
# nested parentheses overflow its stack (SIGSEGV, no message), `a[0][0]...` 3,000 deep takes
# 30 s, `[[[...` 1,000 deep 1 GB. CPython's own parser (ast, C, never runs anything) measures
# the nesting first; real training code stays far below these bounds.
MAX_AST_DEPTH = 300
MAX_BRACKET_DEPTH = 100
# libcst nests `a + b + ...` and `a and b and ...` one level per operator and is super-linear
# in the chain (2,000 terms ~1 s, 5,000 ~30 s); generated tables have flat lists instead.
MAX_OPERATORS = 500
_BINARY = frozenset(
    {
        *("+", "-", "*", "/", "//", "%", "**", "@", "<<", ">>", "&", "|", "^"),
        *("<", ">", "<=", ">=", "==", "!=", "and", "or", "not", "in", "is"),
    }
)


def _ast_parse(text: str) -> ast.Module:
    """CPython's parse of ``text``, its SyntaxWarnings ("invalid decimal literal", ...)
    kept off stderr: they would print as `<unknown>:3: SyntaxWarning` lines."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def nesting_problem(text: str, tree: ast.Module | None = None) -> str | None:
    """Why ``text`` is too deeply nested to hand to libcst, or None (``tree``: CPython's
    parse of it when the caller has one already)."""
    try:
        tree = tree if tree is not None else _ast_parse(text)
    except SyntaxError as err:
        if "too many nested parentheses" in str(err.msg):
            return "too deeply nested to parse (more than 200 nested brackets)"
        return _bracket_problem(text)  # libcst reports the syntax error; only guard depth
    except (RecursionError, MemoryError, ValueError):
        return "too deeply nested to parse"
    depth = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, d = stack.pop()
        if d > depth:
            depth = d
            if depth > MAX_AST_DEPTH:
                return f"too deeply nested to parse (expressions more than {MAX_AST_DEPTH} deep)"
        if isinstance(node, ast.BoolOp) and len(node.values) > MAX_OPERATORS:
            return f"an `and`/`or` chain of more than {MAX_OPERATORS} terms is too long to parse"
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(node))
    return None


def _bracket_problem(text: str) -> str | None:
    """Bracket depth and operator chains of a file CPython cannot parse (newer syntax or an
    error), from the tokenizer: strings and comments do not count."""
    import io
    import tokenize

    depth = ops = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NEWLINE:
                ops = 0
            elif tok.string in _BINARY and tok.type in (tokenize.OP, tokenize.NAME):
                ops += 1
                if ops > MAX_OPERATORS:
                    return (
                        f"a statement with more than {MAX_OPERATORS} operators is too long "
                        f"to parse (line {tok.start[0]})"
                    )
            if tok.type == tokenize.OP:
                if tok.string in "([{":
                    depth += 1
                    if depth > MAX_BRACKET_DEPTH:
                        return (
                            f"too deeply nested to parse (more than {MAX_BRACKET_DEPTH} "
                            f"nested brackets, line {tok.start[0]})"
                        )
                elif tok.string in ")]}":
                    depth = max(0, depth - 1)
    except (tokenize.TokenError, SyntaxError, RecursionError, MemoryError, ValueError):
        pass
    return None


def _summarize(text: str, tree: ast.Module | None = None) -> FileSummary:
    problem = nesting_problem(text, tree)
    if problem is not None:
        return FileSummary(error=problem)
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        return _syntax_error(text, exc)
    except (RecursionError, MemoryError):
        return FileSummary(error="too deeply nested to parse")
    visitor = _Visitor(module)
    try:
        visitor.walk(module)
    except RecursionError:
        return FileSummary(error="too deeply nested to analyse")
    return visitor.finish()


def _syntax_error(text: str, exc: cst.ParserSyntaxError) -> FileSummary:
    """One clear line. CPython's parser (ast: parses, never runs) words errors better and
    points at the right line; libcst's token-level message is the fallback."""
    try:
        _ast_parse(text)
    except SyntaxError as err:
        what = "" if err.msg == "invalid syntax" else f": {err.msg}"
        col = f" (column {err.offset})" if err.offset else ""
        return FileSummary(error=f"invalid Python syntax{what}{col}", error_line=err.lineno)
    except (RecursionError, MemoryError, ValueError):
        pass
    msg = short(str(exc.message).removeprefix("parser error: "), 160)
    return FileSummary(error=f"cannot be parsed by libcst: {msg}", error_line=exc.raw_line)


def summarize_json(job: tuple[str, bool]) -> str:
    """For worker processes: the summary as JSON (cheaper to send back than objects)."""
    summary = summarize(*job)
    try:
        return summary.model_dump_json(exclude_defaults=True)
    except ValueError as exc:  # unencodable text slipped into the summary
        return FileSummary(error=f"could not be analysed ({exc})").model_dump_json()


# -- small helpers ------------------------------------------------------------------------


# -- tree walking -------------------------------------------------------------------------


class _FieldOrder(cst.CSTVisitor):
    """Records the order in which a node class visits its fields: lexical order."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(node: cst.CSTNode) -> tuple[str, ...]:
    t = type(node)
    order = _FIELDS.get(t)
    if order is None:
        rec = _FieldOrder()
        node._visit_and_replace_children(rec)  # once per node class
        order = _FIELDS[t] = tuple(dict.fromkeys(rec.fields))
    return order


# -- the visitor --------------------------------------------------------------------------


class _Visitor(SeedingMixin, DropoutMixin, DecayMixin, BackwardMixin):
    """Walks the tree itself: libcst's ``visit`` rebuilds every node on the way (it shares
    that code with transformers), which costs as much as parsing. The walk follows the
    field order each node class visits its children in, which is lexical order, so the
    newline counting in :meth:`walk` sees tokens in file order."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._visit: dict[type, Callable[[Any], Any] | None] = {}
        self._leave: dict[type, Callable[[Any], Any] | None] = {}
        self.line = 1
        self.want: dict[int, Callable[[int], None]] = {}
        self.imports: dict[str, ImportRef] = {}
        self.star: list[ImportRef] = []
        self.roots: set[str] = set()
        self.classes: list[str] = []
        self.scope: list[str] = []  # enclosing class/function names
        self.class_scope: list[bool] = []  # per scope entry: is it a class
        self.autograd_classes: set[str] = set()
        self.functions: dict[str, FunctionSummary] = {}
        self.top = Frame("<module>", 1, [], {})
        self.main: Frame | None = None
        self.main_node: cst.If | None = None
        self.stack: list[Frame] = [self.top]
        self.dropouts: list[DropoutSite] = []
        self.decays: list[DecaySite] = []
        self.backwards: list[BackwardSite] = []
        self.bases: dict[str, list[str]] = {}
        self.attr_types: dict[str, str] = {}
        # per enclosing indented block: early `if ...: return` conditions still open
        self.blocks: list[int] = []
        # names the module defines at top level: a bare name handed to a call may be one
        self.defined = {
            s.name.value for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))
        }

    # -- traversal plumbing -------------------------------------------------------------
    def walk(self, node: cst.CSTNode) -> None:
        t = type(node)
        if t is cst.Newline:
            self.line += 1
            return
        if t is cst.SimpleWhitespace or t is cst.FormattedStringText:
            self.line += node.value.count("\n")  # type: ignore[attr-defined]
            return
        if t is cst.SimpleString:
            self.line += node.value.count("\n")  # type: ignore[attr-defined]
        if self.want:
            cb = self.want.pop(id(node), None)
            if cb is not None:
                cb(self.line)
        try:
            visit, leave = self._visit[t], self._leave[t]
        except KeyError:
            visit = self._visit[t] = getattr(self, f"visit_{t.__name__}", None)
            leave = self._leave[t] = getattr(self, f"leave_{t.__name__}", None)
        if visit is not None:
            visit(node)
        # always descend (imports included): every newline must be counted
        for name in _fields(node):
            child = getattr(node, name)
            if isinstance(child, cst.CSTNode):
                self.walk(child)
            elif isinstance(child, (tuple, list)):
                for c in child:
                    if isinstance(c, cst.CSTNode):
                        self.walk(c)
        if leave is not None:
            leave(node)

    def at(self, node: cst.CSTNode) -> int:
        return self.line + newlines_in_parens(node) if getattr(node, "lpar", None) else self.line

    @property
    def cur(self) -> Frame:
        return self.stack[-1]

    def code(self, node: cst.CSTNode) -> str:
        return short(self.module.code_for_node(node))

    def qualify(self, node: cst.BaseExpression) -> tuple[str | None, str | None]:
        """(as written, fully qualified through absolute imports) of a dotted name."""
        return self.qualify_name(dotted(node))

    def qualify_name(self, raw: str | None) -> tuple[str | None, str | None]:
        if raw is None:
            return None, None
        head, _, rest = raw.partition(".")
        ref = self.imports.get(head)
        if ref is None or ref.level:
            return raw, None
        base = ref.module + (f".{ref.name}" if ref.name else "")
        return raw, base + (f".{rest}" if rest else "")

    def arg(
        self, node: cst.BaseExpression | None, depth: int = 0, keep_text: bool = False
    ) -> Arg | None:
        """An argument as a seed-like value: literal, parameter, or expression."""
        if node is None:
            return None
        if depth > 4:
            return Arg(kind="expr")
        if (
            isinstance(node, cst.Call)
            and dotted(node.func) in ("str", "int")
            and len(node.args) == 1
        ):
            return self.arg(node.args[0].value, depth + 1, keep_text)
        v = literal(node)
        if v is not NO:
            return Arg(kind="literal", value=v)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            # `1337 + fabric.global_rank`: the base seed and an offset on top of it
            for base, rest in ((node.left, node.right), (node.right, node.left)):
                a = self.arg(base, depth + 1, keep_text)
                if (
                    a is not None
                    and not a.offset
                    and (
                        a.kind == "param"
                        or (a.kind == "literal" and isinstance(a.value, int))
                        or (a.kind == "expr" and "seed" in a.text.lower())
                    )
                ):
                    return a.model_copy(update={"offset": self.code(rest)})
        if isinstance(node, cst.Name):
            name = node.value
            fn = self.cur
            if name in fn.summary.params:
                return Arg(kind="param", text=name)
            if name in fn.literals:
                return Arg(kind="literal", value=fn.literals[name])
            if name in self.top.literals:
                return Arg(kind="literal", value=self.top.literals[name])
            for frame in (fn, self.top):
                if name in frame.instances:
                    return Arg(kind="instance", text=frame.instances[name])
            if name not in fn.assigns and (name in self.imports or name in self.defined):
                return Arg(kind="ref", text=name)  # a function or class handed over
            value = fn.assigns.get(name)
            # `seed = seed_ + 100 * rank`: Megatron's per-stage offset; the seed is seed_'s
            if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
                for side in (value.left, value.right):
                    if isinstance(side, cst.Name) and side.value != name:
                        base = self.arg(side, depth + 1)
                        if base is not None and base.kind in ("param", "literal"):
                            return base
            return Arg(kind="expr", text=name if keep_text else _seedish(name))
        name = dotted(node)
        if name is not None:
            return Arg(kind="expr", text=name if keep_text else _seedish(name))
        return Arg(kind="expr", text=self.code(node) if keep_text else "")

    def effect(self, kind: str, api: str, line: int, **kw: Any) -> None:
        fn = self.cur
        kw.setdefault("conditional", fn.cond > 0)
        if kw["conditional"] and fn.conds and not kw.get("condition"):
            kw["condition"] = fn.conds[-1]
        fn.summary.effects.append(Effect(kind=kind, api=api, loc=SrcLoc(line=line), **kw))  # type: ignore[arg-type]

    # -- imports ------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted(alias.name) or ""
            root = name.split(".")[0]
            self.roots.add(root)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.imports[alias.asname.name.value] = ImportRef(module=name)
            else:
                self.imports[root] = ImportRef(module=root)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        level = len(node.relative)
        module = (dotted(node.module) if node.module is not None else "") or ""
        if level == 0:
            self.roots.add(module.split(".")[0])
        if isinstance(node.names, cst.ImportStar):
            self.star.append(ImportRef(level=level, module=module))
            return
        for alias in node.names:
            name = dotted(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.imports[local] = ImportRef(level=level, module=module, name=name)

    # -- scopes -------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        qual = ".".join([*self.scope, node.name.value])
        self.classes.append(qual)
        written = [dotted(b.value) for b in node.bases if b.keyword is None]
        self.bases[qual] = [b for b in written if b and b != "object"]
        for base in node.bases:
            raw, q = self.qualify(base.value)
            full = q or raw or ""
            if full.endswith("autograd.Function") or (raw == "Function" and "torch" in self.roots):
                self.autograd_classes.add(qual)
        self.scope.append(node.name.value)
        self.class_scope.append(True)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()
        self.class_scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        qual = ".".join([*self.scope, name])
        in_class = bool(self.class_scope and self.class_scope[-1])
        params: list[str] = []
        defaults: dict[str, Arg] = {}
        str_lists: dict[str, list[str]] = {}
        p = node.params
        types: dict[str, str] = {}
        for param in (*p.posonly_params, *p.params, *p.kwonly_params):
            params.append(param.name.value)
            cls = common.annotated_class(param.annotation)
            if cls is not None:
                types[param.name.value] = cls
            if param.default is not None:
                a = self.arg(param.default)
                if a is not None:
                    defaults[param.name.value] = a
                items = strings(param.default)
                if items is not None and not isinstance(param.default, cst.SimpleString):
                    str_lists[param.name.value] = items
        backward = self.cur.backward
        if in_class and name == "backward" and ".".join(self.scope) in self.autograd_classes:
            backward = "torch"
        elif in_class and name == "bprop":
            backward = "mindspore"
        fn = Frame(qual, self.line, params, defaults, backward)
        fn.summary.param_types = types
        fn.instances.update(types)  # `fabric: L.Fabric`: fabric.x() is L.Fabric.x
        fn.summary.backward = name in ("backward", "bprop") and backward is not None
        fn.str_lists.update(str_lists)
        self.want[id(node.name)] = lambda line, s=fn.summary: setattr(s, "loc", SrcLoc(line=line))
        self.stack.append(fn)
        self.scope.append(name)
        self.class_scope.append(False)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        # finish while the function is still current: its names resolve in its own scope
        fn = self.cur
        self._finish_fn(fn)
        self.stack.pop()
        self.scope.pop()
        self.class_scope.pop()
        self.functions[fn.summary.qualname] = fn.summary

    def visit_If(self, node: cst.If) -> None:
        top_level = len(self.stack) == 1 and not self.scope
        if self.main is None and top_level and _is_main_test(node.test):
            self.main = Frame("<main>", self.line, [], {})
            self.main_node = node
            self.want[id(node.test)] = lambda line, s=self.main.summary: setattr(
                s, "loc", SrcLoc(line=line)
            )
            self.stack.append(self.main)
            return
        fn = self.cur
        # `if ok: ... else: raise` is a check, not a flag: what it guards always runs
        counted = not _else_raises(node)
        fn.if_counted.append(counted)
        if counted:
            fn.cond += 1
            fn.conds.append(short(self.module.code_for_node(node.test), 80))
        fn.branches.append(self._branch_kind(node.body))
        self._module_type_test(node.test, fn.branches[-1])

    def visit_Else(self, node: cst.Else) -> None:
        fn = self.cur
        if fn.if_counted and fn.if_counted[-1] and fn.conds:
            fn.conds[-1] = f"not ({fn.conds[-1]})"
        if fn.branches:
            fn.branches[-1] = self._branch_kind(node.body)

    def leave_If(self, original_node: cst.If) -> None:
        if original_node is self.main_node:
            self.stack.pop()
            return
        fn = self.cur
        if fn.if_counted.pop():
            fn.cond -= 1
            fn.conds.pop()
        fn.branches.pop()
        if self.blocks and original_node.orelse is None and _returns(original_node.body):
            # `if world_size == 1: ...; return`: the rest of the block runs only otherwise
            fn.cond += 1
            fn.conds.append(f"not ({short(self.module.code_for_node(original_node.test), 80)})")
            self.blocks[-1] += 1

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(0)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        fn = self.cur
        for _ in range(self.blocks.pop()):
            fn.cond -= 1
            fn.conds.pop()

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, node.iter)

    def _bind_comp(self, comp: cst.CompFor | None) -> None:
        while comp is not None:
            self._bind(comp.target, comp.iter)
            comp = comp.inner_for_in

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._bind_comp(node.for_in)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._bind_comp(node.for_in)

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._bind_comp(node.for_in)

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._bind_comp(node.for_in)

    def _bind(self, target: cst.BaseExpression, it: cst.BaseExpression) -> None:
        fn = self.cur
        src = dotted(it.func) if isinstance(it, cst.Call) else dotted(it)
        holds_params = bool(src) and (
            "param" in src.lower()  # type: ignore[union-attr]
            or src in fn.param_lists
            or src.split(".")[0] in fn.param_lists  # type: ignore[union-attr]
        )
        if isinstance(target, cst.Name):
            if isinstance(it, cst.Name):
                fn.iter_of[target.value] = it.value
        elif isinstance(target, cst.Tuple) and target.elements and holds_params:
            first = target.elements[0].value
            if isinstance(first, cst.Name):
                fn.name_vars.add(first.value)

    # -- statements ---------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._assign(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        cls = common.annotated_class(node.annotation)
        if cls is not None and isinstance(node.target, cst.Name):
            self.cur.declared[node.target.value] = cls
        if node.value is not None:
            self._assign(node.target, node.value)
        if cls is not None and isinstance(node.target, cst.Name):
            self.cur.instances.setdefault(node.target.value, cls)

    def _declared_build(self, fn: Frame, name: str, value: cst.BaseExpression) -> None:
        """``trainer = config.build()`` where ``trainer: Trainer`` is declared: a factory
        call that returns the declared class builds one (torchtitan's Configurable
        configs): its constructor runs, and ``trainer.x()`` is ``Trainer.x``."""
        cls = fn.declared.get(name)
        if cls is None or not isinstance(value, cst.Call):
            return
        func = dotted(value.func)
        if func is None or func == cls or func.rsplit(".", 1)[-1][:1].isupper():
            return  # built by name: the constructor call itself is followed
        fn.instances[name] = cls
        fn.summary.calls.append(
            CallSite(
                target=cls,
                loc=SrcLoc(line=self.line),
                conditional=fn.cond > 0,
                condition=fn.conds[-1] if fn.cond > 0 and fn.conds else "",
            )
        )

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        fn = self.cur
        line = self.line
        if isinstance(target, cst.Name):
            name = target.value
            fn.assigns[name] = value
            fn.assign_all.setdefault(name, []).append((value, fn.conds[-1] if fn.conds else ""))
            self._track_value(fn, name, value)
            self._declared_build(fn, name, value)
            lit = literal(value)
            if lit is not NO:
                fn.literals[name] = lit
            else:
                fn.literals.pop(name, None)
            items = strings(value)
            if items is not None and not isinstance(value, cst.SimpleString):
                fn.str_lists[name] = items
                if any(h in name.lower() for h in DECAY_LIST_HINTS):
                    fn.groups.names.extend(items)
                    fn.groups.name_evidence.append(
                        Evidence(loc=SrcLoc(line=line), text=self.code(value))
                    )
            if self._transposed(value):
                fn.tainted.add(name)
            else:
                fn.tainted.discard(name)
        elif isinstance(target, (cst.Subscript, cst.Attribute)):
            self._assign_switch(target, value, line)
            self._attr_type(target, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                if isinstance(el.value, cst.Name):
                    n = el.value.value
                    fn.tainted.discard(n)
                    fn.instances.pop(n, None)
                    fn.aliases.pop(n, None)
                    fn.assigns[n] = value  # rebound: `pretrain, store = wrap(pretrain)`

    def _track_value(self, fn: Frame, name: str, value: cst.BaseExpression) -> None:
        """What kind of thing a name now holds: an instance, an optimizer class, the
        parameters' names, a tuple of module classes."""
        fn.instances.pop(name, None)
        fn.aliases.pop(name, None)
        fn.param_lists.discard(name)
        if isinstance(value, cst.Call):
            func = dotted(value.func)
            if func and func.rsplit(".", 1)[-1][:1].isupper():
                fn.instances[name] = func  # trainer = Trainer(...)
            inner = value.args[0].value if func in ("list", "tuple") and value.args else value
            if (
                isinstance(inner, cst.Call)
                and isinstance(inner.func, cst.Attribute)
                and inner.func.attr.value == "named_parameters"
            ):
                fn.param_lists.add(name)
            return
        raw = dotted(value)
        if raw is not None:
            _, q = self.qualify_name(raw)
            if raw.rsplit(".", 1)[-1] in known.OPTIMIZER_NAMES:
                fn.aliases[name] = q or raw  # optimizer_cls = torch.optim.AdamW
            return
        if isinstance(value, cst.Tuple) and value.elements:
            names = [dotted(el.value) for el in value.elements]
            if all(names):
                fn.type_tuples[name] = [n.rsplit(".", 1)[-1] for n in names]  # type: ignore[union-attr]

    def _attr_type(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """``self.fabric = L.Fabric(...)`` (or a parameter annotated with a class): the
        class of what ``self.fabric`` holds, for ``self.fabric.seed_everything()``."""
        if not (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
        ):
            return
        cls = self._enclosing_class()
        if cls is None:
            return
        held: str | None = None
        if isinstance(value, cst.Call):
            func = dotted(value.func)
            if func and func.rsplit(".", 1)[-1][:1].isupper():
                held = func
        elif isinstance(value, cst.Name):
            held = self.cur.instances.get(value.value)
        if held is not None:
            self.attr_types[f"{cls}.{target.attr.value}"] = held

    def resolve_call_name(self, raw: str) -> str:
        """``trainer.train`` -> ``Trainer.train`` when ``trainer = Trainer(...)``; an alias
        of an optimizer class -> that class."""
        head, _, rest = raw.partition(".")
        for fn in (self.cur, self.top):
            if not rest and head in fn.aliases:
                return fn.aliases[head]
            if rest and "." not in rest and head in fn.instances:
                return f"{fn.instances[head]}.{rest}"
        return raw

    # -- expressions --------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        line = self.at(node)
        raw = dotted(node.func)
        if raw is not None:
            raw = self.resolve_call_name(raw)
        raw, qual = self.qualify_name(raw)
        fn = self.cur
        self._check_matmul(node, qual, line)
        if raw is None:
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value == "backward":
                fn.summary.trains = True  # scaler.scale(loss).backward()
            self._unnamed_call(node, line)
            return  # `ops.MatMul()(a, b)`-style calls have no dotted name to follow
        serving = not known.INFERENCE_ROOTS.isdisjoint(self.roots)
        if known.is_training_call(qual or raw, len(node.args), serving) or (
            qual is not None and known.is_training_call(raw, len(node.args), serving)
        ):
            fn.summary.trains = True
        if qual is not None and self._known_call(node, qual, line, raw):
            return
        last = raw.rsplit(".", 1)[-1]
        if (last in known.OPTIMIZER_NAMES or triage.runtime_optimizer_class(raw)) and call_arg(
            node, 0, "params"
        ) is not None:
            fn.optimizers.append((node, line, qual or raw))
        if (qual or "") in known.OPTIMIZER_FACTORIES:
            fn.optimizers.append((node, line, qual or raw))
        if (
            last in ("endswith", "startswith")
            and isinstance(node.func, cst.Attribute)
            and self._name_subject(node.func.value)
            and not self._names_lead_to_decay()
        ):
            items = strings(node.args[0].value) if node.args else None
            if items:
                fn.groups.names.extend(items)
                fn.groups.name_evidence.append(
                    Evidence(loc=SrcLoc(line=line), text=self.code(node))
                )
        if qual in known.LAUNCHERS:
            # Fabric.launch(main, ...): main is run with the Fabric first; the linker binds it
            fn.summary.calls.append(self._callsite(node, raw, line))
            return
        self._passed_functions(node, line, qual in known.CLI_DISPATCHERS)
        if raw in known.BUILTIN_CALLS or (
            qual is not None and qual.split(".")[0] in known.EXTERNAL_ROOTS
        ):
            return
        fn.summary.calls.append(self._callsite(node, raw, line))

    def _unnamed_call(self, node: cst.Call, line: int) -> None:
        """Calls whose callee is an expression: ``super().__init__(...)``,
        ``Trainer(cfg).fit()``, ``TRAINERS[name](cfg)`` (a table of classes)."""
        f = node.func
        fn = self.cur
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Call):
            inner = dotted(f.value.func)
            target = None
            if inner == "super":
                target = f"super().{f.attr.value}"
            elif inner and inner.rsplit(".", 1)[-1][:1].isupper() and not self._external(inner):
                target = f"{inner}.{f.attr.value}"  # Trainer(cfg).fit(): Trainer's fit
            if target is not None:
                fn.summary.calls.append(self._callsite(node, target, line))
            return
        if isinstance(f, cst.Subscript) and isinstance(f.value, cst.Name):
            for key, name in self._table(f.value.value):
                site = self._callsite(node, name, line)
                fn.summary.calls.append(
                    site.model_copy(update={"conditional": True, "condition": f"key {key!r}"})
                )

    def _external(self, raw: str) -> bool:
        """A name from a library never followed (torch.Generator(): its seed is its own)."""
        _, q = self.qualify_name(raw)
        return q is not None and q.split(".")[0] in known.EXTERNAL_ROOTS

    def _table(self, name: str) -> list[tuple[str, str]]:
        """(key, dotted value) of a dict of functions or classes assigned to ``name``."""
        value = self.cur.assigns.get(name) or self.top.assigns.get(name)
        if not isinstance(value, cst.Dict):
            return []
        out = []
        for el in value.elements:
            if isinstance(el, cst.DictElement):
                key, target = literal(el.key), dotted(el.value)
                if target is not None:
                    out.append((str(key), target))
        return out

    def _passed_functions(self, node: cst.Call, line: int, dispatcher: bool = False) -> None:
        """Bare names handed to a call may be functions it runs: mp.spawn(worker, ...);
        a dict of them handed to a CLI dispatcher is a table of commands."""
        fn = self.cur
        for a in node.args:
            v = a.value
            if a.star or not isinstance(v, cst.Name):
                continue
            name = v.value
            table = self._table(name) if dispatcher else []
            if table:
                for key, target in table:
                    fn.summary.calls.append(
                        CallSite(
                            target=target,
                            loc=SrcLoc(line=line),
                            conditional=True,
                            condition=f"command {key!r}",
                            indirect=True,
                            command=key,
                        )
                    )
                continue
            if name in fn.summary.params or name in fn.assigns or name in known.BUILTIN_CALLS:
                continue  # a variable, not a function defined or imported here
            _, q = self.qualify_name(name)
            if q is not None and (
                q in known.FRAMEWORK_INITS or q.split(".")[0] in known.EXTERNAL_ROOTS
            ):
                continue  # modelled where it is really called, never followed
            fn.summary.calls.append(
                CallSite(
                    target=name,
                    loc=SrcLoc(line=line),
                    conditional=fn.cond > 0,
                    indirect=True,
                )
            )

    def _callsite(self, node: cst.Call, raw: str, line: int) -> CallSite:
        # `self.x()` inside a method means this class's x
        head, _, rest = raw.partition(".")
        if head in ("self", "cls") and rest and rest.count(".") <= 1:
            cls = self._enclosing_class()
            if cls:
                raw = f"{cls}.{rest}"  # self.x() and self.fabric.x() (attr_types)
        args: list[Arg] = []
        kwargs: dict[str, Arg] = {}
        every: list[str] = []
        for a in node.args:
            if a.star:
                continue
            v = self.arg(a.value) or Arg(kind="expr")
            slot = str(len(args)) if a.keyword is None else a.keyword.value
            if all_params(a.value):
                every.append(slot)
            if a.keyword is None:
                args.append(v)
            else:
                kwargs[a.keyword.value] = v
        fn = self.cur
        return CallSite(
            target=raw,
            loc=SrcLoc(line=line),
            args=args,
            kwargs=kwargs,
            all_params=every,
            conditional=fn.cond > 0,
            condition=fn.conds[-1] if fn.cond > 0 and fn.conds else "",
        )

    def _enclosing_class(self) -> str | None:
        for i in range(len(self.scope) - 1, -1, -1):
            if self.class_scope[i]:
                return ".".join(self.scope[: i + 1])
        return None

    # -- result -------------------------------------------------------------------------
    def finish(self) -> FileSummary:
        self._finish_fn(self.top)
        summaries = [self.top.summary, *self.functions.values()]
        if self.main is not None:
            self.stack.append(self.main)
            self._finish_fn(self.main)
            self.stack.pop()
            summaries.append(self.main.summary)
        # Class.attr only when it names a method (self.proj(x) calls a layer, not code here)
        triage.prune_calls(summaries, self, class_attrs=False)
        return FileSummary(
            frameworks=triage.frameworks_of(self.roots),
            imports=self.imports,
            star_imports=self.star,
            classes=self.classes,
            bases=self.bases,
            attr_types=self.attr_types,
            module=self.top.summary,
            main=self.main.summary if self.main else None,
            functions=self.functions,
            dropouts=self.dropouts,
            decays=self.decays,
            backwards=self.backwards,
            backward_fns=[q for q, f in self.functions.items() if f.backward],
        )


def _seedish(text: str) -> str:
    """Expression text is kept only when it may name a seed: the rest is never used, and
    keeping it would bloat every cached summary."""
    return text if "seed" in text.lower() else ""


def _returns(body: cst.BaseSuite) -> bool:
    """Does an `if` body end with ``return``?"""
    if not isinstance(body, cst.IndentedBlock) or not body.body:
        return False
    last = body.body[-1]
    return isinstance(last, cst.SimpleStatementLine) and any(
        isinstance(x, cst.Return) for x in last.body
    )


def _else_raises(node: cst.If) -> bool:
    """``else:`` holding nothing but ``raise``."""
    orelse = node.orelse
    if not isinstance(orelse, cst.Else) or not isinstance(orelse.body, cst.IndentedBlock):
        return False
    stmts = orelse.body.body
    return bool(stmts) and all(
        isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Raise) for x in s.body)
        for s in stmts
    )


def _is_main_test(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    ct = test.comparisons[0]
    if not isinstance(ct.operator, cst.Equal):
        return False
    sides = {dotted(n) or literal(n) for n in (test.left, ct.comparator)}
    return sides == {"__name__", "__main__"}
