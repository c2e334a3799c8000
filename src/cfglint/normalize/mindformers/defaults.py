"""MindFormers default tables (``data/mindformers.yaml``) and the knob map."""

from __future__ import annotations

import math
from functools import cache
from typing import Any, NamedTuple

from cfglint.load.datacache import DATA_DIR, load_data

DATA = DATA_DIR
REQUIRED = "<required>"


class Component(NamedTuple):
    name: str
    role: str
    version: str
    defaults: dict[str, Any]
    aliases: dict[str, str]
    raw: dict[str, Any]

    @property
    def label(self) -> str:
        return f"MindFormers {self.version} {self.name}"

    def has(self, key: str) -> bool:
        return key in self.defaults and self.defaults[key] != REQUIRED


class MFDefaults:
    def __init__(self, data: dict[str, Any], knobs: dict[str, Any]) -> None:
        self.project_version = data.get("version", "")
        self.by_name: dict[tuple[str, str], Component] = {}
        self.by_alias: dict[tuple[str, str], Component] = {}
        self.by_model_type: dict[str, Component] = {}
        for c in data["components"]:
            comp = Component(
                name=c["name"],
                role=c["role"],
                version=c.get("version", ""),
                defaults=dict(c.get("defaults") or {}),
                aliases=dict(c.get("aliases") or {}),
                raw=c,
            )
            self.by_name[(comp.name, comp.role)] = comp
            for a in c.get("registry_aliases") or []:
                self.by_alias[(a, comp.role)] = comp
            mt = c.get("model_type")
            if comp.role == "model_config" and mt:
                for t in mt if isinstance(mt, list) else [mt]:
                    self.by_model_type[t] = comp
        self.knobs = knobs
        tc = self.get("TransformerConfig", "model_config")
        self.tc_aliases: dict[str, str] = tc.aliases if tc else {}
        self.tc_transforms: dict[str, str] = (tc.raw.get("alias_transforms") or {}) if tc else {}

    def get(self, name: str | None, role: str) -> Component | None:
        if not name:
            return None
        return self.by_name.get((name, role)) or self.by_alias.get((name, role))

    def canonical(self, key: str) -> str:
        """TransformerConfig field a new-dialect YAML / HF key is renamed to."""
        return self.tc_aliases.get(key, key)


@cache
def mf_defaults() -> MFDefaults:
    return MFDefaults(
        load_data(DATA / "mindformers.yaml"), load_data(DATA / "mindformers_knobs.yaml")
    )


DTYPES = {
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "float64": "float64",
    "fp64": "float64",
}


def canonical_dtype(v: Any) -> Any:
    if isinstance(v, str):
        return DTYPES.get(v.strip().lower().removeprefix("mstype.").removeprefix("ms."), v)
    return v


def coerce(v: Any, kind: str | None) -> Any:
    """Bring a YAML value to the canonical type, leaving strings MindFormers would choke on
    (PyYAML strings like '1e-5') untouched so rules can report them."""
    if v is None or kind is None:
        return v
    if kind == "dtype":
        return canonical_dtype(v)
    if kind == "int" and isinstance(v, float) and v.is_integer():
        return int(v)
    if kind == "float" and isinstance(v, int) and not isinstance(v, bool):
        try:
            return float(v)
        except OverflowError:  # a 400-digit integer: beyond any float, as float() says
            return math.inf if v > 0 else -math.inf
    if kind == "bool" and isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    return v
