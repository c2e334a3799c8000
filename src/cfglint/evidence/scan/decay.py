"""Weight-decay grouping: optimizer constructions and how their parameter lists are built."""

from __future__ import annotations

import libcst as cst

from cfglint.evidence.scan import known
from cfglint.evidence.scan.common import Frame, call_arg, dotted, literal
from cfglint.evidence.scan.model import Arg, DecaySite, Evidence, SrcLoc
from cfglint.evidence.scan.policy import MINDSPORE_UNGROUPED, classify

DECAY_LIST_HINTS = ("decay", "skip", "exclude")


class DecayMixin:
    """Part of the scanner's visitor (see :mod:`scanner`): weight-decay grouping."""

    def _names_lead_to_decay(self) -> bool:
        """Inside an `if` whose body adds to the decayed set (or tests module types): its
        name tests say what *is* decayed, not what is skipped."""
        fn = self.cur
        return bool(fn.branches) and fn.branches[-1] in ("decay", "typed")

    def _branch_kind(self, body: cst.BaseSuite) -> str | None:
        """ "no_decay" / "decay" when an `if` body puts the parameter into such a set."""
        stmts = body.body if isinstance(body, cst.IndentedBlock) else [body]
        for stmt in stmts:
            small = (
                stmt.body
                if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite))
                else []
            )
            for sm in small:
                call = sm.value if isinstance(sm, cst.Expr) else None
                if (
                    isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value in ("add", "append", "extend", "update")
                    and isinstance(call.func.value, cst.Name)
                ):
                    n = call.func.value.value.lower()
                    if "decay" in n:
                        return "no_decay" if n.startswith("no") or "no_" in n else "decay"
        return None

    def _module_type_test(self, test: cst.BaseExpression, kind: str | None) -> None:
        """``isinstance(m, blacklist_weight_modules)`` leading to the no-decay set."""
        fn = self.cur
        found = False
        stack = [test]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.BooleanOperation):
                stack += [node.left, node.right]
            elif isinstance(node, cst.UnaryOperation):
                stack.append(node.expression)
            elif (
                isinstance(node, cst.Call)
                and dotted(node.func) == "isinstance"
                and len(node.args) == 2
            ):
                cls = node.args[1].value
                types = None
                if isinstance(cls, cst.Name):
                    for f in (fn, self.top):
                        types = f.type_tuples.get(cls.value) or types
                elif isinstance(cls, cst.Tuple):
                    names = [dotted(el.value) for el in cls.elements]
                    types = [n.rsplit(".", 1)[-1] for n in names if n]
                if types:
                    found = True
                    if kind == "no_decay":
                        fn.groups.module_types.extend(
                            t for t in types if t not in fn.groups.module_types
                        )
                        fn.groups.module_evidence.append(
                            Evidence(loc=SrcLoc(line=self.line), text=self.code(test))
                        )
        if found and fn.branches:
            fn.branches[-1] = "typed"

    def visit_Comparison(self, node: cst.Comparison) -> None:
        fn = self.cur
        if self._names_lead_to_decay():
            return
        line = self.at(node)
        left = node.left
        for ct in node.comparisons:
            right = ct.comparator
            if isinstance(ct.operator, (cst.In, cst.NotIn)):
                names: list[str] | None = None
                if self._name_subject(right):
                    lit = literal(left)
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
                k = literal(el.key)
                if isinstance(k, str):
                    keys[k] = el.value
        if "params" in keys and "weight_decay" in keys:
            fn = self.cur
            wd = self.arg(keys["weight_decay"], keep_text=True) or Arg(kind="expr")
            fn.groups.group_decays.append(wd)
            fn.groups.group_evidence.append(
                Evidence(loc=SrcLoc(line=self.at(node)), text=self.code(node))
            )

    def _finish_fn(self, fn: Frame) -> None:
        if not fn.groups.empty():
            fn.summary.groups = fn.groups
        for node, line, qual in fn.optimizers:
            self.decays.extend(self._decay_sites(fn, node, line, qual))

    def _decay_sites(self, fn: Frame, node: cst.Call, line: int, qual: str) -> list[DecaySite]:
        params = call_arg(node, 0, "params")
        if params is None:
            return []
        framework = _framework_of(qual, self.roots)
        factory = known.OPTIMIZER_FACTORIES.get(qual)
        wd_node = call_arg(node, 99, "weight_decay")
        wd: Arg | None
        if wd_node is not None:
            wd = self.arg(wd_node, keep_text=True)
        elif factory is not None:
            wd = Arg(kind="default", value=factory[2])
        elif qual in known.OPTIMIZER_WD_DEFAULT:
            wd = Arg(kind="default", value=known.OPTIMIZER_WD_DEFAULT[qual])
        else:
            wd = None  # unknown default: never taken for "decays everything"
        site = DecaySite(
            loc=SrcLoc(line=line),
            function=fn.summary.qualname,
            optimizer=qual,
            framework=framework,
            params_text=self.code(params),
            weight_decay=wd,  # type: ignore[arg-type]
        )
        if factory is not None:
            policy, off_kw, _ = factory
            off = call_arg(node, 99, off_kw)
            if off is not None and literal(off) is False:
                site.policy, site.detail = "decay_all", f"{off_kw}=False: every parameter decayed"
            else:
                site.policy = policy  # type: ignore[assignment]
                site.detail = f"{qual.rsplit('.', 1)[-1]} groups the parameters itself"
            return [site]
        expr = params
        if isinstance(expr, cst.Name):
            if expr.value in fn.summary.params:
                # a helper: what its callers pass decides (linked per call)
                fn.summary.builds = site.model_copy(update={"params_text": expr.value})
                return []
            values = fn.assign_all.get(expr.value, [])
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
            expr = fn.assigns.get(expr.value, expr)
        one = self._decay_policy(fn, site, expr, line, qual, framework)
        return [one] if one is not None else []

    def _decay_policy(
        self,
        fn: Frame,
        site: DecaySite,
        expr: cst.BaseExpression,
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
        if isinstance(expr, cst.Call):
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
    return any(_shape_expr(a) and literal(b) in (1, 2) for a, b in ((left, right), (right, left)))


def all_params(node: cst.BaseExpression) -> bool:
    """``model.parameters()`` and the wrappers that keep every parameter."""
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in known.ALL_PARAMS_METHODS:
            return True
        if dotted(func) in ("list", "filter", "tuple") and node.args:
            # filter(lambda p: p.requires_grad, model.parameters()) keeps every trainable one
            return all_params(node.args[-1].value)
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
        comp = node.for_in
        only_grad = all(_requires_grad_test(i.test) for i in comp.ifs)
        return comp.inner_for_in is None and only_grad and all_params(comp.iter)
    return False


def _requires_grad_test(test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.Attribute) and test.attr.value == "requires_grad"


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
