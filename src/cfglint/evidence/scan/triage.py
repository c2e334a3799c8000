"""Cheap triage before the full pass: which files can hold anything the scanner reports.

A whole repository is mostly model, data and utility code. Every file is parsed once with
CPython's own parser (``ast``); the full pass (:mod:`scanner`), which tracks values,
conditions and parameter groups, walks the tree only of the files that can matter:

- a seeding / determinism / environment call or switch, a framework entry modelled in
  :mod:`known`, a library seeding helper;
- a dropout whose probability is a literal (or left to its default);
- an optimizer construction or anything that mentions weight decay (group building);
- a custom backward, or a matmul next to a transpose (helpers called from a backward).

The other files still matter for following calls from an entry point to the files that
seed, so they get a *call-graph summary* built from the ``ast`` tree here: imports,
classes, functions with their parameters and calls, the main block. One walk does both:
it builds the call graph and stops at the first thing that needs the full pass
(:class:`NeedsFullScan`). Nothing is executed.
"""

from __future__ import annotations

import ast
from typing import Any, TypeGuard

from cfglint.evidence.scan import known
from cfglint.evidence.scan.engines import Engines, dotted
from cfglint.evidence.scan.model import (
    Arg,
    CallSite,
    FileSummary,
    FunctionSummary,
    ImportRef,
    SrcLoc,
)

# Last name parts of every call the full pass recognises.
_KNOWN_LAST = frozenset(
    q.rsplit(".", 1)[-1]
    for table in (
        known.SEED_CALLS,
        known.DETERMINISTIC_CALLS,
        known.FRAMEWORK_INITS,
        known.SET_CONTEXT,
        known.OPTIMIZER_FACTORIES,
    )
    for q in table
) | frozenset(known.OPTIMIZER_NAMES)
# dropout API last name -> (positional index of the probability, its keywords)
_DROPOUT_P: dict[str, tuple[int, tuple[str, ...]]] = {}
for _q, _style in known.DROPOUT_APIS.items():
    _last = _q.rsplit(".", 1)[-1]
    _DROPOUT_P[_last] = (1, ("p",)) if _style in ("func", "torchfn") else (0, ("p", "keep_prob"))
_TRANSPOSE = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims", "T", "mT", "mH", "H"})
_MATMUL = frozenset(
    {"mm", "matmul", "bmm", "MatMul", "BatchMatMul", "addmm", "addmm_", "baddbmm", "addbmm"}
)
_SWITCH_ATTRS = frozenset({"deterministic", "benchmark"})


