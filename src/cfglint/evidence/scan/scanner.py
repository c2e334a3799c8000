"""One file's text -> :class:`~cfglint.evidence.scan.model.FileSummary`, with CPython's ast.

Static only: the scanned code is parsed, never imported or run. The text is parsed once
(``ast.parse``, C); the triage walk (:mod:`triage`) builds the call graph and stops at the
first thing worth a closer look, and only then does the full pass here walk the same tree
(seeding, determinism, dropout, weight-decay grouping, custom backward). Positions come
from ast's ``lineno`` / ``col_offset``; the text of a node is cut from the source with them.
"""

from __future__ import annotations

import ast
import sys
import warnings
from collections.abc import Callable
from typing import Any

from cfglint.evidence.scan import common, known, newsyntax, triage
from cfglint.evidence.scan.backward import BackwardMixin
from cfglint.evidence.scan.common import (
    NO,
    Frame,
    Source,
    call_arg,
    dotted,
    literal,
    n_args,
    positional,
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
from cfglint.evidence.scan.seed_helpers import TRAINER_GROUPINGS
from cfglint.evidence.scan.seeding import SeedingMixin


def summarize(text: str, deep: bool = True) -> FileSummary:
    """Summary of one file's text; a syntax error becomes ``error`` / ``error_line``.

    ``deep=False``: the call graph only, whatever the file holds (test suites: never an
    entry point, their optimizers and layers are not the training job's).
    Never raises: one odd file must not stop a scan of a whole repository.
    """
    try:
        try:
            tree = _ast_parse(text)
        except SyntaxError as exc:
            newer = newsyntax.newer_fstrings(exc)
            blanked = newsyntax.parse_with_fstrings_blanked(text) if newer else None
            if blanked is None:
                return _parse_error(exc, newer)
            tree, text = blanked
        except (ValueError, RecursionError, MemoryError) as exc:
            return _parse_error(exc)
        light = triage.summarize_tree(tree, triage=deep)
        if light is not None:
            return light  # nothing the full pass would find: the call graph is all
        return _summarize(text, tree)
    except Exception as exc:  # a scanner bug on exotic input: report the file, go on
        return FileSummary(error=f"could not be analysed ({type(exc).__name__}: {exc})")


def _ast_parse(text: str) -> ast.Module:
    """CPython's parse of ``text``, its SyntaxWarnings ("invalid decimal literal", ...)
    kept off stderr: they would print as `<unknown>:3: SyntaxWarning` lines."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def _parse_error(exc: BaseException, newer: bool = False) -> FileSummary:
    """One clear line naming what CPython's parser (which never runs anything) rejected;
    ``newer``: Python 3.12's f-strings might make the file valid."""
    if isinstance(exc, SyntaxError):
        msg = str(exc.msg)
        if "too many nested parentheses" in msg:
            return FileSummary(
                error="too deeply nested to parse (more than 200 nested brackets)",
                error_line=exc.lineno,
            )
        what = "" if msg == "invalid syntax" else f": {short(msg, 160)}"
        col = f" (column {exc.offset})" if exc.offset else ""
        if newer:
            running = ".".join(map(str, sys.version_info[:2]))
            col += f"; valid from Python 3.12 on if an f-string nests quotes (running {running})"
        return FileSummary(error=f"invalid Python syntax{what}{col}", error_line=exc.lineno)
    if isinstance(exc, (RecursionError, MemoryError)):
        return FileSummary(error="too deeply nested to parse")
    return FileSummary(error=f"cannot be parsed ({short(str(exc), 160)})")  # NUL bytes


def _summarize(text: str, tree: ast.Module) -> FileSummary:
    visitor = _Visitor(tree, text)
    try:
        visitor.walk_module(tree)
    except RecursionError:
        return FileSummary(error="too deeply nested to analyse")
    return visitor.finish()


def summarize_json(job: tuple[str, bool]) -> str:
    """For worker processes: the summary as JSON (cheaper to send back than objects)."""
    summary = summarize(*job)
    try:
        return summary.model_dump_json(exclude_defaults=True)
    except ValueError as exc:  # unencodable text slipped into the summary
        return FileSummary(error=f"could not be analysed ({exc})").model_dump_json()


# -- the visitor --------------------------------------------------------------------------


class _Visitor(triage.ImportRecorder, SeedingMixin, DropoutMixin, DecayMixin, BackwardMixin):
    """Walks the ast tree in lexical order (the order Python evaluates a function body
    in, near enough): a hook per node class sees the node before its children, and the
    statement blocks, ``if``s, functions and classes are walked by hand because they
    open scopes and conditions."""

    def __init__(self, module: ast.Module, text: str) -> None:
        self.src = Source(text)
        self.line = 1  # line of the statement being walked
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
        self.stack: list[Frame] = [self.top]
        self.dropouts: list[DropoutSite] = []
        self.decays: list[DecaySite] = []
        self.backwards: list[BackwardSite] = []
        self.bases: dict[str, list[str]] = {}
        self.attr_types: dict[str, str] = {}
        # CLI applications: name -> {command: function} (`@app.command()` registrations)
        self.apps: dict[str, dict[str, str]] = {}
        # per enclosing indented block: early `if ...: return` conditions still open
        self.blocks: list[int] = []
        # names the module defines at top level: a bare name handed to a call may be one
        defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        self.defined = {s.name for s in module.body if isinstance(s, defs)}

    # -- traversal plumbing -------------------------------------------------------------
    def walk_module(self, module: ast.Module) -> None:
        for stmt in module.body:
            self.walk(stmt)

    def walk(self, node: ast.AST) -> None:
        c = node.__class__
        custom = _CUSTOM.get(c)
        if custom is not None:
            custom(self, node)
            return
        if isinstance(node, ast.stmt):
            self.line = node.lineno
        hook = _HOOKS.get(c)
        if hook is not None:
            hook(self, node)
        for name in node._fields:
            v = getattr(node, name, None)
            if v.__class__ is list:
                if v and isinstance(v[0], ast.stmt):
                    self.block(v)
                else:
                    for x in v:
                        if isinstance(x, ast.AST):
                            self.walk(x)
            elif isinstance(v, ast.AST):
                self.walk(v)

    def block(self, stmts: list[ast.stmt]) -> None:
        """An indented block: an early ``if ...: return`` in it makes the rest of it
        conditional, up to its end."""
        self.blocks.append(0)
        for stmt in stmts:
            self.walk(stmt)
        fn = self.cur
        for _ in range(self.blocks.pop()):
            fn.cond -= 1
            fn.conds.pop()

    def _skip(self, node: ast.AST) -> None:
        pass

    def _walk_ifexp(self, node: ast.IfExp) -> None:
        for part in (node.body, node.test, node.orelse):  # as written
            self.walk(part)

    def _walk_dict(self, node: ast.Dict) -> None:
        self.visit_Dict(node)
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None:
                self.walk(key)
            self.walk(value)

    @property
    def cur(self) -> Frame:
        return self.stack[-1]

    def code(self, node: ast.AST) -> str:
        return short(self.src.segment(node))

    def qualify(self, node: ast.AST) -> tuple[str | None, str | None]:
        """(as written, fully qualified through absolute imports) of a dotted name."""
        return self.qualify_name(dotted(node))

    def _qualified_call(self, raw: str) -> str | None:
        """``accelerator.prepare`` -> ``accelerate.Accelerator.prepare``."""
        return self.qualify_name(self.resolve_call_name(raw))[1]

    def qualify_name(self, raw: str | None) -> tuple[str | None, str | None]:
        if raw is None:
            return None, None
        head, _, rest = raw.partition(".")
        ref = self.imports.get(head)
        if ref is None or ref.level:
            return raw, None
        base = ref.module + (f".{ref.name}" if ref.name else "")
        return raw, base + (f".{rest}" if rest else "")

    def arg(self, node: ast.expr | None, depth: int = 0, keep_text: bool = False) -> Arg | None:
        """An argument as a seed-like value: literal, parameter, or expression."""
        if node is None:
            return None
        if depth > 4:
            return Arg(kind="expr")
        if triage.is_cast(node):
            return self.arg(node.args[0], depth + 1, keep_text)
        v = literal(node)
        if v is not NO:
            return Arg(kind="literal", value=v)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            offset = self._offset_arg(node, depth, keep_text)
            if offset is not None:
                return offset
        if isinstance(node, ast.Name):
            return self._name_arg(node.id, depth, keep_text)
        keyed = self._keyed_param(node)
        if keyed is not None:
            return keyed
        if isinstance(node, ast.Dict):
            items = _int_items(node)
            if items:
                return Arg(kind="dict", value=items)
        name = dotted(node)
        if name is not None:
            return Arg(kind="expr", text=name if keep_text else _seedish(name))
        return Arg(kind="expr", text=self.code(node) if keep_text else "")

    def _offset_arg(self, node: ast.BinOp, depth: int, keep_text: bool) -> Arg | None:
        """`1337 + fabric.global_rank`: the base seed and an offset on top of it."""
        for base, rest in ((node.left, node.right), (node.right, node.left)):
            a = self.arg(base, depth + 1, keep_text)
            if a is not None and not a.offset and triage.seed_base(a):
                return a.model_copy(update={"offset": self.code(rest)})
        return None

    def _keyed_param(self, node: ast.expr) -> Arg | None:
        """``config["seed"]`` / ``config.get("seed")`` of a parameter: the caller's dict
        decides (accelerate's examples: ``training_function(config, args)`` with
        ``config = {"seed": 42, ...}``)."""
        holder: ast.expr | None = None
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript):
            holder, key = node.value, node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            holder, key = node.func.value, node.args[0]
        k = literal(key) if key is not None else NO
        if not isinstance(holder, ast.Name) or not isinstance(k, str):
            return None
        if holder.id in self.cur.summary.params:
            return Arg(kind="param", text=holder.id, key=k)
        return None

    def _name_arg(self, name: str, depth: int, keep_text: bool) -> Arg:
        known_name = self._bound_name(name)
        if known_name is not None:
            return known_name
        value = self.cur.assigns.get(name)
        if isinstance(value, (ast.Subscript, ast.Call, ast.Dict)) and depth < 4:
            # `seed = int(config["seed"])`; `config = {"seed": 42, ...}`
            got = self.arg(value, depth + 1, keep_text)
            if got is not None and (got.key or got.kind == "dict"):
                return got
        # `seed = seed_ + 100 * rank`: Megatron's per-stage offset; the seed is seed_'s
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            for side in (value.left, value.right):
                if isinstance(side, ast.Name) and side.id != name:
                    base = self.arg(side, depth + 1)
                    if base is not None and base.kind in ("param", "literal"):
                        return base
        return Arg(kind="expr", text=name if keep_text else _seedish(name))

    def _bound_name(self, name: str) -> Arg | None:
        """A name bound to a parameter, a literal, an instance, or a function or class
        handed over; None for any other name."""
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
        return None

    def effect(self, kind: str, api: str, line: int, **kw: Any) -> None:
        fn = self.cur
        kw.setdefault("conditional", fn.cond > 0)
        if kw["conditional"] and fn.conds and not kw.get("condition"):
            kw["condition"] = fn.conds[-1]
        fn.summary.effects.append(Effect(kind=kind, api=api, loc=SrcLoc(line=line), **kw))  # type: ignore[arg-type]

    # -- imports ------------------------------------------------------------------------

    # -- scopes -------------------------------------------------------------------------
    def walk_ClassDef(self, node: ast.ClassDef) -> None:
        self.line = node.lineno
        # decorators and bases run in the enclosing scope, before the class exists
        for part in (*node.decorator_list, *node.bases, *node.keywords):
            self.walk(part)
        qual = ".".join([*self.scope, node.name])
        self.classes.append(qual)
        written = [dotted(b) for b in node.bases]
        self.bases[qual] = [b for b in written if b and b != "object"]
        for base in node.bases:
            raw, q = self.qualify(base)
            full = q or raw or ""
            if full.endswith("autograd.Function") or (raw == "Function" and "torch" in self.roots):
                self.autograd_classes.add(qual)
        self.scope.append(node.name)
        self.class_scope.append(True)
        self.block(node.body)
        self.scope.pop()
        self.class_scope.pop()

    def walk_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.line = node.lineno
        a = node.args
        # decorators, defaults and annotations are evaluated where the function is defined
        for part in (*node.decorator_list, *a.defaults, *a.kw_defaults, node.returns):
            if part is not None:
                self.walk(part)
        name = node.name
        qual = ".".join([*self.scope, name])
        if not self.scope:
            for d in node.decorator_list:
                found = triage.cli_command(d, name, self._app_class)
                if found is not None:
                    self.apps.setdefault(found[0], {})[found[1]] = qual
        in_class = bool(self.class_scope and self.class_scope[-1])
        params, defaults, types, str_lists = self._params(a)
        fn = Frame(qual, node.lineno, params, defaults, self._backward_kind(name, in_class))
        fn.summary.param_types = types
        fn.instances.update(types)  # `fabric: L.Fabric`: fabric.x() is L.Fabric.x
        fn.str_lists.update(str_lists)
        fn.summary.backward = name in ("backward", "bprop") and fn.backward is not None
        self.stack.append(fn)
        self.scope.append(name)
        self.class_scope.append(False)
        self.block(node.body)
        # finish while the function is still current: its names resolve in its own scope
        self._finish_fn(fn)
        self.stack.pop()
        self.scope.pop()
        self.class_scope.pop()
        self.functions[qual] = fn.summary
        # a training step built inside a function (and returned, mindcv's jit-compiled
        # train_step) trains when that function's result runs: count it as the builder's
        parent = self.cur
        nested = parent is not self.top and parent is not self.main
        if fn.summary.trains and nested and not (self.class_scope and self.class_scope[-1]):
            parent.summary.trains = True

    def _params(
        self, a: ast.arguments
    ) -> tuple[list[str], dict[str, Arg], dict[str, str], dict[str, list[str]]]:
        """Names, defaults (read in the defining scope), annotated classes and
        string-list defaults of a function's parameters (``*args``/``**kw`` left out)."""
        params: list[str] = []
        defaults: dict[str, Arg] = {}
        str_lists: dict[str, list[str]] = {}
        types: dict[str, str] = {}
        pos = [*a.posonlyargs, *a.args]
        with_default = [p.arg for p in pos[len(pos) - len(a.defaults) :]]
        given = dict(zip(with_default, a.defaults, strict=True))
        given.update((p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d)
        for param in (*pos, *a.kwonlyargs):
            params.append(param.arg)
            cls = common.annotated_class(param.annotation)
            if cls is not None:
                types[param.arg] = cls
            default = given.get(param.arg)
            if default is not None:
                v = self.arg(default)
                if v is not None:
                    defaults[param.arg] = v
                items = strings(default)
                if items is not None and not isinstance(default, ast.Constant):
                    str_lists[param.arg] = items
        return params, defaults, types, str_lists

    def _backward_kind(self, name: str, in_class: bool) -> str | None:
        backward = self.cur.backward
        if in_class and name == "backward" and ".".join(self.scope) in self.autograd_classes:
            backward = "torch"
        elif in_class and name == "bprop":
            backward = "mindspore"
        return backward

    def walk_If(self, node: ast.If) -> None:
        self.line = node.lineno
        top_level = len(self.stack) == 1 and not self.scope
        if self.main is None and top_level and _is_main_test(node.test):
            self.main = Frame("<main>", node.test.lineno, [], {})
            self.stack.append(self.main)
            self.walk(node.test)
            self.block(node.body)
            self.stack.pop()
            if node.orelse:  # runs when imported: module code
                self.block(node.orelse)
            return
        fn = self.cur
        # `if ok: ... else: raise` is a check, not a flag: what it guards always runs
        counted = not _else_raises(node)
        fn.if_counted.append(counted)
        test_text = short(self.code(node.test), 80)
        if counted:
            fn.cond += 1
            fn.conds.append(test_text)
        fn.branches.append(self._branch_kind(node.body))
        self._module_type_test(node.test, fn.branches[-1], node.lineno)
        self.walk(node.test)
        self.block(node.body)
        if node.orelse:
            if counted and fn.conds:
                fn.conds[-1] = f"not ({fn.conds[-1]})"
            fn.branches[-1] = self._branch_kind(node.orelse)
            if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
                # elif: its early return, like its own, leaves the enclosing block
                self.walk(node.orelse[0])
            else:
                self.block(node.orelse)
        if fn.if_counted.pop():
            fn.cond -= 1
            fn.conds.pop()
        fn.branches.pop()
        if self.blocks and not node.orelse and _returns(node.body):
            # `if world_size == 1: ...; return`: the rest of the block runs only otherwise
            fn.cond += 1
            fn.conds.append(f"not ({test_text})")
            self.blocks[-1] += 1

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._bind(node.target, node.iter)

    def visit_comp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp) -> None:
        for comp in node.generators:
            self._bind(comp.target, comp.iter)

    def _bind(self, target: ast.expr, it: ast.expr) -> None:
        fn = self.cur
        src = dotted(it.func) if isinstance(it, ast.Call) else dotted(it)
        holds_params = bool(src) and (
            "param" in src.lower()  # type: ignore[union-attr]
            or src in fn.param_lists
            or src.split(".")[0] in fn.param_lists  # type: ignore[union-attr]
        )
        if isinstance(target, ast.Name):
            if isinstance(it, ast.Name):
                fn.iter_of[target.id] = it.id
        elif isinstance(target, ast.Tuple) and target.elts and holds_params:
            first = target.elts[0]
            if isinstance(first, ast.Name):
                fn.name_vars.add(first.id)

    # -- statements ---------------------------------------------------------------------
    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if triage.hand_update(node):
            self.cur.summary.trains = True  # p -= lr * p.grad

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._assign(t, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        cls = common.annotated_class(node.annotation)
        named = isinstance(node.target, ast.Name)
        if cls is not None and named:
            self.cur.declared[node.target.id] = cls  # type: ignore[union-attr]
        if node.value is not None:
            self._assign(node.target, node.value)
        if cls is not None and named:
            self.cur.instances.setdefault(node.target.id, cls)  # type: ignore[union-attr]

    def _declared_build(self, fn: Frame, name: str, value: ast.expr) -> None:
        """``trainer = config.build()`` where ``trainer: Trainer`` is declared: a factory
        call that returns the declared class builds one (torchtitan's Configurable
        configs): its constructor runs, and ``trainer.x()`` is ``Trainer.x``."""
        cls = fn.declared.get(name)
        if cls is None or not isinstance(value, ast.Call):
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

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        fn = self.cur
        line = self.line
        fn.engines.assign(target, value, self._qualified_call)
        if isinstance(target, ast.Name):
            name = target.id
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
            if items is not None and not isinstance(value, ast.Constant):
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
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self._assign_switch(target, value, line)
            self._attr_type(target, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for el in target.elts:
                if isinstance(el, ast.Starred):
                    el = el.value
                if isinstance(el, ast.Name):
                    n = el.id
                    fn.tainted.discard(n)
                    fn.instances.pop(n, None)
                    fn.aliases.pop(n, None)
                    fn.assigns[n] = value  # rebound: `pretrain, store = wrap(pretrain)`

    def _track_value(self, fn: Frame, name: str, value: ast.expr) -> None:
        """What kind of thing a name now holds: an instance, an optimizer class, the
        parameters' names, a tuple of module classes."""
        fn.instances.pop(name, None)
        fn.aliases.pop(name, None)
        fn.param_lists.discard(name)
        if isinstance(value, ast.Call):
            func = dotted(value.func)
            if func and func.rsplit(".", 1)[-1][:1].isupper():
                fn.instances[name] = func  # trainer = Trainer(...)
            inner = value.args[0] if func in ("list", "tuple") and value.args else value
            if (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and inner.func.attr == "named_parameters"
            ):
                fn.param_lists.add(name)
            return
        raw = dotted(value)
        if raw is not None:
            _, q = self.qualify_name(raw)
            if raw.rsplit(".", 1)[-1] in known.OPTIMIZER_NAMES:
                fn.aliases[name] = q or raw  # optimizer_cls = torch.optim.AdamW
            return
        if isinstance(value, ast.Tuple) and value.elts:
            names = [dotted(el) for el in value.elts]
            if all(names):
                fn.type_tuples[name] = [n.rsplit(".", 1)[-1] for n in names]  # type: ignore[union-attr]

    def _attr_type(self, target: ast.expr, value: ast.expr) -> None:
        """``self.fabric = L.Fabric(...)`` (or a parameter annotated with a class): the
        class of what ``self.fabric`` holds, for ``self.fabric.seed_everything()``."""
        if not (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            return
        cls = self._enclosing_class()
        if cls is None:
            return
        held: str | None = None
        if isinstance(value, ast.Call):
            func = dotted(value.func)
            if func and func.rsplit(".", 1)[-1][:1].isupper():
                held = func
        elif isinstance(value, ast.Name):
            held = self.cur.instances.get(value.id)
        if held is not None:
            self.attr_types[f"{cls}.{target.attr}"] = held

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
    def visit_Call(self, node: ast.Call) -> None:
        line = node.lineno
        raw = dotted(node.func)
        if raw is not None:
            raw = self.resolve_call_name(raw)
        raw, qual = self.qualify_name(raw)
        fn = self.cur
        self._check_matmul(node, qual, line)
        if triage.hand_update(node) or fn.engines.call(node):
            fn.summary.trains = True  # p.data.add_(p.grad, alpha=-lr); engine.step()
        if raw is None:
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "backward":
                fn.summary.gradients = True  # scaler.scale(loss).backward()
            self._unnamed_call(node, line)
            return  # `ops.MatMul()(a, b)`-style calls have no dotted name to follow
        self._training_marks(node, raw, qual)
        if qual in TRAINER_GROUPINGS:
            # a library trainer builds its optimizer itself (and also seeds: not `return`)
            fn.optimizers.append((node, line, qual))
        if qual is not None and self._known_call(node, qual, line, raw):
            return
        self._optimizer_call(node, raw, qual, line)
        self._name_test(node, raw, line)
        self._follow(node, raw, qual, line)

    def _training_marks(self, node: ast.Call, raw: str, qual: str | None) -> None:
        """The function trains (a training step, a trainer's fit) or takes gradients."""
        fn = self.cur
        serving = not known.INFERENCE_ROOTS.isdisjoint(self.roots)
        nargs = n_args(node)
        if known.is_training_call(qual or raw, nargs, serving) or (
            qual is not None and known.is_training_call(raw, nargs, serving)
        ):
            fn.summary.trains = True
        if known.is_gradient_call(qual or raw) or known.is_gradient_call(raw):
            fn.summary.gradients = True

    def _optimizer_call(self, node: ast.Call, raw: str, qual: str | None, line: int) -> None:
        """An optimizer class given parameters, or an optimizer factory."""
        last = raw.rsplit(".", 1)[-1]
        named = last in known.OPTIMIZER_NAMES or triage.runtime_optimizer_class(raw)
        if named and call_arg(node, 0, "params") is not None:
            self.cur.optimizers.append((node, line, qual or raw))
        if (qual or "") in known.OPTIMIZER_FACTORIES:
            self.cur.optimizers.append((node, line, qual or raw))

    def _name_test(self, node: ast.Call, raw: str, line: int) -> None:
        """``name.endswith(("bias", "norm"))`` on a parameter's name: the names a decay
        grouping tests."""
        if raw.rsplit(".", 1)[-1] not in ("endswith", "startswith"):
            return
        if not isinstance(node.func, ast.Attribute) or not self._name_subject(node.func.value):
            return
        if self._names_lead_to_decay():
            return
        items = strings(node.args[0]) if node.args else None
        if items:
            fn = self.cur
            fn.groups.names.extend(items)
            fn.groups.name_evidence.append(Evidence(loc=SrcLoc(line=line), text=self.code(node)))

    def _follow(self, node: ast.Call, raw: str, qual: str | None, line: int) -> None:
        """The call sites the linker follows: a launched function, an app's commands, the
        functions handed to a call, the callee itself (not a builtin or a library's)."""
        fn = self.cur
        if qual in known.LAUNCHERS:
            # Fabric.launch(main, ...): main is run with the Fabric first; the linker binds it
            fn.summary.calls.append(self._callsite(node, raw, line))
            return
        commands = self.apps.get(raw)
        if commands:  # app(): every registered command
            fn.summary.calls.extend(triage.command_calls(commands.items(), line))
            return
        self._passed_functions(node, line, qual in known.CLI_DISPATCHERS)
        if raw in known.BUILTIN_CALLS or (
            qual is not None and qual.split(".")[0] in known.EXTERNAL_ROOTS
        ):
            return
        fn.summary.calls.append(self._callsite(node, raw, line))

    def _unnamed_call(self, node: ast.Call, line: int) -> None:
        """Calls whose callee is an expression: ``super().__init__(...)``,
        ``Trainer(cfg).fit()``, ``TRAINERS[name](cfg)`` (a table of classes)."""
        f = node.func
        fn = self.cur
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call):
            inner = dotted(f.value.func)
            target = None
            if inner == "super":
                target = f"super().{f.attr}"
            elif inner and inner.rsplit(".", 1)[-1][:1].isupper() and not self._external(inner):
                target = f"{inner}.{f.attr}"  # Trainer(cfg).fit(): Trainer's fit
            if target is not None:
                fn.summary.calls.append(self._callsite(node, target, line))
            return
        if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name):
            for key, name in self._table(f.value.id):
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
        if not isinstance(value, ast.Dict):
            return []
        out = []
        for k, v in zip(value.keys, value.values, strict=True):
            if k is None:
                continue  # **other
            key, target = literal(k), dotted(v)
            if target is not None:
                out.append((str(key) if key is not NO else "?", target))
        return out

    def _passed_functions(self, node: ast.Call, line: int, dispatcher: bool = False) -> None:
        """Bare names handed to a call may be functions it runs: mp.spawn(worker, ...);
        a dict of them handed to a CLI dispatcher is a table of commands."""
        fn = self.cur
        values = [*positional(node), *(k.value for k in node.keywords if k.arg is not None)]
        for v in values:
            if not isinstance(v, ast.Name):
                continue
            name = v.id
            table = self._table(name) if dispatcher else []
            if table:
                fn.summary.calls.extend(triage.command_calls(table, line))
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

    def _callsite(self, node: ast.Call, raw: str, line: int) -> CallSite:
        # `self.x()` inside a method means this class's x
        head, _, rest = raw.partition(".")
        if head in ("self", "cls") and rest and rest.count(".") <= 1:
            cls = self._enclosing_class()
            if cls:
                raw = f"{cls}.{rest}"  # self.x() and self.fabric.x() (attr_types)
        args: list[Arg] = []
        kwargs: dict[str, Arg] = {}
        every: list[str] = []
        for a in positional(node):
            if all_params(a):
                every.append(str(len(args)))
            args.append(self.arg(a) or Arg(kind="expr"))
        for k in node.keywords:
            if k.arg is None:
                continue  # **kwargs
            if all_params(k.value):
                every.append(k.arg)
            kwargs[k.arg] = self.arg(k.value) or Arg(kind="expr")
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

    def _app_class(self, name: str) -> str | None:
        cls = self.top.instances.get(name)
        return (self.qualify_name(cls)[1] or cls) if cls else None

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


def _returns(body: list[ast.stmt]) -> bool:
    """Does an `if` body end with ``return``?"""
    return bool(body) and isinstance(body[-1], ast.Return)


def _else_raises(node: ast.If) -> bool:
    """``else:`` holding nothing but ``raise``."""
    return bool(node.orelse) and all(isinstance(s, ast.Raise) for s in node.orelse)


def _is_main_test(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = {dotted(n) or literal(n) for n in (test.left, test.comparators[0])}
    return sides == {"__name__", "__main__"}


_WalkFn = Callable[[_Visitor, Any], None]
# Nodes walked by hand (they open scopes or conditions) or not at all (contexts, operators).
_CUSTOM: dict[type, _WalkFn] = {
    ast.ClassDef: _Visitor.walk_ClassDef,
    ast.FunctionDef: _Visitor.walk_FunctionDef,
    ast.AsyncFunctionDef: _Visitor.walk_FunctionDef,
    ast.If: _Visitor.walk_If,
    ast.IfExp: _Visitor._walk_ifexp,
    ast.Dict: _Visitor._walk_dict,
    ast.Import: _Visitor.visit_Import,
    ast.ImportFrom: _Visitor.visit_ImportFrom,
    **{
        t: _Visitor._skip
        for base in (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
        for t in base.__subclasses__()
    },
    **{t: _Visitor._skip for t in (ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)},
}
# Hooks that see a node before its children are walked.
_HOOKS: dict[type, _WalkFn] = {
    ast.Call: _Visitor.visit_Call,
    ast.BinOp: _Visitor.visit_BinOp,
    ast.Compare: _Visitor.visit_Compare,
    ast.Assign: _Visitor.visit_Assign,
    ast.AnnAssign: _Visitor.visit_AnnAssign,
    ast.AugAssign: _Visitor.visit_AugAssign,
    ast.For: _Visitor.visit_For,
    ast.AsyncFor: _Visitor.visit_For,
    ast.ListComp: _Visitor.visit_comp,
    ast.SetComp: _Visitor.visit_comp,
    ast.GeneratorExp: _Visitor.visit_comp,
    ast.DictComp: _Visitor.visit_comp,
}


def _int_items(node: ast.Dict) -> tuple[tuple[str, int], ...]:
    """The entries of a dict literal whose key is a string and value an integer."""
    out = []
    for k, v in zip(node.keys, node.values, strict=True):
        key, value = literal(k) if k is not None else NO, literal(v)
        if isinstance(key, str) and isinstance(value, int) and not isinstance(value, bool):
            out.append((key, value))
    return tuple(out)
