"""MindFormers' learning-rate schedule classes (``lr_schedule.type``) as a :class:`Schedule`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from cfglint.evidence.lr.schedule import ArgReader, Fill, Piece, Schedule, each, flat
from cfglint.model.record import Record

_MF_ALIASES = {
    "constant_with_warmup": "ConstantWarmUpLR",
    "linear": "LinearWithWarmUpLR",
    "cosine": "CosineWithWarmUpLR",
    "cosine_with_restarts": "CosineWithRestartsAndWarmUpLR",
    "polynomial": "PolynomialWithWarmUpLR",
    "cosine_annealing": "CosineAnnealingLR",
    "cosine_annealing_warm_restarts": "CosineAnnealingWarmRestarts",
}


class _MfParts(Record):
    """What every MindFormers class resolves before its own math."""

    __slots__ = ("cls", "init", "lr", "r", "sched_total", "train_total")

    r: ArgReader
    cls: str
    lr: float
    init: float
    sched_total: int | None  # the total_steps the class is constructed with
    train_total: int | None  # the real training length

    def __init__(
        self,
        r: ArgReader,
        cls: str,
        lr: float,
        init: float,
        sched_total: int | None,
        train_total: int | None,
    ) -> None:
        self.r = r
        self.cls = cls
        self.lr = lr
        self.init = init
        self.sched_total = sched_total
        self.train_total = train_total

    def need_total(self) -> int:
        if self.sched_total is None:
            raise ValueError(
                f"MindFormers {self.cls}: total_steps is -1/absent and the training length is "
                "unknown; pass total_steps (dataset size x epochs, or epochs x sink_size)"
            )
        return self.sched_total

    def ratio_steps(self, steps_key: str, ratio_key: str, default: int | None) -> int:
        """_get_lr_steps: a ratio wins over a step count and is floored."""
        ratio = self.r.num(ratio_key, None)
        if ratio is not None:
            if not 0.0 <= ratio <= 1.0:
                raise ValueError(f"MindFormers {self.cls}: {ratio_key} must be in [0, 1]")
            return int(self.need_total() * ratio)
        steps = self.r.int_(steps_key, default)
        if steps is None:
            self.r.notes.append(
                f"{steps_key} and {ratio_key} are both unset; MindFormers raises TypeError, "
                "assumed 0"
            )
            return 0
        return steps

    def warmup(self, default: int | None = None) -> int:
        if self.r.has("warmup_epochs") and not self.r.has("warmup_ratio"):
            raise ValueError(
                f"MindFormers {self.cls}: warmup_epochs needs the dataset size; "
                "give warmup_steps or warmup_ratio instead"
            )
        return self.ratio_steps("warmup_steps", "warmup_ratio", default)

    def schedule(
        self,
        style: str,
        *,
        min_lr: float,
        warmup_steps: int,
        decay_steps: int | None,
        extra: dict[str, float],
    ) -> Schedule:
        total = self.train_total if self.train_total is not None else self.need_total()
        if self.sched_total is not None and self.sched_total != total:
            self.r.notes.append(
                f"lr_schedule.total_steps is {self.sched_total} but training runs {total} "
                "steps: the schedule does not end with training"
            )
        return Schedule(
            framework="mindformers",
            style=style,
            max_lr=self.lr,
            min_lr=min_lr,
            warmup_steps=warmup_steps,
            warmup_init=self.init,
            decay_steps=decay_steps,
            total_steps=total,
            extra=extra,
            notes=tuple(self.r.notes),
        )


def _mf_parts(block: Mapping[str, object], total_steps: int | None, cls: str) -> _MfParts:
    r = ArgReader(block, f"MindFormers {cls}", yaml_strings=True)
    declared = r.int_("total_steps", None)
    # The trainer replaces -1/None by the computed length before building the class.
    sched_total = total_steps if declared is None or declared == -1 else declared
    lr_key = "base_lr" if cls.startswith("CosineAnnealing") else "learning_rate"
    lr = r.num(lr_key, None)
    if lr is None and lr_key == "base_lr" and r.has("learning_rate"):
        r.notes.append(f"{cls} takes base_lr, not learning_rate; MindFormers would fail")
        lr = r.num("learning_rate", None)
    if lr is None:
        raise ValueError(f"MindFormers {cls}: {lr_key} is not set")
    init = r.num_or("warmup_lr_init", 0.0)
    return _MfParts(r, cls, lr, init, sched_total, total_steps)


def _mf_end_check(p: _MfParts, end: float) -> None:
    if not p.lr > end:
        p.r.notes.append(f"lr_end {end} is not below learning_rate; MindFormers raises ValueError")


def _mf_constant(p: _MfParts) -> Schedule:
    warm = p.warmup()
    return p.schedule("constant", min_lr=p.lr, warmup_steps=warm, decay_steps=None, extra={})


def _mf_linear(p: _MfParts) -> Schedule:
    total = p.need_total()
    warm = p.warmup()
    extra = {"schedule_total": float(total), "linear_steps": float(max(1, total - warm))}
    return p.schedule("linear", min_lr=0.0, warmup_steps=warm, decay_steps=total, extra=extra)


def _mf_cutoff(p: _MfParts, total: int, with_ratio: bool) -> int:
    given = p.r.int_("decay_steps", None)
    cut = max(1, given) if given is not None else max(1, total)
    ratio = p.r.num("decay_ratio", None) if with_ratio else None
    return int(total * ratio) if ratio is not None else cut


def _mf_cosine(p: _MfParts, restarts: bool) -> Schedule:
    total = p.need_total()
    warm = p.warmup(None if restarts else 0)
    cosine_steps = max(1, total - warm)
    cut = _mf_cutoff(p, total, with_ratio=not restarts)
    cycles = p.r.num_or("num_cycles", 1.0 if restarts else 0.5)
    end = p.r.num_or("lr_end", 0.0)
    extra = {
        "schedule_total": float(total),
        "cosine_steps": float(cosine_steps),
        "cutoff": float(cut),
        "num_cycles": cycles,
    }
    return p.schedule(
        "cosine-restarts" if restarts else "cosine",
        min_lr=end,
        warmup_steps=warm,
        decay_steps=min(cut, warm + cosine_steps),
        extra=extra,
    )


def _mf_polynomial(p: _MfParts) -> Schedule:
    total = p.need_total()
    warm = p.warmup()
    given = p.r.int_("decay_steps", None)
    decay = max(1, given) if given is not None else max(1, total - warm)
    end = p.r.num_or("lr_end", 1e-7)
    power = p.r.num_or("power", 1.0)
    _mf_end_check(p, end)
    if warm + decay < total:
        p.r.notes.append(
            "decay_steps ends before total_steps: MindFormers keeps extrapolating the polynomial "
            + ("below lr_end" if power.is_integer() else "(NaN); lr_end is used here instead")
        )
    extra = {"schedule_total": float(total), "poly_decay_steps": float(decay), "power": power}
    return p.schedule(
        "polynomial", min_lr=end, warmup_steps=warm, decay_steps=warm + decay, extra=extra
    )


def _mf_wsd(p: _MfParts) -> Schedule:
    total = p.need_total()
    warm = p.warmup()
    start = p.ratio_steps("decay_start_steps", "decay_start_ratio", None)
    end = p.r.num_or("lr_end", 1e-7)
    _mf_end_check(p, end)
    extra = {"schedule_total": float(total), "decay_start": float(start)}
    return p.schedule("WSD", min_lr=end, warmup_steps=warm, decay_steps=total, extra=extra)


def _mf_cooldown(p: _MfParts) -> Schedule:
    total = p.need_total()
    warm = p.warmup()
    decay = _mf_cutoff(p, total, with_ratio=True)
    keep = max(0, p.r.int_or("keep_steps", 0))
    final = max(0, p.r.int_or("final_steps", 0))
    end1 = p.r.num_or("lr_end1", 0.0)
    # MindFormers writes `lr_end2 or lr_end1`, so an explicit 0 also means lr_end1.
    end2 = p.r.num("lr_end2", None) or end1
    extra = {
        "schedule_total": float(total),
        "keep_steps": float(keep),
        "cool_decay_steps": float(decay),
        "final_steps": float(final),
        "num_cycles": p.r.num_or("num_cycles", 0.5),
        "lr_end1": end1,
        "lr_end2": end2,
    }
    return p.schedule(
        "WSD", min_lr=end2, warmup_steps=warm, decay_steps=warm + keep + decay, extra=extra
    )


def _mf_annealing(p: _MfParts, restarts: bool) -> Schedule:
    eta = p.r.num_or("eta_min", 0.0)
    if restarts:
        t0 = p.r.int_("t_0", None)
        mult = p.r.int_or("t_mult", 1)
        if t0 is None or t0 < 1 or mult < 1:
            raise ValueError(f"MindFormers {p.cls}: t_0 and t_mult must be positive integers")
        extra = {"t_0": float(t0), "t_mult": float(mult)}
        period = t0
    else:
        t_max = p.r.int_("t_max", None)
        if t_max is None or t_max < 1:
            raise ValueError(f"MindFormers {p.cls}: t_max must be a positive integer")
        extra = {"t_max": float(t_max)}
        period = t_max
    if p.train_total is None and p.sched_total is None:
        p.r.notes.append(f"training length unknown; curve drawn over {period} steps")
        p.train_total = period
    return p.schedule(
        "cosine-annealing", min_lr=eta, warmup_steps=0, decay_steps=period, extra=extra
    )


_MF_BUILDERS: dict[str, Callable[[_MfParts], Schedule]] = {
    "ConstantWarmUpLR": _mf_constant,
    "LinearWithWarmUpLR": _mf_linear,
    "CosineWithWarmUpLR": lambda p: _mf_cosine(p, restarts=False),
    "CosineWithRestartsAndWarmUpLR": lambda p: _mf_cosine(p, restarts=True),
    "PolynomialWithWarmUpLR": _mf_polynomial,
    "WarmUpStableDecayLR": _mf_wsd,
    "ConstantWithCoolDownLR": _mf_cooldown,
    "CosineAnnealingLR": lambda p: _mf_annealing(p, restarts=False),
    "CosineAnnealingWarmRestarts": lambda p: _mf_annealing(p, restarts=True),
}


def mindformers_schedule(lr_schedule: Mapping[str, object], total_steps: int | None) -> Schedule:
    """Build the schedule a MindFormers ``lr_schedule`` YAML block produces.

    ``total_steps`` is the training length in optimizer steps; it replaces a block
    ``total_steps`` of -1 or absent, as the trainer does.
    """
    kind = str(lr_schedule.get("type", ""))
    cls = _MF_ALIASES.get(kind, kind)
    builder = _MF_BUILDERS.get(cls)
    if builder is None:
        raise ValueError(f"unsupported MindFormers lr schedule {kind}")
    return builder(_mf_parts(lr_schedule, total_steps, cls))


def mindformers_pieces(s: Schedule) -> list[Piece]:
    """The class's construct() at global_step g = step - 1."""
    if s.style == "cosine-annealing":
        return [(0, each(_mf_annealing_at(s)))]
    x = s.extra
    warm, hi, init = s.warmup_steps, s.max_lr, s.warmup_init
    rise = hi - init
    pieces: list[Piece] = []
    if warm > 0:
        pieces.append((0, lambda a, b: [init + rise * (g / warm) for g in range(a, b)]))
    pieces += _mf_tail(s, x, warm)
    if s.style in ("cosine", "cosine-restarts"):
        # Both cosine classes test the decay cut-off before the warmup.
        cut = int(x.get("cutoff", s.decay_steps or s.total_steps))
        pieces = [(min(start, cut), fill) for start, fill in pieces] + [(cut, flat(s.min_lr))]
    return pieces


