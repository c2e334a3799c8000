"""The guide's Stage-3 judgements on two long runs, each a row with the numbers deciding it.

``a`` is the migrated run (MindFormers), ``b`` the reference (Megatron / MindSpeed-LLM);
the difference is ``a - b`` at each step both logged. The benchmark band is how far the
reference strays from itself, from baseline runs of the reference (the guide: run the
reference twice with determinism off). Without them the band is unknown and said so: the
curves part where their difference leaves what float arithmetic and the printed digits
explain (the float-noise limit), and a divergence or drift fails only beyond the guide's
lr = 0 forward limit (the first-loss standard, which the lr = 0 check applies per step).
"""

from __future__ import annotations

import math
import re
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
    # beyond this a divergence or a drift fails: the band with baselines, else the guide's
    # lr = 0 forward limit
    limit: np.ndarray | None = None


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
    base_curves, identical = _baselines(pair, baselines or [])
    band, band_info = _band(pair, d, base_curves)
    limit = band if base_curves else _lr0_limit(pair)
    if pair.sampling:  # single MindFormers steps stand for Megatron's windows
        band = band + BAND_SIGMAS * pair.sampling
        limit = band if base_curves else np.maximum(limit, band)
        band_info["sampling_widening"] = _g(BAND_SIGMAS * pair.sampling)
        pair.notes.append(
            f"the band and limits are widened by {BAND_SIGMAS * pair.sampling:.3g} ("
            f"{BAND_SIGMAS:g} times one printed step's scatter): a single step stands for a "
            "window, and its own loss strays from the window's mean by that much"
        )
    w = max(5, d.size // 100)
    smooth = running_mean(d, w)
    spread = _reference_spread(pair, base_curves)
    rows = [*_standard(pair, d, spread), *_lr0(pair, d)]
    rows.append(_band_row(pair, d, band, band_info, base_curves, identical))
    rows.append(_drift(pair, d, band, limit))
    div_row, div_step = _divergence(pair, d, smooth, band, limit, w)
    lost = _lost_loss(a, b)
    if lost is not None and (div_step is None or lost.numbers["step"] < div_step):
        div_row, div_step = lost, int(lost.numbers["step"])
    rows.append(div_row)
    rows.append(_late_gap(pair, band, bool(base_curves)))
    rows += _lr_rows(pair, schedules or {})
    if findings is not None:
        _link(rows, findings, div_step, _early(pair, div_step))
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
    return Judged(report, pair, band, smooth, base_curves, limit)


def _span(log: RunLog) -> str:
    return f"{int(log.steps[0])}-{int(log.steps[-1])}" if log.steps.size else "none"


def _on_steps(log: RunLog, steps: np.ndarray, name: str = "loss") -> np.ndarray | None:
    """The log's series at ``steps``: exact where it logged them, linear in between, NaN
    outside its range (``None`` when it printed none)."""
    y = log.series.get(name)
    if y is None:
        return None if name != "loss" else np.full(steps.size, np.nan)
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
def _baselines(
    pair: Pair, baselines: list[RunLog]
) -> tuple[list[tuple[RunLog, np.ndarray]], list[str]]:
    """Each baseline's loss on the common steps, less those identical to the reference
    run (no run-to-run error measured: determinism on, or the same log given twice)."""
    lb = pair.series("b", "loss")
    assert lb is not None
    kept, identical = [], []
    for bl in baselines:
        curve = _on_steps(bl, pair.steps)
        ok = np.isfinite(curve)
        if ok.any() and np.array_equal(curve[ok], lb[ok]):
            identical.append(bl.path)
        else:
            kept.append((bl, curve))
    return kept, identical


def _lr0_limit(pair: Pair) -> np.ndarray:
    """The guide's lr = 0 forward limit at each step: the first-loss standard (absolute or
    relative, whichever is wider), which the lr = 0 check applies to every step."""
    lb = pair.series("b", "loss")
    assert lb is not None
    return np.maximum(std.FIRST_LOSS_ABS, std.FIRST_LOSS_REL * np.abs(lb))


def _band(
    pair: Pair, d: np.ndarray, bases: list[tuple[RunLog, np.ndarray]]
) -> tuple[np.ndarray, dict[str, Any]]:
    lb = pair.series("b", "loss")
    assert lb is not None
    res = max(print_resolution(pair.series("a", "loss")), print_resolution(lb))
    noise = np.maximum(res / 2, FLOAT_FLOOR_REL * np.abs(lb))
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
    lr0 = _lr0_limit(pair)
    info = {
        "source": "unknown (no --baseline): float-noise limit",
        "runs": 1,
        "half_width_median": _g(float(np.median(noise))),
        "half_width_late": _g(float(np.median(noise[-_late_n(noise.size) :]))),
        "float_noise_limit": _g(float(np.median(noise))),
        "lr0_limit": _g(float(np.median(lr0))),
        "print_resolution": _g(res),
    }
    return noise, info


def _late_n(n: int) -> int:
    return max(1, round(n * LATE_SHARE))


def _band_row(
    pair: Pair,
    d: np.ndarray,
    band: np.ndarray,
    info: dict[str, Any],
    bases: list[tuple[RunLog, np.ndarray]],
    identical: list[str],
) -> Row:
    inside = float(np.mean(np.abs(d) <= band))
    nums: dict[str, Any] = {
        "inside_share": _g(inside),
        "half_width_median": info["half_width_median"],
    }
    same = (
        f"; {len(identical)} baseline run(s) identical to the reference run step for step "
        f"({', '.join(identical[:3])}): no run-to-run error measured (determinism on, or the "
        "same log), left out"
        if identical
        else ""
    )
    if identical:
        nums["identical_baselines"] = identical
    if not bases:
        return Row(
            row="benchmark.band",
            title="Benchmark band",
            verdict="unknown",
            numbers=nums,
            detail=(
                "the band is unknown: the guide's band is the reference's own spread, from "
                "running it twice with determinism off (--baseline MG_LOG2)"
                + same
                + f". Used instead: the float-noise limit +/-{info['float_noise_limit']:.3g} "
                "(64 float32 ulps of the loss, or half the printed step) for where the curves "
                f"part, and the lr = 0 forward limit +/-{info['lr0_limit']:.3g} "
                f"({std.FIRST_LOSS_LIMIT}) for a failure"
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
            f"steps, and its loss lies between the reference runs at {between:.0%}" + same
        ),
    )


# -- the migration standard ------------------------------------------------------------------
def _reference_spread(pair: Pair, bases: list[tuple[RunLog, np.ndarray]]) -> dict[str, float]:
    """The standard's numbers between the reference run and its own baseline runs (the
    largest over the baselines): the guide relaxes the standard to the reference's own
    fluctuation where that exceeds it."""
    lb, gb = pair.series("b", "loss"), pair.series("b", "grad_norm")
    assert lb is not None
    out: dict[str, float] = {}
    for bl, curve in bases:
        ok = np.isfinite(curve)
        if not ok.any():
            continue
        e = np.abs(curve[ok] - lb[ok])
        rel = e / np.maximum(np.abs(lb[ok]), 1e-12)
        out["mean_abs"] = max(out.get("mean_abs", 0.0), float(e.mean()))
        out["mean_rel"] = max(out.get("mean_rel", 0.0), float(rel.mean()))
        gn = _on_steps(bl, pair.steps, "grad_norm") if gb is not None else None
        if gn is not None and gb is not None:
            g_ok = np.isfinite(gn) & np.isfinite(gb)
            if g_ok.any():
                g = np.abs(gn[g_ok] - gb[g_ok]) / np.maximum(np.abs(gb[g_ok]), 1e-12)
                out["norm_rel"] = max(out.get("norm_rel", 0.0), float(g.mean()))
    return out


def _first_loss(pair: Pair) -> Row:
    la, lb = pair.series("a", "loss"), pair.series("b", "loss")
    assert la is not None and lb is not None
    s0 = int(pair.steps[0])
    e0, r0 = std.first_loss_error(float(la[0]), float(lb[0]))
    nums = {
        "step": s0,
        "mindformers": float(la[0]),
        "megatron": float(lb[0]),
        "abs": _g(e0),
        "rel": _g(r0),
    }
    k = int(pair.window[0]) if pair.window is not None else 1
    if k > 1:
        nums["window"] = k
        return Row(
            row=std.ROW_FIRST_LOSS,
            title="First-step loss",
            verdict="unknown",
            numbers=nums,
            detail=(
                f"Megatron's first printed loss (step {s0}) is the mean of {k} iterations "
                f"(--log-interval): the first-loss standard needs the loss of step 1 on both "
                f"sides (log the first steps with --log-interval 1); the {k}-step means differ "
                f"by {e0:.3g} ({r0:.2%})"
            ),
        )
    return Row(
        row=std.ROW_FIRST_LOSS,
        title="First-step loss",
        verdict="pass" if std.first_loss_ok(e0, r0) else "fail",
        numbers=nums,
        detail=f"step {s0}: {la[0]:.6g} vs {lb[0]:.6g}, error {e0:.3g} "
        f"({r0:.2%}; {std.FIRST_LOSS_LIMIT})",
    )


def _relaxed(ok: bool, within_own: bool | None, own: str) -> tuple[str, str]:
    """The verdict and a note: over the standard but within the reference's own spread
    passes (the guide relaxes the standard to the original model's fluctuation);
    ``within_own`` is ``None`` without baselines."""
    if ok:
        return "pass", ""
    if within_own is None:
        return "fail", ""
    if within_own:
        return "pass", f"; over the standard but within the reference's own run-to-run {own}"
    return "fail", f"; the reference's own runs differ by {own}"


def _standard(pair: Pair, d: np.ndarray, spread: dict[str, float]) -> list[Row]:
    lb = pair.series("b", "loss")
    assert lb is not None
    rows = [_first_loss(pair)]
    la = pair.series("a", "loss")
    assert la is not None
    ma, mr = std.mean_loss_error(la, lb)
    own = "mean_abs" in spread
    if pair.sampling:
        rows.append(
            Row(
                row=std.ROW_MEAN_LOSS,
                title="Mean loss error",
                verdict="unknown",
                numbers={"abs": _g(ma), "rel": _g(mr), "steps": int(d.size), "estimated": True},
                detail=(
                    "the mean-loss standard compares every step: MindFormers printed one step "
                    "in several and Megatron the mean of its --log-interval, so the two are not "
                    f"like for like (estimated from MindFormers' prints: {ma:.3g}, {mr:.2%}); "
                    "print every step on the MindFormers side (per_print_times 1)"
                ),
            )
        )
        return _global_norm_row(pair, rows, spread)
    verdict, why = _relaxed(
        std.mean_loss_ok(ma, mr),
        (ma <= spread["mean_abs"] or mr <= spread["mean_rel"]) if own else None,
        f"{spread.get('mean_abs', 0):.3g} ({spread.get('mean_rel', 0):.2%})",
    )
    rows.append(
        Row(
            row=std.ROW_MEAN_LOSS,
            title="Mean loss error",
            verdict=verdict,
            numbers={
                "abs": _g(ma),
                "rel": _g(mr),
                "steps": int(d.size),
                **({"reference_own_abs": _g(spread["mean_abs"])} if own else {}),
            },
            detail=f"over {d.size} steps: mean error {ma:.3g} ({mr:.2%}; {std.MEAN_LOSS_LIMIT})"
            + why,
        )
    )
    return _global_norm_row(pair, rows, spread)


def _global_norm_row(pair: Pair, rows: list[Row], spread: dict[str, float]) -> list[Row]:
    ga, gb = pair.series("a", "grad_norm"), pair.series("b", "grad_norm")
    if ga is None or gb is None:
        missing = "MindFormers (global_norm)" if ga is None else "Megatron (grad norm)"
        rows.append(
            Row(
                row=std.ROW_GLOBAL_NORM,
                title="Global norm",
                verdict="unknown",
                detail=f"{missing} printed no gradient norm",
            )
        )
        return rows
    ok = np.isfinite(ga) & np.isfinite(gb)
    rel = std.global_norm_error(ga[ok], gb[ok]) if ok.any() else math.nan
    own_norm = spread.get("norm_rel")
    verdict, why = (
        _relaxed(
            std.global_norm_ok(rel),
            None if own_norm is None else rel <= own_norm,
            _pct(own_norm or 0.0),
        )
        if ok.any()
        else ("unknown", "")
    )
    rows.append(
        Row(
            row=std.ROW_GLOBAL_NORM,
            title="Global norm",
            verdict=verdict,
            numbers={
                "rel": _g(rel),
                "steps": int(ok.sum()),
                **({"reference_own_rel": _g(own_norm)} if own_norm is not None else {}),
            },
            detail=f"mean relative error {_pct(rel)} over {int(ok.sum())} steps "
            f"({std.GLOBAL_NORM_LIMIT})" + why,
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
def _drift(pair: Pair, d: np.ndarray, band: np.ndarray, limit: np.ndarray) -> Row:
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
    limit_late = float(np.median(limit[-n_late:]))
    within_limit = abs(offset) <= limit_late
    drift = p_late < DRIFT_P and abs(offset) > band_late and not arithmetic and not within_limit
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
        inside = (
            f"inside the band +/-{band_late:.3g}"
            if abs(offset) <= band_late
            else f"beyond the float-noise limit +/-{band_late:.3g} and inside the lr = 0 "
            f"forward limit +/-{limit_late:.3g} (the band is unknown: no --baseline)"
        )
        nums["limit_late"] = _g(limit_late)
        detail = (
            f"the late difference keeps one sign ({same_side}/{pos + neg} late blocks "
            f"{'above' if offset > 0 else 'below'} 0, p={p_late:.2g}) but its offset "
            f"{offset:+.3g} is {inside}"
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
    pair: Pair, d: np.ndarray, smooth: np.ndarray, band: np.ndarray, limit: np.ndarray, w: int
) -> tuple[Row, int | None]:
    """Where the running mean of the difference leaves the band: for good ("diverges"), or
    for a sustained stretch after which the curves meet again ("departs": a cause that
    shows early and fades, as a learning-rate difference on a run that plateaus). Without
    baselines the verdict is taken against the lr = 0 forward limit and the step where the
    curves part from the float-noise limit ("parts": beyond float noise, inside the lr = 0
    limit, not a failure)."""
    n = smooth.size
    out = np.abs(smooth) > band
    min_len = max(w, n // 20, 1)
    nums: dict[str, Any] = {"window": w, "outside_share": _g(float(out.mean()))}
    judged = _leaves(np.abs(smooth) > limit, min_len)
    # without baselines, parting is a stretch out of the float-noise limit on one side of
    # 0: a difference that fluctuates around 0 (the guide's reasonable error) does not part
    side = np.sign(smooth) * out
    if judged is None and limit is not band:
        starts = [st for sg in (1, -1) if (st := _first_stretch(side == sg, min_len))]
        if starts:
            judged = (min(starts)[0], "parts", "")
    if judged is None:
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
    i, verdict, span = judged
    if limit is not band and verdict != "parts":
        span = span.replace("for ", "and is beyond the lr = 0 forward limit for ", 1).replace(
            "back inside from", "back inside it from"
        )
    if limit is not band:
        nums["beyond_lr0_limit_at"] = int(pair.steps[i]) if verdict != "parts" else None
        sg = side[i]
        while i > 0 and side[i - 1] == sg != 0:  # back to where they left float noise
            i -= 1
        span += "; the band is unknown (no --baseline): " + (
            f"past the lr = 0 forward limit from step {nums['beyond_lr0_limit_at']}"
            if verdict != "parts"
            else f"it stays inside the lr = 0 forward limit +/-"
            f"{float(np.median(limit[i:])):.3g} ({std.FIRST_LOSS_LIMIT})"
        )
    nums.update(span=span)
    return _divergence_row(pair, d, smooth, band, w, i, verdict, nums)


def _leaves(out: np.ndarray, min_len: int) -> tuple[int, str, str] | None:
    """(index, verdict, how long) where ``out`` turns on for good or for a stretch."""
    n = out.size
    idx = np.arange(n)
    suffix = np.cumsum(out[::-1])[::-1]
    cond = out & (suffix >= STAY_OUT * (n - idx)) & ((n - idx) >= min_len)
    if cond.any():
        i = int(np.argmax(cond))
        return i, "diverges", f"and stays out ({float(out[i:].mean()):.0%} of the {n - i} steps)"
    stretch = _first_stretch(out, min_len)
    if stretch is None:
        return None
    i, j = stretch
    return (
        i,
        "departs",
        f"for {j - i} steps"
        + (f", back inside from index {j} (the curves meet again)" if j < n else " until the end"),
    )


def _divergence_row(
    pair: Pair,
    d: np.ndarray,
    smooth: np.ndarray,
    band: np.ndarray,
    w: int,
    i: int,
    verdict: str,
    nums: dict[str, Any],
) -> tuple[Row, int]:
    span = nums.pop("span")
    back = re.search(r"from index (\d+)", span)
    if back:
        j = int(back.group(1))
        nums["back_at_step"] = int(pair.steps[j])
        span = span.replace(f"index {j}", f"step {int(pair.steps[j])}")
    i = _onset(d, band, i, w)
    step = int(pair.steps[i])
    peak = i + int(np.argmax(np.abs(smooth[i:])))
    events = _events(pair, step, max(w, 20 * max(pair.a.interval(), pair.b.interval())))
    at = "from the first common step" if i == 0 else f"at step {step}"
    what = "the float-noise limit" if "beyond_lr0_limit_at" in nums else "the band"
    detail = (
        f"the difference leaves {what} {at} {span}".replace(" ;", ";")
        + f"; its running mean ({w}-step window) peaks at {smooth[peak]:+.3g} at step "
        f"{int(pair.steps[peak])}, {what.removeprefix('the ')} +/-{band[peak]:.3g}"
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
    # a window Megatron skipped whole printed no loss, which is not a lost loss
    fb |= np.isin(steps, b.empty_windows)
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


def _late_gap(pair: Pair, band: np.ndarray, known: bool = True) -> Row:
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
        # one printed step standing for each window: a gap within that scatter is not
        # told from it
        verdict="pass"
        if rel < std.LATE_GAP_REL
        else ("unknown" if pair.sampling and inside else "fail"),
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
            + (
                "; inside the "
                + (
                    "band widened for single printed steps"
                    if pair.sampling
                    else ("benchmark band" if known else "float-noise limit")
                )
                if inside
                else ""
            )
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
def _early(pair: Pair, div_step: int | None) -> bool:
    """The curves part within the first steps (the first tenth of the run, or the first
    20 logged steps): what differs from the first update, not a late effect."""
    if div_step is None:
        return False
    n = pair.steps.size
    cut = pair.steps[min(n - 1, max(20, n // 10))]
    return div_step <= int(cut)


def _link(rows: list[Row], findings: list[Any], div_step: int | None, early: bool) -> None:
    for r in rows:
        key = r.row if r.row in guide.CAUSES else None
        if key is None or r.verdict not in BAD | {"parts"}:
            continue
        wanted, why = guide.CAUSES[key]
        if key == "divergence" and early:
            wanted, why = wanted + guide.EARLY, why + "; " + guide.EARLY_WHY
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
