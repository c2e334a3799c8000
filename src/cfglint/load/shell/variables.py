"""Variables: assignments, arrays, ``+=``, ``export``/``declare``/``unset``, and how values
from sibling branches are merged.
"""

from __future__ import annotations

from tree_sitter import Node

from cfglint.load.shell.pieces import (
    IFS_CHAR,
    INT_RE,
    MAX_VIA,
    NAME_RE,
    TOO_LARGE,
    VALUE_LIMIT,
    Ctx,
    UnknownValue,
    Value,
    ValueTooLarge,
    Var,
    first_unknown,
    known_tail,
    merge_positions,
    pieces_size,
    split_words,
    storable,
    template_of,
    word_problem,
)
from cfglint.load.shell.words import Pos, Word
from cfglint.model.lazy_re import compile_on_use

_WORD_RE = compile_on_use(r"[^ \t\n]+")


class Variables:
    """Variables: assignments, arrays, ``+=``, ``export``/``declare``/``unset``, and how values
    from sibling branches are merged."""

    # -- assignments ------------------------------------------------------------------

    def assign(self, node: Node, ctx: Ctx, *, export: bool = False, integer: bool = False) -> None:
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
            except UnknownValue as exc:
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
        if sum(pieces_size(v) for v in elements.values()) > VALUE_LIMIT:
            elements, is_array = {0: (self.unknown_piece(TOO_LARGE, pos),)}, False
        self.set_var(name, elements, is_array, pos, ctx, defs=defs)
        if export:
            self.export(name)

    @staticmethod
    def _append(
        old: Var, new: dict[int, Value], new_is_array: bool
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
            problem = word_problem(pieces, patterns=False)
            if problem:
                return {0: (self.unknown_piece(problem, self.npos(node)),)}, False
            value = storable(pieces)
            if integer and not INT_RE.fullmatch("".join(p.text for p in value).strip()):
                reason = "arithmetic of a `declare -i` variable is not evaluated"
                value = (self.unknown_piece(reason, self.npos(node)),)
            return {0: value}, False
        except ValueTooLarge:
            return {0: (self.unknown_piece(TOO_LARGE, pos),)}, False
        finally:
            self._left = saved

    def array_elements(self, node: Node) -> list[Value]:
        out: list[Value] = []
        for child in node.named_children:
            if child.type == "comment":
                continue
            for word in split_words(self.expand(child, quoted=False)):
                problem = word_problem(word)
                if problem:
                    out.append((self.unknown_piece(problem, word[0].pos),))
                else:
                    out.append(storable(word))
        return out

    def set_var(
        self,
        name: str,
        elements: dict[int, Value],
        is_array: bool,
        pos: Pos,
        ctx: Ctx,
        *,
        defs: tuple[Pos, ...] | None = None,
    ) -> None:
        if ctx.cond:
            elements = {k: tuple(p.stored(cond=True) for p in v) for k, v in elements.items()}
        new = Var(elements, is_array, defs or (pos,), ctx.cond, ctx.branch, pos[0])
        old = self.vars.get(name)
        if old is not None and self._sibling_branches(old.branch, ctx.branch):
            new = self._resolve_branches(name, old, new)
        self.vars[name] = new
        if name in self.exported:
            self.env[name] = self.var_word(new)

    @staticmethod
    def _sibling_branches(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> bool:
        return any(x[0] == y[0] and x[1] != y[1] for x in a for y in b)

    def _resolve_branches(self, name: str, old: Var, new: Var) -> Var:
        """Two branches of one if/case set ``name``: keep both visible, never pick silently."""
        old_text, new_text = self._joined(old), self._joined(new)
        if old_text == new_text:
            # the same value again (14B and 32B share a width): still one of the choices
            # the earlier branches made, if they made any
            return self._chosen(new, old.alts) if old.alts else new
        alts = (*(old.alts or ((old_text, old.defs[0]),)), (new_text, new.defs[0]))
        if new_text is not None and not new_text.strip() and (old_text or "").strip():
            # `if ...; then X="--flag"; else X=""; fi`: keep the flag, marked conditional,
            # so that rules can still see it might be set.
            self.warn(
                new.line,
                f"{name} is set differently in another branch (line "
                f"{old.line}); the non-empty value from line {old.line} is used and "
                "marked conditional",
            )
            return self._chosen(old, alts)
        self.warn(
            new.line,
            f"{name} is set differently in another branch (line {old.line});"
            f" the value from line {new.line} is used and marked conditional",
        )
        return self._chosen(new, alts)

    def _chosen(self, var: Var, alts: tuple[tuple[str | None, Pos], ...]) -> Var:
        """``var`` stands for one of several branch values: remember them, by the
        positions of its pieces, so that a flag built from it knows it was a choice
        (a branch that leaves the variable empty makes the alternatives unknown: the
        flag may be absent)."""
        single = all(t and t.strip() and not IFS_CHAR.search(t.strip()) for t, _ in alts)
        keep = tuple((t.strip(), at) for t, at in alts if t) if single else ()
        for v in var.elements.values():
            for p in v:
                if p.text and not p.unknown:
                    self.branch_choices[p.pos] = keep
                    if p.exact:  # words split out of it are placed at their own columns
                        for m in _WORD_RE.finditer(p.text):
                            self.branch_choices[(p.pos[0], p.pos[1] + m.start())] = keep
        var.alts = alts
        return var

    @staticmethod
    def _joined(var: Var) -> str | None:
        pieces = [p for v in var.ordered() for p in v]
        return (
            None
            if first_unknown(pieces)
            else " ".join("".join(p.text for p in v) for v in var.ordered())
        )

    def export(self, name: str) -> None:
        self.exported.add(name)
        var = self.vars.get(name)
        if var is not None:
            self.env[name] = self.var_word(var)

    def declare(self, node: Node, ctx: Ctx) -> None:
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

    def unset(self, node: Node, ctx: Ctx) -> None:
        for c in node.named_children:
            name = self.text(c)
            if c.type not in ("variable_name", "word") or not NAME_RE.fullmatch(name):
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

    def var_word(self, var: Var) -> Word:
        values = var.ordered()
        pieces = [p for v in values for p in v]
        reason = first_unknown(pieces)
        text = None if reason else " ".join("".join(p.text for p in v) for v in values)
        at = var.defs[0]
        via = merge_positions(var.defs[1:], *(p.via for p in pieces), exclude=at)
        cond = var.cond or any(p.cond for p in pieces)
        # the known end of a value built at run time (`$PYTHONPATH:$(pwd)/Megatron-LM`):
        # enough to find the folder it names
        tail = known_tail(values[-1]) if reason and values else ""
        template = " ".join(template_of(v) for v in values) if reason else ""
        return Word(
            text,
            self.loc(at),
            tuple(self.loc(v) for v in via),
            reason,
            cond,
            tail=tail,
            template=template,
        )
