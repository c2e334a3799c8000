"""Builtin checks over the source scan (``ctx.sources``, a :class:`ScanResult`).

Imported only when a lint has ``--source`` (the rules say ``needs: [sources]``); it reads only
the scan's result types, never the scanner.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from cfglint.check.context import (
    Context,
    builtin,
    file_location,
    label,
    make_finding,
    not_checked,
    render,
    unset_knobs,
    value_locations,
)
from cfglint.check.rule import Rule
from cfglint.evidence.scan.model import (
    DecaySite,
    EntryReport,
    ReachedEffect,
    ScanResult,
    SourceDecay,
)
from cfglint.evidence.scan.policy import MEGATRON_DEFAULT, MINDFORMERS_DEFAULT, compare, describe
from cfglint.model.config import Config
from cfglint.model.findings import Finding, Location
from cfglint.model.values import Loc, Value, fmt

SIDE_WORDS = {"megatron": "PyTorch", "mindformers": "MindSpore"}
SEED_KINDS = ("torch", "mindspore")


def _scan(rule: Rule, ctx: Context) -> ScanResult | None:
    if ctx.sources is None:
        not_checked(ctx, rule, "no training sources given (--source)")
        return None
    return ctx.sources  # type: ignore[no-any-return]


def _entries(rule: Rule, ctx: Context) -> list[EntryReport]:
    res = _scan(rule, ctx)
    if res is None:
        return []
    if not res.entries:
        why = res.no_entry or (
            'no module can be started (none has an `if __name__ == "__main__":` block)'
        )
        not_checked(ctx, rule, f"no training entry point among the sources: {why}")
    return res.entries


def _src(loc: Loc) -> Location:
    return Location.model_construct(path=loc.path, line=loc.line, column=loc.column, side="source")


def _side_word(entry: EntryReport) -> str:
    return f"{SIDE_WORDS[entry.side]} entry point" if entry.side else "entry point"


def _name(entry: EntryReport) -> str:
    """The entry point as a user starts it: the script, and the CLI command when it is one
    (``litgpt/__main__.py pretrain``)."""
    return f"{entry.path} {entry.command}" if entry.command else entry.path


def _start(entry: EntryReport) -> str:
    if entry.command:
        return f"its `{entry.command}` command"
    if entry.has_main:
        return f'its `if __name__ == "__main__":` block (line {entry.anchor.line})'
    return "its top level"


def _reach_note(entry: EntryReport) -> str:
    n = len(entry.files_reached)
    return f"followed {entry.followed} function bodies in {n} file{'s' if n != 1 else ''}"


def _config_value(ctx: Context, side: str | None, field: str) -> Value | None:
    cfg = ctx.side(side) if side else None
    if cfg is None:
        return None
    try:
        return cfg.get(field)
    except KeyError:
        return None


def _truthy(v: Value | None) -> bool | None:
    if v is None or not v.known:
        return None
    x = v.value
    if isinstance(x, str):
        return x.strip().lower() in ("on", "true", "1", "yes")
    return bool(x)


def _active(e: ReachedEffect, ctx: Context, entry: EntryReport) -> bool:
    """Does this seeding effect really happen, given what the config says?"""
    if e.needs_nonzero_seed:
        seed = _config_value(ctx, entry.side, "determinism.seed")
        if seed is not None and seed.known and seed.value == 0:
            return False
        # the loader knows when MindFormers skips seeding (semi-auto parallel runs)
        applied = _config_value(ctx, entry.side, "determinism.seed_applied")
        if applied is not None and applied.known and applied.value is False:
            return False
    return True


def _skip_reason(e: ReachedEffect, ctx: Context, entry: EntryReport) -> str:
    why = "the config rules that out"
    for field in ("determinism.seed_applied", "determinism.seed"):
        v = _config_value(ctx, entry.side, field)
        if v is not None and v.known and v.value in (False, 0):
            why = v.where()
            break
    return (
        f"{e.api} at {e.loc} seeds only for a non-zero seed outside "
        f"(semi_)auto_parallel, and here it does not ({why})"
    )


def _missing(
    rule: Rule,
    ctx: Context,
    kinds: tuple[str, ...],
    what: str,
    extra: Callable[[EntryReport], str] | None = None,
    elsewhere: Callable[[EntryReport], bool] | None = None,
) -> list[Finding]:
    """Entry points that never reach an effect of ``kinds`` (nor satisfy ``elsewhere``)."""
    out = []
    for entry in _entries(rule, ctx):
        if any(_active(e, ctx, entry) and not e.condition for e in entry.of(*kinds)):
            continue
        if elsewhere is not None and elsewhere(entry):
            continue
        if _undecided(rule, ctx, entry, kinds):
            continue
        detail = extra(entry) if extra else ""
        skipped = [e for e in entry.of(*kinds) if not _active(e, ctx, entry)]
        locs: list[Location] = []
        if skipped:
            detail += f"; {_skip_reason(skipped[0], ctx, entry)}"
            locs = _seed_locs(ctx, entry)
        out.append(_entry_finding(rule, entry, what, detail, extra_locs=locs))
    return out


def _undecided(rule: Rule, ctx: Context, entry: EntryReport, kinds: tuple[str, ...]) -> bool:
    """Seeded behind a flag, or through a library helper cfglint has no model of: neither
    seeded nor missing. Says so under "not checked" instead of guessing."""
    flagged = [e for e in entry.of(*kinds) if e.condition and _active(e, ctx, entry)]
    if flagged:
        e = flagged[0]
        not_checked(
            ctx,
            rule,
            f"{_name(entry)}: seeded only when {e.condition} ({e.api} at {e.loc}): "
            "conditional on that flag",
        )
        return True
    helpers = entry.of("seed_helper")
    if helpers:
        h = helpers[0]
        not_checked(
            ctx,
            rule,
            f"{_name(entry)}: seeds through {h.api} at {h.loc}, a library helper or Trainer "
            "cfglint has no model of: unknown",
        )
        return True
    return False


def _seed_locs(ctx: Context, entry: EntryReport) -> list[Location]:
    """Where the config's seed is written: the other place a fix may go."""
    v = _config_value(ctx, entry.side, "determinism.seed")
    return value_locations(v, entry.side) if v is not None and entry.side else []


