"""One spelling for RoPE frequency rescaling on both sides, so the two compare as values.

``none`` or ``kind(key=value, ...)`` with the keys that change the frequencies, in a fixed
order: ``llama3(factor=8, low=1, high=4, original=8192)``,
``yarn(factor=40, original=4096, beta_fast=32, beta_slow=1)``, ``linear(factor=4)``.

YaRN also rescales magnitudes, and each framework applies its ``mscale`` /
``mscale_all_dim`` in its own place; :func:`yarn` turns the six YaRN parameters of one side
into the frequency spelling (``structure.rope_scaling``) and the effective magnitudes
(``structure.yarn_mscale``), so that two sides compare by what the network computes.
"""

from __future__ import annotations

import math
from typing import Any

from cfglint.model.values import Value, fmt

KEYS = {
    "llama3": ("factor", "low", "high", "original"),
    # the frequencies of YaRN: the factor, the original context and the ramp between the
    # beta_fast and beta_slow rotation counts; "round" appears only when the ramp ends are
    # not rounded to whole dimensions (Megatron-LM --no-yarn-correction-range-round-to-int)
    "yarn": ("factor", "original", "beta_fast", "beta_slow", "round"),
    "linear": ("factor",),
    "longrope": ("factor", "original"),
    "dynamic_ntk": ("factor",),
}

YARN_PARAMS = ("factor", "original", "beta_fast", "beta_slow", "mscale", "mscale_all_dim")


def spell(kind: str, params: dict[str, Any]) -> str:
    kind = kind.lower()
    if kind in ("none", "", "default", "rope"):
        return "none"
    if kind in ("linear", "pi") and params.get("factor") == 1:
        # positions divided by 1 are the positions: Megatron `seq *= 1 / factor`
        # (rotary_pos_embedding.py:135-136 @ d98e8a6), MindFormers PI
        # `np.arange(0, max_pos / factor, 1 / factor)` (modules/layers.py:1252-1253 @ fd4deebc)
        return "none"
    keys = KEYS.get(kind, tuple(sorted(params)))
    inner = ", ".join(f"{k}={fmt(params[k])}" for k in keys if params.get(k) is not None)
    return f"{kind}({inner})"


def as_rope(pe: Value) -> Value:
    """A ``yarn`` position embedding type is rotary: the YaRN part is compared as
    rope_scaling / yarn_mscale, so the type itself compares as ``rope``."""
    return Value.derived(
        "rope", pe.knob, "YaRN is RoPE with rescaled frequencies (see rope_scaling)", [pe]
    )


def yarn_get_mscale(scale: float, mscale: float) -> float:
    """YaRN's magnitude formula, the same in all three frameworks: MindFormers
    modules/layers.py:1145-1148 @ fd4deebc, Megatron-LM
    core/models/common/embeddings/yarn_rotary_pos_embedding.py:252-255 @ core_v0.19.0,
    MindSpeed-LLM tasks/common/yarn_rope.py:30-33 @ v26.1.0."""
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def _r(x: float) -> float:
    return float(f"{x:.6g}")


def magnitude(factor: float, mscale: float, mscale_all_dim: float, softmax: float | None) -> str:
    """The two magnitudes YaRN changes: the multiplier on the cos/sin tables (so the rotated
    part of q and of k), g(factor, mscale) / g(factor, mscale_all_dim) in every framework,
    and the multiplier on the attention softmax scale, g(factor, softmax)^2 where an MLA
    attention takes it (``softmax`` is the mscale it uses; None: no such rescaling)."""
    den = yarn_get_mscale(factor, mscale_all_dim)
    if den == 0:  # a negative mscale_all_dim can zero it: the framework divides by zero too
        return "cos/sin undefined (g(factor, mscale_all_dim) is 0)"
    cos_sin = yarn_get_mscale(factor, mscale) / den
    sm = 1.0 if softmax is None else yarn_get_mscale(factor, softmax) ** 2
    return f"cos/sin x{fmt(_r(cos_sin))}, softmax scale x{fmt(_r(sm))}"


def yarn(
    knob: str,
    how: str,
    p: dict[str, Value],
    softmax_from: str | None,
    why_softmax: str,
    extra: list[Value] | None = None,
    round_to_int: Value | None = None,
) -> tuple[Value, Value]:
    """(rope_scaling, yarn_mscale) of one side from its six YaRN parameters, each a Value
    with its own provenance (written, the framework's default, or unknown with the reason).

    ``softmax_from`` names the parameter whose mscale the attention softmax scale takes
    (``mscale_all_dim`` or ``mscale`` in an MLA attention), None where the attention does
    not rescale the softmax; ``why_softmax`` says which code does it."""
    for k in YARN_PARAMS:
        v = p[k]
        if v.known and not (isinstance(v.value, (int, float)) and not isinstance(v.value, bool)):
            bad = Value.unknown(v.knob, f"{fmt(v.value)} is not a number", loc=v.loc)
            return bad, bad
        if v.known and not math.isfinite(v.value):
            bad = Value.unknown(v.knob, f"{fmt(v.value)} is not a finite number", loc=v.loc)
            return bad, bad
    ins = list(extra or [])
    freq_ins = [*ins, p["factor"], p["original"], p["beta_fast"], p["beta_slow"]]
    if round_to_int is not None:
        freq_ins.append(round_to_int)
    gone = next((v for v in freq_ins if not v.known), None)
    if gone is not None:
        bad = Value.derived(None, knob, "", [gone])
        return bad, Value.derived(None, knob, "", [gone])
    vals = {k: p[k].value for k in YARN_PARAMS}
    rnd = None if round_to_int is None or round_to_int.value else False
    freq = Value.derived(
        spell("yarn", {**vals, "round": rnd}),
        knob,
        how,
        freq_ins,
    )
    mag_ins = [*ins, p["factor"], p["mscale"], p["mscale_all_dim"]]
    gone = next((v for v in mag_ins if not v.known), None)
    if gone is not None:  # e.g. `--rope-scaling-mscale $UNSET`: the frequencies still compare
        return freq, Value.derived(None, knob, "", [gone])
    softmax = vals[softmax_from] if softmax_from is not None else None
    how_mag = f"{how}; cos/sin x g(factor, mscale) / g(factor, mscale_all_dim); {why_softmax}"
    mag = Value.derived(
        magnitude(vals["factor"], vals["mscale"], vals["mscale_all_dim"], softmax),
        knob,
        how_mag,
        mag_ins,
    )
    return freq, mag