def _mf_tail(s: Schedule, x: dict[str, float], warm: int) -> list[Piece]:
    total = int(x.get("schedule_total", s.total_steps))
    hi, end = s.max_lr, s.min_lr
    if s.style == "constant":
        return [(warm, flat(hi))]
    if s.style == "linear":
        steps = x.get("linear_steps", max(1, total - warm))
        # (total - g) / steps >= 0 up to total, so MindFormers' max(0, .) only bites after it.
        return [
            (warm, lambda a, b: [hi * ((total - g) / steps) for g in range(a, b)]),
            (total + 1, flat(0.0)),
        ]
    if s.style == "cosine":
        return [(warm, _mf_cosine_fill(s, x, total))]
    if s.style == "cosine-restarts":
        return [(warm, each(_mf_restart_at(s, x, total)))]
    if s.style == "polynomial":
        return [(warm, each(_mf_poly_at(s, x, total))), (total + 1, flat(end))]
    if s.style == "WSD" and "keep_steps" in x:
        return _mf_cooldown_tail(s, x, warm)
    if s.style == "WSD":
        start = int(x.get("decay_start", warm))
        span = total - start
        if span <= 0:
            return [(warm, flat(hi))]
        drop = hi - end
        return [
            (warm, flat(hi)),
            (start, lambda a, b: [hi - drop * ((g - start) / span) for g in range(a, b)]),
        ]
    raise ValueError(f"unsupported MindFormers schedule style {s.style}")