def _entry_finding(
    rule: Rule,
    entry: EntryReport,
    what: str,
    detail: str,
    value: Any = "not seeded",
    extra_locs: list[Location] | None = None,
) -> Finding:
    if entry.unscanned:
        shown = ", ".join(entry.unscanned[:3]) + (", ..." if len(entry.unscanned) > 3 else "")
        detail += (
            f"; it also calls into modules that were not scanned ({shown}): add them "
            "to --source if they may seed"
        )
    if entry.not_followed:
        shown = "; ".join(entry.not_followed[:2])
        detail += f"; not followed: {shown}, so a seed set beyond it would not be seen"
    fields = {
        "title": rule.title,
        "entry": _name(entry),
        "side": _side_word(entry),
        "what": what,
        "start": _start(entry),
        "reach": _reach_note(entry),
        "detail": detail,
    }
    locs = [_src(entry.anchor), *(extra_locs or [])]
    return make_finding(rule, render(rule.message, fields), {entry.side or "source": value}, locs)


# -- determinism rows ---------------------------------------------------------------------


@builtin("DET010")
def random_seed(rule: Rule, ctx: Context) -> list[Finding]:
    def hint(entry: EntryReport) -> str:
        trainer = [
            e for e in entry.effects if e.api.startswith("mindformers.") and e.kind == "numpy"
        ]
        if trainer:
            return (
                f"; {trainer[0].api} at {trainer[0].loc} seeds numpy and MindSpore from "
                "the config's seed, but not Python's random"
            )
        return ""

    return _missing(rule, ctx, ("random",), "random.seed()", hint)


