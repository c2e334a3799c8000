"""One file's text -> :class:`~cfglint.evidence.scan.model.FileSummary`, with libcst.

Static only: the scanned code is parsed, never imported or run. The summary is built in a
single walk over the tree. Line numbers are counted from the newlines in whitespace and
string tokens as the walk goes through the tree in lexical order, which costs a fraction
of libcst's PositionProvider (that one re-generates the code with position tracking).
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst

from cfglint.evidence.scan import known
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
    GroupEvidence,
    ImportRef,
    SrcLoc,
)
from cfglint.evidence.scan.policy import MINDSPORE_UNGROUPED, classify

_NO = object()  # "not a literal"
_TRANSPOSE_METHODS = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims"})
_TRANSPOSE_ATTRS = frozenset({"T", "mT", "mH", "H"})
_TRANSPOSE_FUNCS = frozenset(
    {
        "torch.t",
        "torch.transpose",
        "torch.permute",
        "torch.swapaxes",
        "mindspore.ops.transpose",
        "mindspore.ops.permute",
        "mindspore.ops.swapaxes",
        "mindspore.mint.transpose",
        "mindspore.mint.permute",
    }
)
_MATMUL_METHODS = frozenset({"mm", "matmul", "bmm"})
_MATMUL_FUNCS = frozenset(
    {
        "torch.matmul",
        "torch.mm",
        "torch.bmm",
        "mindspore.ops.matmul",
        "mindspore.ops.bmm",
        "mindspore.ops.mm",
        "mindspore.mint.matmul",
        "mindspore.mint.mm",
        "mindspore.mint.bmm",
    }
)
_MATMUL_PRIMS = ("MatMul", "BatchMatMul")
_BUILTINS = frozenset(
    {
        "print",
        "len",
        "range",
        "int",
        "float",
        "str",
        "bool",
        "list",
        "dict",
        "set",
        "tuple",
        "isinstance",
        "getattr",
        "setattr",
        "hasattr",
        "super",
        "enumerate",
        "zip",
        "min",
        "max",
        "sum",
        "any",
        "all",
        "sorted",
        "open",
        "format",
        "repr",
        "type",
        "iter",
        "next",
        "map",
        "filter",
        "abs",
        "round",
    }
)
_DECAY_LIST_HINTS = ("decay", "skip", "exclude")


def summarize(text: str) -> FileSummary:
    """Summary of one file's text; a syntax error becomes ``error`` / ``error_line``.

    Never raises: one odd file must not stop a scan of a whole repository.
    """
    try:
        return _summarize(text)
    except Exception as exc:  # a scanner bug on exotic input: report the file, go on
        return FileSummary(error=f"could not be analysed ({type(exc).__name__}: {exc})")


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


def nesting_problem(text: str) -> str | None:
    """Why ``text`` is too deeply nested to hand to libcst, or None."""
    try:
        tree = _ast_parse(text)
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


def _summarize(text: str) -> FileSummary:
    problem = nesting_problem(text)
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
    msg = _short(str(exc.message).removeprefix("parser error: "), 160)
    return FileSummary(error=f"cannot be parsed by libcst: {msg}", error_line=exc.raw_line)


def summarize_json(text: str) -> str:
    """For worker processes: the summary as JSON (cheaper to send back than objects)."""
    summary = summarize(text)
    try:
        return summary.model_dump_json(exclude_defaults=True)
    except ValueError as exc:  # unencodable text slipped into the summary
        return FileSummary(error=f"could not be analysed ({exc})").model_dump_json()


# -- small helpers ------------------------------------------------------------------------


def _dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _literal(node: cst.BaseExpression | None) -> Any:
    """The value of a literal (numbers, strings, True/False/None, constant arithmetic)."""
    if node is None:
        return _NO
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, cst.SimpleString):
        try:
            v = node.evaluated_value
            if isinstance(v, str):
                v.encode("utf-8")  # "\ud800" escapes: not storable, and never a seed
            return v
        except Exception:  # odd prefixes, lone surrogates: not a value we need
            return _NO
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        v = _literal(node.expression)
        return -v if isinstance(v, (int, float)) and not isinstance(v, bool) else _NO
    if isinstance(node, cst.BinaryOperation):
        a, b = _literal(node.left), _literal(node.right)
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
            return _NO
        op = node.operator
        try:
            if isinstance(op, cst.Add):
                return a + b
            if isinstance(op, cst.Subtract):
                return a - b
            if isinstance(op, cst.Multiply):
                return a * b
            if isinstance(op, cst.Divide):
                return a / b
        except ZeroDivisionError:
            return _NO
    return _NO


def _strings(node: cst.BaseExpression | None) -> list[str] | None:
    """The items of a list/tuple/set of string literals (or one string)."""
    if node is None:
        return None
    if isinstance(node, cst.SimpleString):
        v = _literal(node)
        return [v] if isinstance(v, str) else None
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        out = []
        for el in node.elements:
            v = _literal(el.value) if isinstance(el, cst.Element) else _NO
            if not isinstance(v, str):
                return None
            out.append(v)
        return out
    return None


def _call_arg(node: cst.Call, index: int, keyword: str) -> cst.BaseExpression | None:
    for a in node.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a.value
    positional = [a for a in node.args if a.keyword is None and not a.star]
    return positional[index].value if index < len(positional) else None


def _newlines_in_parens(node: cst.CSTNode) -> int:
    """Newlines inside a node's own opening parentheses (before its first token)."""
    n = 0
    for lp in getattr(node, "lpar", ()):
        ws = lp.whitespace_after
        if isinstance(ws, cst.ParenthesizedWhitespace):
            n += 1 + len(ws.empty_lines)
        elif isinstance(ws, cst.SimpleWhitespace):
            n += ws.value.count("\n")
    return n


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


