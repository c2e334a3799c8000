"""The guide's Stage-3 judgements on two long runs, each a row with the numbers deciding it.

``a`` is the migrated run (MindFormers), ``b`` the reference (Megatron / MindSpeed-LLM);
the difference is ``a - b`` at each step both logged. The benchmark band is how far the
reference strays from itself: from baseline runs of the reference when given (the guide:
run the reference twice with determinism off), else from the step-to-step scatter of the
difference itself (what noise alone would move it by; a steady offset does not show there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from cfglint.evidence.runs import guide
from cfglint.evidence.runs.align import Pair, align
from cfglint.evidence.runs.stats import (
    print_resolution,
    robust_sigma,
    running_max,
    running_mean,
    runs_test,
    sign_test,
    slope,
)
from cfglint.load.losslog import RunLog
from cfglint.model import standard as std

BAND_SIGMAS = 3.0  # the no-baseline band: this many noise sigmas of one step's difference
DRIFT_P = 0.05  # sign test on the late blocks' means
# Below this share of the loss, a steady difference is the two frameworks' float32
# arithmetic, not a cause: 64 ulps (float32 epsilon 2**-23); summing a mean over thousands of
# tokens in another order moves it by tens of ulps. Two runs of one configuration on both
# frameworks differ by about 3e-7 of the loss (fixtures/runs/same, six-decimal prints).
FLOAT_FLOOR_REL = 64 * 2.0**-23
BLOCKS = 30
STAY_OUT = 0.95  # share of the steps after a divergence that stay outside the band
LATE_SHARE = 0.10  # the late stage: the last tenth of the common steps
LR_REL_TOL = 0.01  # as `cfglint lr` compares curves
BAD = {"fail", "drift", "diverges", "departs", "outside", "differ"}
# the guide's case study, for scale: lr = 0 runs with per-step loss differences about
# 0.001 and global-norm differences about 0.05 were "as expected"
CASE_LR0 = {"loss_abs": 0.001, "global_norm_abs": 0.05}


class Linked(BaseModel):
    rule: str
    row: str
    severity: str
    message: str


class Row(BaseModel):
    row: str
    title: str
    verdict: str
    numbers: dict[str, Any] = Field(default_factory=dict)
    detail: str = ""
    findings: list[Linked] = Field(default_factory=list)


class RunsReport(BaseModel):
    inputs: dict[str, Any]
    steps: dict[str, Any]
    band: dict[str, Any]
    rows: list[Row]
    divergence_step: int | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def failing(self) -> bool:
        return any(r.verdict in BAD for r in self.rows)


@dataclass
class Judged:
    """The report and the arrays a picture needs."""

    report: RunsReport
    pair: Pair
    band: np.ndarray
    smooth: np.ndarray
    baselines: list[tuple[RunLog, np.ndarray]] = field(default_factory=list)


def judge(
    a: RunLog,
    b: RunLog,
    baselines: list[RunLog] | None = None,
    findings: list[Any] | None = None,
    schedules: dict[str, Any] | None = None,
) -> Judged:
    pair = align(a, b)
    if pair.steps.size == 0:
        from cfglint.model.errors import InputError

        raise InputError(
            a.path,
            f"no step with a finite loss in both logs (MindFormers steps {_span(a)}, "
            f"Megatron steps {_span(b)})",
        )
    d = pair.diff
    base_curves = [(bl, _on_steps(bl, pair.steps)) for bl in baselines or []]
    band, band_info = _band(pair, d, base_curves)
    w = max(5, d.size // 100)
    smooth = running_mean(d, w)
    rows = [*_standard(pair, d), *_lr0(pair, d)]
    rows.append(_band_row(pair, d, band, band_info, base_curves))
    rows.append(_drift(pair, d, band))
    div_row, div_step = _divergence(pair, d, smooth, band, w)
    lost = _lost_loss(a, b)
    if lost is not None and (div_step is None or lost.numbers["step"] < div_step):
        div_row, div_step = lost, int(lost.numbers["step"])
    rows.append(div_row)
    rows.append(_late_gap(pair, band))
    rows += _lr_rows(pair, schedules or {})
    if findings is not None:
        _link(rows, findings, div_step)
    report = RunsReport(
        inputs={
            "mindformers": a.path,
            "megatron": b.path,
            "baselines": [bl.path for bl in baselines or []],
            "sources": {"mindformers": a.source, "megatron": b.source},
        },
        steps={
            "mindformers": int(a.steps.size),
            "megatron": int(b.steps.size),
            "common": int(pair.steps.size),
            "first": int(pair.steps[0]),
            "last": int(pair.steps[-1]),
            "interval": {"mindformers": a.interval(), "megatron": b.interval()},
            "restarts": {"mindformers": a.restart_count, "megatron": b.restart_count},
            "gaps": {"mindformers": len(a.gaps()), "megatron": len(b.gaps())},
        },
        band=band_info,
        rows=rows,
        divergence_step=div_step,
        notes=pair.notes,
    )
    return Judged(report, pair, band, smooth, base_curves)


def _span(log: RunLog) -> str:
    return f"{int(log.steps[0])}-{int(log.steps[-1])}" if log.steps.size else "none"


def _on_steps(log: RunLog, steps: np.ndarray) -> np.ndarray:
    """The log's loss at ``steps``: exact where it logged them, linear in between, NaN
    outside its range."""
    y = log.series["loss"]
    ok = np.isfinite(y)
    xs, ys = log.steps[ok], y[ok]
    out = np.interp(steps, xs, ys) if xs.size else np.full(steps.size, np.nan)
    if xs.size:
        out[(steps < xs[0]) | (steps > xs[-1])] = np.nan
    return out


def _pct(x: float) -> str:
    """A relative error readable at any size: 3.2%, or 2.1e-07 where a percent shows 0.0%."""
    return f"{x:.1%}" if not math.isfinite(x) or x >= 1e-3 or x == 0 else f"{x:.2g}"


def _g(x: float) -> float:
    """A number as JSON shows it: four significant digits."""
    return float(f"{x:.4g}") if math.isfinite(x) else x


# -- the band -----------------------------------------------------------------------------
def _band(
    pair: Pair, d: np.ndarray, bases: list[tuple[RunLog, np.ndarray]]
) -> tuple[np.ndarray, dict[str, Any]]:
    lb = pair.series("b", "loss")
    assert lb is not None
    res = max(print_resolution(pair.series("a", "loss")), print_resolution(lb))
    floor = max(res / 2, 1e-6 * float(np.median(np.abs(lb))))
    w = max(1, d.size // 100)
    if bases:
        spread = np.nanmax(np.abs(np.vstack([c - lb for _, c in bases])), axis=0)
        env = running_max(spread, w)
        med = float(np.nanmedian(env)) if np.isfinite(env).any() else floor
        band = np.maximum(np.where(np.isfinite(env), env, med), floor)
        info = {
            "source": "baseline runs",
            "runs": len(bases) + 1,
            "half_width_median": _g(float(np.median(band))),
            "half_width_late": _g(float(np.median(band[-_late_n(band.size) :]))),
        }
        return band, info
    sigma = robust_sigma(np.diff(d)) / math.sqrt(2) if d.size > 2 else 0.0
    half = max(BAND_SIGMAS * sigma, floor)
    info = {
        "source": "difference scatter (no --baseline)",
        "runs": 1,
        "half_width_median": _g(half),
        "half_width_late": _g(half),
        "sigma": _g(sigma),
    }
    return np.full(d.size, half), info


def _late_n(n: int) -> int:
    return max(1, round(n * LATE_SHARE))


def _band_row(
    pair: Pair,
    d: np.ndarray,
    band: np.ndarray,
    info: dict[str, Any],
    bases: list[tuple[RunLog, np.ndarray]],
) -> Row:
    inside = float(np.mean(np.abs(d) <= band))
    nums: dict[str, Any] = {
        "inside_share": _g(inside),
        "half_width_median": info["half_width_median"],
    }
    if not bases:
        return Row(
            row="benchmark.band",
            title="Benchmark band",
            verdict="unknown",
            numbers=nums,
            detail=(
                "no baseline runs (--baseline): the band is the difference's own step-to-step "
                f"scatter, +/-{info['half_width_median']:.3g}; the guide's band comes from "
                "running the reference twice with determinism off"
            ),
        )
    la = pair.series("a", "loss")
    assert la is not None
    refs = np.vstack([pair.series("b", "loss"), *(c for _, c in bases)])
    lo, hi = np.nanmin(refs, axis=0), np.nanmax(refs, axis=0)
    between = float(np.mean((la >= lo) & (la <= hi)))
    nums["between_reference_runs"] = _g(between)
    verdict = "inside" if inside >= 0.9 else "outside"
    return Row(
        row="benchmark.band",
        title="Benchmark band",
        verdict=verdict,
        numbers=nums,
        detail=(
            f"{len(bases) + 1} reference runs spread by +/-{info['half_width_median']:.3g} "
            f"(median); the MindFormers difference is inside that band at {inside:.0%} of the "
            f"steps, and its loss lies between the reference runs at {between:.0%}"
        ),
    )


# -- the migration standard ------------------------------------------------------------------
def _standard(pair: Pair, d: np.ndarray) -> list[Row]:
    la, lb = pair.series("a", "loss"), pair.series("b", "loss")
    assert la is not None and lb is not None
    s0 = int(pair.steps[0])
    e0, r0 = std.first_loss_error(float(la[0]), float(lb[0]))
    rows = [
        Row(
            row="standard.first_loss",
            title="First-step loss",
            verdict="pass" if std.first_loss_ok(e0, r0) else "fail",
            numbers={
                "step": s0,
                "mindformers": float(la[0]),
                "megatron": float(lb[0]),
                "abs": _g(e0),
                "rel": _g(r0),
            },
            detail=f"step {s0}: {la[0]:.6g} vs {lb[0]:.6g}, error {e0:.3g} "
            f"({r0:.2%}; {std.FIRST_LOSS_LIMIT})",
        )
    ]
    ma, mr = std.mean_loss_error(la, lb)
    rows.append(
        Row(
            row="standard.mean_loss",
            title="Mean loss error",
            verdict="pass" if std.mean_loss_ok(ma, mr) else "fail",
            numbers={"abs": _g(ma), "rel": _g(mr), "steps": int(d.size)},
            detail=f"over {d.size} steps: mean error {ma:.3g} ({mr:.2%}; {std.MEAN_LOSS_LIMIT})",
        )
    )
    ga, gb = pair.series("a", "grad_norm"), pair.series("b", "grad_norm")
    if ga is None or gb is None:
        missing = "MindFormers (global_norm)" if ga is None else "Megatron (grad norm)"
        rows.append(
            Row(
                row="standard.global_norm",
                title="Global norm",
                verdict="unknown",
                detail=f"{missing} printed no gradient norm",
            )
        )
        return rows
    ok = np.isfinite(ga) & np.isfinite(gb)
    rel = std.global_norm_error(ga[ok], gb[ok]) if ok.any() else math.nan
    rows.append(
        Row(
            row="standard.global_norm",
            title="Global norm",
            verdict="unknown" if not ok.any() else ("pass" if std.global_norm_ok(rel) else "fail"),
            numbers={"rel": _g(rel), "steps": int(ok.sum())},
            detail=f"mean relative error {_pct(rel)} over {int(ok.sum())} steps "
            f"({std.GLOBAL_NORM_LIMIT})",
        )
    )
    return rows


# -- lr = 0 ------------------------------------------------------------------------------
def _lr0(pair: Pair, d: np.ndarray) -> list[Row]:
    ra, rb = pair.series("a", "lr"), pair.series("b", "lr")
    zero = (
        ra is not None
        and rb is not None
        and bool(np.isfinite(ra).any())
        and bool(np.all(ra[np.isfinite(ra)] == 0))
        and bool(np.all(rb[np.isfinite(rb)] == 0))
    )
    if not zero:
        why = (
            "a side printed no learning rate"
            if ra is None or rb is None
            else "the runs update their weights (lr > 0); run both with lr = 0 for this check"
        )
        return [
            Row(row="lr0.forward", title="lr = 0: forward", verdict="not applicable", detail=why),
            Row(row="lr0.backward", title="lr = 0: backward", verdict="not applicable", detail=why),
        ]
    lb = pair.series("b", "loss")
    assert lb is not None
    ad = np.abs(d)
    rel = ad / np.maximum(np.abs(lb), 1e-12)
    bad = ~((ad < std.FIRST_LOSS_ABS) | (rel < std.FIRST_LOSS_REL))
    worst = int(np.argmax(ad))
    rows = [
        Row(
            row="lr0.forward",
            title="lr = 0: forward",
            verdict="fail" if bad.any() else "pass",
            numbers={
                "max_abs": _g(float(ad.max())),
                "mean_abs": _g(float(ad.mean())),
                "worst_step": int(pair.steps[worst]),
                "steps_over": int(bad.sum()),
                "guide_case_abs": CASE_LR0["loss_abs"],
            },
            detail=(
                f"weights frozen: every step is a forward on the same weights; loss differs by "
                f"{ad.mean():.3g} on average, at most {ad.max():.3g} (step {pair.steps[worst]}); "
                f"{int(bad.sum())} steps over the first-loss limit ({std.FIRST_LOSS_LIMIT}); the "
                f"guide's case saw about {CASE_LR0['loss_abs']:g}"
            ),
        )
    ]
    ga, gb = pair.series("a", "grad_norm"), pair.series("b", "grad_norm")
    if ga is None or gb is None:
        rows.append(
            Row(
                row="lr0.backward",
                title="lr = 0: backward",
                verdict="unknown",
                detail="a side printed no gradient norm",
            )
        )
        return rows
    ok = np.isfinite(ga) & np.isfinite(gb)
    gd = np.abs(ga[ok] - gb[ok])
    grel = float(np.mean(gd / np.maximum(np.abs(gb[ok]), 1e-12))) if gd.size else math.nan
    rows.append(
        Row(
            row="lr0.backward",
            title="lr = 0: backward",
            verdict="unknown" if not gd.size else ("pass" if std.global_norm_ok(grel) else "fail"),
            numbers={
                "mean_rel": _g(grel),
                "mean_abs": _g(float(gd.mean())) if gd.size else None,
                "max_abs": _g(float(gd.max())) if gd.size else None,
                "guide_case_abs": CASE_LR0["global_norm_abs"],
            },
            detail=(
                f"global norm differs by {_pct(grel)} on average ({std.GLOBAL_NORM_LIMIT}), "
                f"{float(gd.mean()) if gd.size else math.nan:.3g} in absolute terms; the guide's "
                f"case saw about {CASE_LR0['global_norm_abs']:g}"
            ),
        )
    )
    return rows


# -- drift and divergence -----------------------------------------------------------------
def _drift(pair: Pair, d: np.ndarray, band: np.ndarray) -> Row:
    nb = min(BLOCKS, d.size)
    blocks = np.array_split(np.arange(d.size), nb)
    means = np.array([d[i].mean() for i in blocks])
    centers = np.array([pair.steps[i].mean() for i in blocks], dtype=np.float64)
    late = means[-max(3, nb // 3) :]
    pos, neg = int((late > 0).sum()), int((late < 0).sum())
    p_late = sign_test(pos, neg)
    p_all = sign_test(int((means > 0).sum()), int((means < 0).sum()))
    z = runs_test(np.sign(d))
    n_late = max(1, d.size // 3)
    offset = float(d[-n_late:].mean())
    early = float(d[:n_late].mean())
    band_late = float(np.median(band[-n_late:]))
    trend = slope(centers, means) * 1000
    loss = pair.series("b", "loss")
    floor = FLOAT_FLOOR_REL * float(np.abs(loss[-n_late:]).mean()) if loss is not None else 0.0
    arithmetic = abs(offset) <= floor
    drift = p_late < DRIFT_P and abs(offset) > band_late and not arithmetic
    same_side = pos if offset > 0 else neg
    nums = {
        "late_offset": _g(offset),
        "early_offset": _g(early),
        "band_late": _g(band_late),
        "sign_p_late": _g(p_late),
        "sign_p_all": _g(p_all),
        "positive_blocks": f"{int((means > 0).sum())}/{nb}",
        "runs_z": _g(z),
        "trend_per_1k_steps": _g(trend),
    }
    if drift:
        grows = abs(offset) > 2 * abs(early) + band_late
        detail = (
            f"the difference holds one sign ({same_side}/{pos + neg} late blocks "
            f"{'above' if offset > 0 else 'below'} 0, sign test p={p_late:.2g}) with a late offset "
            f"of {offset:+.3g}, outside the band +/-{band_late:.3g}"
            + (f"; it grows from {early:+.3g} early on" if grows else "")
        )
        return Row(
            row="drift", title="Drift or noise", verdict="drift", numbers=nums, detail=detail
        )
    nums["float_floor"] = _g(floor)
    if p_late < DRIFT_P and arithmetic:
        detail = (
            f"the late difference keeps one sign ({same_side}/{pos + neg} late blocks "
            f"{'above' if offset > 0 else 'below'} 0) but its offset {offset:+.3g} is within "
            f"float32 arithmetic of the loss ({floor:.2g}: 64 ulps): the two frameworks' "
            "rounding, not a cause"
        )
        return Row(
            row="drift", title="Drift or noise", verdict="noise", numbers=nums, detail=detail
        )
    if p_late < DRIFT_P:
        # the guide accepts a difference inside the band that fluctuates around 0; this one
        # keeps its sign, but is too small to call a drift
        detail = (
            f"the late difference keeps one sign ({same_side}/{pos + neg} late blocks "
            f"{'above' if offset > 0 else 'below'} 0, p={p_late:.2g}) but its offset "
            f"{offset:+.3g} is inside the band +/-{band_late:.3g}"
        )
        return Row(
            row="drift", title="Drift or noise", verdict="offset", numbers=nums, detail=detail
        )
    detail = (
        f"the difference fluctuates around 0 (late offset {offset:+.3g} against the band "
        f"+/-{band_late:.3g}; {pos}/{pos + neg} late blocks above 0, p={p_late:.2g})"
    )
    return Row(row="drift", title="Drift or noise", verdict="noise", numbers=nums, detail=detail)


def _divergence(
    pair: Pair, d: np.ndarray, smooth: np.ndarray, band: np.ndarray, w: int
) -> tuple[Row, int | None]:
    """Where the running mean of the difference leaves the band: for good ("diverges"), or
    for a sustained stretch after which the curves meet again ("departs": a cause that
    shows early and fades, as a learning-rate difference on a run that plateaus)."""
    n = smooth.size
    out = np.abs(smooth) > band
    idx = np.arange(n)
    suffix = np.cumsum(out[::-1])[::-1]
    min_len = max(w, n // 20, 1)
    cond = out & (suffix >= STAY_OUT * (n - idx)) & ((n - idx) >= min_len)
    nums: dict[str, Any] = {"window": w, "outside_share": _g(float(out.mean()))}
    if cond.any():
        i = int(np.argmax(cond))
        verdict, span = (
            "diverges",
            f"and stays out ({float(out[i:].mean()):.0%} of the {n - i} steps after it)",
        )
    else:
        stretch = _first_stretch(out, min_len)
        if stretch is None:
            return (
                Row(
                    row="divergence",
                    title="Divergence",
                    verdict="none",
                    numbers=nums,
                    detail=(
                        f"the running mean of the difference ({w}-step window) never leaves "
                        f"the band for {min_len} steps in a row ({out.mean():.0%} of the "
                        "steps outside)"
                    ),
                ),
                None,
            )
        i, j = stretch
        verdict = "departs"
        span = (
            f"for {j - i} steps, back inside from step {int(pair.steps[j])} (the curves meet again)"
            if j < n
            else "until the end"
        )
        nums["back_at_step"] = int(pair.steps[j]) if j < n else None
    i = _onset(d, band, i, w)
    step = int(pair.steps[i])
    peak = i + int(np.argmax(np.abs(smooth[i:])))
    events = _events(pair, step, max(w, 20 * max(pair.a.interval(), pair.b.interval())))
    at = "from the first common step" if i == 0 else f"at step {step}"
    detail = (
        f"the difference leaves the band {at} {span}; its running mean ({w}-step window) "
        f"peaks at {smooth[peak]:+.3g} at step {int(pair.steps[peak])}, band "
        f"+/-{band[peak]:.3g}"
    )
    if events:
        detail += "; near it: " + "; ".join(events[:6])
    nums.update(
        step=step,
        index=i,
        peak_step=int(pair.steps[peak]),
        peak=_g(float(smooth[peak])),
        band=_g(float(band[i])),
        events=events[:20],
    )
    return Row(
        row="divergence", title="Divergence", verdict=verdict, numbers=nums, detail=detail
    ), step


def _lost_loss(a: RunLog, b: RunLog) -> Row | None:
    """A run whose loss turns NaN or infinite (or beyond any printed value, see
    load/losslog.py MAX_MAGNITUDE) and stays so while the other's stays finite has diverged
    there, although the statistics leave those steps out (issue 32: a loss of inf or 1e308
    from step 100 on was judged "no divergence")."""
    steps, ia, ib = np.intersect1d(a.steps, b.steps, assume_unique=True, return_indices=True)
    fa, fb = np.isfinite(a.series["loss"][ia]), np.isfinite(b.series["loss"][ib])
    n = steps.size
    for name, lost, other in (
        ("MindFormers", ~fa & fb, "Megatron"),
        ("Megatron", ~fb & fa, "MindFormers"),
    ):
        left = n - np.arange(n)
        suffix = np.cumsum(lost[::-1])[::-1]
        cond = lost & (suffix >= STAY_OUT * left) & (left >= max(5, n // 20))
        if not cond.any():
            continue
        i = int(np.argmax(cond))
        step, k = int(steps[i]), int(suffix[i])
        return Row(
            row="divergence",
            title="Divergence",
            verdict="diverges",
            numbers={"step": step, "index": i, "nonfinite_steps": k},
            detail=(
                f"the {name} loss is NaN or infinite from step {step} on ({k} of the "
                f"{n - i} common steps after it) while the {other} loss stays finite: the "
                "run has diverged there"
            ),
        )
    return None


def _first_stretch(out: np.ndarray, min_len: int) -> tuple[int, int] | None:
    """(start, end) of the first run of at least ``min_len`` consecutive True values."""
    edges = np.diff(np.concatenate(([0], out.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    long = np.flatnonzero(ends - starts >= min_len)
    return (int(starts[long[0]]), int(ends[long[0]])) if long.size else None


def _onset(d: np.ndarray, band: np.ndarray, i: int, w: int) -> int:
    """The first step near the running mean's exit where the difference itself is out of
    the band: the centred mean leaks half a window of later steps into earlier ones."""
    lo, hi = max(0, i - w // 2), min(d.size, i + w)
    hits = np.flatnonzero(np.abs(d[lo:hi]) > band[lo:hi])
    return lo + int(hits[0]) if hits.size else i


def _events(pair: Pair, step: int, radius: int) -> list[str]:
    """NaN losses, skipped / nan iterations, overflow and loss spikes on either side within
    ``radius`` steps of ``step``."""
    out: list[str] = []
    for log in (pair.a, pair.b):
        name = "MindFormers" if log.framework == "mindformers" else "Megatron"
        lo, hi = np.searchsorted(log.steps, [step - radius, step + radius + 1])
        st = log.steps[lo:hi]
        loss = log.series["loss"][lo:hi]
        for s in st[~np.isfinite(loss)][:3]:
            out.append(f"{name} loss is NaN/inf at step {int(s)}")
        for key, what in (
            ("skipped", "skipped iterations"),
            ("nan", "nan iterations"),
            ("overflow", "overflow"),
        ):
            col = log.series.get(key)
            if col is not None:
                hit = st[np.nan_to_num(col[lo:hi]) > 0]
                if hit.size:
                    out.append(
                        f"{name} {what} at step {int(hit[0])}"
                        + (f" (+{hit.size - 1} more)" if hit.size > 1 else "")
                    )
        fin = np.isfinite(loss)
        if fin.sum() > 8:
            jumps = np.diff(loss[fin])
            sig = robust_sigma(jumps)
            if sig > 0:
                big = np.flatnonzero(jumps > 6 * sig + np.median(jumps))
                if big.size:
                    s = int(st[fin][big[0] + 1])
                    out.append(f"{name} loss spike at step {s} (+{jumps[big[0]]:.3g})")
    return out


def _late_gap(pair: Pair, band: np.ndarray) -> Row:
    la, lb = pair.series("a", "loss"), pair.series("b", "loss")
    assert la is not None and lb is not None
    k = _late_n(la.size)
    ma, mb = float(la[-k:].mean()), float(lb[-k:].mean())
    gap = ma - mb
    rel = abs(gap) / max(abs(mb), 1e-12)
    inside = abs(gap) <= float(np.median(band[-k:]))
    first, last = int(pair.steps[-k]), int(pair.steps[-1])
    return Row(
        row="late_gap",
        title="Late-stage gap",
        verdict="pass" if rel < std.LATE_GAP_REL else "fail",
        numbers={
            "from_step": first,
            "to_step": last,
            "mindformers": _g(ma),
            "megatron": _g(mb),
            "gap": _g(gap),
            "rel": _g(rel),
            "inside_band": inside,
        },
        detail=(
            f"steps {first}-{last}: mean loss {ma:.5g} vs {mb:.5g}, gap {gap:+.3g} ({rel:.2%}; the "
            f"guide accepts under {std.LATE_GAP_REL:.0%} and moves on to downstream evaluation)"
            + ("; inside the benchmark band" if inside else "")
        ),
    )


# -- learning rates -----------------------------------------------------------------------
def _lr_rows(pair: Pair, schedules: dict[str, Any]) -> list[Row]:
    ra, rb = pair.series("a", "lr"), pair.series("b", "lr")
    rows: list[Row] = []
    if ra is None or rb is None:
        missing = "MindFormers" if ra is None else "Megatron"
        rows.append(
            Row(
                row="lr.logged",
                title="Learning rates",
                verdict="unknown",
                detail=f"the {missing} log prints no learning rate",
            )
        )
    else:
        rows.append(
            _lr_compare(
                "lr.logged", "Learning rates", pair.steps, ra, rb, "MindFormers", "Megatron"
            )
        )
    for side, key in (("mindformers", "a"), ("megatron", "b")):
        sched = schedules.get(side)
        logged = pair.series(key, "lr")
        if sched is None or logged is None:
            continue
        name = "MindFormers" if side == "mindformers" else "Megatron"
        rows.append(
            _lr_compare(
                f"lr.configured.{side}",
                f"{name} lr vs its config",
                pair.steps,
                logged,
                _configured_at(sched, pair.steps),
                f"{name} log",
                "config",
            )
        )
    return rows


def _configured_at(sched: Any, steps: np.ndarray) -> np.ndarray:
    """The configured rate each logged step prints: both frameworks print the rate after
    the scheduler step, the rate of step i + 1. The whole curve up to the last step is
    built only when that is about as long as the log itself: a log whose last step is
    3e8 (or 18 digits) is sampled at its own steps (issue 32: 2.4 GB, then MemoryError)."""
    from cfglint.evidence.lr.curves import CHUNK, curve, sample

    at = np.clip(steps, 0, None)
    top = int(at[-1]) + 1
    if top <= 4 * steps.size + CHUNK:
        return np.asarray(curve(sched, top), dtype=np.float64)[at]
    return np.asarray(sample(sched, [int(s) + 1 for s in at]), dtype=np.float64)


def _lr_compare(
    row: str, title: str, steps: np.ndarray, x: np.ndarray, y: np.ndarray, nx: str, ny: str
) -> Row:
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.any():
        return Row(row=row, title=title, verdict="unknown", detail="no step with both rates")
    xs, ys, st = x[ok], y[ok], steps[ok]
    rel = np.abs(xs - ys) / np.maximum(np.maximum(np.abs(xs), np.abs(ys)), 1e-30)
    off = np.flatnonzero(rel > LR_REL_TOL)
    worst = int(np.argmax(rel))
    nums: dict[str, Any] = {
        "max_rel": _g(float(rel[worst])),
        "at_step": int(st[worst]),
        "steps": int(ok.sum()),
    }
    if not off.size:
        return Row(
            row=row,
            title=title,
            verdict="pass",
            numbers=nums,
            detail=f"{nx} and {ny} agree within {LR_REL_TOL:.0%} at all {ok.sum()} steps",
        )
    f = int(off[0])
    nums["first_step"] = int(st[f])
    return Row(
        row=row,
        title=title,
        verdict="differ",
        numbers=nums,
        detail=(
            f"first step off by more than {LR_REL_TOL:.0%}: {st[f]} ({nx} {xs[f]:.6g}, {ny} "
            f"{ys[f]:.6g}); largest gap {rel[worst]:.1%} at step {st[worst]}"
        ),
    )


# -- the lint's findings ------------------------------------------------------------------
def _link(rows: list[Row], findings: list[Any], div_step: int | None) -> None:
    for r in rows:
        key = r.row if r.row in guide.CAUSES else None
        if key is None or r.verdict not in BAD:
            continue
        wanted, why = guide.CAUSES[key]
        hits = [f for f in findings if guide.matches(f.row, wanted)]
        r.findings = [
            Linked(rule=f.rule, row=f.row, severity=f.severity, message=f.message) for f in hits
        ]
        if hits:
            r.detail += f"; {why}: the lint names {', '.join(sorted({f.rule for f in hits}))}"
        else:
            r.detail += f"; {why}: the lint found none of these in the configs"
        data = [f for f in hits if guide.is_data_row(f.row)]
        if key == "divergence" and data and div_step is not None:
            r.detail += (
                f"; data-related findings ({', '.join(sorted({f.rule for f in data}))}): "
                f"decode the batches around step {div_step}"
            )
