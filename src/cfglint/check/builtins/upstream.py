"""Checks against facts outside the two configs: installed versions, the published model a
config names, and whether both sides start from the same weights.
"""

from __future__ import annotations

from cfglint.check.context import (
    Context,
    builtin,
    file_location,
    finding,
    label,
    locations_of,
    not_checked,
    value_locations,
)
from cfglint.check.rule import Rule
from cfglint.model.config import Config
from cfglint.model.findings import Finding, Location
from cfglint.model.values import Origin, fmt


# -- environment and upstream ------------------------------------------------------------------
@builtin("OTH009")
def version_check(rule: Rule, ctx: Context) -> list[Finding]:
    from cfglint.evidence.versions import check_installed

    if ctx.mf is None:
        return []
    problem, info = check_installed()
    if problem is None:
        # a compatible installed set passes; anything else could not be decided here
        return [] if isinstance(info, dict) else not_checked(ctx, rule, info)
    return [finding(rule, problem, {"mindformers": info}, file_location(ctx.mf))]


@builtin("OTH011")
def unknown_arguments(rule: Rule, ctx: Context) -> list[Finding]:
    """A flag the Megatron release's parser does not register: argparse stops the job at
    start-up (megatron/training/arguments.py parse_args calls parser.parse_args() unless
    ignore_unknown_args). A training log's arguments block already ran: not checked here."""
    cfg = ctx.mg
    if cfg is None:
        return []
    out = []
    for v in cfg.unknown:
        hint = f" ({v.detail})" if v.detail else ""
        detail = f"{v.knob} is not an argument of {cfg.defaults_from}{hint}"
        out.append(finding(rule, detail, {"megatron": v.knob}, value_locations(v, "megatron")))
    return out


@builtin("OTH010")
def open_source_diff(rule: Rule, ctx: Context) -> list[Finding]:
    from cfglint.evidence.reference import claimed_model, differences

    out = []
    for cfg in (ctx.mf, ctx.mg):
        if cfg is None:
            continue
        ref, why = claimed_model(cfg)
        if ref is None:
            ctx.not_checked.append((rule.row, f"{rule.id}: {label(cfg)}: {why}"))
            continue
        diffs = differences(cfg, ref)
        if not diffs:
            continue
        text = "; ".join(
            f"{name} {fmt(mine.value)} ({mine.brief()}) vs published {fmt(theirs)}"
            for name, mine, theirs in diffs
        )
        detail = f"{label(cfg)} names {ref['name']} ({why}) but differs: {text}"
        locs: list[Location] = []
        for _, mine, _ in diffs:
            locs += value_locations(mine, cfg.side)
        out.append(
            finding(
                rule,
                detail,
                {cfg.side: {n: m.value for n, m, _ in diffs}},
                locs or file_location(cfg),
            )
        )
    return out


def _one_side_loads(rule: Rule, mf: Config, mg: Config, mf_loads: bool) -> Finding:
    """One side starts from a checkpoint, the other from random weights."""
    a, b = mf.weight.load_checkpoint, mg.weight.load_checkpoint
    who, other = ("MindFormers", label(mg)) if mf_loads else (label(mg), "MindFormers")
    loaded = a if mf_loads else b
    assert loaded is not None
    detail = (
        f"{who} loads {loaded.value} ({loaded.brief()}) but {other} starts from "
        "random initialization: the starting weights differ"
    )
    if loaded.detail and loaded.origin is Origin.FILE:
        # what a missing checkpoint does on the loading side (normalize/*/precision.py)
        detail += f", {loaded.detail}"
    return finding(
        rule,
        detail,
        {"mindformers": a.value if a else None, "megatron": b.value if b else None},
        locations_of((a, "mindformers"), (b, "megatron")) or file_location(mf),
    )


@builtin("ALN011")
def same_weights(rule: Rule, ctx: Context) -> list[Finding]:
    mf, mg = ctx.mf, ctx.mg
    if mf is None or mg is None:
        return []
    a, b = mf.weight.load_checkpoint, mg.weight.load_checkpoint
    for v, who in ((a, "MindFormers"), (b, label(mg))):
        if v is not None and not v.known:
            # a placeholder path or $1 is neither "loads" nor "random": say so
            return not_checked(
                ctx, rule, f"{who}'s initial weights are unknown: {v.knob} is {v.where()}"
            )
    la = bool(a is not None and a.known and a.value)
    lb = bool(b is not None and b.known and b.value)
    if la and lb:
        return []
    if la != lb:
        return [_one_side_loads(rule, mf, mg, la)]
    if ctx.profile != "align":
        return []
    detail = "neither side loads an initial checkpoint; each draws its own random weights"
    return [finding(rule, detail, {}, file_location(mf) + file_location(mg))]
