"""Linking per-file summaries: imports, call following and entry points.

Works on the cached summaries only, so following calls across files never re-parses.
Module names are not known (there is no sys.path), so every file is indexed under each
dotted suffix of its path (``a/b/c.py`` -> ``c``, ``b.c``, ``a.b.c``: ``src/`` layouts and
sibling scripts included) and an import picks the candidate nearest to the importing file.

A name is bound as Python binds it (:meth:`Linker.locate`): local defs, imports, re-exports
and star imports, methods along the bases (:meth:`Linker.method`), ``super()``; then what a
parameter holds (:meth:`Linker.bound`): an instance or a class the caller handed in, or its
annotation, and the class of ``self.attr``. Code under the scanned roots is never a library;
a name that leads into a library gets the library's model (known.FRAMEWORK_INITS,
known.LAUNCHERS) or nothing. The walk is bounded (MAX_DEPTH, MAX_VISITS) and says where it
stopped (EntryReport.not_followed).
"""

from __future__ import annotations

import dataclasses
import os
from collections import defaultdict, deque
from dataclasses import dataclass, field

from cfglint.evidence.scan import known
from cfglint.evidence.scan.model import (
    Arg,
    CallSite,
    DecaySite,
    Effect,
    EntryReport,
    FileSummary,
    FunctionSummary,
    ImportRef,
    ReachedEffect,
    ScanResult,
    Side,
    SourceBackward,
    SourceDecay,
    SourceDropout,
    SrcLoc,
)
from cfglint.evidence.scan.policy import classify
from cfglint.evidence.scan.seed_helpers import SEEDISH_NAMES
from cfglint.model.values import Loc

MAX_DEPTH = 12  # call chain length followed from an entry point
MAX_VISITS = 4000  # function bodies walked per entry point, against call-graph blow-up
# Framework package -> a subpackage only the real framework has: a project's own package of
# the same name without it (gpt-neox's `megatron/`) is followed, not modelled.
_FRAMEWORK_MARKERS = {"megatron": "core"}


@dataclass
class SourceFile:
    display: str  # as the user will see it (relative to what was given)
    abspath: str
    summary: FileSummary
    explicit: bool = False  # named on the command line, not found in a folder


@dataclass(frozen=True)
class Def:
    """What a name is bound to: a function or class of a scanned file, or a library
    name (``name`` qualified: "lightning.Fabric.seed_everything")."""

    kind: str  # "func", "class", "lib"
    file: SourceFile
    name: str


_EMPTY: dict[str, FunctionSummary] = {}


def _no_code(cls: str) -> FunctionSummary:
    """The constructor of a class that defines none (a dataclass, a plain container):
    calling it runs no code of the project's, which is known, not unresolved."""
    fn = _EMPTY.get(cls)
    if fn is None:
        fn = _EMPTY[cls] = FunctionSummary(qualname=f"{cls}.__init__", loc=SrcLoc(line=1))
    return fn


@dataclass(frozen=True)
class _Resolved:
    value: int | None = None
    text: str = ""
    from_config: bool = False
    # where a literal was written (the call that passed it), for locating findings
    loc: Loc | None = None
    # an instance or a function/class handed in: ("instance"|"ref", file it is written
    # in, the name as written there)
    ref: tuple[str, str, str] | None = None
    offset: str = ""  # added to the base seed `value`, as written
    # a dict literal handed over: its integer entries ((key, value), ...)
    items: tuple[tuple[str, int], ...] = ()


def side_of(frameworks: list[str]) -> Side | None:
    if "mindspore" in frameworks:
        return "mindformers"
    if "torch" in frameworks:
        return "megatron"
    return None


