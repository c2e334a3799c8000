"""The rule engine: small and generic over the rule kinds in :mod:`cfglint.check.rulebook`."""

from __future__ import annotations

from typing import Any

from cfglint.check.context import (
    Context,
    file_location,
    label,
    make_finding,
    not_checked,
    render,
    unset_knobs,
    value_locations,
    where,
    yaml11_findings,
)
from cfglint.check.expr import ConfigView, evaluate
from cfglint.check.registry import check_of
from cfglint.check.rule import GENERAL_FIX_WORDS, Rule, same_value
from cfglint.model.config import Config
from cfglint.model.findings import SEVERITY_RANK, Finding, Location
from cfglint.model.values import Value, fmt

# Comparisons run first: a value reported once (a YAML 1.1 string) is reported by the rule
# that states both sides' values, not by a recommendation that reaches it earlier.
_ORDER = {"compare": 0, "builtin": 1, "consistency": 2, "recommend": 3, "env": 4}


def run_rules(rules: tuple[Rule, ...], ctx: Context) -> list[Finding]:
    """Every finding, one per cause: a rule's finding is dropped when a rule it is
    ``superseded_by`` reports (the comparison of the value it recommends)."""
    out: list[Finding] = []
    for rule in sorted(rules, key=lambda r: _ORDER[r.kind]):
        if ctx.profile not in rule.profiles:
            continue
        out.extend(_KINDS[rule.kind](rule, ctx))
    reported = {f.rule for f in out}
    gone = {r.id for r in rules if reported.intersection(r.superseded_by)}
    return [f for f in out if f.rule not in gone]


def _builtin(rule: Rule, ctx: Context) -> list[Finding]:
    if "sources" in rule.needs and ctx.sources is None:
        # without --source there is nothing to look at: say so without importing the scanner
        return not_checked(ctx, rule, "no training sources given (--source)")
    return check_of(rule.id, rule.check)(rule, ctx)


def _when(rule: Rule, ctx: Context, cfg: Config | None = None) -> bool:
    """The rule's condition. A condition that reads an unknown value is not decided: the
    rule stays silent and ``-v`` names the value and why it is unknown."""
    if not rule.when:
        return True
    unknowns: list[tuple[str, Value]] = []
    names = {
        "mf": ConfigView(ctx.mf, unknowns) if ctx.mf else None,
        "mg": ConfigView(ctx.mg, unknowns) if ctx.mg else None,
        "cfg": ConfigView(cfg, unknowns) if cfg else None,
    }
    result = bool(evaluate(rule.when, names))
    if unknowns:
        field, v = unknowns[0]
        side = f" on {label(cfg)}" if cfg is not None else ""
        ctx.not_checked.append(
            (
                rule.row,
                f"{rule.id}: not decided{side}: it depends on {field} ({v.knob}), "
                f"which is {v.where()}",
            )
        )
        return False
    return result


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
    if same_value(a.value, b.value, rule.tolerance):
        return []
    if _branch_may_match(rule, ctx, a, b):
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
    fields.update(_fix_fields(a, b, mf, mg))
    la, lb = value_locations(a, "mindformers"), value_locations(b, "megatron")
    locs = la + lb + _locate(rule, ctx, "mindformers") + _locate(rule, ctx, "megatron")
    # a side whose value is written nowhere (a default): where it would be set in its file
    locs += [] if la else file_location(mf, *unset_knobs(a), side="mindformers")
    locs += [] if lb else file_location(mg, *unset_knobs(b), side="megatron")
    f = make_finding(
        rule, render(rule.message, fields), {"mindformers": a.value, "megatron": b.value}, locs
    )
    if any(f"{{{k}}}" in rule.fix for k in _FIX_FIELDS):
        f.fix = render(rule.fix, fields)
    return [f]


_FIX_FIELDS = tuple(GENERAL_FIX_WORDS)


def _fix_fields(a: Value, b: Value, mf: Config, mg: Config) -> dict[str, str]:
    """Which side a fix changes, whichever side holds which value: the side left at its
    default (the other side's value was written on purpose), else Megatron's, whose flag
    is the quicker edit; the fix names both when both were written."""
    a_default, b_default = a.origin.value == "default", b.origin.value == "default"
    # a value no setting holds (the model class fixes it: the legacy Llama has no dropout)
    # is never the side to change
    a_fixed, b_fixed = (v.origin.value == "derived" and not v.inputs for v in (a, b))
    if a_fixed and not b_fixed:
        return {"fix_side": label(mg), "fix_knob": b.knob, "fix_value": fmt(a.value)}
    if b_fixed and not a_fixed:
        return {"fix_side": label(mf), "fix_knob": a.knob, "fix_value": fmt(b.value)}
    if a_default and not b_default:
        return {"fix_side": label(mf), "fix_knob": a.knob, "fix_value": fmt(b.value)}
    other = "" if b_default else f", or {a.knob} to {fmt(b.value)} on {label(mf)}"
    return {"fix_side": label(mg) + other, "fix_knob": b.knob, "fix_value": fmt(a.value)}


