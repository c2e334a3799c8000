"""``cfglint logs --watch``: the Stage-3 comparison while both runs are still going.

Both logs are followed (each poll parses only the lines written since the last one) and the
pair is judged again whenever a side printed new steps. The watch ends as soon as the curves
part beyond the band (a failing divergence: exit 1 at once, not weeks later at the end of the
run), when neither log grew for ``idle`` seconds, or when ``until`` steps are common to both.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cfglint.evidence.runs.judge import BAD, Judged, judge
from cfglint.load.losslog import LogFollower, RunLog
from cfglint.model.errors import InputError

# the verdicts that end a watch: the curves parted beyond the band
PARTED = {"diverges", "departs"}


@dataclass
class WatchEnd:
    judged: Judged | None
    reason: str  # "parted", "idle", "until" or "interrupted"
    polls: int


def watch(
    mf_path: str,
    mg_path: str,
    baselines: list[RunLog],
    findings: list[Any] | None,
    schedules: dict[str, Any],
    on_judged: Callable[[Judged], None],
    interval: float = 30.0,
    idle: float = 0.0,
    until: int = 0,
    sleep: Callable[[float], None] = time.sleep,
) -> WatchEnd:
    """Follow, judge, call ``on_judged`` after each judgement; return why it stopped."""
    sides = (LogFollower(mf_path, "mindformers"), LogFollower(mg_path, "megatron"))
    judged: Judged | None = None
    last_growth, polls = time.monotonic(), 0
    try:
        while True:
            polls += 1
            new = sum(side.poll() for side in sides)
            now = time.monotonic()
            if new:
                last_growth = now
                judged = _judge(sides, baselines, findings, schedules)
                if judged is not None:
                    on_judged(judged)
                    if _parted(judged):
                        return WatchEnd(judged, "parted", polls)
                    if until and judged.report.steps["common"] >= until:
                        return WatchEnd(judged, "until", polls)
            if idle and now - last_growth >= idle:
                return WatchEnd(judged, "idle", polls)
            sleep(interval)
    except KeyboardInterrupt:
        return WatchEnd(judged, "interrupted", polls)


def _judge(
    sides: tuple[LogFollower, LogFollower],
    baselines: list[RunLog],
    findings: list[Any] | None,
    schedules: dict[str, Any],
) -> Judged | None:
    """The pair judged on the steps read so far; ``None`` until both sides share a step
    with a finite loss."""
    a, b = (side.log() for side in sides)
    if not (a.has("loss") and b.has("loss")):
        return None
    try:
        return judge(a, b, baselines, findings, schedules)
    except InputError:  # no common step yet
        return None


def _parted(judged: Judged) -> bool:
    return any(r.row == "divergence" and r.verdict in PARTED & BAD for r in judged.report.rows)
