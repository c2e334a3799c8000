"""``cfglint lr``: both sides' learning-rate schedules, each with a training length, and
whether the two curves agree over the steps both runs train (within 1% at every step)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cfglint.evidence.lr import CurveDiff, compare
from cfglint.evidence.lr.bridge import MAX_STEPS
from cfglint.evidence.lr.runlength import NAMES, build_schedules
from cfglint.model.config import Config
from cfglint.model.errors import InputError

__all__ = ["NAMES", "LrComparison", "check_steps", "compare_lr", "lr_schedules"]


@dataclass
class LrComparison:
    schedules: dict[str, Any]  # side -> Schedule, the side that knows its length first
    notes: list[str] = field(default_factory=list)  # how each length was given or computed
    # lengths borrowed from the other side: an agreement then holds only if they are right
    assumed: list[str] = field(default_factory=list)
    diff: CurveDiff | None = None  # both sides only

    @property
    def differ(self) -> bool:
        return self.diff is not None and self.diff.first_diverging_step is not None

    @property
    def common_steps(self) -> int | None:
        """The steps both runs train, when their lengths differ (else None)."""
        if len(self.schedules) != 2:
            return None
        a, b = self.schedules["mindformers"], self.schedules["megatron"]
        return None if a.total_steps == b.total_steps else min(a.total_steps, b.total_steps)


def check_steps(steps: int | None) -> None:
    if steps is not None and not 0 < steps <= MAX_STEPS:
        raise InputError(None, f"--steps must be between 1 and {MAX_STEPS}")


def compare_lr(
    mf: Config | None, mg: Config | None, steps: int | None, data: str | None = None
) -> LrComparison:
    """Both schedules and, for a pair, where the curves part."""
    check_steps(steps)
    scheds, notes, assumed = build_schedules(mf, mg, steps, data)
    out = LrComparison(scheds, [*notes, *(n for s in scheds.values() for n in s.notes)], assumed)
    if len(scheds) == 2:
        a, b = scheds["mindformers"], scheds["megatron"]
        out.diff = compare(a, b, min(a.total_steps, b.total_steps))
    return out


def lr_schedules(
    mf_path: str | None, mg_path: str | None, steps: int | None, launch: str | None = None
) -> dict[str, Any]:
    """Both sides' schedules from their files, each with a training length."""
    from cfglint.check.pipeline import load_megatron_side, load_mindformers_side

    mf = load_mindformers_side(mf_path, launch) if mf_path else None
    mg = load_megatron_side(mg_path) if mg_path else None
    scheds, _, _ = build_schedules(mf, mg, steps)
    return scheds
