"""The stable JSON format of PRODUCT.md."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from cfglint import __version__
from cfglint.model.findings import Finding, Report

if TYPE_CHECKING:
    from cfglint.report import RenderOptions


def _clean(v: Any) -> Any:
    # JSON has no inf/nan; a config can contain them (YAML `.inf`)
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def _finding(f: Finding) -> dict[str, Any]:
    out = {
        "rule": f.rule,
        "row": f.row,
        "severity": f.severity,
        "message": f.message,
        "values": _clean(f.values),
        # where the values are written; a default has no location (PRODUCT.md)
        "locations": [loc.model_dump() for loc in f.locations if not loc.anchor],
    }
    # a default is written nowhere: where the file that leaves it out would set it, the
    # line its section begins on (line 1 of the file without one)
    unset = [loc.model_dump() for loc in f.locations if loc.anchor]
    return out | ({"unset_locations": unset} if unset else {})


def to_dict(report: Report, verbose: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "tool": {"name": "cfglint", "version": __version__},
        "inputs": [i.model_dump() for i in report.inputs],
        "findings": [_finding(f) for f in report.findings],
        "errors": [
            {"path": e.path, "message": e.message} | ({"line": e.line} if e.line else {})
            for e in report.errors
        ],
    }
    # what would stop a framework or change what it reads (an unknown key, a duplicate
    # key, a broken line continuation) reaches code review with the findings
    out["warnings"] = [
        {"path": w.path, "message": w.message} | ({"line": w.line} if w.line else {})
        for w in report.warnings
    ]
    if report.skipped:
        out["skipped"] = [{"path": x.path, "message": x.message} for x in report.skipped]
    if report.probe is not None:
        out["probe"] = report.probe
    if verbose:
        out["not_checked"] = [{"row": r, "reason": why} for r, why in report.not_checked]
    return out


def json_safe(obj: Any) -> Any:
    """``obj`` with every NaN or infinity as the string "nan", "inf" or "-inf": bare
    ``NaN``/``Infinity`` is not JSON, and strict readers (jq, JSON.parse) reject it."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def dumps(obj: Any, **kw: Any) -> str:
    """Strict JSON text of ``obj`` (non-finite floats as strings, see :func:`json_safe`)."""
    return json.dumps(json_safe(obj), allow_nan=False, **kw)


def render_json(report: Report, verbose: bool = False) -> str:
    return dumps(to_dict(report, verbose), indent=2, ensure_ascii=False) + "\n"


def render(report: Report, options: RenderOptions) -> str:
    return render_json(report, verbose=options.verbose)
