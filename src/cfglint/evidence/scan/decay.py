"""Weight-decay grouping: optimizer constructions and how their parameter lists are built."""

from __future__ import annotations

import ast

from cfglint.evidence.scan import known
from cfglint.evidence.scan.common import Frame, call_arg, dotted, literal, n_args
from cfglint.evidence.scan.model import Arg, DecaySite, Evidence, SrcLoc
from cfglint.evidence.scan.policy import MINDSPORE_UNGROUPED, classify
from cfglint.evidence.scan.seed_helpers import TRAINER_GROUPINGS, TrainerGrouping

DECAY_LIST_HINTS = ("decay", "skip", "exclude")


class DecayMixin:
    """Part of the scanner's visitor (see :mod:`scanner`): weight-decay grouping."""

    def _names_lead_to_decay(self) -> bool:
        """Inside an `if` whose body adds to the decayed set (or tests module types): its
        name tests say what *is* decayed, not what is skipped."""
        fn = self.cur
        return bool(fn.branches) and fn.branches[-1] in ("decay", "typed")

    def _branch_kind(self, body: list[ast.stmt]) -> str | None:
        """ "no_decay" / "decay" when an `if` body puts the parameter into such a set."""
        for stmt in body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in ("add", "append", "extend", "update")
                and isinstance(call.func.value, ast.Name)
            ):
                n = call.func.value.id.lower()
                if "decay" in n:
                    return "no_decay" if n.startswith("no") or "no_" in n else "decay"
        return None

    def _module_type_test(self, test: ast.expr, kind: str | None, line: int) -> None:
        """``isinstance(m, blacklist_weight_modules)`` leading to the no-decay set."""
        fn = self.cur
        found = False
        for call in _isinstance_calls(test):
            types = self._tested_types(call.args[1])
            if not types:
                continue
            found = True
            if kind == "no_decay":
                fn.groups.module_types.extend(t for t in types if t not in fn.groups.module_types)
                fn.groups.module_evidence.append(
                    Evidence(loc=SrcLoc(line=line), text=self.code(test))
                )
        if found and fn.branches:
            fn.branches[-1] = "typed"

    def _tested_types(self, cls: ast.expr) -> list[str] | None:
        """The class names an ``isinstance`` tests: a tuple written there, or a tuple
        assigned to the name given."""
        types = None
        if isinstance(cls, ast.Name):
            for f in (self.cur, self.top):
                types = f.type_tuples.get(cls.id) or types
        elif isinstance(cls, ast.Tuple):
            names = [dotted(el) for el in cls.elts]
            types = [n.rsplit(".", 1)[-1] for n in names if n]
        return types

    def visit_Compare(self, node: ast.Compare) -> None:
        fn = self.cur
        if self._names_lead_to_decay():
            return
        line = node.lineno
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            if isinstance(op, (ast.In, ast.NotIn)):
                names: list[str] | None = None
                if self._name_subject(right):
                    lit = literal(left)
                    if isinstance(lit, str):
                        names = [lit]
                    elif isinstance(left, ast.Name):
                        names = self._str_list(fn.iter_of.get(left.id))
                elif self._name_subject(left) and isinstance(right, ast.Name):
                    names = self._str_list(right.id)
                if names:
                    fn.groups.names.extend(names)
                    fn.groups.name_evidence.append(
                        Evidence(loc=SrcLoc(line=line), text=self.code(node))
                    )
            elif _is_shape_test(left, right):
                fn.groups.shape.append(Evidence(loc=SrcLoc(line=line), text=self.code(node)))
            left = right

    def _name_subject(self, node: ast.expr) -> bool:
        """Does this expression hold a parameter's name?"""
        if isinstance(node, ast.Attribute) and node.attr == "name":
            return True
        return isinstance(node, ast.Name) and node.id in self.cur.name_vars

    def _str_list(self, name: str | None) -> list[str] | None:
        if name is None:
            return None
        for fn in (self.cur, self.top):
            if name in fn.str_lists:
                return fn.str_lists[name]
        return None

    def visit_Dict(self, node: ast.Dict) -> None:
        keys: dict[str, ast.expr] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is not None:
                k = literal(key)
                if isinstance(k, str):
                    keys[k] = value
        if "params" in keys and "weight_decay" in keys:
            fn = self.cur
            wd = self.arg(keys["weight_decay"], keep_text=True) or Arg(kind="expr")
            fn.groups.group_decays.append(wd)
            fn.groups.group_evidence.append(
                Evidence(loc=SrcLoc(line=node.lineno), text=self.code(node))
            )

    def _finish_fn(self, fn: Frame) -> None:
        if not fn.groups.empty():
            fn.summary.groups = fn.groups
        for node, line, qual in fn.optimizers:
            self.decays.extend(self._decay_sites(fn, node, line, qual))

    def _trainer_sites(
        self, fn: Frame, node: ast.Call, line: int, qual: str, g: TrainerGrouping
    ) -> list[DecaySite]:
        """A library trainer's own optimizer (data/library_models.yaml optimizer_groups)."""
        if any(call_arg(node, 99, kw) is not None for kw in g.replaced_by):
            return []  # handed a ready optimizer: that one is scanned where it is built
        wd, why = self._trainer_decay(fn, node, g)
        name = qual.rsplit(".", 1)[-1]
        site = DecaySite(
            loc=SrcLoc(line=line),
            function=fn.summary.qualname,
            optimizer=qual,
            framework="torch",
            params_text=f"grouped by {name}.create_optimizer",
            weight_decay=wd,
            policy=g.policy,  # type: ignore[arg-type]
            names=list(g.excluded),
            detail=why or f"{name} groups the parameters itself ({g.source.split(':')[0]})",
            library=True,
        )
        return [site]

    def _trainer_decay(
        self, fn: Frame, node: ast.Call, g: TrainerGrouping
    ) -> tuple[Arg | None, str]:
        """The trainer's weight_decay as read from its config object, or why it was not."""
        if any(k.arg is None for k in node.keywords):
            return None, "the trainer's arguments pass through **kwargs"
        cfg = call_arg(node, *g.config)
        if cfg is None:
            return Arg(kind="default", value=g.default), ""
        if isinstance(cfg, ast.Name):
            built = fn.assign_all.get(cfg.id) or self.top.assign_all.get(cfg.id) or []
            if len(built) != 1:
                return None, f"{g.field} of `{cfg.id}`, not built once in this file"
            cfg = built[0][0]
        _, cls = self.qualify_name(dotted(cfg.func)) if isinstance(cfg, ast.Call) else (None, None)
        if not isinstance(cfg, ast.Call) or cls not in g.configs:
            return None, f"{g.field} of `{self.code(cfg)}`, a config cfglint cannot read"
        if any(k.arg is None for k in cfg.keywords):
            return None, f"{cls}'s arguments pass through **kwargs"
        for kw in g.unmodelled:
            if call_arg(cfg, 99, kw) is not None:
                return None, f"{kw}= is given: its optimizer settings may replace {g.field}"
        value = call_arg(cfg, 99, g.field)
        if value is None:
            return Arg(kind="default", value=g.default), ""
        wd = self.arg(value, keep_text=True) or Arg(kind="expr", text=self.code(value))
        if wd.kind not in ("literal", "default"):
            return wd, f"{g.field}={self.code(value)} is not a value cfglint can read"
        return wd, ""

    def _decay_sites(self, fn: Frame, node: ast.Call, line: int, qual: str) -> list[DecaySite]:
        grouping = TRAINER_GROUPINGS.get(qual)
        if grouping is not None:
            return self._trainer_sites(fn, node, line, qual, grouping)
        params = call_arg(node, 0, "params")
        if params is None:
            return []
        framework = _framework_of(qual, self.roots)
        factory = known.OPTIMIZER_FACTORIES.get(qual)
        site = DecaySite(
            loc=SrcLoc(line=line),
            function=fn.summary.qualname,
            optimizer=qual,
            framework=framework,
            params_text=self.code(params),
            weight_decay=self._weight_decay(node, qual, factory),  # type: ignore[arg-type]
        )
        if factory is not None:
            return [_library_site(node, site, qual, factory)]
        expr = params
        if isinstance(expr, ast.Name):
            decided = self._sites_of_name(fn, site, expr, line, qual, framework)
            if decided is not None:
                return decided
            expr = fn.assigns.get(expr.id, expr)
        one = self._decay_policy(fn, site, expr, line, qual, framework)
        return [one] if one is not None else []

    def _weight_decay(
        self, node: ast.Call, qual: str, factory: tuple[str, str, float] | None
    ) -> Arg | None:
        """The optimizer's weight decay: the argument, else the library's default; None
        when neither is known (never taken for "decays everything")."""
        wd_node = call_arg(node, 99, "weight_decay")
        if wd_node is not None:
            return self.arg(wd_node, keep_text=True)
        if factory is not None:
            return Arg(kind="default", value=factory[2])
        if qual in known.OPTIMIZER_WD_DEFAULT:
            return Arg(kind="default", value=known.OPTIMIZER_WD_DEFAULT[qual])
        return None

    def _sites_of_name(
        self,
        fn: Frame,
        site: DecaySite,
        name: ast.Name,
        line: int,
        qual: str,
        framework: str,
    ) -> list[DecaySite] | None:
        """The sites of parameters given by name: a helper's parameter (its callers
        decide), a name assigned differently in branches (one site per branch) or under
        one condition; None when the name's one value decides as if written here."""
        if name.id in fn.summary.params and name.id not in fn.assign_all:
            # a helper: what its callers pass decides (linked per call). A parameter
            # the helper rebinds first (mindface's create_optimizer: `params =
            # init_group_params(params, wd)` when filtering) is decided here instead
            fn.summary.builds = site.model_copy(update={"params_text": name.id})
            return []
        values = fn.assign_all.get(name.id, [])
        if len(values) > 1:
            # assigned in branches: one site per branch, each with its condition
            out = []
            for value, cond in values:
                one = self._decay_policy(
                    fn, site.model_copy(deep=True), value, line, qual, framework
                )
                if one is not None:
                    if cond:
                        one.detail = f"{one.detail} (when {cond})"
                    out.append(one)
            if len({s.policy for s in out}) > 1:
                return out
        expr = fn.assigns.get(name.id, name)
        if len(values) == 1 and values[0][1] and expr is values[0][0]:
            one = self._decay_policy(fn, site, expr, line, qual, framework)
            if one is not None:
                one.detail = f"{one.detail} (when {values[0][1]})"
            return [one] if one is not None else []
        return None

    def _decay_policy(
        self,
        fn: Frame,
        site: DecaySite,
        expr: ast.expr,
        line: int,
        qual: str,
        framework: str,
    ) -> DecaySite | None:
        if all_params(expr):
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
        if isinstance(expr, ast.Call):
            target = dotted(expr.func)
            _, q = self.qualify_name(target)
            if q in known.PARAM_GROUP_FACTORIES:
                site.policy = known.PARAM_GROUP_FACTORIES[q]  # type: ignore[assignment]
                site.detail = f"groups from {q}"
                return site
            if target and target not in known.BUILTIN_CALLS:
                site.params_from = self._callsite(expr, target, line).target
                return site
        policy, names, evidence, detail = classify(fn.groups)
        if policy is None:
            return None
        site.policy = policy  # type: ignore[assignment]
        site.names, site.evidence, site.detail = names, evidence, detail
        return site