def _mf_cosine_fill(s: Schedule, x: dict[str, float], total: int) -> Fill:
    warm, hi, end = s.warmup_steps, s.max_lr, s.min_lr
    steps = x.get("cosine_steps", max(1, total - warm))
    scale = math.pi * x.get("num_cycles", 0.5) * 2.0
    span, cos = hi - end, math.cos
    # 0.5 * (1 + cos) is never negative, so MindFormers' max(0, .) is left out.
    return lambda a, b: [
        end + span * (0.5 * (1.0 + cos(scale * ((g - warm) / steps)))) for g in range(a, b)
    ]


def _mf_restart_at(s: Schedule, x: dict[str, float], total: int) -> Callable[[int], float]:
    warm, hi, end = s.warmup_steps, s.max_lr, s.min_lr
    steps = x.get("cosine_steps", max(1, total - warm))
    cycles = x.get("num_cycles", 1.0)

    def at(g: int) -> float:
        progress = (g - warm) / steps
        if progress >= 1.0:
            return 0.0  # MindFormers returns a literal zero here, not lr_end
        phase = (cycles * progress) % 1.0
        return end + (hi - end) * (0.5 * (1.0 + math.cos(math.pi * phase)))

    return at


def _mf_poly_at(s: Schedule, x: dict[str, float], total: int) -> Callable[[int], float]:
    warm, hi, end = s.warmup_steps, s.max_lr, s.min_lr
    decay = x.get("poly_decay_steps", max(1, total - warm))
    power = x.get("power", 1.0)
    integral = power.is_integer()

    def at(g: int) -> float:
        remaining = 1.0 - (g - warm) / decay
        if remaining < 0.0 and not integral:
            return end  # MindSpore computes NaN here
        return (hi - end) * remaining**power + end

    return at