@builtin("DET011")
def pythonhashseed(rule: Rule, ctx: Context) -> list[Finding]:
    def scripts(entry: EntryReport) -> list[Config]:
        sides = [entry.side] if entry.side else ["mindformers", "megatron"]
        cfgs = [ctx.side(s) for s in sides]
        return [c for c in cfgs if c is not None and c.kind.endswith("script")]

    def hint(entry: EntryReport) -> str:
        given = scripts(entry)
        if given:
            names = ", ".join(os.path.basename(c.path) for c in given)
            return f"; the launch script ({names}) does not export it either"
        return "; no launch script was given to look for an export"

    def exported(entry: EntryReport) -> bool:
        # exported by the launch script: covers every process, the interpreter included
        return any(c.env.get("PYTHONHASHSEED") is not None for c in scripts(entry))

    return _missing(rule, ctx, ("pythonhashseed",), "PYTHONHASHSEED", hint, exported)


@builtin("DET012")
def numpy_seed(rule: Rule, ctx: Context) -> list[Finding]:
    return _missing(rule, ctx, ("numpy",), "np.random.seed()")


@builtin("DET013")
def framework_seed(rule: Rule, ctx: Context) -> list[Finding]:
    out = []
    for entry in _entries(rule, ctx):
        if entry.side == "mindformers":
            kinds: tuple[str, ...] = ("mindspore",)
            what = "mindspore.set_seed()"
        elif entry.side == "megatron":
            kinds = ("torch",)
            what = "torch.manual_seed()"
        else:
            kinds = SEED_KINDS
            what = "torch.manual_seed() or mindspore.set_seed()"
        if any(_active(e, ctx, entry) and not e.condition for e in entry.of(*kinds)):
            continue
        if _undecided(rule, ctx, entry, kinds):
            continue
        detail = ""
        device = entry.of("cuda", "npu")
        if device:
            detail = (
                f"; only the device generator is seeded ({device[0].api} at "
                f"{device[0].loc}), so the CPU generator that initializes weights "
                "built on the host is not"
            )
        skipped = [e for e in entry.of(*kinds) if not _active(e, ctx, entry)]
        locs: list[Location] = []
        if skipped:
            detail += f"; {_skip_reason(skipped[0], ctx, entry)}"
            locs = _seed_locs(ctx, entry)
        out.append(_entry_finding(rule, entry, what, detail, extra_locs=locs))
    return out


def _switch_state(
    entry: EntryReport, switches: list[ReachedEffect], ctx: Context
) -> tuple[bool | None, ReachedEffect | None, list[ReachedEffect]]:
    """(the switch's last state, the effect that set it, the switches behind a flag) along
    an entry's path; a config-driven switch counts only as the config says."""
    state: bool | None = None
    last: ReachedEffect | None = None
    flagged: list[ReachedEffect] = []
    for e in switches:
        if e.condition and e.enabled is not False:
            flagged.append(e)  # behind a flag: conditional, never "on"
            continue
        on = e.enabled
        if e.config_field:
            v = _config_value(ctx, entry.side or "", e.config_field)
            on = _truthy(v)
            written_off = on is False and v is not None and v.origin.value == "file"
            if not on and not written_off:
                continue  # the framework switches it only when the config says so
        state, last = on, e
    return state, last, flagged


def _cudnn_words(entry: EntryReport) -> str:
    """What Megatron-side cuDNN switches do and do not cover."""
    detail = ""
    cudnn = [e for e in entry.of("cudnn_deterministic") if e.enabled and not e.condition]
    if cudnn:
        detail += (
            f"; cudnn.deterministic = True at {cudnn[0].loc} covers cuDNN "
            "convolutions only, not scatter/index_add and other CUDA kernels"
        )
    bench = [e for e in entry.of("cudnn_benchmark") if e.enabled and not e.condition]
    if bench:
        detail += f"; cudnn.benchmark = True at {bench[0].loc} picks kernels by timing"
    return detail


