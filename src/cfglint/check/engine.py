"""The rule engine: small and generic over the rule kinds in :mod:`cfglint.check.rulebook`."""

from __future__ import annotations

import math
import string
from dataclasses import dataclass, field
from typing import Any

from cfglint.check.expr import ConfigView, evaluate
from cfglint.check.rulebook import Rule, _equal
from cfglint.model.config import Config
from cfglint.model.findings import SEVERITY_RANK, Finding, Location
from cfglint.model.values import Loc, Value, fmt

SIDE_LABEL = {"mindformers": "MindFormers", "megatron": "Megatron"}


@dataclass
class Context:
    """Everything the rules look at."""

    mf: Config | None = None
    mg: Config | None = None
    profile: str = "default"
    # results of the source scanner (cfglint.evidence.scan), when --source was given
    sources: Any = None
    # paths of data / tokenizer files given on the command line
    data: dict[str, str] = field(default_factory=dict)
    # training logs with per-step losses (--loss-log), parsed once
    logs: list[str] = field(default_factory=list)
    log_cache: dict[str, Any] = field(default_factory=dict)
    # (row, path, line) of PyYAML-string values already reported, so that the compare and
    # the recommend rule of one row do not both report the same string
    yaml11_seen: set[tuple[str, str, int]] = field(default_factory=set)
    # rows that could not be checked, with the reason (shown in verbose output)
    not_checked: list[tuple[str, str]] = field(default_factory=list)

    def side(self, name: str) -> Config | None:
        return self.mf if name == "mindformers" else self.mg


def label(cfg: Config) -> str:
    if cfg.side == "megatron" and cfg.kind.startswith("mindspeed"):
        return "MindSpeed-LLM"
    return SIDE_LABEL[cfg.side]


def to_location(loc: Loc, side: str) -> Location:
    return Location(path=loc.path, line=loc.line, column=loc.column, side=side)  # type: ignore[arg-type]


def value_locations(v: Value | None, side: str) -> list[Location]:
    """Where a value was typed first, then the lines that carried it there (the variable
    assignment a flag expands, the array a value sits in)."""
    if v is None:
        return []
    return [to_location(loc, side) for loc in v.locations()]


def where(v: Value | None, cfg: Config | None) -> str:
    if v is None:
        return "no such setting"
    if v.origin.value == "default" and cfg is not None and v.knob:
        import os

        return f"{v.detail}, not set in {os.path.basename(cfg.path)}"
    return v.where()


class _Fmt(string.Formatter):
    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        # Only plain names and one [key] lookup: templates cannot reach attributes.
        name, _, key = field_name.partition("[")
        obj = kwargs[name]
        if key:
            obj = obj[key.rstrip("]")]
        return obj, field_name


_FMT = _Fmt()


def render(template: str, fields: dict[str, Any]) -> str:
    return _FMT.vformat(template, (), fields).strip()


def run_rules(rules: tuple[Rule, ...], ctx: Context) -> list[Finding]:
    from cfglint.check.builtins.core import BUILTINS

    out: list[Finding] = []
    for rule in rules:
        if ctx.profile not in rule.profiles:
            continue
        if rule.kind == "builtin":
            out.extend(BUILTINS[rule.check](rule, ctx))  # type: ignore[index]
        else:
            out.extend(_KINDS[rule.kind](rule, ctx))
    return out


def _when(rule: Rule, ctx: Context, cfg: Config | None = None) -> bool:
    if not rule.when:
        return True
    names = {
        "mf": ConfigView(ctx.mf) if ctx.mf else None,
        "mg": ConfigView(ctx.mg) if ctx.mg else None,
        "cfg": ConfigView(cfg) if cfg else None,
    }
    return bool(evaluate(rule.when, names))


def make_finding(
    rule: Rule, message: str, values: dict[str, Any], locations: list[Location]
) -> Finding:
    seen: list[Location] = []
    for loc in locations:
        if loc not in seen:
            seen.append(loc)
    return Finding(
        rule=rule.id,
        row=rule.row,
        severity=rule.severity,
        message=message,
        values=values,
        locations=seen,
        rationale=rule.rationale,
        fix=rule.fix,
    )


