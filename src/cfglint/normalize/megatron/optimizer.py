"""Optimizer, learning-rate schedule, training length, clipping and batch sizes of a
Megatron run.
"""

from __future__ import annotations

from typing import Any

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.megatron.input import MegatronInput


def _per_batch(m: MegatronInput, dest: str, gbs: Value) -> Value:
    """A sample count (``--lr-warmup-samples``) as iterations of ``gbs`` samples each, the
    unit the other side's schedule is read in; unset stays unset (its default applies)."""
    v = m.arg(dest)
    if not v.known or v.value is None:
        return v
    if not gbs.known or not isinstance(gbs.value, int) or gbs.value <= 0:
        return Value.unknown(v.knob, f"{v.knob} counts samples; the global batch size is not known")
    return Value.derived(
        v.value // gbs.value,
        v.knob,
        f"{v.knob} {v.value} samples / global batch size {gbs.value}",
        [v, gbs],
    )


def _adam_settings(m: MegatronInput, opt: Value) -> tuple[Value, Value, Value]:
    """--adam-eps, --adam-beta1, --adam-beta2, which only Adam reads: with --optimizer sgd
    Megatron builds SGD(momentum=--sgd-momentum) (optimizer/__init__.py, core_v0.19.0) and
    the Adam flags change nothing, so there is no value to compare (the optimizer row says
    that the update rules differ)."""
    dests = ("adam_eps", "adam_beta1", "adam_beta2")
    if not (opt.known and opt.value == "sgd"):
        return m.arg(dests[0]), m.arg(dests[1]), m.arg(dests[2])
    why = f"{opt.knob} sgd: Megatron's SGD reads no Adam setting (not compared)"
    out = [Value.unknown(m.arg(d).knob, why, loc=opt.loc) for d in dests]
    return out[0], out[1], out[2]


def _read_warmup(m: MegatronInput, o: Any, decay: Value, gbs: Value, by_samples: bool) -> None:
    """Warmup length in iterations and as a fraction of the decay length."""
    frac = m.arg("lr_warmup_fraction")
    if frac.known and frac.value is not None:
        o.lr_warmup_steps = Value.derived(
            frac.value * decay.value if decay.known and decay.value is not None else None,
            "--lr-warmup-fraction",
            "warmup = fraction x lr decay iterations",
            [frac, decay],
        )
    elif by_samples:
        # sample-based runs warm up over --lr-warmup-samples (training.py
        # get_optimizer_param_scheduler, Megatron-LM core_v0.19.0: lr_warmup_steps =
        # args.lr_warmup_samples when train_samples is set); --lr-warmup-iters is not read
        o.lr_warmup_steps = _per_batch(m, "lr_warmup_samples", gbs)
    else:
        o.lr_warmup_steps = m.arg("lr_warmup_iters")
    # warmup as a fraction of the decay length (training.py get_optimizer_param_scheduler,
    # Megatron-LM: lr_warmup_fraction x lr_decay_iters, lr_decay_iters defaulting to
    # train_iters), for comparison with a MindFormers warmup_ratio whose steps are unknown
    if frac.known and frac.value is not None:
        o.lr_warmup_fraction = frac
    else:
        w = o.lr_warmup_steps
        if (
            w.known
            and decay.known
            and isinstance(w.value, (int, float))
            and isinstance(decay.value, (int, float))
            and decay.value > 0
        ):
            o.lr_warmup_fraction = Value.derived(
                w.value / decay.value,
                "--lr-warmup-iters",
                "warmup iterations / lr decay iterations",
                [w, decay],
            )


def read_optimizer(m: MegatronInput, cfg: Config) -> None:
    o = cfg.optimizer
    opt = m.arg("optimizer")
    if opt.known and opt.value == "adam":
        opt = opt.model_copy(update={"value": "adamw"})  # decoupled weight decay
    o.type = opt
    o.eps, o.beta1, o.beta2 = _adam_settings(m, opt)
    o.weight_decay = m.arg("weight_decay")
    o.wd_to_qk_layernorm = (
        m.arg("apply_wd_to_qk_layernorm") if "apply_wd_to_qk_layernorm" in m.table.by_dest else None
    )
    o.lr = m.arg("lr")
    o.min_lr = m.arg("min_lr")
    o.lr_decay_style = m.arg("lr_decay_style")
    o.lr_warmup_init = m.arg("lr_warmup_init")
    o.clip_grad = m.arg("clip_grad")
    o.micro_batch_size = m.arg("micro_batch_size")
    gbs = o.global_batch_size = _global_batch(m, cfg)
    iters, samples = _train_steps(m, cfg, gbs)
    by_samples = m.arg("train_iters").value is None and bool(samples.known and samples.value)
    decay = _decay_steps(m, gbs, iters, by_samples)
    o.lr_decay_steps = decay
    _read_warmup(m, o, decay, gbs, by_samples)
    o.lr_extra = _lr_extra(m)


def _global_batch(m: MegatronInput, cfg: Config) -> Value:
    """--global-batch-size, by default micro batch size x data-parallel size."""
    o = cfg.optimizer
    gbs = m.arg("global_batch_size")
    dp = cfg.parallel.data_parallel
    if gbs.value is None and o.micro_batch_size.known and dp is not None:
        mbs = o.micro_batch_size.value
        known = dp.known and isinstance(dp.value, int) and isinstance(mbs, int)
        gbs = Value.derived(
            mbs * dp.value if known else None,  # type: ignore[operator]
            "--global-batch-size",
            "Megatron default: micro batch size x data parallel size",
            [o.micro_batch_size, dp],
        )
        if not known and gbs.known:
            # never 0 for "not known": the data-parallel size is missing
            gbs = Value.unknown(
                "--global-batch-size",
                "not set, and the data-parallel size it defaults from is not known",
            )
    return gbs


def _train_steps(m: MegatronInput, cfg: Config, gbs: Value) -> tuple[Value, Value]:
    """Set the training length (--train-iters, or train samples / global batch); return it
    and --train-samples."""
    o = cfg.optimizer
    iters = m.arg("train_iters")
    samples = m.arg("train_samples")
    if iters.value is None and samples.known and samples.value and gbs.known and gbs.value:
        iters = Value.derived(
            samples.value // gbs.value,
            "--train-iters",
            "derived as train samples / global batch size",
            [samples, gbs],
        )
    o.train_steps = iters
    o.train_steps_bound = iters  # an exact count is its own bound (OPT019)
    return iters, samples


def _decay_steps(m: MegatronInput, gbs: Value, iters: Value, by_samples: bool) -> Value:
    decay = _per_batch(m, "lr_decay_samples", gbs) if by_samples else m.arg("lr_decay_iters")
    if decay.value is None and iters.known:
        decay = Value.derived(
            iters.value,
            "--lr-decay-iters",
            "Megatron default: decays over all training iterations",
            [iters],
        )
    return decay


def _lr_extra(m: MegatronInput) -> dict[str, Value]:
    """The schedule's further arguments, as the parser holds them."""
    extra: dict[str, Value] = {}
    for dest in (
        "lr_warmup_fraction",
        "lr_warmup_iters",
        "lr_decay_iters",
        "train_iters",
        "lr_wsd_decay_style",
        "lr_wsd_decay_iters",
        "lr_wsd_decay_samples",
        "lr_decay_samples",
        "lr_warmup_samples",
        "train_samples",
        "override_opt_param_scheduler",
        "use_checkpoint_opt_param_scheduler",
        "start_weight_decay",
        "end_weight_decay",
        "weight_decay_incr_style",
    ):
        if dest in m.table.by_dest:
            extra[dest] = m.arg(dest)
    return extra