def _deterministic_finding(
    rule: Rule, ctx: Context, entry: EntryReport, switches: list[ReachedEffect]
) -> Finding | None:
    state, last, flagged = _switch_state(entry, switches, ctx)
    if state is True or (state is None and last is not None):
        return None  # on, or computed at run time: cannot call it missing
    if entry.side == "megatron":
        what = "torch.use_deterministic_algorithms(True)"
    else:
        what = 'set_context(deterministic="ON") / mindspore.set_deterministic(True)'
    detail = ""
    extra: list[Location] = []
    if state is False and last is not None:
        detail = f"; it is switched off at {last.loc}"
        extra.append(_src(last.loc))
    if flagged:
        e = flagged[0]
        detail += (
            f"; the only switch found is conditional: on only when {e.condition} "
            f"({e.api} at {e.loc})"
        )
        extra.append(_src(e.loc))
    cfg_driven = [e for e in switches if e.config_field]
    if cfg_driven:
        e = cfg_driven[0]
        detail += f"; {e.note} ({_config_state(ctx, entry.side or '', e.config_field)})"
    if entry.side == "megatron":
        detail += _cudnn_words(entry)
    return _entry_finding(rule, entry, what, detail, value="off", extra_locs=extra)


@builtin("DET014")
def deterministic(rule: Rule, ctx: Context) -> list[Finding]:
    out = []
    for entry in _entries(rule, ctx):
        if entry.side is None:
            not_checked(ctx, rule, f"{_name(entry)}: imports neither torch nor mindspore")
            continue
        helpers = entry.of("seed_helper")
        if helpers:
            h = helpers[0]
            not_checked(
                ctx,
                rule,
                f"{_name(entry)}: goes through {h.api} at {h.loc}, a library helper cfglint "
                "has no model of: whether it switches determinism on is unknown",
            )
            continue
        kind = "torch_deterministic" if entry.side == "megatron" else "mindspore_deterministic"
        found = _deterministic_finding(rule, ctx, entry, entry.of(kind))
        if found is not None:
            out.append(found)
    return out


def _config_state(ctx: Context, side: str, field: str | None) -> str:
    cfg = ctx.side(side)
    if cfg is None:
        return "no config given"
    v = _config_value(ctx, side, field or "")
    if v is None or v.origin.value != "file":
        return f"not set in {os.path.basename(cfg.path)}"
    return f"{v.knob or field} is {fmt(v.value)} at {v.short_where()}"


# -- seed values ----------------------------------------------------------------------------


def _effective_seed(
    entry: EntryReport, ctx: Context
) -> tuple[int | None, ReachedEffect | None, Value | None]:
    """(seed, the effect that sets it last, the config value it came from) of an entry."""
    chosen: ReachedEffect | None = None
    for kinds in (SEED_KINDS, ("numpy",), ("random",)):
        active = [e for e in entry.of(*kinds) if _active(e, ctx, entry)]
        if active:
            chosen = active[-1]
            break
    if chosen is None:
        return None, None, None
    if chosen.seed_value is not None:
        return chosen.seed_value, chosen, None
    if chosen.seed_from_config:
        v = _config_value(ctx, entry.side, "determinism.seed")
        if v is not None and v.known and isinstance(v.value, int):
            return v.value, chosen, v
    return None, chosen, None


def offset_words(offset: str) -> str:
    """``fabric.global_rank`` -> "a rank-dependent offset (fabric.global_rank)"."""
    kind = "a rank-dependent offset" if "rank" in offset.lower() else "an offset"
    return f"{kind} ({offset})"


def _seed_where(e: ReachedEffect, v: Value | None) -> str:
    # `1337 + fabric.global_rank`: the base is what is compared, the offset is said
    plus = f" plus {offset_words(e.seed_offset)}" if e.seed_offset else ""
    if v is not None:
        return f"{e.api} at {e.loc}, from the config seed ({v.short_where()}){plus}"
    if e.seed_loc is not None and e.seed_loc != e.loc:
        return f"{e.api} at {e.loc}, seed passed in at {e.seed_loc}{plus}"
    via = f" via {e.via[-1]}" if e.via else ""
    return f"{e.api} at {e.loc}{via}{plus}"


def _seed_src(e: ReachedEffect) -> Location:
    """Where a fix goes: the caller's literal (seed_everything(42)), not library code."""
    return _src(e.seed_loc or e.loc)


# (seed, where it comes from, its locations, whether the code (not a config) sets it)
_SeedSource = tuple[int, str, list[Location], bool]


