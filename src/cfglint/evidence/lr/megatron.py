"""Megatron-LM's ``OptimizerParamScheduler`` as a :class:`Schedule` (see
:mod:`cfglint.evidence.lr.schedule` for the step indexing).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import NamedTuple

from cfglint.evidence.lr.schedule import (
    MEGATRON_STYLES,
    WSD_DECAY_STYLES,
    ArgReader,
    Fill,
    Piece,
    Schedule,
    each,
    flat,
    round_steps,
)


class _MegatronLengths(NamedTuple):
    """Scheduler lengths in samples, as get_optimizer_param_scheduler computes them."""

    samples_per_step: float
    total_steps: int
    warmup: float
    decay: float
    wsd: float | None


def _megatron_lengths(r: ArgReader, gbs: int | None) -> _MegatronLengths:
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


def _megatron_checks(r: ArgReader, hi: float, lo: float, init: float, ln: _MegatronLengths) -> None:
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
    r = ArgReader(args, "megatron args", yaml_strings=False)
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
        warmup_steps=round_steps(ln.warmup, per),
        warmup_init=init,
        decay_steps=None if style == "constant" else round_steps(ln.decay, per),
        total_steps=ln.total_steps,
        extra=extra,
        notes=tuple(r.notes),
    )


def _megatron_wsd_extra(r: ArgReader, ln: _MegatronLengths) -> dict[str, float]:
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


def megatron_pieces(s: Schedule) -> list[Piece]:
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
        return [*pieces, (past_warmup, flat(hi))]
    past_decay = max(past_warmup, _last_index_within(dec, per) + 1)
    pieces.append((past_warmup, _megatron_decay(s, warm, dec, per)))
    pieces.append((past_decay, flat(lo)))
    return pieces


def _megatron_decay(s: Schedule, warm: float, dec: float, per: float) -> Fill:
    hi, lo = s.max_lr, s.min_lr
    delta, span = hi - lo, dec - warm
    if span <= 0:
        return flat(lo)  # Megatron refuses such a config; already noted
    cos, pi = math.cos, math.pi
    if s.style == "linear":
        return lambda a, b: [lo + (1.0 - (g * per - warm) / span) * delta for g in range(a, b)]
    if s.style == "cosine":
        return lambda a, b: [
            lo + 0.5 * (cos(pi * ((g * per - warm) / span)) + 1.0) * delta for g in range(a, b)
        ]
    if s.style == "inverse-square-root":
        root_w = math.sqrt(max(warm, 1.0))
        return each(lambda g: max(lo, hi * root_w / math.sqrt(max(g * per, 1.0))))
    if s.style == "WSD":
        return each(_megatron_wsd(s, dec, per))
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
