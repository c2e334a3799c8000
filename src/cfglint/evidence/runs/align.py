"""Two runs' series on the steps both logged, and what the alignment had to deal with."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cfglint.load.losslog import RunLog

NAMES = {"mindformers": "MindFormers", "megatron": "Megatron"}


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
    if np.array_equal(a.steps, b.steps):  # both logged the same steps: no sort
        steps, ia, ib = a.steps, np.arange(a.steps.size), np.arange(b.steps.size)
    else:
        steps, ia, ib = np.intersect1d(a.steps, b.steps, assume_unique=True, return_indices=True)
    notes = [*describe(a), *describe(b)]
    if a.interval() != b.interval():
        notes.append(
            f"the logging intervals differ (MindFormers every {a.interval()} steps, Megatron "
            f"every {b.interval()}): compared on the {steps.size} steps both printed"
        )
    if b.interval() > 1:
        notes.append(
            f"Megatron prints the mean loss of the last {b.interval()} iterations "
            "(--log-interval); MindFormers prints the loss of the step itself"
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
            f"{int((~both).sum())} common steps where a side printed a NaN or infinite loss "
            "are left out of the statistics (listed as events)"
        )
    if both.all():
        same = steps.size == a.steps.size == b.steps.size
        return Pair(a, b, steps, ia, ib, notes, whole=same)
    return Pair(a, b, steps[both], ia[both], ib[both], notes)


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
    return out
