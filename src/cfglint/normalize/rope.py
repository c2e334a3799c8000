"""One spelling for RoPE frequency rescaling on both sides, so the two compare as values.

``none`` or ``kind(key=value, ...)`` with the keys that change the frequencies, in a fixed
order: ``llama3(factor=8, low=1, high=4, original=8192)``, ``yarn(factor=40, original=4096)``,
``linear(factor=4)``.
"""

from __future__ import annotations

from typing import Any

from cfglint.model.values import fmt

KEYS = {
    "llama3": ("factor", "low", "high", "original"),
    # YaRN's beta_fast / beta_slow / mscale have different defaults on each side when not
    # written; only the factor and the original context are compared
    "yarn": ("factor", "original"),
    "linear": ("factor",),
    "longrope": ("factor", "original"),
    "dynamic_ntk": ("factor",),
}


def spell(kind: str, params: dict[str, Any]) -> str:
    kind = kind.lower()
    if kind in ("none", "", "default", "rope"):
        return "none"
    keys = KEYS.get(kind, tuple(sorted(params)))
    inner = ", ".join(f"{k}={fmt(params[k])}" for k in keys if params.get(k) is not None)
    return f"{kind}({inner})"
