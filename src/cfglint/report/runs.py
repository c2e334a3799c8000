"""``cfglint logs`` reports: text, JSON (the lint's keys plus ``logs``) and SARIF."""

from __future__ import annotations

import os
from typing import Any

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
}


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
        f"benchmark band: +/-{band['half_width_median']:.3g} from {band['source']}",
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