def _code_seeds(res: Any, ctx: Context) -> dict[str, list[_SeedSource]]:
    """Each side's seeds as its scanned entry points set them."""
    per_side: dict[str, list[_SeedSource]] = {}
    for entry in res.entries:
        if entry.side is None:
            continue
        seed, eff, cv = _effective_seed(entry, ctx)
        if seed is None or eff is None:
            continue
        locs = [_seed_src(eff)] + (value_locations(cv, entry.side) if cv else [])
        per_side.setdefault(entry.side, []).append((seed, _seed_where(eff, cv), locs, cv is None))
    return per_side


def _config_seed(ctx: Context, side: str) -> _SeedSource | None:
    """The config's seed of a side no entry point was scanned for, when the framework
    applies it."""
    cfg = ctx.side(side)
    if cfg is None:
        return None
    applied = cfg.determinism.seed_applied
    if applied is not None and applied.known and applied.value is False:
        return None  # the framework never applies that seed
    v = cfg.determinism.seed
    if v is not None and v.known and isinstance(v.value, int):
        return v.value, f"{label(cfg)} config seed ({v.where()})", value_locations(v, side), False
    return None


@builtin("DET020")
def seed_mismatch(rule: Rule, ctx: Context) -> list[Finding]:
    res = _scan(rule, ctx)
    if res is None:
        return []
    per_side = _code_seeds(res, ctx)
    scanned = {e.side for e in res.entries}
    for side in ("mindformers", "megatron"):
        # a side whose entry point seeds nothing is the missing-seed rules' business
        seed = None if side in scanned else _config_seed(ctx, side)
        if seed is not None:
            per_side[side] = [seed]
    if len(per_side) < 2:
        if res.entries:
            not_checked(ctx, rule, "seed values known for one side only")
        return []
    out = []
    for a_seed, a_where, a_locs, a_src in per_side["megatron"]:
        for b_seed, b_where, b_locs, b_src in per_side["mindformers"]:
            if a_seed == b_seed or not (a_src or b_src):
                continue  # equal, or config against config (a config rule's business)
            fields = {
                "title": rule.title,
                "mg": a_seed,
                "mf": b_seed,
                "mg_where": a_where,
                "mf_where": b_where,
            }
            out.append(
                make_finding(
                    rule,
                    render(rule.message, fields),
                    {"megatron": a_seed, "mindformers": b_seed},
                    a_locs + b_locs,
                )
            )
    return out


@builtin("DET021")
def seed_vs_config(rule: Rule, ctx: Context) -> list[Finding]:
    out = []
    for entry in _entries(rule, ctx):
        cfg = ctx.side(entry.side) if entry.side else None
        v = cfg.determinism.seed if cfg is not None else None
        if cfg is None or v is None or not v.known or not isinstance(v.value, int):
            continue
        literal = [
            e
            for e in entry.effects
            if e.seed_value is not None and e.kind not in ("pythonhashseed",)
        ]
        odd = [e for e in literal if e.seed_value != v.value]
        if not odd:
            continue
        first = odd[0]
        later = [
            e
            for e in entry.effects
            if e.seed_from_config and entry.effects.index(e) > entry.effects.index(first)
        ]
        override = ""
        if later:
            override = (
                f"; {later[0].api} at {later[0].loc} re-seeds from the config later, "
                "so the literal seed only governs what runs before it"
            )
        apis = ", ".join(sorted({e.api for e in odd}))
        fields = {
            "title": rule.title,
            "entry": _name(entry),
            "apis": apis,
            "seed": first.seed_value,
            "where": str(first.loc),
            "config": v.value,
            "config_where": v.short_where(),
            "side": label(cfg),
            "override": override,
        }
        locs = [_seed_src(first), *value_locations(v, entry.side)]  # type: ignore[arg-type]
        out.append(
            make_finding(
                rule,
                render(rule.message, fields),
                {"source": first.seed_value, entry.side: v.value},  # type: ignore[dict-item]
                locs,
            )
        )
    return out


# -- source rows -----------------------------------------------------------------------------