class Linker:
    def __init__(self, files: list[SourceFile]) -> None:
        self.files = [f for f in files if f.summary.error is None]
        self.by_abs = {f.abspath: f for f in self.files}
        self.index: dict[str, list[SourceFile]] = defaultdict(list)
        self._imports: dict[tuple[ImportRef, str], SourceFile | None] = {}
        self._no_training: set[tuple[str, str]] = set()
        self._resolved: dict[tuple[str, str, str], tuple[SourceFile, FunctionSummary] | None] = {}
        self._object_calls: dict[tuple[str, str, str], list] = {}
        self.last_reached: set[tuple[str, str]] = set()
        self.last_commands: dict[str, CallSite] = {}
        for f in self.files:
            for key in _module_keys(f.abspath):
                self.index[key].append(f)

    # -- modules ------------------------------------------------------------------------
    def find_module(self, dotted: str, frm: SourceFile) -> SourceFile | None:
        if not dotted or dotted.split(".")[0] in known.EXTERNAL_ROOTS:
            return None
        cands = self.index.get(dotted)
        if not cands:
            return None
        if len(cands) == 1:
            return cands[0]
        here = os.path.dirname(frm.abspath)
        return max(cands, key=lambda c: (_common_len(here, c.abspath), c.abspath == frm.abspath))

    def find_relative(self, level: int, module: str, frm: SourceFile) -> SourceFile | None:
        base = os.path.dirname(frm.abspath)
        for _ in range(level - 1):
            base = os.path.dirname(base)
        target = os.path.join(base, *module.split(".")) if module else base
        for cand in (target + ".py", os.path.join(target, "__init__.py")):
            f = self.by_abs.get(cand)
            if f is not None:
                return f
        return None

    def module_of_import(self, ref: ImportRef, frm: SourceFile) -> SourceFile | None:
        """The scanned file an import statement loads (the submodule when it names one)."""
        key = (ref, frm.abspath)
        if key not in self._imports:
            self._imports[key] = self._module_of_import(ref, frm)
        return self._imports[key]

    def _module_of_import(self, ref: ImportRef, frm: SourceFile) -> SourceFile | None:
        if ref.level == 0:
            if ref.name:
                return self.find_module(f"{ref.module}.{ref.name}", frm) or self.find_module(
                    ref.module, frm
                )
            return self.find_module(ref.module, frm)
        if ref.name:
            sub = f"{ref.module}.{ref.name}" if ref.module else ref.name
            return self.find_relative(ref.level, sub, frm) or self.find_relative(
                ref.level, ref.module, frm
            )
        return self.find_relative(ref.level, ref.module, frm)

    # -- functions ----------------------------------------------------------------------
    def locate(self, f: SourceFile, target: str, scope: str, depth: int = 0) -> Def | None:
        """What ``target`` names when written inside ``scope`` of ``f``, bound the way
        Python binds it: an enclosing function's local def, a module-level def or class,
        an import (absolute, relative, re-exported, star), a method along the bases."""
        if depth > MAX_DEPTH:
            return None
        parts = target.split(".")
        s = f.summary
        if parts[0] == "super()":
            return self._super(f, scope, parts[1:], depth)
        if not scope.startswith("<"):
            outer = scope.split(".")
            for i in range(len(outer), 0, -1):
                cand = ".".join(outer[:i] + parts)
                if cand in s.functions:
                    return Def("func", f, cand)
        ref = s.imports.get(parts[0])
        if ref is None:
            return self.lookup(f, parts, depth, imports=False)
        rest = parts[1:]
        mod = ref.module.split(".") if ref.module else []
        full = mod + ([ref.name] if ref.name else []) + rest
        lowest = 1 if ref.level == 0 else 0
        for i in range(len(full) - 1, lowest - 1, -1):
            dotted = ".".join(full[:i])
            m = (
                self.find_module(dotted, f)
                if ref.level == 0
                else self.find_relative(ref.level, dotted, f)
            )
            if m is not None and not (m is f and ".".join(full[i:]) == target):
                found = self.lookup(m, full[i:], depth + 1)
                if found is not None:
                    return found
        if ref.level == 0 and not self._own_root(ref.module):
            return Def("lib", f, ".".join(full))  # an installed library: modelled or not
        return None

    def lookup(
        self, f: SourceFile, parts: list[str], depth: int, imports: bool = True
    ) -> Def | None:
        """``parts`` defined in module ``f``: a function, a class, a method (inherited
        ones included), or a name the module imports (re-exports, star imports)."""
        s = f.summary
        name = ".".join(parts)
        if name in s.functions:
            return Def("func", f, name)
        if name in s.classes:
            return Def("class", f, name)
        if len(parts) >= 2 and ".".join(parts[:-1]) in s.classes:
            return self.method(Def("class", f, ".".join(parts[:-1])), parts[-1], depth + 1)
        if imports and parts[0] in s.imports and depth < MAX_DEPTH:
            return self.locate(f, name, "<module>", depth + 1)  # re-exported name
        for star in s.star_imports:
            m = self.module_of_import(star, f)
            if m is not None and m is not f and depth < MAX_DEPTH:
                found = self.lookup(m, parts, depth + 1)
                if found is not None:
                    return found
        return None

    def method(self, cls: Def, name: str, depth: int = 0) -> Def | None:
        """``name`` looked up on class ``cls`` along its bases, as Python's MRO would
        (depth-first, which agrees with C3 for the single-inheritance trainers seen in
        practice). A base from a library gives a "lib" Def of ``Base.name``."""
        seen: set[tuple[str, str]] = set()
        todo = [cls]
        while todo and depth <= MAX_DEPTH:
            c = todo.pop(0)
            if c.kind == "lib":
                return Def("lib", c.file, f"{c.name}.{name}")
            if (c.file.abspath, c.name) in seen:
                continue
            seen.add((c.file.abspath, c.name))
            qual = f"{c.name}.{name}"
            if qual in c.file.summary.functions:
                return Def("func", c.file, qual)
            for base in c.file.summary.bases.get(c.name, []):
                b = self.locate(c.file, base, "<module>", depth + 1)
                if b is not None and b.kind in ("class", "lib"):
                    todo.append(b)
            depth += 1
        return None

    def _super(self, f: SourceFile, scope: str, rest: list[str], depth: int) -> Def | None:
        """``super().name`` inside a method of class C: ``name`` on C's bases."""
        owner = scope.rsplit(".", 1)[0] if "." in scope else ""
        if owner not in f.summary.classes or len(rest) != 1:
            return None
        for base in f.summary.bases.get(owner, []):
            b = self.locate(f, base, "<module>", depth + 1)
            if b is not None and b.kind in ("class", "lib"):
                found = self.method(b, rest[0], depth + 1)
                if found is not None:
                    return found
        return None

    def _own_root(self, module: str) -> bool:
        """Is ``module`` (absolutely imported) the project's own code? Its top package or
        module is among the scanned files: code under the scanned roots is never a library."""
        root = module.split(".")[0]
        return bool(root) and root not in known.EXTERNAL_ROOTS and bool(self.index.get(root))

    def callable_of(self, d: Def) -> tuple[SourceFile, FunctionSummary] | Def | None:
        """What calling ``d`` runs: a function's body, a class's ``__init__`` (found
        along its bases; a class without one runs no code of its own), or a library."""
        if d.kind == "func":
            return d.file, d.file.summary.functions[d.name]
        if d.kind == "lib":
            return d
        init = self.method(d, "__init__")
        if init is None:
            return d.file, _no_code(d.name)
        if init.kind == "lib":
            return Def("lib", init.file, init.name.rsplit(".", 1)[0])  # the library class
        return init.file, init.file.summary.functions[init.name]

    def bound(
        self, f: SourceFile, fn: FunctionSummary, target: str, env: dict[str, _Resolved]
    ) -> Def | None:
        """``target`` called inside ``fn``: bound by name (:meth:`locate`), or through
        what a parameter holds (an instance or a class handed in by the caller, or its
        annotation), or through the class of ``self.attr`` (``self.fabric.x()``)."""
        d = self.locate(f, target, fn.qualname)
        if d is not None:
            return d
        head, _, rest = target.partition(".")
        r = env.get(head)
        if r is not None and r.ref is not None:
            kind, where, name = r.ref
            g = self.by_abs.get(where)
            value = self.locate(g, name, "<module>") if g is not None else None
            if value is None:
                return None
            if kind == "ref" and not rest:
                return value  # trainer_cls(config): the class handed in
            if kind == "instance" and rest and "." not in rest and value.kind in ("class", "lib"):
                return self.method(value, rest)
            return None
        if head in fn.param_types and rest and "." not in rest:
            cls = self.locate(f, fn.param_types[head], "<module>")
            return self.method(cls, rest) if cls is not None and cls.kind != "func" else None
        owner, _, meth = target.rpartition(".")
        held = f.summary.attr_types.get(owner)
        if held is not None:
            cls = self.locate(f, held, "<module>")
            return self.method(cls, meth) if cls is not None and cls.kind != "func" else None
        return None

    def resolve(
        self, f: SourceFile, target: str, scope: str, depth: int = 0
    ) -> tuple[SourceFile, FunctionSummary] | None:
        """The scanned function a call to ``target`` made inside ``scope`` of ``f`` runs."""
        d = self.locate(f, target, scope, depth)
        got = self.callable_of(d) if d is not None else None
        return got if isinstance(got, tuple) else None

    def reaches_training(self, f: SourceFile, fn: FunctionSummary) -> bool:
        """Does ``fn`` train, or call (through scanned code) something that does?

        A breadth-first search over resolved calls. When it ends without finding
        training, everything it visited is known not to reach training (their reachable
        sets are inside this one): later candidates stop there. A repository's scripts
        share most of their callees, so each function is explored about once."""
        seen = {(f.abspath, fn.qualname)}
        queue = deque([(f, fn)])
        while queue:
            g, cur = queue.popleft()
            key = (g.abspath, cur.qualname)
            if cur.trains:
                return True
            if key in self._no_training:
                continue
            for call in cur.calls:
                if call.modelled:
                    continue  # a modelled framework call: its own `trains` is on cur already
                found = self.resolve_cached(g, call.target, cur.qualname)
                if found is None:
                    found = self._launched(g, call, cur.qualname)
                for nxt_fn in [
                    *([found] if found is not None else []),
                    *self.object_calls_cached(g, call.target, cur.qualname),
                ]:
                    nxt = (nxt_fn[0].abspath, nxt_fn[1].qualname)
                    if nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt_fn)
        self._no_training |= seen
        return False

    def _launched(
        self, f: SourceFile, call: CallSite, scope: str
    ) -> tuple[SourceFile, FunctionSummary] | None:
        """The function a launcher runs (``fabric.launch(main)`` -> ``main``)."""
        d = self.locate(f, call.target, scope)
        if d is None or d.kind != "lib" or d.name not in known.LAUNCHERS:
            return None
        index = known.LAUNCHERS[d.name][0]
        a = call.args[index] if index < len(call.args) else None
        if a is None or a.kind != "ref":
            return None
        return self.resolve(f, a.text, "<module>")

    def object_calls(self, d: Def | None) -> list[tuple[SourceFile, FunctionSummary]]:
        """What calling an instance of class ``d`` runs, when the project defines it:
        ``__call__``, or a MindSpore Cell's ``construct`` (Cell.__call__ runs it). An
        object is made to be called: a loss scaler whose ``__call__`` runs the backward
        pass and the optimizer step, a TrainOneStepCell-style cell called in the loop.
        Constructing one counts as reaching them wherever the object is then called (it is
        the value that is followed, not the name it is later called by)."""
        if d is None or d.kind != "class":
            return []
        for name in ("__call__", "construct"):
            m = self.method(d, name)
            if m is not None and m.kind == "func":
                return [(m.file, m.file.summary.functions[m.name])]
        return []

    def object_calls_cached(
        self, f: SourceFile, target: str, scope: str
    ) -> list[tuple[SourceFile, FunctionSummary]]:
        key = (f.abspath, target, scope)
        if key not in self._object_calls:
            self._object_calls[key] = self.object_calls(self.locate(f, target, scope))
        return self._object_calls[key]

    def resolve_cached(
        self, f: SourceFile, target: str, scope: str
    ) -> tuple[SourceFile, FunctionSummary] | None:
        key = (f.abspath, target, scope)
        if key not in self._resolved:
            self._resolved[key] = self.resolve(f, target, scope)
        return self._resolved[key]

    def impersonates(self, f: SourceFile, target: str) -> bool:
        """Does ``target`` (a modelled framework call) resolve to a scanned package that
        only shares the framework's name?"""
        found = self.resolve(f, target, "<module>")
        if found is None:
            return False
        d = os.path.dirname(found[0].abspath)
        root = None
        while os.path.join(d, "__init__.py") in self.by_abs:
            root, d = d, os.path.dirname(d)
        if root is None:
            return False
        marker = _FRAMEWORK_MARKERS.get(os.path.basename(root))
        return marker is not None and not os.path.isfile(os.path.join(root, marker, "__init__.py"))

    # -- entry points -------------------------------------------------------------------
    def analyse(self, entry: SourceFile, command: str | None = None) -> EntryReport:
        w = _Walk(self, command=command)
        self.last_reached = w.reached
        self.last_commands = w.commands
        w.module(entry)
        s = entry.summary
        if s.main is not None:
            w.walk(entry, s.main, {}, [], 0, False)
            anchor = Loc.model_construct(path=entry.display, line=s.main.loc.line)
        else:
            anchor = Loc.model_construct(path=entry.display, line=1)
        side = side_of(s.frameworks)
        if side is None:
            sides = {side_of(self.by_abs[p].summary.frameworks) for p in w.files} - {None}
            side = sides.pop() if len(sides) == 1 else None
        return EntryReport(
            path=entry.display,
            side=side,
            anchor=anchor,
            has_main=s.main is not None,
            trains=w.trains,
            effects=w.effects,
            followed=w.visits,
            files_reached=sorted(self.by_abs[p].display for p in w.files),
            unresolved=sorted(w.unresolved)[:50],
            unscanned=sorted(w.unscanned)[:20],
            not_followed=w.not_followed,
            command=command or "",
        )