class _Fn:
    """A function being summarized (also used for module top level and the main block)."""

    def __init__(
        self,
        qualname: str,
        line: int,
        params: list[str],
        defaults: dict[str, Arg],
        backward: str | None = None,
    ) -> None:
        self.summary = FunctionSummary(
            qualname=qualname, loc=SrcLoc(line=line), params=params, defaults=defaults
        )
        self.cond = 0
        self.literals: dict[str, Any] = {}
        self.assigns: dict[str, cst.BaseExpression] = {}
        self.str_lists: dict[str, list[str]] = {}
        self.iter_of: dict[str, str] = {}  # comprehension/loop target -> iterated name
        self.name_vars: set[str] = set()  # loop targets that hold parameter names
        self.groups = GroupEvidence()
        self.optimizers: list[tuple[cst.Call, int, str]] = []
        # custom backward being analysed ("torch" / "mindspore"), and transposed names
        self.backward = backward
        self.tainted: set[str] = set()


class _Visitor:
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
        self.top = _Fn("<module>", 1, [], {})
        self.main: _Fn | None = None
        self.main_node: cst.If | None = None
        self.stack: list[_Fn] = [self.top]
        self.dropouts: list[DropoutSite] = []
        self.decays: list[DecaySite] = []
        self.backwards: list[BackwardSite] = []

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
        return self.line + _newlines_in_parens(node) if getattr(node, "lpar", None) else self.line

    @property
    def cur(self) -> _Fn:
        return self.stack[-1]

    def code(self, node: cst.CSTNode) -> str:
        return _short(self.module.code_for_node(node))

    def qualify(self, node: cst.BaseExpression) -> tuple[str | None, str | None]:
        """(as written, fully qualified through absolute imports) of a dotted name."""
        raw = _dotted(node)
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
            and _dotted(node.func) in ("str", "int")
            and len(node.args) == 1
        ):
            return self.arg(node.args[0].value, depth + 1, keep_text)
        v = _literal(node)
        if v is not _NO:
            return Arg(kind="literal", value=v)
        if isinstance(node, cst.Name):
            name = node.value
            fn = self.cur
            if name in fn.summary.params:
                return Arg(kind="param", text=name)
            if name in fn.literals:
                return Arg(kind="literal", value=fn.literals[name])
            if name in self.top.literals:
                return Arg(kind="literal", value=self.top.literals[name])
            value = fn.assigns.get(name)
            # `seed = seed_ + 100 * rank`: Megatron's per-stage offset; the seed is seed_'s
            if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
                for side in (value.left, value.right):
                    if isinstance(side, cst.Name) and side.value != name:
                        base = self.arg(side, depth + 1)
                        if base is not None and base.kind in ("param", "literal"):
                            return base
            return Arg(kind="expr", text=name if keep_text else _seedish(name))
        dotted = _dotted(node)
        if dotted is not None:
            return Arg(kind="expr", text=dotted if keep_text else _seedish(dotted))
        return Arg(kind="expr", text=self.code(node) if keep_text else "")

    def effect(self, kind: str, api: str, line: int, **kw: Any) -> None:
        fn = self.cur
        kw.setdefault("conditional", fn.cond > 0)
        fn.summary.effects.append(Effect(kind=kind, api=api, loc=SrcLoc(line=line), **kw))  # type: ignore[arg-type]

    # -- imports ------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = _dotted(alias.name) or ""
            root = name.split(".")[0]
            self.roots.add(root)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.imports[alias.asname.name.value] = ImportRef(module=name)
            else:
                self.imports[root] = ImportRef(module=root)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        level = len(node.relative)
        module = (_dotted(node.module) if node.module is not None else "") or ""
        if level == 0:
            self.roots.add(module.split(".")[0])
        if isinstance(node.names, cst.ImportStar):
            self.star.append(ImportRef(level=level, module=module))
            return
        for alias in node.names:
            name = _dotted(alias.name) or ""
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.imports[local] = ImportRef(level=level, module=module, name=name)

    # -- scopes -------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        qual = ".".join([*self.scope, node.name.value])
        self.classes.append(qual)
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
        for param in (*p.posonly_params, *p.params, *p.kwonly_params):
            params.append(param.name.value)
            if param.default is not None:
                a = self.arg(param.default)
                if a is not None:
                    defaults[param.name.value] = a
                items = _strings(param.default)
                if items is not None and not isinstance(param.default, cst.SimpleString):
                    str_lists[param.name.value] = items
        backward = self.cur.backward
        if in_class and name == "backward" and ".".join(self.scope) in self.autograd_classes:
            backward = "torch"
        elif in_class and name == "bprop":
            backward = "mindspore"
        fn = _Fn(qual, self.line, params, defaults, backward)
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
            self.main = _Fn("<main>", self.line, [], {})
            self.main_node = node
            self.want[id(node.test)] = lambda line, s=self.main.summary: setattr(
                s, "loc", SrcLoc(line=line)
            )
            self.stack.append(self.main)
            return
        self.cur.cond += 1

    def leave_If(self, original_node: cst.If) -> None:
        if original_node is self.main_node:
            self.stack.pop()
            return
        self.cur.cond -= 1

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
        src = _dotted(it.func) if isinstance(it, cst.Call) else _dotted(it)
        holds_params = bool(src) and "param" in src.lower()  # type: ignore[union-attr]
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
        if node.value is not None:
            self._assign(node.target, node.value)

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        fn = self.cur
        line = self.line
        if isinstance(target, cst.Name):
            name = target.value
            fn.assigns[name] = value
            lit = _literal(value)
            if lit is not _NO:
                fn.literals[name] = lit
            else:
                fn.literals.pop(name, None)
            items = _strings(value)
            if items is not None and not isinstance(value, cst.SimpleString):
                fn.str_lists[name] = items
                if any(h in name.lower() for h in _DECAY_LIST_HINTS):
                    fn.groups.names.extend(items)
                    fn.groups.name_evidence.append(
                        Evidence(loc=SrcLoc(line=line), text=self.code(value))
                    )
            if fn.backward:
                if self._transposed(value):
                    fn.tainted.add(name)
                else:
                    fn.tainted.discard(name)
        elif isinstance(target, cst.Subscript):
            _, q = self.qualify(target.value)
            if q == "os.environ" and len(target.slice) == 1:
                idx = target.slice[0].slice
                if isinstance(idx, cst.Index) and _literal(idx.value) == "PYTHONHASHSEED":
                    self.effect("pythonhashseed", "os.environ", line, seed=self.arg(value))
        elif isinstance(target, cst.Attribute):
            _, q = self.qualify(target)
            kind = known.ATTR_SWITCHES.get(q or "")
            if kind is not None:
                v = _literal(value)
                self.effect(kind, q, line, enabled=v if isinstance(v, bool) else None)  # type: ignore[arg-type]
        elif isinstance(target, (cst.Tuple, cst.List)) and fn.backward:
            for el in target.elements:
                if isinstance(el.value, cst.Name):
                    fn.tainted.discard(el.value.value)

    # -- expressions --------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        line = self.at(node)
        raw, qual = self.qualify(node.func)
        fn = self.cur
        if fn.backward:
            self._check_matmul(node, qual, line)
        if raw is None:
            return  # `ops.MatMul()(a, b)`-style calls have no dotted name to follow
        if qual is not None and self._known_call(node, qual, line):
            return
        last = raw.rsplit(".", 1)[-1]
        if last in known.OPTIMIZER_NAMES and _call_arg(node, 0, "params") is not None:
            fn.optimizers.append((node, line, qual or raw))
        if (
            last in ("endswith", "startswith")
            and isinstance(node.func, cst.Attribute)
            and self._name_subject(node.func.value)
        ):
            items = _strings(node.args[0].value) if node.args else None
            if items:
                fn.groups.names.extend(items)
                fn.groups.name_evidence.append(
                    Evidence(loc=SrcLoc(line=line), text=self.code(node))
                )
        self._passed_functions(node, line)
        if raw in _BUILTINS or (qual is not None and qual.split(".")[0] in known.EXTERNAL_ROOTS):
            return
        fn.summary.calls.append(self._callsite(node, raw, line))

    def _passed_functions(self, node: cst.Call, line: int) -> None:
        """Bare names handed to a call may be functions it runs: mp.spawn(worker, ...)."""
        fn = self.cur
        for a in node.args:
            v = a.value
            if a.star or not isinstance(v, cst.Name):
                continue
            name = v.value
            if name in fn.summary.params or name in fn.assigns or name in _BUILTINS:
                continue  # a variable, not a function defined or imported here
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
        if head in ("self", "cls") and rest and "." not in rest:
            cls = self._enclosing_class()
            if cls:
                raw = f"{cls}.{rest}"
        args: list[Arg] = []
        kwargs: dict[str, Arg] = {}
        for a in node.args:
            if a.star:
                continue
            v = self.arg(a.value) or Arg(kind="expr")
            if a.keyword is None:
                args.append(v)
            else:
                kwargs[a.keyword.value] = v
        return CallSite(
            target=raw,
            loc=SrcLoc(line=line),
            args=args,
            kwargs=kwargs,
            conditional=self.cur.cond > 0,
        )

    def _enclosing_class(self) -> str | None:
        for i in range(len(self.scope) - 1, -1, -1):
            if self.class_scope[i]:
                return ".".join(self.scope[: i + 1])
        return None

    def _known_call(self, node: cst.Call, qual: str, line: int) -> bool:
        spec = known.SEED_CALLS.get(qual)
        if spec is not None:
            kind, idx, kw = spec
            self.effect(kind, qual, line, seed=self.arg(_call_arg(node, idx, kw)))
            return True
        spec = known.DETERMINISTIC_CALLS.get(qual)
        if spec is not None:
            kind, idx, kw = spec
            v = _literal(_call_arg(node, idx, kw))
            self.effect(kind, qual, line, enabled=v if isinstance(v, bool) else None)
            return True
        if qual in known.SET_CONTEXT:
            det = _call_arg(node, 99, "deterministic")
            if det is not None:
                v = _literal(det)
                enabled = None
                if isinstance(v, str):
                    enabled = v.upper() == "ON"
                elif isinstance(v, bool):
                    enabled = v
                self.effect("mindspore_deterministic", qual, line, enabled=enabled)
            return True
        if qual in known.ENV_SETTERS:
            key = _literal(_call_arg(node, 0, "key"))
            if key == "PYTHONHASHSEED":
                value = _call_arg(node, 1, "value")
                self.effect("pythonhashseed", qual, line, seed=self.arg(value))
            return True
        if qual == "os.environ.update" and node.args and isinstance(node.args[0].value, cst.Dict):
            for el in node.args[0].value.elements:
                if isinstance(el, cst.DictElement) and _literal(el.key) == "PYTHONHASHSEED":
                    self.effect("pythonhashseed", qual, line, seed=self.arg(el.value))
            return True
        init = known.FRAMEWORK_INITS.get(qual)
        if init is not None:
            self._framework_init(node, qual, init, line)
            return True
        style = known.DROPOUT_APIS.get(qual)
        if style is not None:
            self._dropout(node, qual, style, line)
            return True
        return False

    def _framework_init(
        self, node: cst.Call, qual: str, init: known.FrameworkInit, line: int
    ) -> None:
        seed: Arg | None = None
        if init.seed and init.seed[0] == "config":
            seed = Arg(kind="config", text=init.seed[1])
        elif init.seed:
            seed = self.arg(_call_arg(node, init.seed[1], init.seed[2]))
        for kind in init.kinds:
            self.effect(
                kind,
                qual,
                line,
                seed=seed,
                needs_nonzero_seed=init.needs_nonzero_seed,
                conditional=init.conditional or self.cur.cond > 0,
                note=init.note,
            )
        if init.deterministic:
            self.effect(
                init.deterministic,
                qual,
                line,
                enabled=None,
                config_field="determinism.deterministic",
                note=init.deterministic_note,
            )
        if init.deterministic_kw is not None:
            v = _literal(_call_arg(node, *init.deterministic_kw))
            if v is True:
                self.effect("torch_deterministic", qual, line, enabled=True, note=init.note)

    def _dropout(self, node: cst.Call, qual: str, style: str, line: int) -> None:
        how = "p"
        if style in ("module", "func", "torchfn"):
            expr = _call_arg(node, 0 if style == "module" else 1, "p")
            if style != "module":
                flag = "train" if style == "torchfn" else "training"
                if _literal(_call_arg(node, 2, flag)) is False:
                    return  # dropout(..., training=False) does nothing
            if expr is None:
                if style == "torchfn":
                    return
                p: Any = 0.5
                how = "default"
            else:
                p = _literal(expr)
        elif style == "ms_keep":
            p_expr = _call_arg(node, 99, "p")
            if p_expr is not None:
                p = _literal(p_expr)
            else:
                keep = _call_arg(node, 0, "keep_prob")
                p = _keep_to_p(keep)
                how = "keep_prob" if keep is not None else "default"
        else:  # ms_prim
            keep = _call_arg(node, 0, "keep_prob")
            p = _keep_to_p(keep)
            how = "keep_prob" if keep is not None else "default"
        if isinstance(p, bool) or not isinstance(p, (int, float)) or p == 0:
            return  # driven by a variable (config), or off
        self.dropouts.append(
            DropoutSite(
                loc=SrcLoc(line=line),
                api=qual,
                p=round(float(p), 6),
                text=self.code(node),
                how=how,  # type: ignore[arg-type]
            )
        )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        fn = self.cur
        line = self.at(node)
        left = node.left
        for ct in node.comparisons:
            right = ct.comparator
            if isinstance(ct.operator, (cst.In, cst.NotIn)):
                names: list[str] | None = None
                if self._name_subject(right):
                    lit = _literal(left)
                    if isinstance(lit, str):
                        names = [lit]
                    elif isinstance(left, cst.Name):
                        names = self._str_list(fn.iter_of.get(left.value))
                elif self._name_subject(left) and isinstance(right, cst.Name):
                    names = self._str_list(right.value)
                if names:
                    fn.groups.names.extend(names)
                    fn.groups.name_evidence.append(
                        Evidence(loc=SrcLoc(line=line), text=self.code(node))
                    )
            elif _is_shape_test(left, right):
                fn.groups.shape.append(Evidence(loc=SrcLoc(line=line), text=self.code(node)))
            left = right

    def _name_subject(self, node: cst.BaseExpression) -> bool:
        """Does this expression hold a parameter's name?"""
        if isinstance(node, cst.Attribute) and node.attr.value == "name":
            return True
        return isinstance(node, cst.Name) and node.value in self.cur.name_vars

    def _str_list(self, name: str | None) -> list[str] | None:
        if name is None:
            return None
        for fn in (self.cur, self.top):
            if name in fn.str_lists:
                return fn.str_lists[name]
        return None

    def visit_Dict(self, node: cst.Dict) -> None:
        keys: dict[str, cst.BaseExpression] = {}
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                k = _literal(el.key)
                if isinstance(k, str):
                    keys[k] = el.value
        if "params" in keys and "weight_decay" in keys:
            fn = self.cur
            wd = self.arg(keys["weight_decay"], keep_text=True) or Arg(kind="expr")
            fn.groups.group_decays.append(wd)
            fn.groups.group_evidence.append(
                Evidence(loc=SrcLoc(line=self.at(node)), text=self.code(node))
            )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self.cur.backward and isinstance(node.operator, cst.MatrixMultiply):
            for operand in (node.left, node.right):
                if self._transposed(operand):
                    self._backward_site(operand, node, self.at(node))
                    break

    # -- custom backward ----------------------------------------------------------------
    def _transposed(self, node: cst.BaseExpression) -> bool:
        """A transposed view that was not made contiguous."""
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute):
                if func.attr.value == "contiguous":
                    return False
                if func.attr.value in _TRANSPOSE_METHODS:
                    return True
            _, q = self.qualify(func)
            return q in _TRANSPOSE_FUNCS
        if isinstance(node, cst.Attribute):
            return node.attr.value in _TRANSPOSE_ATTRS
        if isinstance(node, cst.Name):
            return node.value in self.cur.tainted
        return False

    def _check_matmul(self, node: cst.Call, qual: str | None, line: int) -> None:
        func = node.func
        operands: Sequence[cst.BaseExpression] = ()
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if qual in _MATMUL_FUNCS:
            operands = positional[:2]
        elif isinstance(func, cst.Attribute) and func.attr.value in _MATMUL_METHODS:
            if isinstance(func.value, cst.Name) and func.value.value == "self":
                operands = positional[:2]  # self.matmul = ops.MatMul(): a MindSpore cell
            else:
                operands = [func.value, *positional[:1]]
        elif isinstance(func, cst.Call):
            raw_p, q_p = self.qualify(func.func)
            if (q_p or raw_p or "").endswith(_MATMUL_PRIMS):
                operands = positional[:2]
        for operand in operands:
            if self._transposed(operand):
                self._backward_site(operand, node, line)
                return

    def _backward_site(self, operand: cst.CSTNode, node: cst.CSTNode, line: int) -> None:
        self.backwards.append(
            BackwardSite(
                loc=SrcLoc(line=line),
                function=self.cur.summary.qualname,
                transposed=self.code(operand),
                matmul=self.code(node),
            )
        )

    # -- optimizers ---------------------------------------------------------------------
    def _finish_fn(self, fn: _Fn) -> None:
        if not fn.groups.empty():
            fn.summary.groups = fn.groups
        for node, line, qual in fn.optimizers:
            site = self._decay_site(fn, node, line, qual)
            if site is not None:
                self.decays.append(site)

    def _decay_site(self, fn: _Fn, node: cst.Call, line: int, qual: str) -> DecaySite | None:
        params = _call_arg(node, 0, "params")
        if params is None:
            return None
        framework = _framework_of(qual, self.roots)
        wd_node = _call_arg(node, 99, "weight_decay")
        wd: Arg | None
        if wd_node is not None:
            wd = self.arg(wd_node, keep_text=True)
        elif qual in known.OPTIMIZER_WD_DEFAULT:
            wd = Arg(kind="default", value=known.OPTIMIZER_WD_DEFAULT[qual])
        else:
            wd = None
        site = DecaySite(
            loc=SrcLoc(line=line),
            function=fn.summary.qualname,
            optimizer=qual,
            framework=framework,
            params_text=self.code(params),
            weight_decay=wd,  # type: ignore[arg-type]
        )
        expr = params
        if isinstance(expr, cst.Name):
            if expr.value in fn.summary.params:
                return None  # built by the caller; its own optimizer call is what counts
            expr = fn.assigns.get(expr.value, expr)
        if _all_params(expr):
            # mindspore.nn optimizers (and MindFormers', built on them) filter ungrouped
            # parameters; the torch-like mindspore.mint.optim ones do not
            if framework == "mindspore" and not qual.startswith("mindspore.mint."):
                site.policy = "exclude_by_name"
                site.names = list(MINDSPORE_UNGROUPED)
                site.detail = (
                    "plain parameter list: MindSpore's optimizer skips names containing beta/gamma"
                )
            else:
                site.policy = "decay_all"
                site.detail = "plain parameter list"
            return site
        if isinstance(expr, cst.Call):
            target = _dotted(expr.func)
            if target and target not in _BUILTINS:
                site.params_from = self._callsite(expr, target, line).target
                return site
        policy, names, evidence, detail = classify(fn.groups)
        if policy is None:
            return None
        site.policy = policy  # type: ignore[assignment]
        site.names, site.evidence, site.detail = names, evidence, detail
        return site

    # -- result -------------------------------------------------------------------------
    def finish(self) -> FileSummary:
        self._finish_fn(self.top)
        summaries = [self.top.summary, *self.functions.values()]
        if self.main is not None:
            self.stack.append(self.main)
            self._finish_fn(self.main)
            self.stack.pop()
            summaries.append(self.main.summary)
        # first and last name parts: module-level names, and nested functions called from
        # their enclosing function
        local = {
            p for q in [*self.functions, *self.classes] for p in (q.split(".")[0], q.split(".")[-1])
        }
        keep = set(self.imports) | local
        for fn in summaries:
            # only calls that can lead to scanned code matter for following
            fn.calls = [c for c in fn.calls if _followable(c.target, keep, self)]
        frameworks = sorted(
            {"torch" for r in self.roots if r in known.TORCH_ROOTS}
            | {"mindspore" for r in self.roots if r in known.MINDSPORE_ROOTS}
        )
        return FileSummary(
            frameworks=frameworks,
            imports=self.imports,
            star_imports=self.star,
            classes=self.classes,
            module=self.top.summary,
            main=self.main.summary if self.main else None,
            functions=self.functions,
            dropouts=self.dropouts,
            decays=self.decays,
            backwards=self.backwards,
        )


