"""SARIF 2.1.0 for GitHub code scanning and other SARIF consumers."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cfglint import __version__
from cfglint.check.schema import Rule
from cfglint.model.findings import Finding, Location, Report

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"error": "error", "warning": "warning", "note": "note"}

if TYPE_CHECKING:
    from cfglint.report import RenderOptions


def repo_root(start: str | None = None) -> Path:
    cur = Path(start or os.getcwd()).resolve()
    for d in (cur, *cur.parents):
        if (d / ".git").exists():
            return d
    return cur


def artifact(path: str, root: Path) -> dict[str, Any]:
    p = Path(path).resolve()
    try:
        rel = p.relative_to(root)
    except ValueError:
        return {"uri": p.as_uri()}
    return {"uri": rel.as_posix(), "uriBaseId": "%SRCROOT%"}


def physical(loc: Location | None, path: str, line: int | None, root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"artifactLocation": artifact(loc.path if loc else path, root)}
    start = loc.line if loc else line
    if start:
        out["region"] = {"startLine": start, "startColumn": loc.column if loc else 1}
    return out


_NUM = re.compile(r"""(['"]).*?\1|[-+]?\d[\w.+-]*""")


class _Lines:
    def __init__(self) -> None:
        self.cache: dict[str, list[str]] = {}

    def get(self, path: str, line: int) -> str:
        if path not in self.cache:
            from cfglint.load.safeio import text_if_small

            self.cache[path] = text_if_small(path).splitlines()
        lines = self.cache[path]
        return lines[line - 1] if 0 < line <= len(lines) else ""


def fingerprint(f: Finding, root: Path, lines: _Lines, seen: dict[str, int]) -> str:
    """Stable across unrelated edits: no line numbers and no values, only the rule, the
    files and the shape of the offending line (its key or flag)."""
    parts = [f.rule, f.row]
    for loc in f.locations:
        shape = "" if loc.anchor else _NUM.sub("", lines.get(loc.path, loc.line)).strip()
        parts.append(f"{artifact(loc.path, root)['uri']}|{shape}")
    key = "\n".join(parts)
    n = seen.get(key, 0)
    seen[key] = n + 1
    return hashlib.sha256(f"{key}\n{n}".encode()).hexdigest()[:32]


def rule_descriptor(r: Rule) -> dict[str, Any]:
    return {
        "id": r.id,
        "name": re.sub(r"[^A-Za-z0-9]+", "", r.title.title()) or r.id,
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": r.rationale.strip()},
        "help": {
            "text": f"{r.rationale.strip()}\n\nFix: {r.fix.strip()}",
            "markdown": f"**{r.title}** (checklist row `{r.row}`)\n\n{r.rationale.strip()}"
            f"\n\n**Fix:** {r.fix.strip()}",
        },
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"row": r.row, "tags": [r.row.split(".")[0], "accuracy"]},
    }


def to_sarif(report: Report, rules: tuple[Rule, ...], root: Path | None = None) -> dict[str, Any]:
    root = root or repo_root()
    index = {r.id: i for i, r in enumerate(rules)}
    lines = _Lines()
    seen: dict[str, int] = {}
    results = []
    for f in report.findings:
        res: dict[str, Any] = {
            "ruleId": f.rule,
            "level": LEVEL[f.severity],
            "message": {"text": f.message},
            "partialFingerprints": {"cfglintFinding/v1": fingerprint(f, root, lines, seen)},
            "properties": {"row": f.row, "values": f.values},
        }
        if f.rule in index:
            res["ruleIndex"] = index[f.rule]
        if f.locations:
            res["locations"] = [{"physicalLocation": physical(f.locations[0], "", None, root)}]
            related = []
            for i, loc in enumerate(f.locations[1:], start=1):
                related.append(
                    {
                        "id": i,
                        "physicalLocation": physical(loc, "", None, root),
                        "message": {"text": f"{loc.side} side"},
                    }
                )
            if related:
                res["relatedLocations"] = related
        results.append(res)
    notifications = [
        {
            "level": "error",
            "message": {"text": e.message},
            "locations": [{"physicalLocation": physical(None, e.path, e.line, root)}],
        }
        for e in report.errors
    ]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "cfglint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": "https://github.com/cfglint/cfglint",
                        "rules": [rule_descriptor(r) for r in rules],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
                "invocations": [
                    {
                        "executionSuccessful": not report.errors,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "artifacts": [{"location": artifact(i.path, root)} for i in report.inputs],
                "results": results,
            }
        ],
    }


def render_sarif(report: Report, rules: tuple[Rule, ...]) -> str:
    from cfglint.report.json import dumps

    return dumps(to_sarif(report, rules), indent=2, ensure_ascii=False, default=str) + "\n"


def render(report: Report, options: RenderOptions) -> str:
    from cfglint.check.rulebook import load_rules

    return render_sarif(report, load_rules())
