"""Learning-rate schedules from normalized configs (glue between model and lr)."""

from __future__ import annotations

import math
from typing import Any

from cfglint.model.config import Config

# Curves are compared step by step in bounded memory (curves.compare works in chunks) at
# ~1 us a step: 10M steps, 20x a long real pre-training run, keep the worst case near 10 s.
MAX_STEPS = 10_000_000


def schedule_of(cfg: Config, train_steps: int | None = None) -> Any:
    """The side's lr.Schedule; raises ValueError with a reason when it cannot be built.

    ``train_steps`` is the training length to use where the config leaves it open
    (MindFormers ``total_steps: -1`` takes it from the dataset at run time)."""
    s = _schedule(cfg, train_steps)
    if isinstance(s.total_steps, bool) or not isinstance(s.total_steps, int):
        # `total_steps: 1e5` is the string "1e5" to PyYAML (YAML 1.1 floats need a dot)
        raise ValueError(
            f"the training length {s.total_steps!r} is not a whole number of steps "
            "(YAML 1.1 reads 1e5 as a string; write 100000)"
        )
    if s.total_steps > MAX_STEPS:
        raise ValueError(
            f"{s.total_steps} steps is too long to simulate step by step (limit {MAX_STEPS})"
        )
    for name in ("max_lr", "min_lr", "warmup_init"):
        x = getattr(s, name)
        if not math.isfinite(x):
            raise ValueError(f"the schedule's {name.replace('_', ' ')} is {x}")
    return s


def _finite(values: dict[str, Any]) -> dict[str, Any]:
    for k, v in values.items():
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{k} is {v}")
    return values


def _megatron_schedule(cfg: Config, train_steps: int | None) -> Any:
    """Megatron's schedule from its arguments (``train_steps``: the length when the run
    leaves it open)."""
    from cfglint.evidence import lr

    o = cfg.optimizer
    args: dict[str, Any] = {k: v.value for k, v in o.lr_extra.items() if v.known}
    for key, val in (
        ("lr", o.lr),
        ("min_lr", o.min_lr),
        ("lr_decay_style", o.lr_decay_style),
        ("lr_warmup_init", o.lr_warmup_init),
    ):
        if val is not None and val.known:
            args[key] = val.value
    if o.train_steps is not None and o.train_steps.known and o.train_steps.value:
        args.setdefault("train_iters", o.train_steps.value)
    elif train_steps is not None and "train_samples" not in args:
        args.setdefault("train_iters", train_steps)
    gbs = o.global_batch_size.value if o.global_batch_size and o.global_batch_size.known else None
    if gbs is not None and (isinstance(gbs, bool) or not isinstance(gbs, int) or gbs <= 0):
        raise ValueError(f"global batch size {gbs!r} is not a positive integer")
    return lr.megatron_schedule(_finite(args), gbs)


def _schedule(cfg: Config, train_steps: int | None = None) -> Any:
    from cfglint.evidence import lr

    o = cfg.optimizer
    if cfg.side == "megatron":
        return _megatron_schedule(cfg, train_steps)
    block = {k: v.value for k, v in o.lr_extra.items() if v.known}
    total = o.train_steps.value if o.train_steps is not None and o.train_steps.known else None
    if total is None:
        total = train_steps
    if not block.get("type"):
        raise ValueError("no lr_schedule section")
    return lr.mindformers_schedule(_finite(block), total)