@builtin("SRC001")
def dropout(rule: Rule, ctx: Context) -> list[Finding]:
    res = _scan(rule, ctx)
    if res is None:
        return []
    out = []
    for d in res.dropouts:
        s = d.site
        if s.how == "default":
            how = "no probability given, so the default 0.5 applies"
        elif s.how == "keep_prob":
            how = (
                f"keep_prob={fmt(round(1 - s.p, 6))} is the old MindSpore argument: it keeps, "
                f"so {fmt(s.p)} of the activations are dropped"
            )
        else:
            how = "a literal in the code"
        loc = Loc.model_construct(path=d.path, line=s.loc.line)
        fields = {
            "title": rule.title,
            "p": fmt(s.p),
            "call": s.text,
            "where": str(loc),
            "how": how,
            "side": SIDE_WORDS.get(d.side or "", "source"),
        }
        out.append(
            make_finding(
                rule,
                render(rule.message, fields),
                {d.side or "source": s.p},
                [_src(loc)],
            )
        )
    return out


def _decays(d: SourceDecay) -> bool:
    """Does this optimizer decay anything at all?"""
    wd = d.site.weight_decay
    # a hand-built group list's own weight_decay is only a fallback; a library's grouping
    # (or a plain list) decays at that value, so 0 decays nothing
    applies = d.site.policy == "decay_all" or d.site.library
    if not applies or wd is None or wd.kind not in ("literal", "default"):
        return True
    return bool(wd.value)


def _unknown_decay(s: DecaySite) -> bool:
    """Is the weight_decay this grouping runs at unread, so it may decay nothing at all?"""
    read = s.weight_decay is not None and s.weight_decay.kind in ("literal", "default")
    if s.library:
        return not read
    return s.weight_decay is None and s.policy == "decay_all"


class _Policy:
    def __init__(
        self,
        policy: str,
        names: list[str],
        what: str,
        locs: list[Location],
        from_source: bool,
        assumed: bool = False,
        unknown_wd: bool = False,
    ) -> None:
        self.policy, self.names, self.what = policy, names, what
        self.locs, self.from_source = locs, from_source
        # a framework default taken for a side that was not given at all
        self.assumed = assumed
        # the optimizer's weight_decay default is unknown: it may decay nothing at all
        self.unknown_wd = unknown_wd


def _source_policy(d: SourceDecay) -> _Policy:
    s = d.site
    loc = Loc.model_construct(path=d.path, line=s.loc.line)
    locs = [_src(loc)]
    where = f"{s.optimizer} at {loc}"
    if d.policy_path and s.evidence:
        ev = s.evidence[0]
        ev_loc = Loc.model_construct(path=d.policy_path, line=ev.loc.line)
        locs.append(_src(ev_loc))
        where += f", groups built at {ev_loc} ({ev.text})"
    elif s.evidence:
        where += f" ({s.evidence[0].text} at line {s.evidence[0].loc.line})"
    else:
        where += f" (params: {s.params_text})"
    wd = s.weight_decay
    # with groups, the call's own weight_decay is only the fallback: not worth showing
    if (
        wd is not None
        and (wd.kind == "literal" or s.policy == "decay_all")
        and wd.kind in ("literal", "default")
    ):
        where += f", weight_decay {fmt(wd.value)}"
    unknown = _unknown_decay(s)
    if unknown and s.library:
        where += f", weight_decay not decided: {s.detail}"
    elif unknown:
        where += f", weight_decay not given and {s.optimizer}'s default unknown to cfglint"
    what = f"{describe(s.policy, s.names)}: {where}"
    return _Policy(s.policy or "", s.names, what, locs, True, unknown_wd=unknown)


def _merged(policies: list[_Policy]) -> list[_Policy]:
    """One policy written in several places (eight optimizer branches, one script per
    task) is one finding with every location, not one finding per place."""
    groups: dict[tuple, list[_Policy]] = {}
    for p in policies:
        groups.setdefault((p.policy, tuple(p.names), p.unknown_wd), []).append(p)
    out = []
    for same in groups.values():
        first = same[0]
        if len(same) > 1:
            where = ", ".join(str(p.locs[0].path) + f":{p.locs[0].line}" for p in same[1:4])
            more = f" and {len(same) - 4} more" if len(same) > 4 else ""
            n = len(same) - 1
            places = "place" if n == 1 else "places"
            first.what += f"; the same policy at {n} other {places} ({where}{more})"
            first.locs = [loc for p in same for loc in p.locs]
        out.append(first)
    return out


