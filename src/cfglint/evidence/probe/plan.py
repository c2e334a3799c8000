"""Which findings the probe can measure, and with which of its spec fields.

What the probe knows of each rule is the rule's ``probe:`` block (rules/*.yaml, validated
against :class:`~cfglint.evidence.probe.spec.Spec` when the rules load), carried on each
finding: its knobs, or why the probe cannot measure it. A rule is confirmed only by its own
knobs. No framework is imported here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from cfglint.evidence.probe.spec import COMPANIONS, Spec, SpecPair

# rules without a probe block: why, by their checklist section
SECTION_WHY = {
    "moe": "a MoE setting the probe does not model",
    "parallel": "the probe runs on one device; parallel layouts are out of its reach",
    "determinism": "the probe fixes seeds, data and weights on both sides itself",
    "alignment": "advice for the alignment run, not a numeric of the step",
    "other": "not a numeric of the training step",
    "source": "the probe does not model this source pattern",
    "standard": "the probe's own verdict row",
}
INIT_KNOBS = ("init_std", "output_init_std")


class Confirmation(BaseModel):
    rule: str
    row: str
    # "confirmed" | "no measurable effect" | "below the floor at this lr" | "not probed"
    verdict: str
    effect: dict[str, float] = Field(default_factory=dict)
    floor_multiple: float | None = None
    measure: str = ""  # which measure floor_multiple is on
    reason: str = ""
    knobs: dict[str, list[Any]] = Field(default_factory=dict)  # field -> [mindformers, megatron]
    # where the effect was measured: framework, device, dtype of each of the two runs
    ran: list[dict[str, str]] = Field(default_factory=list)
    curve: list[float] = Field(default_factory=list, exclude=True)
    by_weight: dict[str, float] = Field(default_factory=dict, exclude=True)


def plain(v: Any) -> Any:
    if isinstance(v, tuple):
        return [plain(x) for x in v[:3]] + (["..."] if len(v) > 3 else [])
    return v


def same_math(mf: Spec, mg: Spec) -> list[str]:
    """Fields that differ only in how a framework lays out the same math: the residual
    aligns them, since at float32 (or bfloat16) rounding they would show as a cause no
    configuration can name (evidence/probe/moe.py same_math_fields)."""
    from cfglint.evidence.probe.moe import same_math_fields

    return same_math_fields(mf, mg)


def _unprobed_reason(f: Any) -> str:
    knowledge = getattr(f, "probe", None)
    if knowledge is not None and knowledge.why:
        return str(knowledge.why)
    return SECTION_WHY.get(f.row.split(".")[0], "not a numeric the probe models")


def _agree_reason(f: Any, fields: tuple[str, ...], pair: SpecPair, gap_why: dict) -> str:
    """Why a finding's knobs came out equal in the two specs."""
    why = list(dict.fromkeys(gap_why[x] for x in fields if x in gap_why))
    small = list(dict.fromkeys(pair.limits[x] for x in fields if x in pair.limits))
    if why:
        return "cannot be expressed: " + "; ".join(why)
    if small:
        return "the difference needs more than the probe's size: " + "; ".join(small)
    if len(f.values) == 1 and next(iter(f.values)) in ("mindformers", "megatron"):
        # a recommendation on one side's value, not a difference between them
        side = next(iter(f.values))
        return f"a recommendation for the {side} side's value; the two sides agree on it"
    if (
        set(f.values) == {"mindformers", "megatron"}
        and len({repr(v) for v in f.values.values()}) == 1
    ):
        # one recommendation that both sides miss with the same value
        return "a recommendation both sides miss with the same value"
    return "the two specs agree on this knob at the probe's size"


def differing(fields: tuple[str, ...], mf: Spec, mg: Spec) -> tuple[str, ...]:
    """The knobs that differ, less those that are the same math once the others are
    aligned (MOE014: softmax before/after top-k once both renormalize)."""
    differ = tuple(x for x in fields if getattr(mf, x) != getattr(mg, x))
    return tuple(
        x
        for x in differ
        if x not in same_math(mf.with_knobs(mg, [y for y in differ if y != x]), mg)
    )


def plan(
    pair: SpecPair, findings: list[Any]
) -> tuple[list[tuple[Confirmation, tuple[str, ...]]], list[Confirmation]]:
    """(the findings the probe measures, each with the knobs it aligns; the others, each
    with why not)."""
    mf, mg = pair.mindformers, pair.megatron
    gap_why = {g.field: f"{g.side}: {g.reason}" for g in pair.gaps}
    for g in pair.gaps:  # a field taken with another side's gap says that gap
        for x in COMPANIONS.get(g.field, ()):
            gap_why.setdefault(x, f"{g.side}: {g.reason}")
    out: list[tuple[Confirmation, tuple[str, ...]]] = []
    unprobed: list[Confirmation] = []
    for f in findings:
        c = Confirmation(rule=f.rule, row=f.row, verdict="not probed")
        knowledge = getattr(f, "probe", None)
        fields = tuple(knowledge.knobs) if knowledge is not None else ()
        if not fields:
            c.reason = _unprobed_reason(f)
        elif set(fields) & set(INIT_KNOBS) and not mg.random_init:
            c.reason = (
                "both sides start from identical weights (a checkpoint is loaded, or "
                "whether one is loaded is not known)"
            )
        else:
            differ = differing(fields, mf, mg)
            if differ:
                c.knobs = {x: [plain(getattr(mf, x)), plain(getattr(mg, x))] for x in differ}
                out.append((c, differ))
                continue
            c.reason = _agree_reason(f, fields, pair, gap_why)
        unprobed.append(c)
    return out, unprobed
