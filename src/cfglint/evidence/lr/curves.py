"""Evaluating schedules step by step, and comparing two curves."""

from __future__ import annotations

from cfglint.evidence.lr.megatron import megatron_pieces
from cfglint.evidence.lr.mindformers import mindformers_pieces
from cfglint.evidence.lr.schedule import CurveDiff, Piece, Schedule


def schedule_pieces(s: Schedule) -> list[Piece]:
    if s.framework == "megatron":
        raw = megatron_pieces(s)
    elif s.framework == "mindformers":
        raw = mindformers_pieces(s)
    else:
        raise ValueError(f"unknown framework {s.framework!r}")
    # A later phase may start "before" an earlier one on odd configs; the earlier wins.
    out: list[Piece] = []
    start = 0
    for first, fill in raw:
        start = max(start, first)
        out.append((start, fill))
    return out


def fill(pieces: list[Piece], a: int, b: int) -> list[float]:
    """Rates at scheduler indices a .. b-1 (index = step - 1)."""
    out: list[float] = []
    for i, (start, fill) in enumerate(pieces):
        stop = pieces[i + 1][0] if i + 1 < len(pieces) else b
        lo, hi = max(start, a), min(stop, b)
        if lo < hi:
            out += fill(lo, hi)
    return out


def lr_at(s: Schedule, step: int) -> float:
    """The learning rate the optimizer uses at update ``step`` (1 = first update)."""
    if step < 1:
        raise ValueError(f"step must be >= 1, got {step}")
    return fill(schedule_pieces(s), step - 1, step)[0]


def curve(s: Schedule, steps: int | None = None) -> list[float]:
    """``[lr_at(s, 1), ..., lr_at(s, steps or s.total_steps)]``."""
    return fill(schedule_pieces(s), 0, steps or s.total_steps)


# steps evaluated at once by compare(): bounded memory whatever the training length
CHUNK = 65_536


def _diff(a: list[float], b: list[float], rel_tol: float) -> CurveDiff:
    # x != y implies max(|x|, |y|) > 0, so no guard against division by zero is needed.
    gaps = [
        0.0 if x == y else abs(x - y) / (ax if (ax := abs(x)) > (ay := abs(y)) else ay)
        for x, y in zip(a, b, strict=True)
    ]
    largest = max(gaps, default=0.0)
    at = gaps.index(largest) + 1 if largest > 0.0 else 0
    first = next((i for i, g in enumerate(gaps, 1) if g > rel_tol), None)
    return CurveDiff(
        steps=len(gaps),
        first_diverging_step=first,
        max_rel_gap=largest,
        max_gap_step=at,
        a_at_first=None if first is None else a[first - 1],
        b_at_first=None if first is None else b[first - 1],
    )


def compare(a: Schedule, b: Schedule, steps: int | None = None, rel_tol: float = 0.01) -> CurveDiff:
    """Compare two schedules update by update; gaps are relative to the larger rate.

    The curves are evaluated a block of CHUNK steps at a time: holding both whole curves
    (and their gaps) as Python lists cost ~90 bytes a step, 1.7 GB at 19M steps."""
    n = steps if steps is not None else max(a.total_steps, b.total_steps)
    if n < 1:
        raise ValueError(f"steps must be >= 1, got {n}")
    pa, pb = schedule_pieces(a), schedule_pieces(b)
    largest, at = 0.0, 0
    first: int | None = None
    a_first = b_first = None
    for lo in range(0, n, CHUNK):
        hi = min(n, lo + CHUNK)
        ca, cb = fill(pa, lo, hi), fill(pb, lo, hi)
        if ca == cb:  # equal blocks (the common case) need no gaps: one comparison in C
            continue
        part = _diff(ca, cb, rel_tol)
        if part.max_rel_gap > largest:  # strictly larger: the earliest step of a tie wins
            largest, at = part.max_rel_gap, lo + part.max_gap_step
        if first is None and part.first_diverging_step is not None:
            first = lo + part.first_diverging_step
            a_first, b_first = part.a_at_first, part.b_at_first
    return CurveDiff(
        steps=n,
        first_diverging_step=first,
        max_rel_gap=largest,
        max_gap_step=at,
        a_at_first=a_first,
        b_at_first=b_first,
    )


def sample(s: Schedule, steps: list[int]) -> list[float]:
    """The rates at the given steps (1 = first update), without the curve in between: a
    plot needs a few thousand points of a run that may be millions of steps long."""
    pieces = schedule_pieces(s)
    return [fill(pieces, step - 1, step)[0] for step in steps]


def largest_abs_gap(a: Schedule, b: Schedule, n: int) -> tuple[int, float, float]:
    """(index, rate of a, rate of b) where the two curves differ most in absolute terms over
    their first ``n`` steps, evaluated CHUNK steps at a time (index 0 = step 1)."""
    pa, pb = schedule_pieces(a), schedule_pieces(b)
    best, at, va, vb = -1.0, 0, 0.0, 0.0
    for lo in range(0, n, CHUNK):
        ca, cb = fill(pa, lo, min(n, lo + CHUNK)), fill(pb, lo, min(n, lo + CHUNK))
        if ca == cb and best >= 0.0:  # an equal block cannot hold a larger gap
            continue
        for i, (x, y) in enumerate(zip(ca, cb, strict=True)):
            if abs(x - y) > best:
                best, at, va, vb = abs(x - y), lo + i, x, y
    return at, va, vb
