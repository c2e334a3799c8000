"""``--output-format github``: GitHub Actions workflow commands, one annotation per finding,
input error and input warning, as ruff and yamllint print them
(https://docs.github.com/actions/reference/workflow-commands-for-github-actions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cfglint.model.findings import Finding, InputProblem, Report

if TYPE_CHECKING:
    from cfglint.report import RenderOptions

# a note has no annotation level of its own on GitHub: it is a notice
COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _command(level: str, props: list[tuple[str, str | int]], message: str) -> str:
    where = ",".join(f"{k}={_prop(str(v))}" for k, v in props)
    return f"::{COMMAND[level]}{' ' + where if where else ''}::{_data(message)}"


def _finding(f: Finding) -> str:
    props: list[tuple[str, str | int]] = []
    if f.locations:
        loc = f.locations[0]
        # a default's location is where its section begins (see report/json.py)
        props += [("file", loc.path), ("line", loc.line), ("col", loc.column)]
    props.append(("title", f"{f.rule} {f.row}"))
    return _command(f.severity, props, " ".join(f.message.split()))


def _problem(p: InputProblem) -> str:
    props: list[tuple[str, str | int]] = [("file", p.path)] if p.path else []
    if p.path and p.line:
        props.append(("line", p.line))
    props.append(("title", "cfglint input " + ("error" if p.level == "error" else "warning")))
    return _command(p.level, props, p.message)


def render(report: Report, options: RenderOptions) -> str:
    lines = [_finding(f) for f in report.findings]
    lines += [_problem(p) for p in [*report.errors, *report.warnings]]
    return "".join(line + "\n" for line in lines)