def _last(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _dropout_matters(node: ast.Call, last: str) -> bool:
    """A dropout call is reported only with a literal (or default) probability."""
    index, keywords = _DROPOUT_P[last]
    for kw in node.keywords:
        if kw.arg in keywords:
            return _constantish(kw.value)
    positional = [a for a in node.args if not isinstance(a, ast.Starred)]
    if len(positional) > index:
        return _constantish(positional[index])
    return not any(kw.arg is None for kw in node.keywords)  # **kwargs may carry p


def _constantish(node: ast.expr) -> bool:
    return all(
        isinstance(n, (ast.Constant, ast.UnaryOp, ast.BinOp, ast.operator, ast.unaryop))
        for n in ast.walk(node)
    )


# -- call-graph summaries -----------------------------------------------------------------


_NO = object()


def _literal(node: ast.expr | None) -> Any:
    """A constant (or a negated number); anything else is not a literal here."""
    c = node.__class__
    if c is ast.Constant:
        v = node.value  # type: ignore[union-attr]
        return v if v is None or isinstance(v, (int, float, str, bool)) else _NO
    if c is ast.UnaryOp and isinstance(node.op, ast.USub):  # type: ignore[union-attr]
        inner = node.operand  # type: ignore[union-attr]
        if inner.__class__ is ast.Constant and type(inner.value) in (int, float):
            return -inner.value
    return _NO


def is_cast(node: ast.expr) -> TypeGuard[ast.Call]:
    """``str(x)`` / ``int(x)``: the value is ``x``'s."""
    return (
        isinstance(node, ast.Call)
        and dotted(node.func) in ("str", "int")
        and len(node.args) == 1
        and not node.keywords
    )


def seed_base(a: Arg) -> bool:
    """An argument a seed offset can sit on (``1337 + rank``): a parameter, an integer,
    an expression naming a seed."""
    return (
        a.kind == "param"
        or (a.kind == "literal" and isinstance(a.value, int))
        or (a.kind == "expr" and "seed" in a.text.lower())
    )


class NeedsFullScan(Exception):
    """Raised by the call-graph walk when the file holds something the full pass must read."""


def _seedish(text: str) -> str:
    return text if "seed" in text.lower() else ""


class _Fn:
    def __init__(self, summary: FunctionSummary) -> None:
        self.summary = summary
        self.cond = 0
        self.literals: dict[str, Any] = {}
        self.assigned: set[str] = set()
        self.instances: dict[str, str] = {}
        self.conds: list[ast.expr] = []  # enclosing `if` tests, innermost last
        self.dicts: dict[str, ast.Dict] = {}  # name -> a dict literal assigned to it
        self.declared: dict[str, str] = {}  # `trainer: Trainer | None`: declared class
        self.engines = Engines()  # names holding an optimizer or engine, by value


class ImportRecorder:
    """What a module's import statements bind, for both walks over it (the call graph
    and the full pass): local name -> ImportRef, star imports, top-level packages."""

    imports: dict[str, ImportRef]
    star: list[ImportRef]
    roots: set[str]

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            root = alias.name.split(".")[0]
            self.roots.add(root)
            if alias.asname:
                self.imports[alias.asname] = ImportRef(module=alias.name)
            else:
                self.imports[root] = ImportRef(module=root)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0:
            self.roots.add(module.split(".")[0])
        for alias in node.names:
            if alias.name == "*":
                self.star.append(ImportRef(level=node.level, module=module))
                continue
            local = alias.asname or alias.name
            self.imports[local] = ImportRef(level=node.level, module=module, name=alias.name)


class CallGraph(ImportRecorder):
    """Imports, classes, functions and calls of one module: what the linker follows.

    With ``triage=True`` the walk also looks for anything the full pass reports
    and stops at the first one (:class:`NeedsFullScan`): one cheap pass decides.
    The walk is hand-rolled (a dispatch table by node class) because
    ``ast.NodeVisitor``'s name lookups and generators cost more than the parse."""

    def __init__(self, triage: bool = False) -> None:
        self.triage = triage
        self._transposes = self._matmuls = False
        self.imports: dict[str, ImportRef] = {}
        self.star: list[ImportRef] = []
        self.roots: set[str] = set()
        self.classes: list[str] = []
        self.scope: list[tuple[str, bool]] = []  # (name, is class)
        self.functions: dict[str, FunctionSummary] = {}
        self.top = _Fn(FunctionSummary(qualname="<module>", loc=SrcLoc(line=1)))
        self.main: _Fn | None = None
        self.stack: list[_Fn] = [self.top]
        self.bases: dict[str, list[str]] = {}
        self.attr_types: dict[str, str] = {}
        self.defined: set[str] = set()  # top-level def and class names
        # CLI applications: name -> {command: function} (`@app.command()` registrations)
        self.apps: dict[str, dict[str, str]] = {}

    @property
    def cur(self) -> _Fn:
        return self.stack[-1]

    def visit(self, node: ast.AST) -> None:
        m = _DISPATCH.get(node.__class__)
        if m is not None:
            m(self, node)
        else:
            self.generic_visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            v = getattr(node, name, None)
            if v.__class__ is list:
                for x in v:
                    if isinstance(x, ast.AST):
                        self.visit(x)
            elif isinstance(v, ast.AST):
                self.visit(v)

    # triage ---------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self.triage and node.attr in _TRANSPOSE:
            self._transposes = True
            if self._matmuls:
                raise NeedsFullScan
        self.visit(node.value)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if self.triage and isinstance(node.op, ast.MatMult):
            self._matmuls = True
            if self._transposes:
                raise NeedsFullScan
        self.visit(node.left)
        self.visit(node.right)

    def visit_Name(self, node: ast.Name) -> None:
        if self.triage and "decay" in node.id:
            raise NeedsFullScan

    def visit_Constant(self, node: ast.Constant) -> None:
        v = node.value
        # a group key or a name fragment ("weight_decay", "no_decay"); help text and
        # docstrings that mention weight decay hold spaces and matter to nothing here
        if self.triage and v.__class__ is str and "decay" in v and len(v) < 80 and " " not in v:
            raise NeedsFullScan

    def _skip(self, node: ast.AST) -> None:
        pass

    # imports ------------------------------------------------------------------------

    # scopes -------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in node.decorator_list:
            self.visit(d)
        for b in node.bases:
            self.visit(b)
        qual = ".".join([*(n for n, _ in self.scope), node.name])
        self.classes.append(qual)
        written = [dotted(b) for b in node.bases]
        self.bases[qual] = [b for b in written if b and b != "object"]
        self.scope.append((node.name, True))
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # A custom backward alone needs no full pass: a transposed operand fed to a matmul is
        # what is reported, and a file holding both transposes and matmuls gets the full
        # scan anyway; the call graph marks the backward so its helpers are checked.
        backward = self._custom_backward(node.name)
        for d in node.decorator_list:
            self.visit(d)
        qual = ".".join([*(n for n, _ in self.scope), node.name])
        if not self.scope:
            for d in node.decorator_list:
                found = cli_command(d, node.name, self._app_class)
                if found is not None:
                    self.apps.setdefault(found[0], {})[found[1]] = qual
        a = node.args
        params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        defaults: dict[str, Arg] = {}
        positional = [*a.posonlyargs, *a.args]
        for p, d in zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=False):
            v = _literal(d)
            if v is not _NO:
                defaults[p.arg] = Arg(kind="literal", value=v)
        for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=False):
            v = _literal(d)
            if d is not None and v is not _NO:
                defaults[p.arg] = Arg(kind="literal", value=v)
        types: dict[str, str] = {}
        for p in (*a.posonlyargs, *a.args, *a.kwonlyargs):
            cls = _annotated_class(p.annotation)
            if cls is not None:
                types[p.arg] = cls
        fn = _Fn(
            FunctionSummary(
                qualname=qual,
                loc=SrcLoc(line=node.lineno),
                params=params,
                defaults=defaults,
                param_types=types,
            )
        )
        fn.instances.update(types)  # `fabric: L.Fabric`: fabric.x() is L.Fabric.x
        fn.summary.backward = backward
        self.stack.append(fn)
        self.scope.append((node.name, False))
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()
        self.stack.pop()
        self.functions[qual] = fn.summary
        # a training step built inside a function (and returned) counts as the builder's
        parent = self.cur
        nested = parent is not self.top and parent is not self.main
        if fn.summary.trains and nested and not (self.scope and self.scope[-1][1]):
            parent.summary.trains = True

    def _custom_backward(self, name: str) -> bool:
        """``backward`` of a torch.autograd.Function subclass, or a MindSpore ``bprop``."""
        if name not in ("backward", "bprop") or not self.scope or not self.scope[-1][1]:
            return False
        if name == "bprop":
            return True
        owner = ".".join(n for n, _ in self.scope)
        return any(b.endswith("Function") for b in self.bases.get(owner, []))

    def visit_If(self, node: ast.If) -> None:
        if self.main is None and len(self.stack) == 1 and not self.scope and _is_main(node.test):
            self.main = _Fn(FunctionSummary(qualname="<main>", loc=SrcLoc(line=node.lineno)))
            self.stack.append(self.main)
            for stmt in node.body:
                self.visit(stmt)
            self.stack.pop()
            for stmt in node.orelse:
                self.visit(stmt)
            return
        self.visit(node.test)
        fn = self.cur
        if node.orelse and all(isinstance(s, ast.Raise) for s in node.orelse):
            for stmt in (*node.body, *node.orelse):  # a check, not a flag
                self.visit(stmt)
            return
        fn.cond += 1
        fn.conds.append(node.test)
        for stmt in node.body:
            self.visit(stmt)
        if node.orelse:
            fn.conds[-1] = ast.UnaryOp(op=ast.Not(), operand=node.test)
            for stmt in node.orelse:
                self.visit(stmt)
        fn.conds.pop()
        fn.cond -= 1

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.body)

    # statements ---------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        if self.triage:
            self._switch_targets(node.targets)
        self.visit(node.value)
        for t in node.targets:
            self._assign(t, node.value)
            if t.__class__ is not ast.Name:
                self.visit(t)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if self.triage:
            self._switch_targets([node.target])
        cls = _annotated_class(node.annotation)
        named = isinstance(node.target, ast.Name)
        if cls is not None and named:
            self.cur.declared[node.target.id] = cls  # type: ignore[union-attr]
        if node.value is not None:
            self.visit(node.value)
            self._assign(node.target, node.value)
        if cls is not None and named:
            self.cur.instances.setdefault(node.target.id, cls)  # type: ignore[union-attr]

    def _declared_build(self, fn: _Fn, name: str, value: ast.expr) -> None:
        """``trainer = config.build()`` with ``trainer: Trainer`` declared: the factory
        builds the declared class (its constructor runs; trainer.x() is Trainer.x)."""
        cls = fn.declared.get(name)
        if cls is None or not isinstance(value, ast.Call):
            return
        func = dotted(value.func)
        if func is None or func == cls or func.rsplit(".", 1)[-1][:1].isupper():
            return
        fn.instances[name] = cls
        fn.summary.calls.append(
            CallSite(
                target=cls,
                loc=SrcLoc(line=value.lineno),
                conditional=fn.cond > 0,
                condition=_condition(fn),
            )
        )

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if self.triage:
            self._switch_targets([node.target])
        if hand_update(node):
            self.cur.summary.trains = True
        self.generic_visit(node)

    def _switch_targets(self, targets: list[ast.expr]) -> None:
        for tg in targets:
            if isinstance(tg, ast.Attribute) and tg.attr in _SWITCH_ATTRS:
                raise NeedsFullScan
            if isinstance(tg, ast.Subscript) and _last(tg.value) == "environ":
                key = tg.slice
                if not isinstance(key, ast.Constant) or key.value == "PYTHONHASHSEED":
                    raise NeedsFullScan

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        fn = self.cur
        fn.engines.assign(target, value, self._qualified_call)
        if isinstance(target, ast.Name):
            fn.assigned.add(target.id)
            lit = _literal(value)
            if lit is not _NO:
                fn.literals[target.id] = lit
            else:
                fn.literals.pop(target.id, None)
            cls = dotted(value.func) if isinstance(value, ast.Call) else None
            if cls and cls.rsplit(".", 1)[-1][:1].isupper():
                fn.instances[target.id] = cls
            else:
                fn.instances.pop(target.id, None)
            if isinstance(value, ast.Dict):
                fn.dicts[target.id] = value
            else:
                fn.dicts.pop(target.id, None)
            self._declared_build(fn, target.id, value)
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            self._attr_type(target.attr, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for el in target.elts:
                if isinstance(el, ast.Name):
                    fn.assigned.add(el.id)
                    fn.instances.pop(el.id, None)

    def _attr_type(self, attr: str, value: ast.expr) -> None:
        """``self.fabric = L.Fabric(...)``: what ``self.fabric`` holds, by class."""
        cls = self._enclosing_class()
        held: str | None = None
        if isinstance(value, ast.Call):
            func = dotted(value.func)
            if func and func.rsplit(".", 1)[-1][:1].isupper():
                held = func
        elif isinstance(value, ast.Name):
            held = self.cur.instances.get(value.id)
        if cls is not None and held is not None:
            self.attr_types[f"{cls}.{attr}"] = held

    # calls --------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        if self.triage:
            self._triage_call(node)
        self.generic_visit(node)
        raw = dotted(node.func)
        fn = self.cur
        if raw is None:
            self._unnamed_call(node)
        if raw is not None:
            target = self._target(raw)  # trainer.train() -> Trainer.train
            named = (raw, target, self._qualify(target) or target)
            serving = not known.INFERENCE_ROOTS.isdisjoint(self.roots)
            if (
                any(_trains(node, n, serving) for n in named)
                or hand_update(node)
                or fn.engines.call(node)
            ):
                fn.summary.trains = True
            if any(known.is_gradient_call(n) for n in named):
                fn.summary.gradients = True
        elif _chained_backward(node):
            fn.summary.gradients = True
        if raw is not None:
            target = self._target(raw)
            if self._qualify(target) in known.LAUNCHERS:
                # Fabric.launch(main, ...): main is run with the Fabric first
                fn.summary.calls.append(self._site(node, target))
                return
            if self._app_commands(node, raw):
                return
            self._passed(node, self._qualify(raw) in known.CLI_DISPATCHERS)
            if raw in known.BUILTIN_CALLS:
                return
            q = self._qualify(raw)
            if q is not None and q.split(".")[0] in known.EXTERNAL_ROOTS:
                return
            fn.summary.calls.append(self._site(node, target))

    def _site(self, node: ast.Call, target: str, **kw: Any) -> CallSite:
        fn = self.cur
        positional = [a for a in node.args if not isinstance(a, ast.Starred)]
        args = [self._arg(a) for a in positional]
        kwargs = {k.arg: self._arg(k.value) for k in node.keywords if k.arg is not None}
        every = [str(i) for i, a in enumerate(positional) if _all_params(a)]
        every += [k.arg for k in node.keywords if k.arg is not None and _all_params(k.value)]
        kw.setdefault("conditional", fn.cond > 0)
        kw.setdefault("condition", _condition(fn))
        return CallSite(
            target=target,
            loc=SrcLoc(line=node.lineno),
            args=args,
            kwargs=kwargs,
            all_params=every,
            **kw,
        )

    def _unnamed_call(self, node: ast.Call) -> None:
        """``super().__init__(...)``, ``Trainer(cfg).fit()``, ``TRAINERS[name](cfg)``."""
        f = node.func
        fn = self.cur
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Call):
            inner = dotted(f.value.func)
            if inner == "super":
                fn.summary.calls.append(self._site(node, f"super().{f.attr}"))
            elif inner and inner.rsplit(".", 1)[-1][:1].isupper():
                q = self._qualify(inner)
                if q is None or q.split(".")[0] not in known.EXTERNAL_ROOTS:
                    fn.summary.calls.append(self._site(node, f"{inner}.{f.attr}"))
        elif isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name):
            for key, target in self._table(f.value.id):
                fn.summary.calls.append(
                    self._site(node, target, conditional=True, condition=f"key {key!r}")
                )

    def _table(self, name: str) -> list[tuple[str, str]]:
        """(key, dotted value) of a dict of functions or classes assigned to ``name``."""
        d = self.cur.dicts.get(name) or self.top.dicts.get(name)
        if d is None:
            return []
        out = []
        for k, v in zip(d.keys, d.values, strict=False):
            target = dotted(v)
            if k is not None and target is not None:
                out.append((str(_literal(k)) if _literal(k) is not _NO else "?", target))
        return out

    def _triage_call(self, node: ast.Call) -> None:
        last = _last(node.func)
        if last is None:
            return
        if last in _KNOWN_LAST or last == "putenv" or runtime_optimizer_class(last):
            raise NeedsFullScan
        if last in _DROPOUT_P and _dropout_matters(node, last):
            raise NeedsFullScan
        if last in ("update", "setdefault"):
            f = node.func
            if isinstance(f, ast.Attribute) and _last(f.value) == "environ":
                raise NeedsFullScan
        if last in _MATMUL:
            self._matmuls = True
        elif last in _TRANSPOSE:
            self._transposes = True
        if self._matmuls and self._transposes:
            raise NeedsFullScan

    def _qualify(self, raw: str) -> str | None:
        head, _, rest = raw.partition(".")
        ref = self.imports.get(head)
        if ref is None or ref.level:
            return None
        base = ref.module + (f".{ref.name}" if ref.name else "")
        return base + (f".{rest}" if rest else "")

    def _qualified_call(self, raw: str) -> str | None:
        """``accelerator.prepare`` -> ``accelerate.Accelerator.prepare``."""
        return self._qualify(self._target(raw))

    def _target(self, raw: str) -> str:
        head, _, rest = raw.partition(".")
        if head in ("self", "cls") and rest and rest.count(".") <= 1:
            cls = self._enclosing_class()
            if cls:
                return f"{cls}.{rest}"  # self.x() and self.fabric.x() (attr_types)
        if rest and "." not in rest:
            for fn in (self.cur, self.top):
                inst = fn.instances.get(head)
                if inst is not None:
                    return f"{inst}.{rest}"  # trainer = Trainer(...); trainer.train()
        return raw

    def _app_class(self, name: str) -> str | None:
        cls = self.top.instances.get(name)
        return (self._qualify(cls) or cls) if cls else None

    def _app_commands(self, node: ast.Call, raw: str) -> bool:
        """``app()``: each command registered on the application is a way in."""
        commands = self.apps.get(raw)
        if not commands:
            return False
        self.cur.summary.calls.extend(command_calls(commands.items(), node.lineno))
        return True

    def _enclosing_class(self) -> str | None:
        names = [n for n, _ in self.scope]
        for i in range(len(self.scope) - 1, -1, -1):
            if self.scope[i][1]:
                return ".".join(names[: i + 1])
        return None

    def _passed(self, node: ast.Call, dispatcher: bool = False) -> None:
        fn = self.cur
        values = [a for a in node.args if not isinstance(a, ast.Starred)]
        values += [k.value for k in node.keywords if k.arg is not None]
        for v in values:
            if not isinstance(v, ast.Name):
                continue
            name = v.id
            table = self._table(name) if dispatcher else []
            if table:  # a dict of commands handed to a CLI dispatcher
                fn.summary.calls.extend(command_calls(table, node.lineno))
                continue
            if name in fn.summary.params or name in fn.assigned or name in known.BUILTIN_CALLS:
                continue
            fn.summary.calls.append(
                CallSite(
                    target=name,
                    loc=SrcLoc(line=node.lineno),
                    conditional=fn.cond > 0,
                    condition=_condition(fn),
                    indirect=True,
                )
            )

    def _arg(self, node: ast.expr, depth: int = 0) -> Arg:
        if depth > 4:
            return Arg(kind="expr")
        if is_cast(node):
            return self._arg(node.args[0], depth + 1)
        v = _literal(node)
        if v is not _NO:
            return Arg(kind="literal", value=v)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            # `1337 + fabric.global_rank`: the base seed and an offset on top of it
            for base, rest in ((node.left, node.right), (node.right, node.left)):
                a = self._arg(base, depth + 1)
                if not a.offset and seed_base(a):
                    return a.model_copy(update={"offset": ast.unparse(rest)[:80]})
        if isinstance(node, ast.Name):
            return self._name_arg(node.id)
        name = dotted(node)
        if name is not None:
            return Arg(kind="expr", text=_seedish(name))
        return Arg(kind="expr")

    def _name_arg(self, name: str) -> Arg:
        fn = self.cur
        if name in fn.summary.params:
            return Arg(kind="param", text=name)
        for scope in (fn, self.top):
            if name in scope.literals:
                return Arg(kind="literal", value=scope.literals[name])
        for scope in (fn, self.top):
            if name in scope.instances:
                return Arg(kind="instance", text=scope.instances[name])
        if name not in fn.assigned and (name in self.imports or name in self.defined):
            return Arg(kind="ref", text=name)  # a function or class handed over
        return Arg(kind="expr", text=_seedish(name))

    # result -------------------------------------------------------------------------
    def finish(self) -> FileSummary:
        summaries = [self.top.summary, *self.functions.values()]
        if self.main is not None:
            summaries.append(self.main.summary)
        prune_calls(summaries, self, class_attrs=True)
        return FileSummary(
            frameworks=frameworks_of(self.roots),
            imports=self.imports,
            star_imports=self.star,
            classes=self.classes,
            bases=self.bases,
            attr_types=self.attr_types,
            module=self.top.summary,
            main=self.main.summary if self.main else None,
            functions=self.functions,
            backward_fns=[q for q, f in self.functions.items() if f.backward],
            light=True,
        )