@dataclass
class _Walk:
    linker: Linker
    effects: list[ReachedEffect] = field(default_factory=list)
    files: set[str] = field(default_factory=set)
    modules_done: set[str] = field(default_factory=set)
    unresolved: set[str] = field(default_factory=set)
    unscanned: set[str] = field(default_factory=set)
    # (function, bound arguments) already walked: walking it again adds nothing new
    done: set[tuple[str, frozenset]] = field(default_factory=set)
    visits: int = 0
    trains: bool = False
    # (file, function) of every body walked, for reachability of findings
    reached: set[tuple[str, str]] = field(default_factory=set)
    # the CLI command followed (None: all of them), and the commands met on the way
    command: str | None = None
    commands: dict[str, CallSite] = field(default_factory=dict)
    not_followed: list[str] = field(default_factory=list)

    def module(self, f: SourceFile) -> None:
        """Import-time effects: the module bodies of everything ``f`` imports, then its own."""
        if f.abspath in self.modules_done:
            return
        self.modules_done.add(f.abspath)
        s = f.summary
        for ref in [*s.imports.values(), *s.star_imports]:
            m = self.linker.module_of_import(ref, f)
            if m is not None:
                self.module(m)
        if s.module is not None:
            self.walk(f, s.module, {}, [], 0, False)

    def walk(
        self,
        f: SourceFile,
        fn: FunctionSummary,
        env: dict[str, _Resolved],
        via: list[str],
        depth: int,
        cond: bool,
        stack: tuple[str, ...] = (),
        condition: str = "",
    ) -> None:
        key = f"{f.abspath}::{fn.qualname}"
        memo = (key, frozenset(env.items()))
        if memo in self.done:
            return
        self.done.add(memo)
        self.visits += 1
        self.files.add(f.abspath)
        self.reached.add((f.abspath, fn.qualname))
        self.trains = self.trains or fn.trains
        stack = (*stack, key)
        items: list[tuple[int, int, Effect | CallSite]] = [
            (e.loc.line, 0, e) for e in fn.effects
        ] + [(c.loc.line, 1, c) for c in fn.calls]
        items.sort(key=lambda t: (t[0], t[1]))
        for _, _, item in items:
            if isinstance(item, Effect):
                if item.modelled and self.linker.impersonates(f, item.modelled):
                    continue  # the project's own package: its code is followed instead
                self.effects.append(_reach(item, f, env, via, cond, condition))
                continue
            site = self._site(f, item)
            if site is not None:
                self._call(f, fn, site, env, via, depth, cond, stack, condition)

    def _site(self, f: SourceFile, item: CallSite) -> CallSite | None:
        """The call site as followed, or None: a modelled framework call, another
        command of the CLI table."""
        if item.modelled and not self.linker.impersonates(f, item.target):
            return None  # the real framework: modelled, never followed
        if self.command is not None and item.command:
            if item.command != self.command:
                return None  # another command of the CLI table
            # the command this entry runs: it always runs
            item = item.model_copy(update={"conditional": False, "condition": ""})
        if item.command:
            self.commands.setdefault(item.command, item)
        return item

    def _over_budget(self, f: SourceFile, item: CallSite, depth: int) -> bool:
        """The walk stops here (said once per stop): the budget is spent or too deep."""
        if self.visits < MAX_VISITS and depth < MAX_DEPTH:
            return False
        limit = (
            f"the budget of {MAX_VISITS} function bodies is spent"
            if self.visits >= MAX_VISITS
            else f"{MAX_DEPTH} calls deep"
        )
        self._stop(f"{item.target} at {f.display}:{item.loc.line} ({limit})")
        return True

    def _call(
        self,
        f: SourceFile,
        fn: FunctionSummary,
        item: CallSite,
        env: dict[str, _Resolved],
        via: list[str],
        depth: int,
        cond: bool,
        stack: tuple[str, ...],
        condition: str,
    ) -> None:
        """One call of ``fn``: resolved, then walked into when it is the project's own."""
        if self._over_budget(f, item, depth):
            return
        d = self.linker.bound(f, fn, item.target, env)
        self._object_called(f, item, d, via, depth, cond, stack, condition)
        got = self.linker.callable_of(d) if d is not None else None
        if isinstance(got, Def):  # a library: modelled, or nothing to say
            if not self._note_unscanned(f, item.target):
                # (the project's own code, not given: "not scanned" says so)
                self._library(f, item, got.name, env, via, cond, condition)
            return
        if got is None:
            self.unresolved.add(item.target)
            self._note_unscanned(f, item.target)
            self._unknown_helper(f, item, via, cond or item.conditional)
            return
        g, callee = got
        if f"{g.abspath}::{callee.qualname}" in stack:
            return  # recursion: already on the way here
        if g.abspath not in self.modules_done:
            self.module(g)
        how = " (passed to a call)" if item.indirect else "()"
        step = f"{item.target}{how} at {f.display}:{item.loc.line}"
        self.walk(
            g,
            callee,
            _bind(callee, item, env, f),
            [*via, step],
            depth + 1,
            cond or item.conditional,
            stack,
            item.condition or condition,  # the innermost `if` on the way
        )

    def _object_called(
        self,
        f: SourceFile,
        call: CallSite,
        d: Def | None,
        via: list[str],
        depth: int,
        cond: bool,
        stack: tuple[str, ...],
        condition: str,
    ) -> None:
        """An object of the project's own class made here: its ``__call__`` /
        ``construct`` runs where the object is called. Walked when it trains (a loss
        scaler's backward and step, a train-one-step cell), so the entry point is one."""
        for g, callee in self.linker.object_calls(d):
            key = f"{g.abspath}::{callee.qualname}"
            if key in stack or not self.linker.reaches_training(g, callee):
                continue
            step = f"{call.target}() object, called at {f.display}:{call.loc.line}"
            self.walk(
                g,
                callee,
                {},
                [*via, step],
                depth + 1,
                cond or call.conditional,
                stack,
                call.condition or condition,
            )

    def _launch(
        self,
        f: SourceFile,
        call: CallSite,
        qual: str,
        env: dict[str, _Resolved],
        via: list[str],
        cond: bool,
        condition: str,
    ) -> None:
        """``fabric.launch(main, a, b)`` runs ``main(fabric, a, b)``: follow it so bound."""
        index, first = known.LAUNCHERS[qual]
        if index >= len(call.args):
            return
        fn_arg = call.args[index]
        if fn_arg.kind == "param":
            r = env.get(fn_arg.text)
            d = self._value_of(r)
        elif fn_arg.kind == "ref":
            d = self.linker.locate(f, fn_arg.text, "<module>")
        else:
            d = None
        got = self.linker.callable_of(d) if d is not None else None
        if not isinstance(got, tuple):
            self._stop(f"{call.target} at {f.display}:{call.loc.line} (the function it runs)")
            return
        g, callee = got
        head, _, _ = call.target.rpartition(".")
        receiver = env.get(head) if head in env else None
        if receiver is None:
            receiver = _Resolved(text=head, ref=("instance", f.abspath, head))
        rest = call.model_copy(update={"args": call.args[index + 1 :]})
        bound = _bind(callee, rest, env, f, first=[receiver] if first == "receiver" else [])
        if g.abspath not in self.modules_done:
            self.module(g)
        step = f"{call.target}({fn_arg.text}, ...) at {f.display}:{call.loc.line}"
        self.walk(
            g, callee, bound, [*via, step], len(via) + 1, cond or call.conditional, (), condition
        )

    def _value_of(self, r: _Resolved | None) -> Def | None:
        if r is None or r.ref is None:
            return None
        g = self.linker.by_abs.get(r.ref[1])
        return self.linker.locate(g, r.ref[2], "<module>") if g is not None else None

    def _stop(self, what: str) -> None:
        if len(self.not_followed) < 20:
            self.not_followed.append(what)

    def _library(
        self,
        f: SourceFile,
        call: CallSite,
        qual: str,
        env: dict[str, _Resolved],
        via: list[str],
        cond: bool,
        condition: str,
    ) -> None:
        """A call into a library, found by binding (a method on an instance passed in,
        a base class's constructor): the library's model, when there is one, applies."""
        if known.is_training_call(qual, len(call.args) + len(call.kwargs)):
            self.trains = True
        if qual in known.LAUNCHERS:
            self._launch(f, call, qual, env, via, cond, condition)
            return
        init = known.FRAMEWORK_INITS.get(qual)
        if init is None:
            self._unknown_helper(f, call, via, cond or call.conditional, qual)
            return
        for e in model_effects(qual, init, call):
            self.effects.append(
                _reach(e, f, env, via, cond or call.conditional, call.condition or condition)
            )

    def _unknown_helper(
        self, f: SourceFile, call: CallSite, via: list[str], cond: bool, qual: str = ""
    ) -> None:
        """A seeding helper of a library that is neither modelled nor scanned, or a
        library's Trainer class (TRL's SFTTrainer and the like seed in their constructor,
        through transformers.Trainer): the seeding is unknown, not missing. The project's
        own code (anything under the scanned roots) is never such a library."""
        last = call.target.rsplit(".", 1)[-1]
        trainer = last.endswith("Trainer") and "." not in call.target
        if last not in SEEDISH_NAMES and not trainer:
            return
        api = qual
        if not api:
            ref = f.summary.imports.get(call.target.split(".")[0])
            if ref is None or ref.level or self.linker._own_root(ref.module):
                return  # the project's own code that was not found: "not followed" says so
            rest = call.target.split(".")[1:]
            api = ".".join([ref.module, *([ref.name] if ref.name else []), *rest])
        self.effects.append(
            ReachedEffect(
                kind="seed_helper",
                api=api,
                loc=Loc.model_construct(path=f.display, line=call.loc.line),
                enabled=None,
                conditional=cond,
                condition=call.condition,
                note=f"{api} is a library's {'Trainer' if trainer else 'seeding helper'} "
                "cfglint has no model of",
                via=via,
            )
        )

    def _note_unscanned(self, f: SourceFile, target: str) -> bool:
        """A call into an imported module that is not among the scanned files: noted,
        and True, when that module is the project's own code (it sits next to the script)."""
        ref = f.summary.imports.get(target.split(".")[0])
        if ref is None:
            return False
        root = ref.module.split(".")[0]
        if ref.level == 0:
            if (
                root in known.EXTERNAL_ROOTS
                or root in known.TORCH_ROOTS
                or root in known.MINDSPORE_ROOTS
            ):
                return False  # a library, modelled or irrelevant
            # the project's own code sits next to a script; an installed library does not.
            # Inside a package an absolute import never means a sibling file (the file
            # itself may share the library's name: megatron/core/optimizer/
            # emerging_optimizers.py imports the emerging_optimizers distribution).
            here = os.path.dirname(f.abspath)
            if os.path.isfile(os.path.join(here, "__init__.py")):
                return False
            sibling = os.path.join(here, root + ".py")
            if not (
                os.path.isdir(os.path.join(here, root))
                or (os.path.isfile(sibling) and sibling != f.abspath)
            ):
                return False
        if self.linker.module_of_import(ref, f) is None:
            self.unscanned.add("." * ref.level + ref.module if ref.module else ref.name or "")
            return True
        return False


