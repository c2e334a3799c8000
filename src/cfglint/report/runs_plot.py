"""Pictures of two compared runs, laid out like the guide's figures: both loss curves (and
the baseline runs), the difference inside its benchmark band with the divergence step
marked, and the learning-rate and gradient-norm panels.

PNG through matplotlib; HTML as one self-contained page (inline script, no network fetch)
with zoom and hover. Long runs are thinned for display only: each of at most ``BUCKETS``
step buckets keeps its minimum and its maximum, so spikes stay visible. The judgements
never see thinned data.
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Any

import numpy as np

from cfglint.load.outputs import write_atomic

BUCKETS = 2000
COLORS = {
    "mindformers": "#d62728",
    "megatron": "#1f77b4",
    "band": "#9ecae1",
    "smooth": "#000000",
    "baselines": ["#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"],
}


def thin_index(n: int, buckets: int = BUCKETS) -> np.ndarray:
    """Bucket edges over ``n`` samples (all samples when there are few)."""
    if n <= 2 * buckets:
        return np.arange(n + 1)
    return np.linspace(0, n, buckets + 1).astype(np.int64)


def thin(x: np.ndarray, y: np.ndarray, buckets: int = BUCKETS) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) with each bucket reduced to its min and max in step order; NaN buckets stay
    NaN (a gap in the line)."""
    n = x.size
    if n <= 2 * buckets:
        return x, y
    edges = thin_index(n, buckets)
    xs, ys = [], []
    for lo, hi in itertools.pairwise(edges):
        seg = y[lo:hi]
        ok = np.isfinite(seg)
        if not ok.any():
            xs += [x[lo]]
            ys += [np.nan]
            continue
        i, j = int(np.nanargmin(seg)), int(np.nanargmax(seg))
        for k in sorted({i, j}):
            xs.append(x[lo + k])
            ys.append(seg[k])
    return np.asarray(xs), np.asarray(ys, dtype=np.float64)


def panels(judged: Any) -> list[dict[str, Any]]:
    """The panels both formats draw: title, series (name, colour, x, y, dashed) and an
    optional band."""
    p = judged.pair
    x = p.steps
    out: list[dict[str, Any]] = []
    # the reference first, so the migrated run's curve lies on top where they agree
    loss = [
        _series("Megatron", "megatron", x, p.series("b", "loss")),
        _series("MindFormers", "mindformers", x, p.series("a", "loss"), width=1.0),
    ]
    for k, (log, curve) in enumerate(judged.baselines):
        colors = COLORS["baselines"]
        loss.append(
            _series(f"baseline {os.path.basename(log.path)}", colors[k % len(colors)], x, curve)
        )
    out.append({"title": "loss", "series": loss})
    diff = [
        _series("MindFormers - Megatron", "mindformers", x, p.diff, width=0.8),
        _series("running mean", "smooth", x, judged.smooth, width=1.6),
    ]
    for k, (log, curve) in enumerate(judged.baselines):
        colors = COLORS["baselines"]
        lb = p.series("b", "loss")
        diff.append(
            _series(
                f"{os.path.basename(log.path)} - Megatron",
                colors[k % len(colors)],
                x,
                curve - lb,
                width=0.6,
            )
        )
    bx, blo = thin(x, -judged.band)
    _, bhi = thin(x, judged.band)
    out.append(
        {
            "title": "loss difference, benchmark band",
            "series": diff,
            "band": {"x": bx, "lo": blo, "hi": bhi} if bx.size == bhi.size else None,
            "zero": True,
        }
    )
    for key, title in (("lr", "learning rate"), ("grad_norm", "gradient norm")):
        ya, yb = p.series("a", key), p.series("b", key)
        s = []
        if ya is not None:
            s.append(_series("MindFormers", "mindformers", x, ya))
        if yb is not None:
            s.append(_series("Megatron", "megatron", x, yb, dashed=True))
        if s:
            out.append({"title": title, "series": s})
    return out


