"""Seeding and deterministic switches: what a call or an assignment does to randomness."""

from __future__ import annotations

import ast

from cfglint.evidence.scan import known
from cfglint.evidence.scan.common import call_arg, literal
from cfglint.evidence.scan.model import Arg

# Framework names a project may reuse for its own package (gpt-neox's `megatron/`): the
# model is kept with the call, and the linker follows the call instead when the name
# resolves to such a package.
_IMPERSONATED = ("megatron.",)


class SeedingMixin:
    """Part of the scanner's visitor (see :mod:`scanner`): seeding and determinism."""

    def _assign_switch(self, target: ast.expr, value: ast.expr, line: int) -> None:
        """``os.environ["PYTHONHASHSEED"] = ...`` and ``torch.backends.cudnn.* = ...``."""
        if isinstance(target, ast.Subscript):
            _, q = self.qualify(target.value)
            if q == "os.environ" and literal(target.slice) == "PYTHONHASHSEED":
                self.effect("pythonhashseed", "os.environ", line, seed=self.arg(value))
        elif isinstance(target, ast.Attribute):
            _, q = self.qualify(target)
            kind = known.ATTR_SWITCHES.get(q or "")
            if kind is not None:
                v = literal(value)
                self.effect(kind, q, line, enabled=v if isinstance(v, bool) else None)

    def _known_call(self, node: ast.Call, qual: str, line: int, raw: str = "") -> bool:
        """A call cfglint models (a seed, a determinism switch, the environment, a
        framework's init, a dropout API): its effect recorded, True; else False."""
        return (
            self._seed_call(node, qual, line)
            or self._environment_call(node, qual, line)
            or self._init_call(node, qual, line, raw)
        )

    def _seed_call(self, node: ast.Call, qual: str, line: int) -> bool:
        spec = known.SEED_CALLS.get(qual)
        if spec is not None:
            kind, idx, kw = spec
            self.effect(kind, qual, line, seed=self.arg(call_arg(node, idx, kw)))
            return True
        spec = known.DETERMINISTIC_CALLS.get(qual)
        if spec is not None:
            kind, idx, kw = spec
            v = literal(call_arg(node, idx, kw))
            self.effect(kind, qual, line, enabled=v if isinstance(v, bool) else None)
            return True
        if qual in known.SET_CONTEXT:
            det = call_arg(node, 99, "deterministic")
            if det is not None:
                v = literal(det)
                enabled = None
                if isinstance(v, str):
                    enabled = v.upper() == "ON"
                elif isinstance(v, bool):
                    enabled = v
                self.effect("mindspore_deterministic", qual, line, enabled=enabled)
            return True
        return False

    def _environment_call(self, node: ast.Call, qual: str, line: int) -> bool:
        """``os.putenv("PYTHONHASHSEED", ...)``, ``os.environ.update({...})``."""
        if qual in known.ENV_SETTERS:
            key = literal(call_arg(node, 0, "key"))
            if key == "PYTHONHASHSEED":
                value = call_arg(node, 1, "value")
                self.effect("pythonhashseed", qual, line, seed=self.arg(value))
            return True
        first = node.args[0] if node.args else None
        if qual == "os.environ.update" and isinstance(first, ast.Dict):
            for key, value in zip(first.keys, first.values, strict=True):
                if key is not None and literal(key) == "PYTHONHASHSEED":
                    self.effect("pythonhashseed", qual, line, seed=self.arg(value))
            return True
        return False

    def _init_call(self, node: ast.Call, qual: str, line: int, raw: str) -> bool:
        """A framework's init that seeds or switches determinism, or a dropout API."""
        init = known.FRAMEWORK_INITS.get(qual)
        if init is not None:
            modelled = raw if qual.startswith(_IMPERSONATED) else ""
            self._framework_init(node, qual, init, line, modelled)
            if modelled and raw:
                call = self._callsite(node, raw, line)
                self.cur.summary.calls.append(call.model_copy(update={"modelled": True}))
            return True
        style = known.DROPOUT_APIS.get(qual)
        if style is not None:
            self._dropout(node, qual, style, line)
            return True
        return False

    def _framework_init(
        self, node: ast.Call, qual: str, init: known.FrameworkInit, line: int, modelled: str = ""
    ) -> None:
        seed: Arg | None = None
        if init.seed and init.seed[0] == "config":
            seed = Arg(kind="config", text=init.seed[1])
        elif init.seed:
            seed = self.arg(call_arg(node, init.seed[1], init.seed[2]))
        for kind in init.kinds:
            self.effect(
                kind,
                qual,
                line,
                seed=seed,
                needs_nonzero_seed=init.needs_nonzero_seed,
                conditional=init.conditional or self.cur.cond > 0,
                note=init.note,
                modelled=modelled,
            )
        if init.deterministic:
            self.effect(
                init.deterministic,
                qual,
                line,
                enabled=None,
                config_field="determinism.deterministic",
                note=init.deterministic_note,
                modelled=modelled,
            )
        if init.deterministic_kw is not None:
            v = literal(call_arg(node, *init.deterministic_kw))
            if v is True:
                self.effect("torch_deterministic", qual, line, enabled=True, note=init.note)
        if getattr(init, "deterministic_always", False):
            self.effect("torch_deterministic", qual, line, enabled=True, note=init.note)
            self.effect("cudnn_deterministic", qual, line, enabled=True, note=init.note)