def prune_calls(summaries: list[Any], v: Any, *, class_attrs: bool) -> None:
    """Keep only the calls that can lead to scanned code: imported names, the first and
    last name parts of module-level and nested functions and classes, ``super()`` calls,
    and method calls on a parameter (its class is known only where the caller passes an
    instance in). ``Class.attr`` is kept when it names a known function, a method a base
    class may define, or a method of an attribute whose class is known
    (``self.fabric.seed_everything``); with ``class_attrs`` (the looser triage pass)
    whenever the class is local. ``v`` is either visitor: it has imports, star, functions,
    classes, bases and attr_types."""
    local = {p for q in [*v.functions, *v.classes] for p in (q.split(".")[0], q.split(".")[-1])}
    keep = set(v.imports) | local
    derived = {c for c, bases in v.bases.items() if bases}

    def followable(target: str, params: list[str]) -> bool:
        head, _, rest = target.partition(".")
        if head in v.imports or v.star or target.startswith("super()."):
            return True
        if head in params and head not in ("self", "cls") and rest:
            return True
        if head not in keep:
            return False
        if "." not in target or target in v.functions or (class_attrs and head in v.classes):
            return True
        owner = target.rsplit(".", 1)[0]
        return owner in derived or owner in v.attr_types

    for s in summaries:
        s.calls = [c for c in s.calls if followable(c.target, s.params)]


