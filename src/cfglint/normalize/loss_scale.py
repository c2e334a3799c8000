"""Loss scaling on each side, as one canonical description (precision.loss_scale).

A dynamic scaler starts from a scale, multiplies it by its growth factor after a window of
steps without overflow, and on overflow skips the step and shrinks it; where it starts and
how fast it reacts decide how many of the first steps are skipped, so two fp16 runs with
different scalers train on different steps from the start.

- MindFormers: ``runner_wrapper.scale_sense``: a number is a fixed scale (1: none, the
  wrappers' default: mindformers/wrapper/wrapper.py:161, 432 @ 024279c2);
  DynamicLossScaleUpdateCell (MindSpore) divides the scale by scale_factor on every overflow
  and multiplies it after scale_window steps without one (mindspore.nn.DynamicLossScaleUpdateCell,
  docs/api/api_python in mindspore-ai/mindspore); FixedLossScaleUpdateCell keeps
  loss_scale_value. Both skip an overflowing step.
- Megatron: a constant scaler with --loss-scale, else with --fp16 a dynamic one (growth 2,
  backoff 0.5, --initial-loss-scale, --loss-scale-window, --hysteresis overflows before it
  shrinks, --min-loss-scale), else none (megatron/core/optimizer/__init__.py:390-406 @
  core_v0.12.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cfglint.model.values import Value

if TYPE_CHECKING:
    from cfglint.normalize.mindformers.view import MFView

NONE = "none"


def fixed(scale: float) -> str:
    return NONE if scale == 1 else f"fixed {_num(scale)}"


def dynamic(start: float, factor: float, window: int, hysteresis: int) -> str:
    after = "each overflow" if hysteresis == 1 else f"{hysteresis} overflows"
    return (
        f"dynamic from {_num(start)}, x{_num(factor)} after {window} clean steps, "
        f"/{_num(factor)} after {after}"
    )


def _num(x: Any) -> str:
    return str(int(x)) if isinstance(x, (int, float)) and float(x).is_integer() else str(x)


def read_mindformers(view: MFView) -> Value:
    """runner_wrapper.scale_sense as written, else the wrapper class's default."""
    knob = "runner_wrapper.scale_sense"
    if view.v2:
        return Value.unknown(knob, "the v2 template's loss scaling is not read by cfglint")
    wrapper = view.node("runner_wrapper.type")
    if view.node("runner_wrapper") is None:
        return Value.default(
            NONE,
            knob,
            "MindFormers' trainer: without runner_wrapper it trains the network in MindSpore's "
            "Model with no loss-scale manager (trainer/base_trainer.py:1079-1081 @ 06e1af77)",
        )
    if wrapper is None:
        return Value.unknown(knob, "runner_wrapper names no type")
    node = view.node(knob)
    if node is None:
        got = view.key(knob, view.comp(str(wrapper.value), "runner_wrapper"))
        return got if not got.known else mindformers_loss_scale(got.value, got)
    got = mindformers_loss_scale(node.plain(), view.value(node, knob))
    if not got.known or not node.is_map:
        return got
    # each key of the update cell, so that the finding points at the one that differs
    keys = [f"{knob}.{k}" for k in ("type", "loss_scale_value", "scale_factor", "scale_window")]
    parts = [view.value(n, k) for k in keys if (n := view.node(k)) is not None]
    return Value.derived(got.value, knob, f"{node.value['type'].plain()}", parts)


def mindformers_loss_scale(node_value: Any, where: Value) -> Value:
    """``where``: the scale_sense value as read (its location and origin); ``node_value``:
    its plain YAML value."""
    v = node_value
    if isinstance(v, bool) or v is None:
        return Value.unknown(where.knob, f"scale_sense is {v!r}, not a scale or an update cell")
    if isinstance(v, (int, float)):
        return where.model_copy(update={"value": fixed(v)})
    if not isinstance(v, dict):
        return Value.unknown(where.knob, f"scale_sense is {v!r}, not a scale or an update cell")
    kind = v.get("type")
    scale = v.get("loss_scale_value")
    if not _is_num(scale):
        return Value.unknown(where.knob, f"{kind} without a numeric loss_scale_value")
    if kind == "FixedLossScaleUpdateCell":
        return where.model_copy(update={"value": fixed(scale)})
    if kind == "DynamicLossScaleUpdateCell":
        factor, window = v.get("scale_factor"), v.get("scale_window")
        if not (_is_num(factor) and _is_num(window)):
            return Value.unknown(
                where.knob, f"{kind} needs a numeric scale_factor and scale_window"
            )
        if factor == 1:  # never changes: a fixed scale
            return where.model_copy(update={"value": fixed(scale)})
        return where.model_copy(update={"value": dynamic(scale, factor, int(window), 1)})
    return Value.unknown(
        where.knob, f"scale_sense type {kind!r} is not an update cell cfglint knows"
    )


def megatron_loss_scale(
    compute: Value, constant: Value, start: Value, window: Value, hysteresis: Value
) -> Value:
    """The scaler Megatron builds for ``compute`` (the dtype --bf16/--fp16 give)."""
    if not compute.known or not constant.known:
        return Value.derived(None, "--loss-scale", "", [compute, constant])
    if constant.value:
        return Value.derived(
            fixed(constant.value), "--loss-scale", "a constant scaler", [constant, compute]
        )
    if compute.value != "float16":
        return Value.derived(
            NONE, "--loss-scale", f"no scaler for {compute.value} without --loss-scale", [compute]
        )
    parts = [start, window, hysteresis]
    if not all(p.known for p in parts):
        return Value.derived(None, "--initial-loss-scale", "", parts)
    if not all(_is_num(p.value) for p in parts):
        return Value.unknown("--initial-loss-scale", "a dynamic-scaler setting is not a number")
    return Value.derived(
        dynamic(start.value, 2, int(window.value), int(hysteresis.value)),
        "--initial-loss-scale",
        "--fp16 builds a dynamic scaler (growth 2, backoff 0.5)",
        [compute, start, window, hysteresis],
    )


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)
