"""Optimizer, learning-rate schedule, training length, clipping and batch sizes of a
Megatron run.
"""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.megatron.input import MegatronInput


def read_optimizer(m: MegatronInput, cfg: Config) -> None:
    o = cfg.optimizer
    opt = m.arg("optimizer")
    if opt.known and opt.value == "adam":
        opt = opt.model_copy(update={"value": "adamw"})  # decoupled weight decay
    o.type = opt
    o.eps = m.arg("adam_eps")
    o.beta1 = m.arg("adam_beta1")
    o.beta2 = m.arg("adam_beta2")
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
    o.global_batch_size = gbs
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
    decay = m.arg("lr_decay_iters")
    if decay.value is None and iters.known:
        decay = Value.derived(
            iters.value,
            "--lr-decay-iters",
            "Megatron default: decays over all training iterations",
            [iters],
        )
    o.lr_decay_steps = decay
    frac = m.arg("lr_warmup_fraction")
    if frac.known and frac.value is not None:
        o.lr_warmup_steps = Value.derived(
            frac.value * decay.value if decay.known and decay.value is not None else None,
            "--lr-warmup-fraction",
            "warmup = fraction x lr decay iterations",
            [frac, decay],
        )
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
    o.lr_extra = extra