def frameworks_of(roots: set[str] | list[str]) -> list[str]:
    """The training frameworks a file imports, from its top-level import roots."""
    return sorted(
        {"torch" for r in roots if r in known.TORCH_ROOTS}
        | {"mindspore" for r in roots if r in known.MINDSPORE_ROOTS}
    )


def _is_main(test: ast.expr) -> bool:
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = set()
    for n in (test.left, test.comparators[0]):
        d = dotted(n)
        sides.add(d if d is not None else _literal(n))
    return sides == {"__name__", "__main__"}


def _trains(node: ast.Call, raw: str, serving: bool = False) -> bool:
    """Evidence that the code around this call trains: a backward pass, an optimizer
    step, or a framework training call."""
    return known.is_training_call(raw, len(node.args) + len(node.keywords), serving)


_DISPATCH: dict[type, Any] = {
    ast.Import: CallGraph.visit_Import,
    ast.ImportFrom: CallGraph.visit_ImportFrom,
    ast.ClassDef: CallGraph.visit_ClassDef,
    ast.FunctionDef: CallGraph.visit_FunctionDef,
    ast.AsyncFunctionDef: CallGraph.visit_FunctionDef,
    ast.If: CallGraph.visit_If,
    ast.Lambda: CallGraph.visit_Lambda,
    ast.Assign: CallGraph.visit_Assign,
    ast.AnnAssign: CallGraph.visit_AnnAssign,
    ast.AugAssign: CallGraph.visit_AugAssign,
    ast.Call: CallGraph.visit_Call,
    ast.Attribute: CallGraph.visit_Attribute,
    ast.BinOp: CallGraph.visit_BinOp,
    ast.Name: CallGraph.visit_Name,
    ast.Constant: CallGraph.visit_Constant,
    **{
        t: CallGraph._skip
        for t in (ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue, ast.alias)
    },
}