def _followable(target: str, keep: set[str], v: _Visitor) -> bool:
    head = target.split(".")[0]
    if head in v.imports or v.star:
        return True
    if head not in keep:
        return False
    # Class.attr: only when it names a method (self.proj(x) calls a layer, not code here)
    return "." not in target or target in v.functions


def _seedish(text: str) -> str:
    """Expression text is kept only when it may name a seed: the rest is never used, and
    keeping it would bloat every cached summary."""
    return text if "seed" in text.lower() else ""


def _is_main_test(test: cst.BaseExpression) -> bool:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    ct = test.comparisons[0]
    if not isinstance(ct.operator, cst.Equal):
        return False
    sides = {_dotted(n) or _literal(n) for n in (test.left, ct.comparator)}
    return sides == {"__name__", "__main__"}


def _shape_expr(node: cst.BaseExpression) -> bool:
    """``p.dim()``, ``p.ndimension()``, ``p.ndim``, ``len(p.shape)``, ``len(p.size())``."""
    if isinstance(node, cst.Attribute):
        return node.attr.value == "ndim"
    if isinstance(node, cst.Call):
        f = node.func
        if isinstance(f, cst.Attribute) and f.attr.value in ("dim", "ndimension") and not node.args:
            return True
        if isinstance(f, cst.Name) and f.value == "len" and len(node.args) == 1:
            inner = node.args[0].value
            if isinstance(inner, cst.Attribute) and inner.attr.value == "shape":
                return True
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute):
                return inner.func.attr.value == "size"
    return False