def yaml11_findings(
    rule: Rule, v: Value, cfg: Config, ctx: Context, other: Value | None = None
) -> list[Finding]:
    """A number MindFormers will read as a string, reported once per row."""
    key = (rule.row, v.loc.path if v.loc else cfg.path, v.loc.line if v.loc else 0)
    if key in ctx.yaml11_seen:
        return []
    ctx.yaml11_seen.add(key)
    f = yaml11_finding(rule, v, cfg)
    if other is not None and other.known:
        f.values["megatron"] = other.value
        f.locations.extend(value_locations(other, "megatron"))
    return [f]


def yaml11_finding(rule: Rule, v: Value, cfg: Config) -> Finding:
    """A number MindFormers will read as a string (PyYAML follows YAML 1.1)."""
    msg = (
        f"{rule.title}: MindFormers reads {v.knob}: {v.raw} as the string {v.raw!r}, "
        f"not a number ({v.short_where()}). PyYAML, which MindFormers uses, follows YAML 1.1: "
        "a float needs a dot and a signed exponent. Write it as "
        f"{_yaml11_spelling(v.raw or '')}."
    )
    return make_finding(rule, msg, {cfg.side: v.raw}, value_locations(v, cfg.side)).model_copy(
        update={"severity": "error"}
    )


def _yaml11_spelling(raw: str) -> str:
    try:
        x = float(raw)
    except ValueError:
        return "a quoted-free number with a dot, e.g. 1.0e-5"
    if not math.isfinite(x):
        return "a number within the float range (this one overflows to infinity)"
    mant, _, exp = f"{x:e}".partition("e")
    mant = mant.rstrip("0").rstrip(".")
    if "." not in mant:
        mant += ".0"
    return f"{mant}e{int(exp):+03d}".replace("e+0", "e+").replace("e-0", "e-")


def _compare(rule: Rule, ctx: Context) -> list[Finding]:
    mf, mg = ctx.mf, ctx.mg
    if mf is None or mg is None or not _when(rule, ctx):
        return []
    a, b = mf.get(rule.field), mg.get(rule.field)  # type: ignore[arg-type]
    if a is not None and a.yaml11_string:
        return yaml11_findings(rule, a, mf, ctx, other=b)
    if a is None or b is None or not a.known or not b.known:
        if a is not None and b is not None:
            gone = a if not a.known else b
            ctx.not_checked.append((rule.row, f"{rule.id}: {gone.knob} is {gone.where()}"))
        return []
    if _equal(_n(a.value), _n(b.value), rule.tolerance):
        return []
    fields = {
        "title": rule.title,
        "mf": fmt(a.value),
        "mg": fmt(b.value),
        "mf_where": where(a, mf),
        "mg_where": where(b, mg),
        "mg_label": label(mg),
        "mf_knob": a.knob,
        "mg_knob": b.knob,
    }
    locs = value_locations(a, "mindformers") + value_locations(b, "megatron")
    locs += _locate(rule, ctx, "mindformers") + _locate(rule, ctx, "megatron")
    if not locs:  # both defaults: point at the two files, where the setting would go
        locs = _anchor(mf, "mindformers") + _anchor(mg, "megatron")
    return [
        make_finding(
            rule, render(rule.message, fields), {"mindformers": a.value, "megatron": b.value}, locs
        )
    ]


def _n(v: Any) -> Any:
    return v.lower() if isinstance(v, str) else v


def _locate(rule: Rule, ctx: Context, side: str, prefixed_only: bool = False) -> list[Location]:
    """Locations of the rule's ``locate`` fields on ``side``. A field written ``mf:x.y`` or
    ``mg:x.y`` is read on that side only (a cross-side rule points at both causes);
    ``prefixed_only`` keeps just those."""
    cfg = ctx.side(side)
    out: list[Location] = []
    for f in rule.locate:
        prefix, _, name = f.rpartition(":")
        if prefix and {"mf": "mindformers", "mg": "megatron"}[prefix] != side:
            continue
        if cfg is not None and (prefix or not prefixed_only):
            out.extend(value_locations(cfg.get(name), side))
    return out