def _condition(fn: _Fn) -> str:
    """The innermost `if` test as written (unparsed only for calls that sit behind one)."""
    if fn.cond <= 0 or not fn.conds:
        return ""
    text = " ".join(ast.unparse(fn.conds[-1]).split())
    return text if len(text) <= 80 else text[:77] + "..."


# Annotations that name a container or a typing construct, not the class of the value.
TYPING_NAMES = frozenset(
    {
        *("Any", "Callable", "Dict", "List", "Tuple", "Set", "Type", "Union", "Iterable"),
        *("Iterator", "Sequence", "Mapping", "Literal", "Path", "Tensor", "Module", "Self"),
        *("TypeVar", "Generator", "Protocol", "Namespace", "Parameter", "Optional"),
    }
)


def annotation_class(text: str | None) -> str | None:
    """The class an annotation names (``L.Fabric``), or None for builtins, containers
    and typing constructs: only a class name can say which methods a value has."""
    if not text:
        return None
    last = text.rsplit(".", 1)[-1]
    if not last[:1].isupper() or last in TYPING_NAMES or last.isupper():
        return None
    return text


def runtime_optimizer_class(name: str) -> bool:
    """``optimizer_cls(params, ...)``: an optimizer class picked at run time (litgpt's
    instantiate_torch_optimizer looks the class up by name)."""
    low = name.rsplit(".", 1)[-1].lower()
    return "optim" in low and ("cls" in low or "class" in low)