def _mf_cooldown_tail(s: Schedule, x: dict[str, float], warm: int) -> list[Piece]:
    hi = s.max_lr
    keep_end = warm + int(x["keep_steps"])
    decay = int(x.get("cool_decay_steps", 1))
    decay_end = keep_end + decay
    final_end = decay_end + int(x.get("final_steps", 0))
    end1, end2 = x.get("lr_end1", s.min_lr), x.get("lr_end2", s.min_lr)
    scale = math.pi * x.get("num_cycles", 0.5) * 2.0
    span, cos = hi - end1, math.cos
    return [
        (warm, flat(hi)),
        (
            keep_end,
            lambda a, b: [
                end1 + span * (0.5 * (1.0 + cos(scale * ((g - keep_end) / decay))))
                for g in range(a, b)
            ],
        ),
        (decay_end, flat(end1)),
        (final_end, flat(end2)),
    ]


def _mf_annealing_at(s: Schedule) -> Callable[[int], float]:
    x = s.extra
    hi, eta = s.max_lr, s.min_lr
    if "t_0" not in x:
        scale = math.pi / x.get("t_max", float(s.decay_steps or s.total_steps))
        # No restart: past t_max the cosine simply climbs back up, as in MindFormers.
        return lambda g: eta + (hi - eta) * (0.5 * (1.0 + math.cos(scale * g)))
    t0, mult = x["t_0"], x.get("t_mult", 1.0)

    def at(g: int) -> float:
        start, period = 0.0, t0
        if mult == 1.0:
            start = (g // t0) * t0
        else:
            # Same cycle as MindFormers' closed-form log(), without its rounding.
            while g >= start + period:
                start += period
                period *= mult
        return eta + (hi - eta) * (0.5 * (1.0 + math.cos(math.pi * (g - start) / period)))

    return at