def _series(
    name: str,
    color: str,
    x: np.ndarray,
    y: np.ndarray | None,
    width: float = 1.2,
    dashed: bool = False,
) -> dict[str, Any]:
    xs, ys = thin(x, np.asarray(y, dtype=np.float64))
    return {
        "name": name,
        "color": COLORS.get(color, color),
        "x": xs,
        "y": ys,
        "width": width,
        "dashed": dashed,
    }


def _title(judged: Any) -> str:
    r = judged.report
    verdicts = ", ".join(
        f"{row.row} {row.verdict}"
        for row in r.rows
        if row.row in ("drift", "divergence", "late_gap", "benchmark.band")
    )
    return (
        f"{os.path.basename(r.inputs['mindformers'])} vs "
        f"{os.path.basename(r.inputs['megatron'])}: {verdicts}"
    )


# -- PNG ------------------------------------------------------------------------------------
def write_png(judged: Any, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ps = panels(judged)
    heights = [3 if i < 2 else 1.6 for i in range(len(ps))]
    fig, axes = plt.subplots(
        len(ps),
        1,
        figsize=(11, sum(heights) + 1.2),
        sharex=True,
        gridspec_kw={"height_ratios": heights},
    )
    div = judged.report.divergence_step
    for ax, panel in zip(np.atleast_1d(axes), ps, strict=True):
        band = panel.get("band")
        if band is not None:
            ax.fill_between(
                band["x"],
                band["lo"],
                band["hi"],
                color=COLORS["band"],
                alpha=0.6,
                lw=0,
                label="benchmark band",
            )
        if panel.get("zero"):
            ax.axhline(0, color="#888", lw=0.6)
        for s in panel["series"]:
            ax.plot(
                s["x"],
                s["y"],
                color=s["color"],
                lw=s["width"],
                ls="--" if s["dashed"] else "-",
                label=s["name"],
            )
        if div is not None:
            ax.axvline(div, color="#ff7f0e", lw=1.4, ls=":", label=f"divergence, step {div}")
        ax.set_title(panel["title"], fontsize=10, loc="left")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper right")
    np.atleast_1d(axes)[-1].set_xlabel("step")
    fig.suptitle(_title(judged), fontsize=10)
    fig.tight_layout()
    try:
        write_atomic(path, lambda fh: fig.savefig(fh, dpi=110, format="png"), what="plot")
    finally:
        plt.close(fig)


# -- HTML -----------------------------------------------------------------------------------
def _nums(a: np.ndarray) -> list[float | None]:
    return [None if not np.isfinite(v) else float(f"{v:.6g}") for v in np.asarray(a, float)]


def html_data(judged: Any) -> dict[str, Any]:
    ps = []
    for panel in panels(judged):
        band = panel.get("band")
        ps.append(
            {
                "title": panel["title"],
                "zero": bool(panel.get("zero")),
                "band": None
                if band is None
                else {"x": _nums(band["x"]), "lo": _nums(band["lo"]), "hi": _nums(band["hi"])},
                "series": [
                    {
                        "name": s["name"],
                        "color": s["color"],
                        "dashed": s["dashed"],
                        "width": s["width"],
                        "x": _nums(s["x"]),
                        "y": _nums(s["y"]),
                    }
                    for s in panel["series"]
                ],
            }
        )
    r = judged.report
    return {
        "title": _title(judged),
        "divergence": r.divergence_step,
        "rows": [{"row": x.row, "verdict": x.verdict, "detail": x.detail} for x in r.rows],
        "panels": ps,
    }


def write_html(judged: Any, path: str) -> None:
    data = json.dumps(html_data(judged), separators=(",", ":"), allow_nan=False)
    # "</" inside a script element would end it early
    from importlib.resources import files

    template = files("cfglint.report").joinpath("runs_page.html").read_text(encoding="utf-8")
    page = template.replace("__DATA__", data.replace("</", "<\\/"))
    page = page.replace("__TITLE__", _escape(_title(judged)))

    write_atomic(path, page, what="plot")


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
