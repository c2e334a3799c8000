"""``cfglint logs``: two training runs judged step by step (the guide's Stage 3), with the
findings of the lint of their configs and each side's configured learning-rate schedule."""

from __future__ import annotations

from typing import Any

from cfglint.check.context import Context
from cfglint.model.errors import InputError
from cfglint.model.findings import Report

__all__ = ["configured_schedules", "judge_runs", "watch_runs"]


def configured_schedules(report: Report, ctx: Context) -> dict[str, Any]:
    """Each linted side's configured schedule, to check its logged lr against; a side whose
    schedule cannot be built is recorded in the report as not checked, with the reason."""
    from cfglint.evidence.lr.bridge import schedule_of

    schedules: dict[str, Any] = {}
    for cfg in (ctx.mf, ctx.mg):
        if cfg is None:
            continue
        try:
            schedules[cfg.side] = schedule_of(cfg)
        except (ValueError, InputError) as exc:
            report.not_checked.append((f"lr.configured.{cfg.side}", str(exc)))
    return schedules


def judge_runs(
    a: Any,
    b: Any,
    baselines: list[Any] | None = None,
    findings: list[Any] | None = None,
    schedules: dict[str, Any] | None = None,
) -> Any:
    """The rows that judge run ``a`` (MindFormers) against the reference ``b`` (Megatron);
    ``findings`` link a gap or a divergence to the lint's causes."""
    from cfglint.evidence.runs.judge import judge

    return judge(a, b, baselines, findings, schedules)


def watch_runs(mf_path: str, mg_path: str, **kwargs: Any) -> Any:
    """Follow two growing logs and judge them as steps arrive (``evidence.runs.watch``); the
    CLI reaches it here, as it reaches every judgement, through the library."""
    from cfglint.evidence.runs.watch import watch

    return watch(mf_path, mg_path, **kwargs)