def _library_site(
    node: ast.Call, site: DecaySite, qual: str, factory: tuple[str, str, float]
) -> DecaySite:
    """An optimizer factory that groups the parameters itself (unless told not to)."""
    policy, off_kw, _ = factory
    site.library = True
    off = call_arg(node, 99, off_kw)
    if off is not None and literal(off) is False:
        site.policy, site.detail = "decay_all", f"{off_kw}=False: every parameter decayed"
    else:
        site.policy = policy  # type: ignore[assignment]
        site.detail = f"{qual.rsplit('.', 1)[-1]} groups the parameters itself"
    return site


def _isinstance_calls(test: ast.expr) -> list[ast.Call]:
    """The two-argument ``isinstance(x, types)`` calls inside a condition (through
    ``and`` / ``or`` / ``not``)."""
    out: list[ast.Call] = []
    stack: list[ast.expr] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.BoolOp):
            stack += node.values
        elif isinstance(node, ast.UnaryOp):
            stack.append(node.operand)
        elif (
            isinstance(node, ast.Call)
            and dotted(node.func) == "isinstance"
            and n_args(node) == 2
            and len(node.args) == 2
        ):
            out.append(node)
    return out


def _shape_expr(node: ast.expr) -> bool:
    """``p.dim()``, ``p.ndimension()``, ``p.ndim``, ``len(p.shape)``, ``len(p.size())``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "ndim"
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("dim", "ndimension") and not n_args(node):
            return True
        if isinstance(f, ast.Name) and f.id == "len" and n_args(node) == 1 and node.args:
            inner = node.args[0]
            if isinstance(inner, ast.Attribute) and inner.attr == "shape":
                return True
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
                return inner.func.attr == "size"
    return False


def _is_shape_test(left: ast.expr, right: ast.expr) -> bool:
    return any(_shape_expr(a) and literal(b) in (1, 2) for a, b in ((left, right), (right, left)))


def all_params(node: ast.expr) -> bool:
    """``model.parameters()`` and the wrappers that keep every parameter."""
    if isinstance(node, ast.Call):
        return _all_params_call(node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        # list(backbone.parameters()) + list(head.parameters()): every parameter of both
        return all_params(node.left) and all_params(node.right)
    if isinstance(node, ast.List) and node.elts:
        # [*backbone.parameters(), *head.parameters()]
        return all(isinstance(e, ast.Starred) and all_params(e.value) for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        if len(node.generators) != 1:
            return False
        comp = node.generators[0]
        only_grad = all(_requires_grad_test(i) for i in comp.ifs)
        return only_grad and all_params(comp.iter)
    return False


def _all_params_call(node: ast.Call) -> bool:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in known.ALL_PARAMS_METHODS:
        return True
    name = dotted(func)
    if name in ("list", "filter", "tuple") and node.args and not node.keywords:
        # filter(lambda p: p.requires_grad, model.parameters()) keeps every trainable one
        return all_params(node.args[-1])
    if name in ("itertools.chain", "chain"):
        return bool(node.args) and all(all_params(a) for a in node.args)
    return False


def _requires_grad_test(test: ast.expr) -> bool:
    return isinstance(test, ast.Attribute) and test.attr == "requires_grad"


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