def model_effects(qual: str, init: known.FrameworkInit, call: CallSite) -> list[Effect]:
    """The effects of a modelled library call found only when linking (a method on an
    instance handed in, a library base class's constructor), read from the call's
    arguments the way the scanner reads a call it recognises itself."""

    def arg(index: int, keyword: str) -> Arg | None:
        if keyword in call.kwargs:
            return call.kwargs[keyword]
        return call.args[index] if index < len(call.args) else None

    seed: Arg | None = None
    if init.seed and init.seed[0] == "config":
        seed = Arg(kind="config", text=init.seed[1])
    elif init.seed:
        seed = arg(init.seed[1], init.seed[2])
    at = call.loc
    out = [
        Effect(
            kind=kind,  # type: ignore[arg-type]
            api=qual,
            loc=at,
            seed=seed,
            needs_nonzero_seed=init.needs_nonzero_seed,
            conditional=init.conditional,
            note=init.note,
        )
        for kind in init.kinds
    ]
    if init.deterministic:
        out.append(
            Effect(
                kind=init.deterministic,  # type: ignore[arg-type]
                api=qual,
                loc=at,
                enabled=None,
                config_field="determinism.deterministic",
                note=init.deterministic_note,
            )
        )
    det = arg(*init.deterministic_kw) if init.deterministic_kw is not None else None
    if det is not None and det.kind == "literal" and det.value is True:
        out.append(Effect(kind="torch_deterministic", api=qual, loc=at, note=init.note))
    if init.deterministic_always:
        for kind in ("torch_deterministic", "cudnn_deterministic"):
            out.append(Effect(kind=kind, api=qual, loc=at, note=init.note))  # type: ignore[arg-type]
    return out