def _all_params(node: ast.expr) -> bool:
    """``model.parameters()`` (and list()/filter() of it): every parameter of a model."""
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in known.ALL_PARAMS_METHODS:
            return True
        if dotted(f) in ("list", "filter", "tuple") and node.args:
            return _all_params(node.args[-1])
    return False


def _annotated_class(node: ast.expr | None) -> str | None:
    """``fabric: L.Fabric``, ``Optional[Trainer]``, ``Trainer | None`` -> the class."""
    if node is None:
        return None
    if isinstance(node, ast.Subscript) and dotted(node.value) in ("Optional", "typing.Optional"):
        node = node.slice
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [x for x in (node.left, node.right) if not _is_none(x)]
        if len(sides) != 1:
            return None
        node = sides[0]
    return annotation_class(dotted(node))


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def command_calls(table: Any, line: int) -> list[CallSite]:
    """One call per CLI command (``(name, function)`` pairs), each the way in when that
    command is given: the linker makes an entry point of every command that trains."""
    return [
        CallSite(
            target=target,
            loc=SrcLoc(line=line),
            conditional=True,
            condition=f"command {key!r}",
            indirect=True,
            command=key,
        )
        for key, target in table
    ]


def cli_command(decorator: ast.expr, function: str, app_class: Any) -> tuple[str, str] | None:
    """``@app.command(name="train")`` on ``function``, ``app`` an instance of a CLI
    application class (known.CLI_APPS): (the application's name, the command's name).
    ``app_class`` maps a name to the qualified class it holds (or None)."""
    call = decorator if isinstance(decorator, ast.Call) else None
    f = call.func if call is not None else decorator
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
        return None
    method = known.CLI_APPS.get(app_class(f.value.id) or "")
    if method is None or f.attr != method:
        return None
    name = function.replace("_", "-")
    if call is not None:
        given = call.args[0] if call.args else None
        for k in call.keywords:
            if k.arg == "name":
                given = k.value
        value = _literal(given) if given is not None else _NO
        if isinstance(value, str):
            name = value
    return f.value.id, name


