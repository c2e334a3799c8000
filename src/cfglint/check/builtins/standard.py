"""The migration accuracy standard, decided from training logs (``--loss-log``): first loss,
mean loss, global norm; local norms and the optimizer update need the runtime probe.
"""

from __future__ import annotations

from typing import Any

from cfglint.check.context import (
    Context,
    builtin,
    finding,
    not_checked,
)
from cfglint.check.rule import Rule
from cfglint.model import standard as std
from cfglint.model.findings import Finding, Location


# -- migration standard from logs ---------------------------------------------------------------
def _logs(ctx: Context) -> tuple[Any, Any, str]:
    paths = list(ctx.logs)
    if ctx.mg is not None and ctx.mg.kind == "megatron-log" and ctx.mg.path not in paths:
        paths.append(ctx.mg.path)
    by: dict[str, Any] = {}
    for p in paths:
        if p in ctx.log_cache:
            log = ctx.log_cache[p]
        else:  # the log reader is imported only when there is a log to read
            from cfglint.load.losslog import read_loss_log

            log = ctx.log_cache[p] = read_loss_log(p)
        by.setdefault(log.framework, log)
    mf, mg = by.get("mindformers"), by.get("megatron")
    if mf is None or mg is None:
        missing = "a MindFormers" if mf is None else "a Megatron"
        return None, None, f"needs {missing} training log with per-step losses (--loss-log FILE)"
    return mf, mg, ""


def _paired(rule: Rule, ctx: Context, series: str) -> tuple[Any, Any, list[int]] | None:
    """Both logs and the steps both print ``series`` ("loss" or "grad_norm") for; records
    why when that cannot be decided."""
    a, b, why = _logs(ctx)
    if a is None:
        not_checked(ctx, rule, why)
        return None
    steps = sorted(set(getattr(a, series)) & set(getattr(b, series)))
    if not steps:
        not_checked(
            ctx, rule, f"the two logs print no {series.replace('_', ' ')} for a common step"
        )
        return None
    return a, b, steps


def _log_loc(log: Any, step: int, side: str) -> Location:
    return Location.model_construct(path=log.path, line=log.line_of(step), side=side)


@builtin("STD001")
def first_loss(rule: Rule, ctx: Context) -> list[Finding]:
    pair = _paired(rule, ctx, "loss")
    if pair is None:
        return []
    a, b, steps = pair
    step = steps[0]
    x, y = a.loss[step], b.loss[step]
    err, rel = std.first_loss_error(x, y)
    if std.first_loss_ok(err, rel):
        return []
    detail = (
        f"step {step}: MindFormers loss {x:.6g} vs Megatron {y:.6g}, absolute error "
        f"{err:.4g}, relative {rel:.2%} ({std.FIRST_LOSS_LIMIT})"
    )
    return [
        finding(
            rule,
            detail,
            {"mindformers": x, "megatron": y},
            [_log_loc(a, step, "mindformers"), _log_loc(b, step, "megatron")],
        )
    ]


@builtin("STD002")
def mean_loss(rule: Rule, ctx: Context) -> list[Finding]:
    pair = _paired(rule, ctx, "loss")
    if pair is None:
        return []
    a, b, steps = pair
    abs_err, rel_err = std.mean_loss_error([a.loss[s] for s in steps], [b.loss[s] for s in steps])
    if std.mean_loss_ok(abs_err, rel_err):
        return []
    worst = max(steps, key=lambda s: abs(a.loss[s] - b.loss[s]))
    detail = (
        f"over {len(steps)} common steps the mean absolute loss error is {abs_err:.4g} and the "
        f"mean relative error {rel_err:.2%} ({std.MEAN_LOSS_LIMIT}); the largest gap is at "
        f"step {worst} ({a.loss[worst]:.6g} vs {b.loss[worst]:.6g})"
    )
    return [
        finding(
            rule,
            detail,
            {
                "mindformers": round(sum(a.loss[s] for s in steps) / len(steps), 6),
                "megatron": round(sum(b.loss[s] for s in steps) / len(steps), 6),
            },
            [_log_loc(a, worst, "mindformers"), _log_loc(b, worst, "megatron")],
        )
    ]


@builtin("STD003")
def global_norm(rule: Rule, ctx: Context) -> list[Finding]:
    pair = _paired(rule, ctx, "grad_norm")
    if pair is None:
        return []
    a, b, steps = pair
    rel = std.global_norm_error([a.grad_norm[s] for s in steps], [b.grad_norm[s] for s in steps])
    if std.global_norm_ok(rel):
        return []
    mean_a = sum(a.grad_norm[s] for s in steps) / len(steps)
    mean_b = sum(b.grad_norm[s] for s in steps) / len(steps)
    detail = (
        f"over {len(steps)} common steps the mean relative error of the global norm is "
        f"{rel:.1%} ({std.GLOBAL_NORM_LIMIT}); mean global norm MindFormers {mean_a:.4g}, "
        f"Megatron {mean_b:.4g}"
    )
    return [
        finding(
            rule,
            detail,
            {"mindformers": round(mean_a, 6), "megatron": round(mean_b, 6)},
            [_log_loc(a, steps[0], "mindformers"), _log_loc(b, steps[0], "megatron")],
        )
    ]


@builtin("STD004")
def local_norm(rule: Rule, ctx: Context) -> list[Finding]:
    return not_checked(
        ctx,
        rule,
        "needs per-weight gradient norms at step 1 from both sides: run the runtime probe "
        "(`cfglint probe` or --probe; needs the probe extra)",
    )


@builtin("STD005")
def optimizer_update(rule: Rule, ctx: Context) -> list[Finding]:
    return not_checked(
        ctx,
        rule,
        "needs one real optimizer step on both sides: run the runtime probe "
        "(`cfglint probe` or --probe; needs the probe extra)",
    )
