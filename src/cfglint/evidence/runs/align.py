"""Two runs' series on the steps both logged, and what the alignment had to deal with."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from cfglint.evidence.runs.stats import robust_sigma
from cfglint.load.losslog import RunLog

NAMES = {"mindformers": "MindFormers", "megatron": "Megatron"}
# averaging windows need the loss at every step in between: up to this many steps
MAX_WINDOW_GRID = 50_000_000
# steps listed by name in a note (NaN losses, skipped iterations)
LISTED = 20


@dataclass
class Pair:
    """``a`` (the migrated side, MindFormers) against ``b`` (the reference, Megatron), on
    the steps where both printed a finite loss."""

    a: RunLog
    b: RunLog
    steps: np.ndarray
    ia: np.ndarray  # index into a.steps of each common step
    ib: np.ndarray
    notes: list[str] = field(default_factory=list)
    # both logs printed the same steps, every loss finite: the indices are the identity
    whole: bool = False
    # how many iterations the reference's printed loss averages at each common step (its
    # --log-interval window; 1: the step's own loss)
    window: np.ndarray | None = None
    # MindFormers printed one step in several: its window means come from those single
    # steps, so each carries one step's scatter (how far one step's loss strays from its
    # window's mean), this much (0: not estimated)
    sampling: float = 0.0

    def series(self, side: str, name: str) -> np.ndarray | None:
        log, idx = (self.a, self.ia) if side == "a" else (self.b, self.ib)
        col = log.series.get(name)
        if col is None:
            return None
        return col if self.whole else col[idx]

    @property
    def diff(self) -> np.ndarray:
        la, lb = self.series("a", "loss"), self.series("b", "loss")
        assert la is not None and lb is not None
        return la - lb


def align(a: RunLog, b: RunLog) -> Pair:
    """Common steps (by iteration number), with notes on intervals, gaps and restarts."""
    notes = [*describe(a), *describe(b)]
    a = _lm_loss(a, notes)
    a, window, sampling = _windows(a, b, notes)
    if np.array_equal(a.steps, b.steps):  # both logged the same steps: no sort
        steps, ia, ib = a.steps, np.arange(a.steps.size), np.arange(b.steps.size)
    else:
        steps, ia, ib = np.intersect1d(a.steps, b.steps, assume_unique=True, return_indices=True)
    if a.interval() != b.interval() and window is None:
        notes.append(
            f"the logging intervals differ (MindFormers every {a.interval()} steps, Megatron "
            f"every {b.interval()}): compared on the {steps.size} steps both printed"
        )
    from cfglint.evidence.runs.stats import print_resolution

    for log in (a, b):
        res = print_resolution(log.series["loss"])
        if res >= 5e-4:
            notes.append(
                f"the {NAMES[log.framework]} log prints the loss to {res:.2g} "
                "(MindFormers' loss monitor prints three decimals up to v1.6.0, six from "
                f"v1.7.0): a difference below "
                f"{res / 2:.2g} cannot show"
            )
    la, lb = a.series["loss"][ia], b.series["loss"][ib]
    both = np.isfinite(la) & np.isfinite(lb)
    if not both.all():
        notes.append(
            f"{int((~both).sum())} common steps where a side printed no finite loss are left "
            f"out of the statistics: {_listed(steps[~both])}"
        )
    win = window[ib] if window is not None else None
    if both.all():
        same = steps.size == a.steps.size == b.steps.size
        return Pair(a, b, steps, ia, ib, notes, whole=same, window=win, sampling=sampling)
    return Pair(
        a,
        b,
        steps[both],
        ia[both],
        ib[both],
        notes,
        window=win[both] if win is not None else None,
        sampling=sampling,
    )


def _lm_loss(a: RunLog, notes: list[str]) -> RunLog:
    """MindFormers with ``print_separate_loss`` prints the total (``loss``: lm_loss plus the
    MoE balancing and MTP losses, wrapper.py:430-432@477621fd) and ``lm_loss`` apart
    (callback.py:535-540@d4ef84c2). Megatron's ``lm loss`` is the cross-entropy alone
    (pretrain_gpt.py:196@9539a12e; the balancing loss is added to the gradient, not to
    it): the two lm losses are compared."""
    if not a.has("lm_loss"):
        return a
    series = {**a.series, "total_loss": a.series["loss"], "loss": a.series["lm_loss"]}
    notes.append(
        "MindFormers prints lm_loss apart from its total loss (print_separate_loss): its "
        "lm_loss, without the balancing and MTP losses as Megatron's lm loss is, is compared"
    )
    return replace(a, series=series)


def _windows(a: RunLog, b: RunLog, notes: list[str]) -> tuple[RunLog, np.ndarray | None, float]:
    """Megatron's text log prints the mean loss of the ``--log-interval`` iterations up to
    each printed one (training.py:2240-2246@9539a12e); MindFormers prints the loss of the
    step itself (callback.py:531-534@d4ef84c2). MindFormers' losses are averaged over the
    same windows, from every step where it printed every step, else from the straight
    line between its prints (an estimate). Returns MindFormers on Megatron's steps, each
    step's window length (``None``: Megatron prints single steps), and for the estimate one
    step's scatter around its window's mean (0 when MindFormers printed every step)."""
    k = b.interval()
    la = a.series.get("loss")
    if k <= 1 or b.source != "text log" or la is None:
        return a, None, 0.0
    ok = np.isfinite(la)
    xs, ys = a.steps[ok], la[ok]
    if xs.size < 2 or int(xs[-1] - xs[0]) > MAX_WINDOW_GRID:
        notes.append(
            f"Megatron prints the mean loss of the last {k} iterations (--log-interval {k}); "
            "MindFormers' losses could not be averaged the same way: compared as printed"
        )
        return a, None, 0.0
    lo, hi = int(xs[0]), int(xs[-1])
    c = np.concatenate(([0.0], np.cumsum(np.interp(np.arange(lo, hi + 1), xs, ys))))
    st = b.steps
    start = np.maximum(st - k + 1, 1)
    inside = (start >= lo) & (st <= hi)
    st, start = st[inside], start[inside]
    mean = (c[st - lo + 1] - c[start - lo]) / (st - start + 1)
    series = {"loss": mean}
    pos = np.searchsorted(a.steps, st).clip(0, max(a.steps.size - 1, 0))
    hit = a.steps[pos] == st
    for name, col in a.series.items():
        if name != "loss":  # point values (lr, norms): the step's own, where printed
            series[name] = np.where(hit, col[pos], np.nan)
    how = (
        "averaged over the same windows"
        if a.interval() == 1
        else f"printed every {a.interval()} steps, interpolated between prints and averaged "
        "over the same windows (an estimate)"
    )
    notes.append(
        f"Megatron prints the mean loss of the last {k} iterations (--log-interval {k}); "
        f"MindFormers' per-step losses are {how}"
    )
    window = np.zeros(b.steps.size, np.int64)
    window[inside] = st - start + 1
    # one printed step's distance from its neighbours, noise and all: what a single step
    # standing for its window can be off by
    sampling = robust_sigma(np.diff(ys)) / np.sqrt(2) if a.interval() > 1 else 0.0
    return (
        replace(a, steps=st.astype(np.int64), series=series, restarts=[]),
        window,
        float(sampling),
    )


def describe(log: RunLog) -> list[str]:
    name = NAMES[log.framework]
    out = []
    for resumed, repeated in log.restarts[:3]:
        out.append(
            f"{name} log restarts at step {resumed} (a resumed run repeats {repeated} logged "
            "steps): the later print of each repeated step is used"
        )
    if log.restart_count > 3:
        out.append(f"{name} log has {log.restart_count} restarts in all")
    out += [f"{name} log: {note}" for note in log.read_notes]
    if log.out_of_range:
        out.append(
            f"{name} log prints {log.out_of_range} values beyond +/-1e30: read as infinite "
            "(no training run prints such a number)"
        )
    gaps = log.gaps()
    if gaps:
        shown = ", ".join(f"{x}->{y}" for x, y in gaps[:3])
        out.append(
            f"{name} log skips steps {len(gaps)} times ({shown}{', ...' if len(gaps) > 3 else ''})"
        )
    if log.truncated:
        out.append(f"{name} log is larger than the reading limit: judged on its first part")
    if log.partial_line:
        out.append(f"{name} log ends inside a line (a run still writing it): that line is left out")
    if log.empty_windows.size:
        out.append(
            f"{name} printed no lm loss, or 0 (core >= 0.17), where every iteration of the "
            f"window was skipped: not a loss, left out at steps {_listed(log.empty_windows)}"
        )
    return out + _events(log, name)


def _events(log: RunLog, name: str) -> list[str]:
    """The steps where a side printed no finite loss, skipped or nan iterations, or an
    overflow: listed, not only counted."""
    out = []
    loss = log.series.get("loss")
    if loss is not None:
        bad = log.steps[~np.isfinite(loss)]
        bad = np.setdiff1d(bad, log.empty_windows, assume_unique=True)
        if bad.size:
            out.append(f"{name} loss is NaN or infinite at steps {_listed(bad)}")
    for key, what in (("skipped", "skipped iterations"), ("nan", "nan iterations")):
        col = log.series.get(key)
        if col is not None and (hit := log.steps[np.nan_to_num(col) > 0]).size:
            out.append(f"{name} logged {what} at steps {_listed(hit)}")
    if log.has("overflow"):
        hit = log.steps[np.nan_to_num(log.series["overflow"]) > 0]
        if hit.size:
            out.append(f"{name} overflowed (overflow cond: True) at steps {_listed(hit)}")
    return out


def _listed(steps: np.ndarray) -> str:
    shown = ", ".join(str(int(s)) for s in steps[:LISTED])
    return shown + (f" and {steps.size - LISTED} more" if steps.size > LISTED else "")
