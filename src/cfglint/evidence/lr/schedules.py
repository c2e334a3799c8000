"""Learning-rate schedules of Megatron-LM and MindFormers, evaluated step by step.

Pure Python and stdlib only, so ``cfglint lr`` and the lint engine import it cheaply.

The math is reimplemented from the sources of:

* Megatron-LM core_v0.19.0, commit 5be9626709af2722333bf54797c954c09edeada3
  (``megatron/core/optimizer_param_scheduler.py`` ``OptimizerParamScheduler.get_lr`` and
  ``megatron/training/training.py`` ``get_optimizer_param_scheduler`` / ``train_step``);
  both are unchanged at main d98e8a64ddf34856e74b24714e3bedb2f5a39553 and the formulas are
  the same back to core_r0.12.0, the base of current MindSpeed-LLM.
* MindFormers master f52743ca27a5a8af5fbc77c5b2037c1147c7004c (version 1.7.0)
  (``mindformers/core/lr/lr_schedule.py``, ``build_lr.py``, ``core/optim/adamw.py``,
  ``trainer/base_trainer.py``). The per-step formulas match v1.6.0; 1.7 only adds a
  ``warmup_steps != 0`` guard, which changes no value at a step >= 1.

Step indexing: what learning rate update number ``i`` (1-based) really uses
--------------------------------------------------------------------------
Megatron-LM
    The scheduler starts with ``num_steps = 0`` (its constructor calls ``step(0)``). After
    each successful ``optimizer.step()`` the training loop calls
    ``opt_param_scheduler.step(increment=num_microbatches * micro_batch_size * dp)``, i.e.
    the global batch size, in iteration-based and in sample-based mode alike. In
    iteration mode ``get_optimizer_param_scheduler`` multiplies ``lr_decay_iters``,
    ``lr_warmup_iters`` and ``lr_wsd_decay_iters`` by the global batch size, so the
    scheduler always counts samples. Update ``i`` therefore runs with
    ``num_steps = (i - 1) * global_batch_size``. With any warmup, update 1 uses
    ``lr_warmup_init`` (0.0 by default): the first update does nothing. A skipped
    update (fp16 overflow) does not advance the scheduler. The "learning rate" Megatron
    logs for iteration ``i`` is read after the scheduler step: it is the rate of ``i + 1``.
MindFormers
    ``Optimizer.global_step`` starts at 0. ``AdamW.construct`` calls ``get_lr()`` (the
    schedule at ``global_step``) and then increments ``global_step`` itself (MindSpore >= 2.2
    no longer increments inside ``get_lr``). Update ``i`` uses ``global_step = i - 1``.
    An overflow-skipped update does not call the optimizer and does not advance it. The
    loss monitor prints ``lr(global_step)`` after the update: again the rate of ``i + 1``.

So both frameworks evaluate index ``i - 1`` at update ``i``: with the same warmup length,
decay length and floor, Megatron ``cosine`` and MindFormers ``CosineWithWarmUpLR`` produce
the same curve (there is no off-by-one between them). Where they do differ:

* warmup from a ratio: MindFormers floors ``int(total_steps * warmup_ratio)``; Megatron
  uses ``lr_warmup_fraction * lr_decay_iters`` unrounded (and of the decay length, not the
  training length);
* MindFormers ``LinearWithWarmUpLR`` decays to 0 (it has no ``lr_end``); Megatron
  ``linear`` decays to ``min_lr``;
* Megatron holds ``min_lr`` once ``num_steps > lr_decay_steps``; MindFormers cosine jumps
  to ``lr_end`` at ``global_step >= decay_steps`` (default ``total_steps``).

Limitations (also written into ``Schedule.notes`` where they apply): batch-size rampup,
per-group ``max_lr``/``min_lr`` overrides and ``--decoupled-lr`` (Megatron), scheduler state
restored from a checkpoint, MindFormers ``use_fused: True`` (``FusedAdamW`` starts its
``global_step`` at -1, so it evaluates the schedule one index earlier), the ``lr_scale``
learning-rate scaling of the trainer, and MindSpore's float32 arithmetic (our values are
float64; the difference is ~1e-7 relative) are not modeled.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MEGATRON_REF = "Megatron-LM core_v0.19.0 (5be9626709af2722333bf54797c954c09edeada3)"
MINDFORMERS_REF = "MindFormers 1.7.0 master (f52743ca27a5a8af5fbc77c5b2037c1147c7004c)"

STYLES = (
    "constant",
    "linear",
    "cosine",
    "inverse-square-root",
    "WSD",
    "polynomial",
    "cosine-restarts",
    "cosine-annealing",
)
MEGATRON_STYLES = ("constant", "linear", "cosine", "inverse-square-root", "WSD")
# Schedule.extra holds floats only, so the WSD anneal shape is stored as an index here.
WSD_DECAY_STYLES = ("exponential", "linear", "cosine", "minus_sqrt")

_MF_ALIASES = {
    "constant_with_warmup": "ConstantWarmUpLR",
    "linear": "LinearWithWarmUpLR",
    "cosine": "CosineWithWarmUpLR",
    "cosine_with_restarts": "CosineWithRestartsAndWarmUpLR",
    "polynomial": "PolynomialWithWarmUpLR",
    "cosine_annealing": "CosineAnnealingLR",
    "cosine_annealing_warm_restarts": "CosineAnnealingWarmRestarts",
}

# A piece covers scheduler indices (g = step - 1) from its start up to the next piece's start.
# Its fill returns the rates for range(a, b) from one comprehension, which keeps 500k-step
# curves fast; lr_at() uses the same pieces, so there is one implementation of each formula.
Fill = Callable[[int, int], list[float]]
Piece = tuple[int, Fill]


def _flat(value: float) -> Fill:
    return lambda a, b: [value] * (b - a)


def _each(at: Callable[[int], float]) -> Fill:
    return lambda a, b: [at(g) for g in range(a, b)]


@dataclass(frozen=True)
class Schedule:
    """One framework's learning-rate schedule, resolved to optimizer steps.

    ``warmup_steps``, ``decay_steps`` and ``total_steps`` count optimizer updates.
    ``decay_steps`` is where the decay phase *ends*, counted from the start of training
    (warmup included) in both frameworks: Megatron's ``lr_decay_iters`` (or
    ``lr_decay_samples / global_batch_size``); for MindFormers the step at which the class
    reaches its floor. ``None`` when the schedule never decays.

    ``min_lr`` is the effective floor: for ``constant`` it equals ``max_lr`` (Megatron
    ignores ``--min-lr`` then; the argument is kept in ``extra["min_lr_arg"]``).

    ``extra`` carries what the curve needs beyond the common fields, exactly (fractional
    sample counts included); :func:`lr_at` prefers it over the rounded fields:

    * Megatron: ``samples_per_step`` (global batch size, 1 when unknown), ``warmup_samples``,
      ``decay_samples``; WSD adds ``wsd_decay_samples``, ``wsd_decay_steps`` and
      ``wsd_decay_style`` (an index into :data:`WSD_DECAY_STYLES`).
    * MindFormers: ``schedule_total`` (the ``total_steps`` the class was built with), and
      per class ``cosine_steps``/``cutoff``/``num_cycles``, ``linear_steps``,
      ``power``/``poly_decay_steps``, ``decay_start``, ``keep_steps``/``cool_decay_steps``/
      ``final_steps``/``lr_end1``/``lr_end2``, ``t_max`` or ``t_0``/``t_mult``.
    """

    framework: str
    style: str
    max_lr: float
    min_lr: float
    warmup_steps: int
    warmup_init: float
    decay_steps: int | None
    total_steps: int
    extra: dict[str, float]
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.framework} {self.style}"


@dataclass(frozen=True)
class CurveDiff:
    """How two curves differ; steps are 1-based optimizer updates.

    ``max_gap_step`` is 0 when the curves are identical.
    """

    steps: int
    first_diverging_step: int | None
    max_rel_gap: float
    max_gap_step: int
    a_at_first: float | None
    b_at_first: float | None


# --------------------------------------------------------------------------- reading input


class _Reader:
    """Typed access to a config mapping, collecting notes about lenient conversions."""

    def __init__(self, data: Mapping[str, object], where: str, yaml_strings: bool) -> None:
        self.data = data
        self.where = where
        # MindFormers reads YAML with PyYAML (YAML 1.1), where `1e-5` stays a string.
        self.yaml_strings = yaml_strings
        self.notes: list[str] = []

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def num(self, key: str, default: float | None) -> float | None:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool):
            raise ValueError(f"{self.where}: {key} must be a number, got {value!r}")
        if isinstance(value, int | float):
            return float(value)
        try:
            number = float(str(value))
        except ValueError:
            raise ValueError(f"{self.where}: {key} must be a number, got {value!r}") from None
        if self.yaml_strings:
            self.notes.append(
                f"{key} is the string {value!r}; MindFormers (PyYAML) would reject it, "
                f"read here as {number!r}"
            )
        return number

    def num_or(self, key: str, default: float) -> float:
        value = self.num(key, None)
        return default if value is None else value

    def need_num(self, key: str) -> float:
        value = self.num(key, None)
        if value is None:
            raise ValueError(f"{self.where}: {key} is not set")
        return value

    def int_(self, key: str, default: int | None) -> int | None:
        value = self.num(key, None)
        if value is None:
            return default
        if not value.is_integer():
            raise ValueError(f"{self.where}: {key} must be an integer, got {value!r}")
        return int(value)

    def int_or(self, key: str, default: int) -> int:
        value = self.int_(key, None)
        return default if value is None else value

    def text(self, key: str, default: str) -> str:
        value = self.data.get(key)
        return default if value is None else str(value)


def _round_steps(units: float, per_step: float) -> int:
    return round(units / per_step)


# --------------------------------------------------------------------------- Megatron


@dataclass(frozen=True)
class _MegatronLengths:
    """Scheduler lengths in samples, as get_optimizer_param_scheduler computes them."""

    samples_per_step: float
    total_steps: int
    warmup: float
    decay: float
    wsd: float | None


def _megatron_lengths(r: _Reader, gbs: int | None) -> _MegatronLengths:
    train_iters = r.int_("train_iters", None)
    train_samples = r.int_("train_samples", None)
    fraction = r.num("lr_warmup_fraction", None)
    if train_iters:
        if train_samples:
            r.notes.append("both train_iters and train_samples are set; Megatron asserts")
        if gbs is None:
            # Iteration counts cancel out of every ratio except inverse-square-root at warmup 0.
            r.notes.append("global batch size unknown: scheduler counted in iterations")
        per = float(gbs or 1)
        decay = float(r.int_or("lr_decay_iters", train_iters)) * per
        wsd_iters = r.int_("lr_wsd_decay_iters", None)
        wsd = None if wsd_iters is None else wsd_iters * per
        warmup_iters = r.int_or("lr_warmup_iters", 0)
        if fraction is not None and warmup_iters:
            r.notes.append("lr_warmup_fraction and lr_warmup_iters both set; Megatron asserts")
        warmup = fraction * decay if fraction is not None else warmup_iters * per
        return _MegatronLengths(per, train_iters, warmup, decay, wsd)
    if train_samples:
        if not gbs:
            raise ValueError(
                "megatron args: sample-based training (train_samples) needs the global batch size "
                "to convert samples to optimizer steps"
            )
        decay = float(r.int_or("lr_decay_samples", train_samples))
        wsd_samples = r.int_("lr_wsd_decay_samples", None)
        warmup_samples = r.int_or("lr_warmup_samples", 0)
        if fraction is not None and warmup_samples:
            r.notes.append("lr_warmup_fraction and lr_warmup_samples both set; Megatron asserts")
        warmup = fraction * decay if fraction is not None else float(warmup_samples)
        r.notes.append(
            f"sample-based: lengths in samples converted with global batch size {gbs}; "
            f"train_iters = train_samples // {gbs} = {train_samples // gbs}"
        )
        wsd = None if wsd_samples is None else float(wsd_samples)
        return _MegatronLengths(float(gbs), train_samples // gbs, warmup, decay, wsd)
    raise ValueError("megatron args: either train_iters or train_samples must be set")


def _megatron_checks(r: _Reader, hi: float, lo: float, init: float, ln: _MegatronLengths) -> None:
    """Megatron asserts these at start-up; we still draw the curve but say so."""
    if ln.decay <= 0:
        r.notes.append("lr decay length is 0; Megatron asserts lr_decay_steps > 0")
    if ln.warmup >= ln.decay > 0:
        r.notes.append("warmup is not shorter than the decay; Megatron asserts")
    if lo > hi:
        r.notes.append(f"min_lr {lo} > lr {hi}; Megatron asserts")
    if init > hi:
        r.notes.append(f"lr_warmup_init {init} > lr {hi}; Megatron asserts")
    if ln.warmup % ln.samples_per_step:
        r.notes.append(
            f"warmup spans {ln.warmup / ln.samples_per_step:g} optimizer steps (not whole)"
        )
    if r.has("rampup_batch_size"):
        r.notes.append("batch-size rampup: curve assumes the final global batch size throughout")


def megatron_schedule(args: Mapping[str, object], global_batch_size: int | None = None) -> Schedule:
    """Build the schedule Megatron-LM derives from its (effective) argparse values."""
    r = _Reader(args, "megatron args", yaml_strings=False)
    style = r.text("lr_decay_style", "linear")
    if style not in MEGATRON_STYLES:
        raise ValueError(f"unsupported Megatron lr_decay_style {style}")
    hi = r.need_num("lr")
    lo = r.num_or("min_lr", 0.0)
    init = r.num_or("lr_warmup_init", 0.0)
    gbs = global_batch_size or r.int_("global_batch_size", None)
    ln = _megatron_lengths(r, gbs)
    _megatron_checks(r, hi, lo, init, ln)
    per = ln.samples_per_step
    extra: dict[str, float] = {
        "samples_per_step": per,
        "warmup_samples": ln.warmup,
        "decay_samples": ln.decay,
    }
    if style == "WSD":
        extra.update(_megatron_wsd_extra(r, ln))
    if style == "constant":
        extra["min_lr_arg"] = lo
        lo = hi
    return Schedule(
        framework="megatron",
        style=style,
        max_lr=hi,
        min_lr=lo,
        warmup_steps=_round_steps(ln.warmup, per),
        warmup_init=init,
        decay_steps=None if style == "constant" else _round_steps(ln.decay, per),
        total_steps=ln.total_steps,
        extra=extra,
        notes=tuple(r.notes),
    )


def _megatron_wsd_extra(r: _Reader, ln: _MegatronLengths) -> dict[str, float]:
    if ln.wsd is None:
        raise ValueError(
            "megatron args: lr_decay_style WSD needs lr_wsd_decay_iters (or lr_wsd_decay_samples)"
        )
    sub = r.text("lr_wsd_decay_style", "exponential")
    if sub not in WSD_DECAY_STYLES:
        raise ValueError(f"unsupported Megatron lr_wsd_decay_style {sub}")
    return {
        "wsd_decay_samples": ln.wsd,
        "wsd_decay_steps": ln.wsd / ln.samples_per_step,
        "wsd_decay_style": float(WSD_DECAY_STYLES.index(sub)),
    }


def wsd_decay_style(s: Schedule) -> str | None:
    """The WSD anneal shape of a Megatron schedule, by name."""
    code = s.extra.get("wsd_decay_style")
    return None if code is None else WSD_DECAY_STYLES[int(code)]


def _wsd_coeff(style: str) -> Callable[[float], float]:
    if style == "linear":
        return lambda r: 1.0 - r
    if style == "cosine":
        return lambda r: 0.5 * (math.cos(math.pi * r) + 1.0)
    if style == "exponential":
        return lambda r: 2.0 * math.pow(0.5, r) - 1.0
    return lambda r: 1.0 - math.sqrt(r)


def _last_index_within(limit: float, per: float) -> int:
    """Largest scheduler index g (>= -1) whose sample count g * per is <= limit."""
    g = math.floor(limit / per)
    # limit / per can land a hair off an integer; settle it on the real comparison.
    while (g + 1) * per <= limit:
        g += 1
    while g >= 0 and g * per > limit:
        g -= 1
    return g


def _megatron_pieces(s: Schedule) -> list[Piece]:
    """OptimizerParamScheduler.get_lr at num_steps = g * global batch size, g = step - 1."""
    x = s.extra
    per = x.get("samples_per_step", 1.0)
    warm = x.get("warmup_samples", s.warmup_steps * per)
    decay_end = s.decay_steps if s.decay_steps is not None else s.total_steps
    dec = x.get("decay_samples", decay_end * per)
    hi, lo, init = s.max_lr, s.min_lr, s.warmup_init
    # Megatron's warmup test is `num_steps <= lr_warmup_steps`, so the warmup includes its end.
    past_warmup = _last_index_within(warm, per) + 1 if warm > 0 else 0
    pieces: list[Piece] = []
    if past_warmup:
        rise = hi - init
        pieces.append((0, lambda a, b: [init + rise * (g * per) / warm for g in range(a, b)]))
    if s.style == "constant":
        return [*pieces, (past_warmup, _flat(hi))]
    past_decay = max(past_warmup, _last_index_within(dec, per) + 1)
    pieces.append((past_warmup, _megatron_decay(s, warm, dec, per)))
    pieces.append((past_decay, _flat(lo)))
    return pieces


def _megatron_decay(s: Schedule, warm: float, dec: float, per: float) -> Fill:
    hi, lo = s.max_lr, s.min_lr
    delta, span = hi - lo, dec - warm
    if span <= 0:
        return _flat(lo)  # Megatron refuses such a config; already noted
    cos, pi = math.cos, math.pi
    if s.style == "linear":
        return lambda a, b: [lo + (1.0 - (g * per - warm) / span) * delta for g in range(a, b)]
    if s.style == "cosine":
        return lambda a, b: [
            lo + 0.5 * (cos(pi * ((g * per - warm) / span)) + 1.0) * delta for g in range(a, b)
        ]
    if s.style == "inverse-square-root":
        root_w = math.sqrt(max(warm, 1.0))
        return _each(lambda g: max(lo, hi * root_w / math.sqrt(max(g * per, 1.0))))
    if s.style == "WSD":
        return _each(_megatron_wsd(s, dec, per))
    raise ValueError(f"unsupported Megatron lr_decay_style {s.style}")


def _megatron_wsd(s: Schedule, dec: float, per: float) -> Callable[[int], float]:
    x = s.extra
    wsd = x.get("wsd_decay_samples", x.get("wsd_decay_steps", 0.0) * per)
    shape = _wsd_coeff(wsd_decay_style(s) or "exponential")
    anneal_start = dec - wsd
    lo, delta = s.min_lr, s.max_lr - s.min_lr

    def at(g: int) -> float:
        n = g * per
        return lo + (1.0 if n <= anneal_start else shape((n - anneal_start) / wsd)) * delta

    return at


# --------------------------------------------------------------------------- MindFormers


@dataclass
class _MfParts:
    """What every MindFormers class resolves before its own math."""

    r: _Reader
    cls: str
    lr: float
    init: float
    sched_total: int | None  # the total_steps the class is constructed with
    train_total: int | None  # the real training length

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
    r = _Reader(block, f"MindFormers {cls}", yaml_strings=True)
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


def _mf_pieces(s: Schedule) -> list[Piece]:
    """The class's construct() at global_step g = step - 1."""
    if s.style == "cosine-annealing":
        return [(0, _each(_mf_annealing_at(s)))]
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
        pieces = [(min(start, cut), fill) for start, fill in pieces] + [(cut, _flat(s.min_lr))]
    return pieces