def _is_shape_test(left: cst.BaseExpression, right: cst.BaseExpression) -> bool:
    return any(_shape_expr(a) and _literal(b) in (1, 2) for a, b in ((left, right), (right, left)))


def _all_params(node: cst.BaseExpression) -> bool:
    """``model.parameters()`` and the wrappers that keep every parameter."""
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in known.ALL_PARAMS_METHODS:
            return True
        if _dotted(func) in ("list", "filter", "tuple") and node.args:
            # filter(lambda p: p.requires_grad, model.parameters()) keeps every trainable one
            return _all_params(node.args[-1].value)
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
        comp = node.for_in
        only_grad = all(_requires_grad_test(i.test) for i in comp.ifs)
        return comp.inner_for_in is None and only_grad and _all_params(comp.iter)
    return False


def _requires_grad_test(test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.Attribute) and test.attr.value == "requires_grad"


def _keep_to_p(keep: cst.BaseExpression | None) -> Any:
    if keep is None:
        return 0.5
    v = _literal(keep)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return 1.0 - v
    return _NO


def _framework_of(qual: str, roots: set[str]) -> str:
    root = qual.split(".")[0]
    if root in known.TORCH_ROOTS:
        return "torch"
    if root in known.MINDSPORE_ROOTS:
        return "mindspore"
    has_t = bool(roots & known.TORCH_ROOTS)
    has_m = bool(roots & known.MINDSPORE_ROOTS)
    if has_m and not has_t:
        return "mindspore"
    if has_t and not has_m:
        return "torch"
    return "unknown"
