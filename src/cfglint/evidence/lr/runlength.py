"""Each side's learning-rate schedule with a training length, as ``cfglint lr`` draws it:
MindFormers' total_steps -1 is taken from --steps, the dataset, or the other side."""

from __future__ import annotations

import os
from typing import Any

from cfglint.model.config import Config
from cfglint.model.errors import InputError

NAMES = {"mindformers": "MindFormers", "megatron": "Megatron"}

# A constant schedule has the same rate at every step; without a length it is drawn this long.
CONSTANT_SPAN = 100


def _length_open(cfg: Config) -> bool:
    """The config leaves the training length to run time: MindFormers ``total_steps: -1``
    (or absent) is replaced by the dataset's length x epochs (mindformers: trainer/
    base_trainer.py, where the lr schedule is built with the computed total_steps)."""
    o = cfg.optimizer
    if o.train_steps is not None and o.train_steps.known and o.train_steps.value:
        return False
    if cfg.side == "megatron":
        return not any(k in o.lr_extra for k in ("train_iters", "train_samples"))
    declared = o.lr_extra.get("total_steps")
    return declared is None or not declared.known or declared.value in (None, -1)


def _is_constant(cfg: Config) -> bool:
    style = cfg.optimizer.lr_decay_style
    return style is not None and style.known and str(style.value) == "constant"


def _dataset_length(cfg: Config, data: str) -> tuple[int, str]:
    """MindFormers' total_steps -1 for the dataset at ``data``, as its trainer computes it."""
    from cfglint.load.mindrecord import MindRecordError, count_samples, is_mindrecord
    from cfglint.normalize.mindformers.optimizer import steps_from_samples

    if not os.path.exists(data):
        raise InputError(data, "no such file or folder (--data)")
    if not is_mindrecord(data):
        raise InputError(
            data,
            "not a MindRecord file or folder: --data gives the length of a MindFormers run "
            "whose total_steps is -1 (a Megatron-format dataset's length is its loader's "
            "sizes[0] in the YAML)",
        )
    try:
        found = count_samples(data)
    except MindRecordError as exc:
        raise InputError(exc.path, str(exc)) from None
    o = cfg.optimizer
    gbs = o.global_batch_size
    if (
        gbs is None
        or not gbs.known
        or isinstance(gbs.value, bool)
        or not isinstance(gbs.value, int)
    ):
        raise InputError(
            cfg.path, "the global batch size is unknown, so the dataset's length in steps is too"
        )
    length = steps_from_samples(found.samples, gbs.value, o.length_terms)
    if length is None:
        bad = [k for k, v in o.length_terms.items() if not v.known or v.yaml11_string]
        raise InputError(
            cfg.path, f"cannot compute total_steps from the dataset: {', '.join(bad)} unusable"
        )
    terms = {k: v.value for k, v in o.length_terms.items()}
    source = (
        f"{found.samples} samples in {data} ({found.how}), global batch {gbs.value}, "
        f"epochs {terms['epochs']}, sink_mode {terms['sink_mode']}, sink_size "
        f"{terms['sink_size']}, drop_remainder {terms['drop_remainder']}, repeat "
        f"{terms['repeat']}"
    )
    dp = cfg.parallel.data_parallel
    if terms.get("full_batch") is False and dp is not None and dp.known and dp.value != 1:
        source += (
            f"; full_batch is off, so each of the {dp.value} data-parallel ranks reads its own "
            "shard and MindSpore's shard rounding can move this by a step per epoch"
        )
    return length, source


def build_schedules(
    mf: Config | None, mg: Config | None, steps: int | None, data: str | None = None
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The schedules, a note on each length given or computed, and what was assumed: a
    length borrowed from the other side makes the two runs equally long by assumption,
    so a comparison of the two curves must say so."""
    from cfglint.evidence.lr.bridge import MAX_STEPS, schedule_of

    scheds: dict[str, Any] = {}
    notes: list[str] = []
    assumed: list[str] = []
    cfgs = [c for c in (mg, mf) if c is not None]  # the side that knows its length first
    for cfg in cfgs:
        name = NAMES[cfg.side]
        length, source = None, ""
        if _length_open(cfg):
            other = next((s for side, s in scheds.items() if side != cfg.side), None)
            if steps is not None:
                length, source = steps, "--steps"
            elif data is not None and cfg.side == "mindformers":
                length, source = _dataset_length(cfg, data)
            elif other is not None:
                flag = "--train-iters" if other.framework == "megatron" else "total_steps"
                length, source = other.total_steps, f"{NAMES[other.framework]}'s {flag}"
                assumed.append(
                    f"{name} trains as long as {NAMES[other.framework]} ({length} steps, its "
                    f"{flag}; {name} leaves the length to the dataset)"
                )
            elif _is_constant(cfg):
                length, source = CONSTANT_SPAN, "none needed: the schedule is constant"
            else:
                raise InputError(
                    cfg.path,
                    f"{name} leaves the training length to the dataset (total_steps: -1); "
                    "give --steps N, the dataset with --data, or the other side with --megatron",
                )
        try:
            scheds[cfg.side] = schedule_of(cfg, length)
        except ValueError as exc:
            raise InputError(cfg.path, f"cannot build the learning-rate schedule: {exc}") from None
        if not 0 < scheds[cfg.side].total_steps <= MAX_STEPS:
            raise InputError(
                cfg.path,
                f"{name} trains {scheds[cfg.side].total_steps} steps: nothing to simulate "
                f"(a length between 1 and {MAX_STEPS} is needed; --steps N gives one)",
            )
        if length is not None:
            notes.append(f"{name} training length {length} steps ({source})")
    ordered = {k: scheds[k] for k in ("mindformers", "megatron") if k in scheds}
    return ordered, notes, assumed
