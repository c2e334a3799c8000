"""Small readers shared by the Megatron section modules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cfglint.model.values import Origin, Value

if TYPE_CHECKING:  # input.py reads launch scripts with helpers that use this module
    from cfglint.normalize.megatron.input import MegatronInput

DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64"}


def implementation_fact(value: Any, knob: str, why: str) -> Value:
    """A fixed property of Megatron's implementation, not a setting."""
    # no knob: nothing to "set", so messages do not say "not set in <file>"
    return Value.make(value=value, origin=Origin.DEFAULT, knob="", detail=why, raw=knob)


def as_int(v: Value | None) -> int | None:
    """The value when it is a usable positive integer, else None (unknown, absent, wrong)."""
    if v is None or not v.known or isinstance(v.value, bool) or not isinstance(v.value, int):
        return None
    return v.value if v.value > 0 else None


def cfg_compute_dtype(m: MegatronInput) -> str:
    if m.arg("bf16").value:
        return "bfloat16"
    if m.arg("fp16").value:
        return "float16"
    return "float32"