def _recommend(rule: Rule, ctx: Context) -> list[Finding]:
    out = []
    for side in rule.sides:
        cfg = ctx.side(side)
        if cfg is None or not _when(rule, ctx, cfg):
            continue
        v = cfg.get(rule.field)  # type: ignore[arg-type]
        if v is None:
            continue
        if v.yaml11_string:
            out.extend(yaml11_findings(rule, v, cfg, ctx))
            continue
        if not v.known:
            ctx.not_checked.append((rule.row, f"{rule.id}: {v.knob} is {v.where()}"))
            continue
        if rule.expect.holds(v.value):  # type: ignore[union-attr]
            continue
        fields = {
            "title": rule.title,
            "value": fmt(v.value),
            "where": where(v, cfg),
            "knob": v.knob,
            "side": label(cfg),
            "expected": rule.expect.describe(),  # type: ignore[union-attr]
        }
        other = "megatron" if side == "mindformers" else "mindformers"
        locs = value_locations(v, side) + _locate(rule, ctx, side) or _anchor(cfg, side)
        locs += _locate(rule, ctx, other, prefixed_only=True)
        out.append(make_finding(rule, render(rule.message, fields), {side: v.value}, locs))
    return out


def _anchor(cfg: Config, side: str) -> list[Location]:
    """Where a missing setting would be added: the file itself."""
    return [Location(path=cfg.path, line=1, column=1, side=side, anchor=True)]  # type: ignore[arg-type]


def _consistency(rule: Rule, ctx: Context) -> list[Finding]:
    out = []
    for side in rule.sides:
        cfg = ctx.side(side)
        if cfg is None or not _when(rule, ctx, cfg):
            continue
        ok = evaluate(rule.check, {"cfg": ConfigView(cfg)})  # type: ignore[arg-type]
        if ok is None or ok:
            continue
        vals = {f: cfg.get(f) for f in rule.locate if ":" not in f}
        fields = {
            "title": rule.title,
            "side": label(cfg),
            "val": {f: fmt(v.value) if v else "none" for f, v in vals.items()},
            "at": {f: where(v, cfg) for f, v in vals.items()},
        }
        locs = _locate(rule, ctx, side) or _anchor(cfg, side)
        values = {side: {f.split(".")[-1]: v.value for f, v in vals.items() if v}}
        out.append(make_finding(rule, render(rule.message, fields), values, locs))
    return out


def _env(rule: Rule, ctx: Context) -> list[Finding]:
    out = []
    for side in rule.sides:
        cfg = ctx.side(side)
        if cfg is None or not _when(rule, ctx, cfg):
            continue
        if not cfg.launch_script:
            ctx.not_checked.append(
                (
                    rule.row,
                    f"{rule.id}: {rule.env} not checked on {label(cfg)}: no launch script given",
                )
            )
            continue
        device = cfg.launch.device.value if cfg.launch.device else None  # type: ignore[attr-defined]
        if rule.device != "any" and device != rule.device:
            continue
        v = cfg.env.get(rule.env)  # type: ignore[arg-type]
        if v is not None and v.known and rule.expect.holds(v.value):  # type: ignore[union-attr]
            continue
        fields = {
            "title": rule.title,
            "side": label(cfg),
            "env": rule.env,
            "value": fmt(v.value) if v is not None and v.known else "not exported",
            "where": v.where() if v is not None else f"not exported by {cfg.launch_script}",
            "expected": rule.expect.describe(),  # type: ignore[union-attr]
        }
        locs = value_locations(v, side) or [
            Location(path=cfg.launch_script, line=1, side=side, anchor=True)
        ]  # type: ignore[arg-type]
        out.append(
            make_finding(rule, render(rule.message, fields), {side: v.value if v else None}, locs)
        )
    return out


_KINDS = {
    "compare": _compare,
    "recommend": _recommend,
    "consistency": _consistency,
    "env": _env,
}


def failing(findings: list[Finding], fail_on: str) -> bool:
    if fail_on == "never":
        return False
    return any(SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on] for f in findings)