def _reach(
    e: Effect,
    f: SourceFile,
    env: dict[str, _Resolved],
    via: list[str],
    cond: bool,
    condition: str = "",
) -> ReachedEffect:
    r = _eval(e.seed, env) if e.seed is not None else _Resolved()
    return ReachedEffect(
        condition=e.condition or condition,
        seed_loc=r.loc if r.value is not None else None,
        kind=e.kind,
        api=e.api,
        loc=Loc.model_construct(path=f.display, line=e.loc.line),
        seed_value=r.value,
        seed_text=r.text,
        seed_offset=r.offset,
        seed_from_config=r.from_config,
        enabled=e.enabled,
        config_field=e.config_field,
        needs_nonzero_seed=e.needs_nonzero_seed,
        conditional=e.conditional or cond,
        note=e.note,
        via=via,
    )


def _eval(a: Arg | None, env: dict[str, _Resolved], where: str = "") -> _Resolved:
    r = _eval_base(a, env, where)
    if a is not None and a.offset:
        offset = f"{r.offset} + {a.offset}" if r.offset else a.offset
        text = f"{r.text} + {a.offset}" if r.text else a.offset
        return dataclasses.replace(r, offset=offset, text=text)
    return r


def _eval_base(a: Arg | None, env: dict[str, _Resolved], where: str = "") -> _Resolved:
    if a is None:
        return _Resolved()
    if a.kind in ("literal", "default"):
        v = a.value
        if isinstance(v, str) and v.strip().isdigit():
            v = int(v)  # os.environ["PYTHONHASHSEED"] = "42"
        if isinstance(v, int) and not isinstance(v, bool):
            return _Resolved(value=v, text=str(v))
        return _Resolved(text=repr(v))
    if a.kind == "dict":
        return _Resolved(text="{...}", items=tuple(tuple(i) for i in a.value))
    if a.kind == "param" and a.key:
        return _keyed(a, env.get(a.text))
    if a.kind == "param":
        return env.get(a.text, _Resolved(text=a.text))
    if a.kind == "config":
        return _Resolved(text=a.text, from_config=True)
    if a.kind in ("instance", "ref"):
        return _Resolved(text=a.text, ref=(a.kind, where, a.text) if where else None)
    last = a.text.rsplit(".", 1)[-1].lower()
    # args.seed, config.seed, cfg.training.seed: the run's configured seed
    return _Resolved(text=a.text, from_config="." in a.text and "seed" in last)