def _chained_backward(node: ast.Call) -> bool:
    """``scaler.scale(loss).backward()``, ``model(x).sum().backward()``: no dotted name."""
    f = node.func
    return isinstance(f, ast.Attribute) and f.attr == "backward" and dotted(f) is None


def hand_update(node: ast.AST) -> bool:
    """A parameter updated by hand from its gradient: ``p -= lr * p.grad``,
    ``p.data.add_(p.grad, alpha=-lr)`` (a training loop without an optimizer object)."""
    if isinstance(node, ast.AugAssign):
        return (
            isinstance(node.op, (ast.Sub, ast.Add))
            and _mentions_grad(node.value)
            and not _mentions_grad(node.target)  # `p.grad += g`: accumulation, not an update
        )
    if isinstance(node, ast.Call):
        f = node.func
        if (
            isinstance(f, ast.Attribute)
            and f.attr in known.IN_PLACE_UPDATES
            and not _mentions_grad(f.value)
            and "grad" not in (dotted(f.value) or "").lower()  # fp32_grad.add_(p.grad)
        ):
            return any(_mentions_grad(a) for a in (*node.args, *(k.value for k in node.keywords)))
    return False


def _mentions_grad(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" for n in ast.walk(node))


def summarize_tree(tree: ast.Module, triage: bool = False) -> FileSummary | None:
    """The call-graph summary; with ``triage``, None when the file needs the full pass."""
    v = CallGraph(triage=triage)
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    v.defined = {s.name for s in tree.body if isinstance(s, defs)}
    try:
        for stmt in tree.body:
            v.visit(stmt)
    except NeedsFullScan:
        return None
    return v.finish()
