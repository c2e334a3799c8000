"""Group-limited (device/node-limited) MoE routing in one canonical form for both sides.

DeepSeek-V2/V3-style routers split the experts into equal groups, keep the best groups of
each token and choose the top-k experts only inside them. Two fields carry it:

- ``moe.group_limit``: ``"K of N groups kept"``, or ``"no grouping"`` when every expert can
  be chosen (no grouping, one group, or every group kept: the mask then keeps all experts, so those
  settings compare equal to no grouping);
- ``moe.group_score``: how a group's score is computed from its experts' routing scores
  (``"max"``, ``"sum of top M"``, ``"sum of top M logits"``), ``"no grouping"`` without grouping.
  The sum of the top 1 is the maximum, and the maximum of the logits picks the same groups
  as the maximum of their softmax (the softmax is monotonic per token), so both read "max".
"""

from __future__ import annotations

from cfglint.model.values import Value

NONE = "no grouping"


def no_grouping(knob: str, why: str, inputs: list[Value] | None = None) -> Value:
    """A router that limits nothing: a decided value, with the reason."""
    if inputs:
        return Value.derived(NONE, knob, why, inputs)
    return Value.default(NONE, knob, why)


def limit(groups: Value, kept: Value, knob: str, how: str, experts: Value | None = None) -> Value:
    """``kept`` of ``groups`` groups, or "no grouping" when that keeps every expert. Settings the
    frameworks refuse (more groups kept than there are, experts not divisible into the
    groups: Megatron's and MindFormers' TransformerConfig assert both) are unknown."""
    for v in (groups, kept):
        if not v.known:
            return v
    g, k = groups.value, kept.value
    if not isinstance(g, int) or isinstance(g, bool) or not isinstance(k, int) or k < 1:
        return Value.unknown(knob, f"{how}: cannot read {k!r} of {g!r} groups")
    if k > g:
        return Value.unknown(knob, f"{how}: {k} groups kept of {g} is refused (more than exist)")
    n = experts.value if experts is not None and experts.known else None
    if isinstance(n, int) and g > 0 and n % g:
        return Value.unknown(
            knob, f"{how}: {n} experts do not split into {g} equal groups (refused)"
        )
    if g <= 1 or k >= g:
        return Value.derived(
            NONE,
            knob,
            f"{how}: {k} of {g} group(s) keeps every expert (the grouping is a no-op)",
            [groups, kept],
        )
    return Value.derived(f"{k} of {g} groups kept", knob, how, [groups, kept])


def score(top: int, logits: bool = False) -> str:
    """The canonical group score: the sum of each group's ``top`` best expert scores."""
    if top <= 1:
        return "max"
    return f"sum of top {top}" + (" logits" if logits else "")


def score_value(lim: Value, value: str, knob: str, why: str, inputs: list[Value]) -> Value:
    """The group score beside a group limit: "no grouping" / unknown as the limit is."""
    if not lim.known:
        return lim
    if lim.value == NONE:
        return Value.derived(NONE, knob, "no group-limited routing", [lim])
    return Value.derived(value, knob, why, [lim, *inputs])


def settle_max(lim: Value, sc: Value, topk: Value | None) -> tuple[Value, Value]:
    """Groups ranked by their best score with at least top-k groups kept never mask one of
    the top-k experts: a group holding none of them scores below every group that holds
    one, and at most k groups hold them. That grouping is a no-op (ties aside)."""
    if not (lim.known and sc.known and sc.value == "max" and topk is not None and topk.known):
        return lim, sc
    kept = _kept(lim.value)
    if kept is None or not isinstance(topk.value, int) or kept < topk.value:
        return lim, sc
    why = (
        f"groups ranked by their best expert with {kept} kept >= top-k {topk.value}: the "
        "chosen experts' groups are always kept (the grouping is a no-op)"
    )
    lim = Value.derived(NONE, lim.knob, why, [lim, topk])
    return lim, Value.derived(NONE, sc.knob, "no group-limited routing", [lim])


def _kept(text: object) -> int | None:
    head = str(text).split(" of ", 1)[0]
    return int(head) if head.isdigit() else None