def _mf_tail(s: Schedule, x: dict[str, float], warm: int) -> list[Piece]:
    total = int(x.get("schedule_total", s.total_steps))
    hi, end = s.max_lr, s.min_lr
    if s.style == "constant":
        return [(warm, _flat(hi))]
    if s.style == "linear":
        steps = x.get("linear_steps", max(1, total - warm))
        # (total - g) / steps >= 0 up to total, so MindFormers' max(0, .) only bites after it.
        return [
            (warm, lambda a, b: [hi * ((total - g) / steps) for g in range(a, b)]),
            (total + 1, _flat(0.0)),
        ]
    if s.style == "cosine":
        return [(warm, _mf_cosine_fill(s, x, total))]
    if s.style == "cosine-restarts":
        return [(warm, _each(_mf_restart_at(s, x, total)))]
    if s.style == "polynomial":
        return [(warm, _each(_mf_poly_at(s, x, total))), (total + 1, _flat(end))]
    if s.style == "WSD" and "keep_steps" in x:
        return _mf_cooldown_tail(s, x, warm)
    if s.style == "WSD":
        start = int(x.get("decay_start", warm))
        span = total - start
        if span <= 0:
            return [(warm, _flat(hi))]
        drop = hi - end
        return [
            (warm, _flat(hi)),
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
        (warm, _flat(hi)),
        (
            keep_end,
            lambda a, b: [
                end1 + span * (0.5 * (1.0 + cos(scale * ((g - keep_end) / decay))))
                for g in range(a, b)
            ],
        ),
        (decay_end, _flat(end1)),
        (final_end, _flat(end2)),
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


# --------------------------------------------------------------------------- evaluation


def _pieces(s: Schedule) -> list[Piece]:
    if s.framework == "megatron":
        raw = _megatron_pieces(s)
    elif s.framework == "mindformers":
        raw = _mf_pieces(s)
    else:
        raise ValueError(f"unknown framework {s.framework!r}")
    # A later phase may start "before" an earlier one on odd configs; the earlier wins.
    out: list[Piece] = []
    start = 0
    for first, fill in raw:
        start = max(start, first)
        out.append((start, fill))
    return out


def _fill(pieces: list[Piece], a: int, b: int) -> list[float]:
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
    return _fill(_pieces(s), step - 1, step)[0]


def curve(s: Schedule, steps: int | None = None) -> list[float]:
    """``[lr_at(s, 1), ..., lr_at(s, steps or s.total_steps)]``."""
    return _fill(_pieces(s), 0, steps or s.total_steps)


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
    """Compare two schedules update by update; gaps are relative to the larger rate."""
    n = steps if steps is not None else max(a.total_steps, b.total_steps)
    if n < 1:
        raise ValueError(f"steps must be >= 1, got {n}")
    return _diff(curve(a, n), curve(b, n), rel_tol)


# --------------------------------------------------------------------------- plots


def _fmt_lr(value: float) -> str:
    return f"{value:.2e}"


def _sample(s: Schedule, steps: list[int]) -> list[float]:
    pieces = _pieces(s)
    return [_fill(pieces, step - 1, step)[0] for step in steps]


def _canvas(ya: list[float], yb: list[float], rows: int, mark_col: int | None) -> list[list[str]]:
    """Character grid; row 0 is the top. The divergence column is drawn under the curves."""
    top, bottom = max(ya + yb), min(ya + yb)
    span = (top - bottom) or 1.0
    grid = [[" "] * len(ya) for _ in range(rows)]
    if mark_col is not None:
        for line in grid:
            line[mark_col] = "|"
    for c, (va, vb) in enumerate(zip(ya, yb, strict=True)):
        ra = round((top - va) / span * (rows - 1))
        rb = round((top - vb) / span * (rows - 1))
        grid[ra][c] = "*"
        grid[rb][c] = "#" if ra == rb else "o"
    return grid


def _legend(a: Schedule, b: Schedule, diff: CurveDiff) -> list[str]:
    lines = [f"  * {a.label}   o {b.label}   # both"]
    if diff.first_diverging_step is None:
        lines.append("  the curves agree within 1% at every step")
    else:
        lines.append(
            f"  | first divergence at step {diff.first_diverging_step}: "
            f"{_fmt_lr(diff.a_at_first or 0.0)} vs {_fmt_lr(diff.b_at_first or 0.0)}; "
            f"largest gap {diff.max_rel_gap:.1%} at step {diff.max_gap_step}"
        )
    return lines


def plot_terminal(a: Schedule, b: Schedule, width: int = 100, height: int = 25) -> str:
    """Both curves as text: ``*`` is ``a``, ``o`` is ``b``, ``#`` where they overlap.

    Drawn without plotext so the output is the same wherever cfglint runs.
    """
    n = max(a.total_steps, b.total_steps)
    diff = compare(a, b, n)
    label_w = 9
    cols = max(10, width - label_w - 2)
    rows = max(5, height - 4)
    steps = [1 + round(c * (n - 1) / (cols - 1)) for c in range(cols)]
    ya, yb = _sample(a, steps), _sample(b, steps)
    mark = None
    if diff.first_diverging_step is not None:
        mark = round((diff.first_diverging_step - 1) * (cols - 1) / max(n - 1, 1))
    top, bottom = max(ya + yb), min(ya + yb)
    labels = {0: top, rows // 2: (top + bottom) / 2, rows - 1: bottom}
    out = [
        f"{_fmt_lr(labels[i]) if i in labels else '':>{label_w}} |{''.join(line)}"
        for i, line in enumerate(_canvas(ya, yb, rows, mark))
    ]
    out.append(" " * label_w + " +" + "-" * cols)
    axis = [" "] * cols
    axis[-len(str(n)) :] = str(n)
    axis[0] = "1"
    if mark is not None:
        axis[mark] = "^"
    out.append(f"{'step':>{label_w}}  " + "".join(axis))
    return "\n".join(out + _legend(a, b, diff))


def plot_png(a: Schedule, b: Schedule, path: str) -> None:
    """Write both curves to a PNG file (needs matplotlib)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise RuntimeError("matplotlib is not installed; pip install matplotlib") from exc
    n = max(a.total_steps, b.total_steps)
    diff = compare(a, b, n)
    stride = max(1, n // 5000)
    xs = list(range(1, n + 1, stride))
    if xs[-1] != n:
        xs.append(n)
    fig = Figure(figsize=(10, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(xs, _sample(a, xs), label=a.label)
    ax.plot(xs, _sample(b, xs), linestyle="--", label=b.label)
    if diff.first_diverging_step is not None:
        ax.axvline(
            diff.first_diverging_step,
            color="red",
            linestyle=":",
            label=f"first divergence (step {diff.first_diverging_step})",
        )
    ax.set_xlabel("optimizer step (1 = first update)")
    ax.set_ylabel("learning rate")
    ax.legend()
    fig.savefig(path)
