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

# Annotations are evaluated here, not kept as strings (no `from __future__ import
# annotations`): pydantic and typing.NamedTuple turn each string field annotation into a
# typing.ForwardRef, which Python 3.11 compiles one by one at import
# (tests/model/test_model_schemas.py).
from collections.abc import Callable, Mapping
from typing import NamedTuple

MEGATRON_STYLES = ("constant", "linear", "cosine", "inverse-square-root", "WSD")


# Schedule.extra holds floats only, so the WSD anneal shape is stored as an index here.
WSD_DECAY_STYLES = ("exponential", "linear", "cosine", "minus_sqrt")


# A piece covers scheduler indices (g = step - 1) from its start up to the next piece's start.
# Its fill returns the rates for range(a, b) from one comprehension, which keeps 500k-step
# curves fast; lr_at() uses the same pieces, so there is one implementation of each formula.
Fill = Callable[[int, int], list[float]]


Piece = tuple[int, Fill]


def flat(value: float) -> Fill:
    return lambda a, b: [value] * (b - a)


def each(at: Callable[[int], float]) -> Fill:
    return lambda a, b: [at(g) for g in range(a, b)]


class Schedule(NamedTuple):
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


class CurveDiff(NamedTuple):
    """How two curves differ; steps are 1-based optimizer updates.

    ``max_gap_step`` is 0 when the curves are identical.
    """

    steps: int
    first_diverging_step: int | None
    max_rel_gap: float
    max_gap_step: int
    a_at_first: float | None
    b_at_first: float | None


class ArgReader:
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


def round_steps(units: float, per_step: float) -> int:
    return round(units / per_step)
