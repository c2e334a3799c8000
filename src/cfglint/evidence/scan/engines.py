"""Objects that apply the update, recognised by the value that made them, not by name.

``model, _, _, _ = deepspeed.initialize(...)`` then ``model.backward(loss); model.step()``
trains though nothing is called "optimizer" or "engine". One :class:`Engines` per function
being walked records which local names hold such an object:

- the result of a library factory that builds a training engine (known.ENGINE_FACTORIES),
  or of one that hands back what it was given (``accelerator.prepare``, ``fabric.setup``)
  for the arguments that were optimizers;
- an optimizer constructed here (``g_opt = torch.optim.Adam(...)``);
- the engine protocol, whatever the value came from (a parameter, an attribute): one
  receiver is handed the loss in ``.backward(loss)`` and has ``.step()`` called in the
  same function. A tensor's ``.backward()`` has no ``.step()``; an accelerator's or a
  fabric's ``.backward(loss)`` has no ``.step()`` either.

Both walks (the triage's call graph and the full pass) use it, so they agree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from cfglint.evidence.scan import known


def dotted(node: ast.AST | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class Engines:
    """Which names of one function hold an object whose ``.step()`` is an update."""

    __slots__ = ("backward", "held", "stepped")

    def __init__(self) -> None:
        self.held: set[str] = set()
        self.backward: set[str] = set()  # receivers of .backward(<the loss>)
        self.stepped: set[str] = set()  # receivers of .step()

    def _updater(self, node: ast.expr | None) -> bool:
        """Does this expression hold an optimizer or an engine?"""
        if node is None:
            return False
        name = dotted(node)
        if name is not None:
            return name in self.held
        if isinstance(node, ast.Call):
            func = dotted(node.func)
            return func is not None and func.rsplit(".", 1)[-1] in known.OPTIMIZER_NAMES
        return False

    def assign(
        self, target: ast.expr, value: ast.expr, qualify: Callable[[str], str | None]
    ) -> None:
        """``target = value``: what the target names now hold (the value is read
        before the names are rebound: ``g, g_opt = acc.prepare(g, g_opt)``)."""
        names = _targets(target)
        now = [n for n in self._holders(names, value, qualify) if n is not None]
        self.held.difference_update(n for n in names if n is not None)
        self.held.update(now)

    def _holders(
        self, names: list[str | None], value: ast.expr, qualify: Callable[[str], str | None]
    ) -> list[str | None]:
        """Which of ``names`` the value makes hold an optimizer or an engine."""
        single = len(names) == 1
        if not isinstance(value, ast.Call):
            return names if single and self._updater(value) else []
        func = dotted(value.func)
        qual = qualify(func) if func is not None else None
        if qual in known.ENGINE_FACTORIES:
            positions = known.ENGINE_FACTORIES[qual]
            return names if positions is None else [names[i] for i in positions if i < len(names)]
        if qual in known.PASS_THROUGH_FACTORIES:
            args = [a for a in value.args if not isinstance(a, ast.Starred)]
            return [n for n, a in zip(names, args, strict=False) if self._updater(a)]
        return names if single and self._updater(value) else []  # g_opt = torch.optim.Adam()

    def call(self, node: ast.Call) -> bool:
        """Is this call an update on an object recognised by value (or by protocol)?"""
        f = node.func
        if not isinstance(f, ast.Attribute):
            return False
        recv = dotted(f.value)
        if recv is None:
            return False
        if f.attr in known.ENGINE_UPDATES:
            if recv in self.held:
                return True
            if f.attr == "step":
                self.stepped.add(recv)
                return recv in self.backward
        elif f.attr == "backward" and (node.args or node.keywords):
            self.backward.add(recv)
            return recv in self.stepped
        return False


def _targets(target: ast.expr) -> list[str | None]:
    """The dotted names an assignment binds, by position (None: not a name)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        out: list[str | None] = []
        for el in target.elts:
            if isinstance(el, ast.Starred):
                return [*out, None]  # positions after a starred target are unknown
            out.append(dotted(el))
        return out
    return [dotted(target)]