def _keyed(a: Arg, held: _Resolved | None) -> _Resolved:
    """``config["seed"]`` where the caller handed over ``{"seed": 42, ...}``: 42, located
    where the dict was written; otherwise the configured value, by name."""
    text = f'{a.text}["{a.key}"]'
    if held is not None:
        for k, v in held.items:
            if k == a.key:
                return _Resolved(value=v, text=str(v), loc=held.loc)
    return _Resolved(text=text, from_config="seed" in a.key.lower())


def _bind(
    callee: FunctionSummary,
    call: CallSite,
    env: dict[str, _Resolved],
    caller: SourceFile,
    first: list[_Resolved] | None = None,
) -> dict[str, _Resolved]:
    """The callee's parameters bound to what the call passes (``first``: values a
    launcher passes before the call's own arguments)."""
    params = list(callee.params)
    if params and params[0] in ("self", "cls") and "." in callee.qualname:
        params = params[1:]
    out: dict[str, _Resolved] = {}
    for name, r in zip(params, first or [], strict=False):
        out[name] = r
    params = params[len(first or []) :]
    here = Loc.model_construct(path=caller.display, line=call.loc.line)

    def ev(a: Arg) -> _Resolved:
        r = _eval(a, env, caller.abspath)
        if (r.value is not None or r.items) and r.loc is None:
            r = dataclasses.replace(r, loc=here)
        return r

    for name, a in zip(params, call.args, strict=False):
        out[name] = ev(a)
    for k, a in call.kwargs.items():
        if k in params:
            out[k] = ev(a)
    for name, d in callee.defaults.items():
        if name not in out:
            out[name] = _eval(d, {})
    return out


def _module_keys(abspath: str) -> list[str]:
    stem = abspath[:-3] if abspath.endswith(".py") else abspath
    parts = [p for p in stem.replace("\\", "/").split("/") if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts[-k:]) for k in range(1, min(len(parts), 8) + 1)]


def _common_len(a: str, b: str) -> int:
    try:
        return len(os.path.commonpath([a, b]))
    except ValueError:
        return 0


# -- the whole result ---------------------------------------------------------------------


def _candidates(files: list[SourceFile]) -> list[SourceFile]:
    """Scripts that may be started: a main block, or training statements at top level
    (nanoGPT's train.py has no main block), or a top level that calls the module's own
    functions (``train()`` as the last line)."""
    out = []
    for f in files:
        if f.summary.error is not None or is_test_file(f.display):
            continue
        if f.abspath.endswith("__init__.py"):
            continue
        top = f.summary.module
        if f.summary.main is not None or (
            top is not None and (top.trains or top.gradients or _calls_own(f, top))
        ):
            out.append(f)
    return out