def _branch_may_match(rule: Rule, ctx: Context, a: Value, b: Value) -> bool:
    """A value that one of several undecided script branches chose (see
    ``Value.branch_choice``) is not a difference when another branch may give the other
    side's value: the claim "they differ" would be a guess. It stays a difference when
    every branch's value is known and none matches."""
    for mine, other in ((a, b), (b, a)):
        if not mine.branch_choice:
            continue
        if mine.alternatives and not any(
            same_value(alt.value, other.value, rule.tolerance) for alt in mine.alternatives
        ):
            continue  # no branch matches: a difference whichever branch runs
        match = next(
            (x for x in mine.alternatives if same_value(x.value, other.value, rule.tolerance)),
            None,
        )
        why = (
            f"the branch at {match.loc} gives {fmt(match.value)}, equal to the other side"
            if match is not None and match.loc is not None
            else "another branch may set it differently or leave it at its default"
        )
        ctx.not_checked.append(
            (rule.row, f"{rule.id}: {mine.knob} is {mine.where()}; not decided: {why}")
        )
        return True
    return False


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
    out: list[Finding] = []
    found: list[tuple[dict[str, Any], dict[str, Any], list[Location]]] = []
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
        locs = value_locations(v, side) + _locate(rule, ctx, side) or file_location(
            cfg, *unset_knobs(v), side=side
        )
        locs += _locate(rule, ctx, other, prefixed_only=True)
        found.append((fields, {side: v.value}, locs))
    if len(found) == 2:  # both sides miss it: one cause, one finding naming both
        found = [_both_sides(*found)]
    return out + [
        make_finding(rule, render(rule.message, fields), values, locs)
        for fields, values, locs in found
    ]


def _both_sides(
    a: tuple[dict[str, Any], dict[str, Any], list[Location]],
    b: tuple[dict[str, Any], dict[str, Any], list[Location]],
) -> tuple[dict[str, Any], dict[str, Any], list[Location]]:
    """One recommendation that both sides miss: the sides, their values and origins."""
    (fa, va, la), (fb, vb, lb) = a, b
    same = fa["value"] == fb["value"]
    fields = {
        **fa,
        "side": f"both sides ({fa['side']} and {fb['side']})",
        "value": fa["value"] if same else f"{fa['value']} and {fb['value']}",
        "where": f"{fa['side']}: {fa['where']}; {fb['side']}: {fb['where']}",
        "knob": fa["knob"] if fa["knob"] == fb["knob"] else f"{fa['knob']} / {fb['knob']}",
    }
    seen = set()
    locs = []
    for loc in la + lb:
        key = (loc.path, loc.line, loc.side)
        if key not in seen:
            seen.add(key)
            locs.append(loc)
    return fields, {**va, **vb}, locs


def _consistency(rule: Rule, ctx: Context) -> list[Finding]:
    out = []
    for side in rule.sides:
        cfg = ctx.side(side)
        if cfg is None or not _when(rule, ctx, cfg):
            continue
        unknowns: list[tuple[str, Value]] = []
        ok = evaluate(rule.check, {"cfg": ConfigView(cfg, unknowns)})  # type: ignore[arg-type]
        chosen = [(f, v) for f, v in unknowns if v.branch_choice]
        if chosen and not ok:  # what an undecided script branch chose decides nothing
            field, v = chosen[0]
            ctx.not_checked.append(
                (rule.row, f"{rule.id}: not decided: {field} ({v.knob}) is {v.where()}")
            )
            continue
        if ok is None or ok:
            continue
        vals = {f: cfg.get(f) for f in rule.locate if ":" not in f}
        fields = {
            "title": rule.title,
            "side": label(cfg),
            "val": {f: fmt(v.value) if v else "none" for f, v in vals.items()},
            "at": {f: where(v, cfg) for f, v in vals.items()},
        }
        knobs = [k for v in vals.values() for k in unset_knobs(v)]
        locs = _locate(rule, ctx, side) or file_location(cfg, *knobs, side=side)
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
        if v is None and cfg.env_hidden:
            ctx.not_checked.append(
                (rule.row, f"{rule.id}: {rule.env} on {label(cfg)}: {cfg.env_hidden}")
            )
            continue
        fields = {
            "title": rule.title,
            "side": label(cfg),
            "env": rule.env,
            "value": fmt(v.value) if v is not None and v.known else "not exported",
            "where": v.where() if v is not None else f"not exported by {cfg.launch_script}",
            "expected": rule.expect.describe(),  # type: ignore[union-attr]
        }
        locs = value_locations(v, side) or _export_anchor(cfg, side)
        out.append(
            make_finding(rule, render(rule.message, fields), {side: v.value if v else None}, locs)
        )
    return out


def _export_anchor(cfg: Config, side: str) -> list[Location]:
    """Where a missing export would go: before the launch command of the script that
    launches this side (its first line when the command is in another file)."""
    if cfg.launch_script == cfg.path:
        return file_location(cfg, side=side)
    return [Location.model_construct(path=cfg.launch_script, line=1, side=side, anchor=True)]


_KINDS = {
    "compare": _compare,
    "recommend": _recommend,
    "consistency": _consistency,
    "env": _env,
    "builtin": _builtin,
}


def blocking(findings: list[Finding], fail_on: str) -> list[Finding]:
    """The findings that make the exit code 1 (what blocks a commit or a CI job)."""
    if fail_on == "never":
        return []
    return [f for f in findings if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on]]


def failing(findings: list[Finding], fail_on: str) -> bool:
    return bool(blocking(findings, fail_on))