def _default_policy(side: str, cfg: Config | None) -> _Policy | None:
    base = MEGATRON_DEFAULT if side == "megatron" else MINDFORMERS_DEFAULT
    if cfg is None:
        return _Policy(
            "default",
            [],
            f"{base}, assumed: no {SIDE_WORDS[side]}-side config or optimizer code given",
            [],
            False,
            assumed=True,
        )
    wd = cfg.optimizer.weight_decay
    if wd is not None and wd.known and not wd.value:
        return None  # no decay at all: a weight_decay value difference, not a grouping one
    locs = value_locations(wd, side) or file_location(cfg, *unset_knobs(wd), side=side)
    extra = ""
    qk = cfg.optimizer.wd_to_qk_layernorm
    if side == "megatron" and qk is not None and qk.known and qk.value:
        extra = "; q/k layernorm weights are decayed (--apply-wd-to-qk-layernorm)"
    shown = f"{fmt(wd.value)} ({wd.short_where()})" if wd is not None and wd.known else "?"
    return _Policy("default", [], f"{base}{extra}, {label(cfg)} weight_decay {shown}", locs, False)


def _policies(ctx: Context, res: ScanResult) -> dict[str, list[_Policy]]:
    out: dict[str, list[_Policy]] = {}
    for side in ("megatron", "mindformers"):
        found = [d for d in res.decays if d.side == side]
        sites = [d for d in found if _decays(d)]
        if sites:
            out[side] = _merged([_source_policy(d) for d in sites])
        elif found:
            # the code builds its optimizers and none decays: no grouping to compare (a
            # weight_decay value difference), and no framework default to assume either
            out[side] = []
        else:
            p = _default_policy(side, ctx.side(side))
            out[side] = [p] if p is not None else []
    return out


def _decay_pairs(rule: Rule, ctx: Context, want: str) -> list[Finding]:
    res = _scan(rule, ctx)
    if res is None:
        return []
    pols = _policies(ctx, res)
    out = []
    for a in pols["megatron"]:
        for b in pols["mindformers"]:
            if not (a.from_source or b.from_source):
                continue
            got = compare(a.policy, a.names, b.policy, b.names)
            if got == "differ" and (a.unknown_wd or b.unknown_wd):
                got = "unclear"  # an unknown default is unknown, not "decays everything"
            if got != want:
                continue
            if want == "unclear" and (a.assumed or b.assumed):
                continue  # a maybe against a guess: not worth a line
            fields = {"title": rule.title, "mg": a.what, "mf": b.what}
            # the code is where the fix goes: source locations first
            locs = a.locs + b.locs if a.from_source else b.locs + a.locs
            out.append(
                make_finding(
                    rule,
                    render(rule.message, fields),
                    {"megatron": a.policy, "mindformers": b.policy},
                    locs,
                )
            )
    return out


@builtin("SRC002")
def weight_decay_mismatch(rule: Rule, ctx: Context) -> list[Finding]:
    return _decay_pairs(rule, ctx, "differ")


@builtin("SRC003")
def weight_decay_unclear(rule: Rule, ctx: Context) -> list[Finding]:
    return _decay_pairs(rule, ctx, "unclear")


@builtin("SRC004")
def noncontiguous_grad(rule: Rule, ctx: Context) -> list[Finding]:
    res = _scan(rule, ctx)
    if res is None:
        return []
    out = []
    for b in res.backwards:
        s = b.site
        loc = Loc.model_construct(path=b.path, line=s.loc.line)
        fields = {
            "title": rule.title,
            "function": s.function,
            "operand": s.transposed,
            "matmul": s.matmul,
            "where": str(loc),
            "side": SIDE_WORDS.get(b.side or "", "source"),
        }
        out.append(
            make_finding(
                rule,
                render(rule.message, fields),
                {b.side or "source": "transposed, not contiguous"},
                [_src(loc)],
            )
        )
    return out
