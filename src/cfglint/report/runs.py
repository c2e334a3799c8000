"""``cfglint logs`` reports: text, JSON (the lint's keys plus ``logs``) and SARIF."""

from __future__ import annotations

import os
from typing import Any

from cfglint.evidence.runs.judge import BAD
from cfglint.model import standard as std
from cfglint.model.findings import Report

VERDICT_COLOR = {
    "pass": "32",
    "noise": "32",
    "inside": "32",
    "none": "32",
    "fail": "1;31",
    "drift": "1;31",
    "diverges": "1;31",
    "outside": "1;31",
    "differ": "1;33",
    "departs": "1;31",
    "offset": "1;33",
    "parts": "1;33",
}
# verdicts that call for a look without failing the comparison (BAD: those that fail it)
WATCH = {"offset", "parts", "unknown"}
# each row's short name and its verdicts in words, for a title read at a glance
SHORT = {
    std.ROW_FIRST_LOSS: "first loss",
    std.ROW_MEAN_LOSS: "mean loss",
    std.ROW_GLOBAL_NORM: "global norm",
    "lr0.forward": "lr=0 forward",
    "lr0.backward": "lr=0 backward",
    "benchmark.band": "band",
    "drift": "drift",
    "divergence": "divergence",
    "late_gap": "late gap",
    "lr.logged": "learning rates",
}
WORDS = {
    "pass": "ok",
    "fail": "FAILS",
    "noise": "noise only",
    "offset": "small one-sided offset",
    "drift": "DRIFTS",
    "none": "none",
    "diverges": "DIVERGES",
    "departs": "DEPARTS",
    "parts": "parts (within the lr=0 limit)",
    "inside": "inside",
    "outside": "OUTSIDE",
    "unknown": "unknown",
    "differ": "DIFFER",
    "not applicable": "n/a",
}


def headline(report: Any) -> tuple[str, str]:
    """The verdict in words, and every row's state: a picture's title."""
    failing = [r for r in report.rows if r.verdict in BAD]
    if failing:
        head = "The runs do not match: " + ", ".join(_state(r, report) for r in failing[:3])
    elif any(r.verdict in WATCH for r in report.rows if r.row != "benchmark.band"):
        head = "No failure within the limits used; look at: " + ", ".join(
            _state(r, report)
            for r in report.rows
            if r.verdict in WATCH and r.row != "benchmark.band"
        )
    else:
        head = "The runs match within the limits used"
    if report.band.get("runs", 1) <= 1:
        head += " (band unknown: no baseline run)"
    states = " · ".join(_state(r, report) for r in report.rows)
    return head, states


def _state(row: Any, report: Any) -> str:
    name = SHORT.get(row.row, row.title)
    words = WORDS.get(row.verdict, row.verdict)
    if row.row == "divergence" and report.divergence_step is not None:
        words += f" at step {report.divergence_step}"
    return f"{name} {words}"


def logs_json(report: Any) -> dict[str, Any]:
    return report.model_dump(mode="json")


def render_json(lint: Report, report: Any) -> str:
    from cfglint.report.json import dumps, to_dict

    doc = to_dict(lint)
    doc["logs"] = logs_json(report)
    return dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_sarif(lint: Report, report: Any) -> str:
    import json

    from cfglint.check.rulebook import load_rules
    from cfglint.report.json import json_safe
    from cfglint.report.sarif import to_sarif

    doc = to_sarif(lint, load_rules())
    doc["runs"][0]["properties"] = {"logs": json_safe(logs_json(report))}
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_text(report: Any, color: bool = False) -> str:
    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if color and code else text

    st, band = report.steps, report.band
    src = report.inputs.get("sources", {})
    lines = [
        f"MindFormers {os.path.basename(report.inputs['mindformers'])} "
        f"({src.get('mindformers', 'text log')}, {st['mindformers']} steps) against Megatron "
        f"{os.path.basename(report.inputs['megatron'])} ({src.get('megatron', 'text log')}, "
        f"{st['megatron']} steps): {st['common']} common steps, {st['first']}-{st['last']}",
        (
            f"benchmark band: +/-{band['half_width_median']:.3g} from {band['source']}"
            if "lr0_limit" not in band
            else "benchmark band: unknown (no --baseline); used instead: the float-noise limit "
            f"+/-{band['float_noise_limit']:.3g} and the lr = 0 forward limit "
            f"+/-{band['lr0_limit']:.3g}"
        ),
    ]
    for b in report.inputs.get("baselines", []):
        lines.append(f"  baseline: {b}")
    lines.append("")
    for r in report.rows:
        tag = paint(f"{r.verdict.upper():14}", VERDICT_COLOR.get(r.verdict, ""))
        lines.append(f"{tag} {r.title}: {r.detail}")
        for f in r.findings:
            lines.append(f"{'':15}-> {f.rule} ({f.row}, {f.severity}): {f.message}")
    if report.divergence_step is not None:
        lines.append("")
        lines.append(paint(f"Divergence step: {report.divergence_step}", "1"))
    for n in report.notes:
        lines.append(f"note: {n}")
    return "\n".join(lines) + "\n"
