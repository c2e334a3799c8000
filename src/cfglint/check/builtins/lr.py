"""Learning-rate curves: both schedules simulated step by step and compared."""

from __future__ import annotations

from typing import Any

from cfglint.check.context import (
    Context,
    builtin,
    finding,
    label,
    locations_of,
    not_checked,
    yaml11_findings,
)
from cfglint.check.rule import Rule
from cfglint.model.findings import Finding, Location
from cfglint.model.values import fmt


@builtin("OPT010")
def curve(rule: Rule, ctx: Context) -> list[Finding]:
    mf, mg = ctx.mf, ctx.mg
    if mf is None or mg is None:
        return []
    for v in (mf.optimizer.lr, mf.optimizer.min_lr, *mf.optimizer.lr_extra.values()):
        if v is not None and v.yaml11_string:
            return yaml11_findings(rule, v, mf, ctx)
    from cfglint.evidence import lr
    from cfglint.evidence.lr.bridge import schedule_of

    o1, o2 = mf.optimizer, mg.optimizer
    locs = locations_of(
        (o1.lr, "mindformers"),
        (o1.lr_decay_style, "mindformers"),
        (o2.lr, "megatron"),
        (o2.lr_decay_style, "megatron"),
    )
    try:
        a, b = schedule_of(mf), schedule_of(mg)
    except ValueError as exc:
        return _lr_parts(rule, ctx, str(exc), locs)
    steps = max(a.total_steps, b.total_steps)
    diff = lr.compare(a, b, steps)
    if diff.first_diverging_step is None:
        return []
    params = _schedule_differences(a, b)
    detail = (
        f"MindFormers {a.style} and {label(mg)} {b.style} schedules first differ by more than 1% "
        f"at step "
        f"{diff.first_diverging_step} (MindFormers lr {diff.a_at_first:.4g} from "
        f"{o1.lr_decay_style.brief() if o1.lr_decay_style else 'its schedule'}, {label(mg)} "
        f"{diff.b_at_first:.4g}); the largest gap is {diff.max_rel_gap:.1%} at step "
        f"{diff.max_gap_step} of {steps}." + (f" Differences: {params}." if params else "")
    )
    values = {
        "mindformers": {"first_diverging_step": diff.first_diverging_step, "lr": diff.a_at_first},
        "megatron": {"lr": diff.b_at_first, "max_rel_gap": round(diff.max_rel_gap, 6)},
    }
    return [finding(rule, detail, values, locs)]


def _schedule_differences(a: Any, b: Any) -> str:
    parts = []
    for name, x, y in (
        ("peak lr", a.max_lr, b.max_lr),
        ("min lr", a.min_lr, b.min_lr),
        ("warmup steps", a.warmup_steps, b.warmup_steps),
        ("warmup start", a.warmup_init, b.warmup_init),
        ("decay ends at", a.decay_steps, b.decay_steps),
        ("style", a.style, b.style),
    ):
        if x != y and not (
            isinstance(x, float)
            and isinstance(y, float)
            and abs(x - y) <= 1e-9 * max(abs(x), abs(y))
        ):
            parts.append(f"{name} {fmt(x)} vs {fmt(y)}")
    return "; ".join(parts)


def _lr_parts(rule: Rule, ctx: Context, why: str, locs: list[Location]) -> list[Finding]:
    """The curve cannot be simulated (e.g. the length depends on the dataset): compare the
    schedule's parts that are known."""
    mf, mg = ctx.mf, ctx.mg
    assert mf is not None and mg is not None
    diffs, values = [], {}
    parts = [
        ("peak lr", mf.optimizer.lr, mg.optimizer.lr),
        ("min lr", mf.optimizer.min_lr, _megatron_floor(mg.optimizer)),
        ("decay style", mf.optimizer.lr_decay_style, mg.optimizer.lr_decay_style),
    ]
    if _constant(mf.optimizer) and _constant(mg.optimizer):
        del parts[1]  # neither decays: the floor is the peak on both, compared once
    for name, fa, fb in parts:
        if fa is None or fb is None or not fa.known or not fb.known:
            continue
        x, y = fa.value, fb.value
        same = (
            abs(x - y) <= 1e-9 * max(abs(x), abs(y))
            if isinstance(x, (int, float)) and isinstance(y, (int, float))
            else str(x).lower() == str(y).lower()
        )
        if not same:
            diffs.append(
                f"{name}: MindFormers {fmt(x)} ({fa.brief()}) vs {label(mg)} {fmt(y)} "
                f"({fb.brief()})"
            )
            values[name] = {"mindformers": x, "megatron": y}
    if not diffs:
        return not_checked(ctx, rule, f"learning-rate curve not simulated: {why}")
    detail = "; ".join(diffs) + f". (The full curve could not be simulated: {why}.)"
    return [finding(rule, detail, values, locs)]


def _constant(o: Any) -> bool:
    style = o.lr_decay_style
    return style is not None and style.known and style.value == "constant"


def _megatron_floor(o: Any) -> Any:
    """The lowest lr Megatron's schedule reaches. A constant schedule returns the peak lr
    after warmup and never reads --min-lr (optimizer_param_scheduler.py:235-237 @
    core_v0.19.0), as MindFormers' constant schedules never decay."""
    return o.lr if _constant(o) and o.lr is not None else o.min_lr
