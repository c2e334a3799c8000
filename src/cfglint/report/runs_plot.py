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
import textwrap
import warnings
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


def envelope_of(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each bucket's first step, minimum and maximum (all samples when there are few)."""
    y = np.asarray(y, dtype=np.float64)
    edges = thin_index(x.size)
    if edges.size == x.size + 1:
        return x, y, y
    lo_i, hi_i = edges[:-1], edges[1:]
    fin = np.where(np.isfinite(y), y, np.nan)
    with warnings.catch_warnings():  # an all-NaN bucket is a gap, not a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.array([np.nanmin(fin[a:b]) for a, b in zip(lo_i, hi_i, strict=True)])
        hi = np.array([np.nanmax(fin[a:b]) for a, b in zip(lo_i, hi_i, strict=True)])
    return x[lo_i], lo, hi


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
    # a long noisy difference thinned to min/max is drawn as its envelope (a zigzag line
    # between them would cover the band in a solid block)
    raw = _series("MindFormers - Megatron", "mindformers", x, p.diff, width=0.8)
    envelope = None
    if x.size > 2 * BUCKETS:
        ex, elo, ehi = envelope_of(x, p.diff)
        envelope = {"x": ex, "lo": elo, "hi": ehi, "name": "MindFormers - Megatron (range)"}
    diff = [] if envelope else [raw]
    diff.append(_series("running mean", "smooth", x, judged.smooth, width=1.6))
    # thinned, each baseline's difference would be one more solid block: the band is
    # their envelope already
    for k, (log, curve) in enumerate([] if envelope else judged.baselines):
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
    known = bool(judged.baselines)
    bx, _, bhi = envelope_of(x, judged.band)
    band_name = "benchmark band" if known else "float-noise limit (band unknown)"
    limit = getattr(judged, "limit", None)
    if not known and limit is not None:
        lx, _, lhi = envelope_of(x, limit)
        diff.append(
            {
                "name": "lr=0 forward limit",
                "color": "#7f7f7f",
                "x": np.concatenate([lx, [np.nan], lx]),
                "y": np.concatenate([lhi, [np.nan], -lhi]),
                "width": 0.9,
                "dashed": True,
            }
        )
    out.append(
        {
            "title": f"loss difference (MindFormers - Megatron), {band_name}",
            "series": diff,
            "band": {"x": bx, "lo": -bhi, "hi": bhi, "name": band_name},
            "envelope": envelope,
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
    """The verdict in words, then the two logs, then every row's state."""
    from cfglint.report.runs import headline

    r = judged.report
    head, states = headline(r)
    return (
        f"{head}\n{os.path.basename(r.inputs['mindformers'])} (MindFormers) vs "
        f"{os.path.basename(r.inputs['megatron'])} (Megatron)\n{states}"
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
        env, band = panel.get("envelope"), panel.get("band")
        if band is not None:
            ax.fill_between(
                band["x"],
                band["lo"],
                band["hi"],
                color=COLORS["band"],
                alpha=0.55,
                lw=0,
                label=band["name"],
            )
        if env is not None:  # see-through over the band
            ax.fill_between(
                env["x"],
                env["lo"],
                env["hi"],
                color=COLORS["mindformers"],
                alpha=0.3,
                lw=0,
                label=env["name"],
            )
        if band is not None:  # its edges on top: visible at any length
            for edge in (band["lo"], band["hi"]):
                ax.plot(band["x"], edge, color="#3182bd", lw=0.7)
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
        ax.legend(fontsize=7, loc="best" if panel.get("zero") else "upper right")
    from matplotlib.ticker import FuncFormatter

    last = np.atleast_1d(axes)[-1]
    last.set_xlabel("step")
    last.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
    title = _title(judged)
    head, rest = title.split("\n", 1)
    bad = any(r.verdict in _bad() for r in judged.report.rows)
    fig.suptitle(
        head + "\n" + "\n".join(textwrap.wrap(rest.replace("\n", " — "), 150)),
        fontsize=9,
        color="#b00" if bad else "#222",
    )
    fig.tight_layout()
    try:
        write_atomic(path, lambda fh: fig.savefig(fh, dpi=110, format="png"), what="plot")
    finally:
        plt.close(fig)


def _bad() -> set[str]:
    from cfglint.evidence.runs.judge import BAD

    return BAD


# -- HTML -----------------------------------------------------------------------------------
def _nums(a: np.ndarray) -> list[float | None]:
    return [None if not np.isfinite(v) else float(f"{v:.6g}") for v in np.asarray(a, float)]


def html_data(judged: Any) -> dict[str, Any]:
    ps = []
    for panel in panels(judged):
        band, env = panel.get("band"), panel.get("envelope")
        ps.append(
            {
                "title": panel["title"],
                "zero": bool(panel.get("zero")),
                "band": None
                if band is None
                else {
                    "x": _nums(band["x"]),
                    "lo": _nums(band["lo"]),
                    "hi": _nums(band["hi"]),
                    "name": band["name"],
                },
                "envelope": None
                if env is None
                else {
                    "x": _nums(env["x"]),
                    "lo": _nums(env["lo"]),
                    "hi": _nums(env["hi"]),
                    "name": env["name"],
                },
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
    from cfglint.report.runs import WATCH

    return {
        "title": _title(judged),
        "divergence": r.divergence_step,
        "bad": sorted(_bad()),
        "watch": sorted(WATCH),
        "rows": [{"row": x.title, "verdict": x.verdict, "detail": x.detail} for x in r.rows],
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
