"""``--output-format concise`` and ``--statistics``: one line per finding, like ruff."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from cfglint.model.findings import Finding, Report

if TYPE_CHECKING:
    from cfglint.report import RenderOptions


def _where(f: Finding, fallback: str) -> str:
    if f.locations:
        loc = f.locations[0]
        return f"{loc.path}:{loc.line}:{loc.column}"
    return f"{fallback}:1:1"


def render_concise(report: Report, quiet: bool = False) -> str:
    """``path:line:col: RULE message`` per finding, then the summary line."""
    from cfglint.report.text import summary_line

    fallback = report.inputs[0].path if report.inputs else "-"
    lines = [
        f"{_where(f, fallback)}: {f.rule} {' '.join(f.message.split())}" for f in report.findings
    ]
    if report.probe is not None:
        from cfglint.report.probe import concise_lines

        lines += concise_lines(report.probe)
    if not quiet:
        lines.append(summary_line(report))
    return "".join(line + "\n" for line in lines)


def render_statistics(report: Report, titles: dict[str, str], fmt: str = "text") -> str:
    """Count per rule, most frequent first: ``N  RULE  severity  title``; with ``--format
    json`` a list of ``{"rule", "count", "severity", "title"}`` in the same order."""
    counts = Counter(f.rule for f in report.findings)
    severity = {f.rule: f.severity for f in report.findings}
    if fmt == "json":
        from cfglint.report.json import dumps

        rows = [
            {"rule": rule, "count": n, "severity": severity[rule], "title": titles.get(rule, "")}
            for rule, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        return dumps(rows, indent=2) + "\n"
    width = max((len(str(n)) for n in counts.values()), default=1)
    lines = [
        f"{n:>{width}}  {rule}  {severity[rule]:<7}  {titles.get(rule, '')}".rstrip()
        for rule, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    return "\n".join(lines) + ("\n" if lines else "")


def render(report: Report, options: RenderOptions) -> str:
    return render_concise(report, quiet=options.quiet)