def _calls_own(f: SourceFile, top: FunctionSummary) -> bool:
    """Does the module's top level call a function or class the module itself defines
    (a script without a main block whose last line is ``train()``)? Whether that call
    trains is then decided by following it, like a main block's calls."""
    own = f.summary.functions.keys() | set(f.summary.classes)
    return any(c.target.split(".")[0] in own for c in top.calls)


def _matches(f: SourceFile, hint: str) -> bool:
    for p in (f.display.replace("\\", "/"), f.abspath.replace("\\", "/")):
        if p == hint or p.endswith("/" + hint):
            return True
    return os.path.basename(f.display) == os.path.basename(hint)


def _framework_internal(f: SourceFile, by_abs: dict[str, SourceFile]) -> bool:
    """Inside a framework's own package (megatron/, mindformers/, ...)."""
    d = os.path.dirname(f.abspath)
    while True:
        parent = os.path.dirname(d)
        if parent == d:
            return False
        if (
            os.path.basename(d) in known.FRAMEWORK_PACKAGES
            and os.path.join(d, "__init__.py") in by_abs
        ):
            return True
        d = parent


def is_test_file(path: str) -> bool:
    """Test suites build throw-away optimizers and layers: not the training job's code."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    return any(p in ("tests", "test", "unit_tests", "testing") for p in parts[:-1])


def choose_entries(
    linker: Linker,
    hints: list[str],
    reached: set[tuple[str, str]] | None = None,
) -> list[EntryReport]:
    """Entry points, analysed. A script the launch script starts (``hints``) or a file
    named on the command line is one; the folders given are only where reached code
    lives. Without either, a script is an entry point when it trains: it reaches an
    optimizer step, a hand-written parameter update or a framework training call
    (converters, preprocessors and tokenizer trainers do not; nor do gradient checks and
    kernel self-tests, whose backward pass updates nothing), whatever its name."""
    reached = reached if reached is not None else set()
    given = _given_entries(linker.files, hints)
    if not given:
        return _training_entries(linker, reached)
    out = []
    for f in given:
        out.append(linker.analyse(f))
        reached.update(linker.last_reached)  # (read before the next analysis replaces it)
    return out


def _given_entries(files: list[SourceFile], hints: list[str]) -> list[SourceFile]:
    """The scripts the launch script starts (``hints``), else the files named on the
    command line; none when neither names a scanned file."""
    norm = [h.replace("\\", "/").lstrip("./") for h in hints if h]
    hit = [f for f in files if any(_matches(f, h) for h in norm)] if norm else []
    return hit or [f for f in files if f.explicit]


def _training_entries(linker: Linker, reached: set[tuple[str, str]]) -> list[EntryReport]:
    """Every script that can be started and trains (each command of a CLI table that
    does, on its own)."""
    out = []
    for f in _candidates(linker.files):
        s = f.summary
        starts = [x for x in (s.main, s.module) if x is not None]
        if any(linker.reaches_training(f, x) for x in starts):
            report = linker.analyse(f)
            if linker.last_commands:
                out.extend(_commands(linker, f, reached))
            elif report.trains:
                out.append(report)
                reached.update(linker.last_reached)
    return out


def _no_entry_reason(linker: Linker) -> str:
    """Which criterion for an entry point no module met, naming the modules it was tried on."""
    runnable = _candidates(linker.files)
    if not runnable:
        return (
            'no module can be started: none has an `if __name__ == "__main__":` block or '
            "training statements at top level"
        )
    names = ", ".join(f.display for f in runnable[:3]) + (", ..." if len(runnable) > 3 else "")
    return (
        f"{len(runnable)} module{'s' if len(runnable) != 1 else ''} can be started ({names}), "
        "but none reaches an optimizer step, a parameter update or a framework training call "
        "through the scanned code (a backward pass alone updates nothing)"
    )


def _commands(linker: Linker, f: SourceFile, reached: set[tuple[str, str]]) -> list[EntryReport]:
    """A script that hands a table of commands to a CLI dispatcher (``python -m pkg
    pretrain`` -> jsonargparse.CLI({"pretrain": pretrain.setup, ...})): each command that
    trains is an entry point of its own; generation, chat and conversion commands are not."""
    out = []
    for command in sorted(linker.last_commands):
        report = linker.analyse(f, command)
        if report.trains:
            out.append(report)
            reached.update(linker.last_reached)
    return out


def link(files: list[SourceFile], hints: list[str]) -> ScanResult:
    linker = Linker(files)
    ok = linker.files
    sides = {f.display: side_of(f.summary.frameworks) for f in ok}
    result = ScanResult(files=[f.display for f in files], sides=sides)
    reached_fns: set[tuple[str, str]] = set()
    result.entries = choose_entries(linker, hints, reached_fns)
    if not result.entries:
        result.no_entry = _no_entry_reason(linker)
    # code no entry point reaches is not the training job's: its literals are not reported
    reached = reached_fns if result.entries else None
    entry_paths = {e.path for e in result.entries}
    for f in ok:
        if is_test_file(f.display) and not f.explicit:
            continue
        side = sides[f.display]
        for b in f.summary.backwards:
            result.backwards.append(SourceBackward(path=f.display, side=side, site=b))
        result.backwards.extend(_backward_helpers(linker, f, sides))
        # an entry script's own layers are the user's, reached or not
        own = f.display in entry_paths
        for d in f.summary.dropouts:
            if reached is None or own or (f.abspath, d.function) in reached:
                result.dropouts.append(SourceDropout(path=f.display, side=side, site=d))
        if _framework_internal(f, linker.by_abs):
            continue
        for site in f.summary.decays:
            resolved = _resolve_decay(linker, f, site)
            if resolved is not None:
                resolved = _own_optimizer(linker, f, resolved)
                result.decays.append(resolved.model_copy(update={"side": side}))
        result.decays.extend(d.model_copy(update={"side": side}) for d in _helper_decays(linker, f))
    return result


def _optimizer_class(linker: Linker, f: SourceFile, site: DecaySite) -> Def | None:
    """The class an optimizer construction names, when the project defines it."""
    d = linker.locate(f, site.optimizer, site.function)
    if d is None and "." in site.optimizer:
        module, _, name = site.optimizer.rpartition(".")
        m = linker.find_module(module, f)
        d = linker.lookup(m, [name], 0) if m is not None else None
    return d if d is not None and d.kind == "class" else None


def _own_optimizer(linker: Linker, f: SourceFile, d: SourceDecay) -> SourceDecay:
    """An optimizer class of the repository's own (moco-v3's LARS, a
    torch.optim.Optimizer subclass) decays what its ``step()`` decays, not what torch's
    optimizers would: a shape test there (``if p.ndim > 1``) skips 1-D parameters;
    without one read, which parameters it decays is not decided. Only a plain parameter
    list is re-judged: hand-built groups say what they say whoever applies them."""
    if d.site.policy != "decay_all":
        return d  # groups built by the caller: they decide, whichever class takes them
    cls = _optimizer_class(linker, f, d.site)
    if cls is None:
        return d
    step = linker.method(cls, "step")
    if step is None or step.kind != "func":
        step = linker.method(cls, "construct")  # a MindSpore Optimizer (a Cell)
    where = f"{cls.file.display}"
    site = d.site
    if step is None or step.kind != "func":
        reason = (
            f"{site.optimizer} is the repository's own optimizer ({where}) and its step() "
            "is not in the scanned code: which parameters it decays is not decided"
        )
        update = {"policy": None, "params_text": reason, "detail": reason}
        return d.model_copy(update={"site": site.model_copy(update=update)})
    fn = step.file.summary.functions[step.name]
    g = fn.groups
    if g is not None and g.shape:
        ev = g.shape[0]
        update = {
            "policy": "exclude_1d",
            "names": [],
            "evidence": list(g.shape),
            "detail": f"{step.name}() decays only the parameters passing `{ev.text}`",
        }
        return d.model_copy(
            update={"site": site.model_copy(update=update), "policy_path": step.file.display}
        )
    reason = (
        f"{site.optimizer} is the repository's own optimizer; its {step.name}() "
        f"({step.file.display}:{fn.loc.line}) tests no parameter shape or name that cfglint "
        "reads: which parameters it decays is not decided"
    )
    update = {"policy": None, "params_text": reason, "detail": reason}
    return d.model_copy(update={"site": site.model_copy(update=update)})


def _helper_decays(linker: Linker, f: SourceFile) -> list[SourceDecay]:
    """Calls handing every parameter of a model to a helper that builds the optimizer over
    that argument (``instantiate_torch_optimizer(optimizer, model.parameters())``): the
    call decays every parameter, whatever class the helper picks."""
    out: list[SourceDecay] = []
    s = f.summary
    fns = [x for x in (s.module, s.main) if x is not None] + list(s.functions.values())
    for fn in fns:
        for call in fn.calls:
            if not call.all_params:
                continue
            found = linker.resolve(f, call.target, fn.qualname)
            if found is None or found[1].builds is None:
                continue
            g, helper = found
            params = [p for p in helper.params if p not in ("self", "cls")]
            name = helper.builds.params_text
            slot = str(params.index(name)) if name in params else ""
            if slot not in call.all_params and name not in call.all_params:
                continue
            built = helper.builds
            site = built.model_copy(
                update={
                    "loc": call.loc,
                    "function": fn.qualname,
                    "policy": "decay_all",
                    "params_text": f"every parameter, handed to {call.target}()",
                    "detail": f"{helper.qualname}() builds {built.optimizer} over its "
                    f"{name!r} argument (at {g.display}:{built.loc.line})",
                }
            )
            out.append(SourceDecay(path=f.display, site=site, policy_path=g.display))
    return out


def _backward_helpers(
    linker: Linker,
    f: SourceFile,
    sides: dict[str, Side | None],
) -> list[SourceBackward]:
    """Transposed matmuls in helpers a custom backward calls (Megatron's weight-gradient
    GEMM, LoRA backward helpers), across the scanned files, up to 3 calls deep."""
    out: list[SourceBackward] = []
    seen: set[tuple[str, int]] = set()
    for qual in f.summary.backward_fns:
        fn = f.summary.functions.get(qual)
        if fn is None:
            continue
        todo = [(f, fn, 0)]
        visited = {(f.abspath, qual)}
        while todo:
            g, cur, depth = todo.pop()
            for call in cur.calls:
                found = linker.resolve(g, call.target, cur.qualname)
                if found is None or depth >= 3:
                    continue
                h, callee = found
                if (h.abspath, callee.qualname) in visited:
                    continue
                visited.add((h.abspath, callee.qualname))
                for tm in callee.tmatmuls:
                    if (h.display, tm.loc.line) in seen:
                        continue
                    seen.add((h.display, tm.loc.line))
                    site = tm.model_copy(
                        update={
                            "function": f"{callee.qualname} (called from {qual} at "
                            f"{g.display}:{call.loc.line})"
                        }
                    )
                    out.append(SourceBackward(path=h.display, side=sides.get(h.display), site=site))
                todo.append((h, callee, depth + 1))
    return out


def _resolve_decay(linker: Linker, f: SourceFile, site) -> SourceDecay | None:  # type: ignore[no-untyped-def]
    if site.policy is not None:
        return SourceDecay(path=f.display, site=site)
    if site.params_from is None:
        return None
    found = linker.resolve(f, site.params_from, site.function)
    if found is None or found[1].groups is None:
        return None
    g, fn = found
    policy, names, evidence, detail = classify(fn.groups)  # type: ignore[arg-type]
    if policy is None:
        return None
    site = site.model_copy(
        update={
            "policy": policy,
            "names": names,
            "evidence": evidence,
            "detail": f"{detail} in {fn.qualname}()",
        }
    )
    return SourceDecay(path=f.display, site=site, policy_path=g.display)
