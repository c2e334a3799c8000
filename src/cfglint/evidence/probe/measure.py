"""Comparing two runs of the probe: the measures, the floor they are judged against, and
how many floors an effect is. numpy only."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from cfglint.evidence.probe.protocol import RunResult, load_npz
from cfglint.model import standard as std

CONFIRM_MULTIPLE = 10.0  # an effect this many floors above the floor is confirmed
F32_EPS = float(np.finfo(np.float32).eps)
METRICS = ("first_loss_abs", "mean_loss_abs", "global_norm_rel", "local_norm_rel", "update_rel")
LABELS = {
    "first_loss_abs": "step-1 loss",
    "mean_loss_abs": "mean loss",
    "global_norm_rel": "global norm",
    "local_norm_rel": "local norms",
    "update_rel": "optimizer update",
}


def compare(a: RunResult, b: RunResult, mode: str, upd: tuple[str, str] | None = None) -> dict:
    """a against b (b is the reference). ``upd``: the two saved update files to compare."""
    ca, cb = a.curves[mode], b.curves[mode]
    n = min(len(ca.loss), len(cb.loss))
    first_abs, first_rel = std.first_loss_error(ca.loss[0], cb.loss[0])
    mean_abs, mean_rel = std.mean_loss_error(ca.loss[:n], cb.loss[:n])
    out: dict[str, Any] = {
        "first_loss_abs": first_abs,
        "mean_loss_abs": mean_abs,
        "mean_loss_rel": mean_rel,
        "first_loss_rel": first_rel,
        "global_norm_rel": std.global_norm_error(ca.grad_norm[:n], cb.grad_norm[:n]),
    }
    by_weight = {
        k: abs(a.local_norms[k] - vb) / max(vb, 1e-30)
        for k, vb in b.local_norms.items()
        if k in a.local_norms
    }
    worst = max(by_weight, key=lambda k: by_weight[k]) if by_weight else ""
    out["local_norm_rel"] = by_weight.get(worst, 0.0)
    out["worst_weight"] = worst
    out["local_norms_rel"] = by_weight
    if upd is not None and all(os.path.exists(p) for p in upd):
        ua, ub = load_npz(upd[0]), load_npz(upd[1])
        worst_u, worst_r = "", 0.0
        for k, vb in ub.items():
            if k not in ua:
                continue
            d = float(np.linalg.norm(ua[k].astype(np.float64) - vb))
            r = d / max(float(np.linalg.norm(vb)), 1e-30)
            if r >= worst_r:
                worst_u, worst_r = k, r
        out["update_rel"] = worst_r
        out["update_worst_weight"] = worst_u
    return out


def effective_floor(floor: dict[str, float], ref_loss: float) -> dict[str, float]:
    """The floor each metric is judged against: the measured one, never below float32
    rounding of the quantity (two runs can agree to the bit, which is not a zero floor)."""
    out = {}
    for m in METRICS:
        tiny = F32_EPS * (abs(ref_loss) if m.endswith("loss_abs") else 1.0)
        out[m] = max(floor.get(m, 0.0), tiny)
    return out


def multiple(effect: dict[str, Any], floor: dict[str, float]) -> tuple[float, str]:
    """How many floors the effect is, and on which measure: the mean loss when it alone
    clears the bar (the measure the migration standard speaks of), else the largest."""
    ratios = {m: effect[m] / floor[m] for m in METRICS if m in effect}
    if not ratios:
        return 0.0, ""
    if ratios.get("mean_loss_abs", 0.0) >= CONFIRM_MULTIPLE:
        return ratios["mean_loss_abs"], LABELS["mean_loss_abs"]
    best = max(ratios, key=lambda m: ratios[m])
    return ratios[best], LABELS[best]


def round_to(a: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values rounded (to nearest even) to ``dtype``, kept as float32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "float16":
        return a.astype(np.float16).astype(np.float32)
    if dtype == "bfloat16":
        b = a.view(np.uint32).astype(np.uint64)
        b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
        return b.astype(np.uint32).view(np.float32)
    return a
