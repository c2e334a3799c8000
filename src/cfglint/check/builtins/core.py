"""Named checks for rule rows that one comparison cannot express.

A rule of kind ``builtin`` names one of these. Each takes the rule and the context and
returns findings; the wording still comes from the rule (title, rationale, fix), the
check supplies the facts in ``{detail}``. Heavy or optional modules are imported inside
the checks that need them, so a plain lint stays fast.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from cfglint.check.engine import (
    Context,
    label,
    make_finding,
    render,
    value_locations,
    yaml11_findings,
)
from cfglint.check.rulebook import Rule
from cfglint.model.config import Config
from cfglint.model.findings import Finding, Location
from cfglint.model.values import Value, fmt

Check = Callable[[Rule, Context], list[Finding]]
BUILTINS: dict[str, Check] = {}


def builtin(name: str) -> Callable[[Check], Check]:
    def register(fn: Check) -> Check:
        BUILTINS[name] = fn
        return fn

    return register


def not_checked(ctx: Context, rule: Rule, why: str) -> list[Finding]:
    ctx.not_checked.append((rule.row, f"{rule.id}: {why}"))
    return []


def finding(
    rule: Rule,
    detail: str,
    values: dict[str, Any],
    locs: list[Location],
    severity: str | None = None,
) -> Finding:
    f = make_finding(
        rule, render(rule.message, {"title": rule.title, "detail": detail}), values, locs
    )
    return f.model_copy(update={"severity": severity}) if severity else f


def _locs(*pairs: tuple[Value | None, str]) -> list[Location]:
    out: list[Location] = []
    for v, side in pairs:
        out += value_locations(v, side)
    return out


def _file_loc(cfg: Config) -> list[Location]:
    return [Location(path=cfg.path, line=1, side=cfg.side, anchor=True)]


# -- learning rate ---------------------------------------------------------------------------
@builtin("lr_curve")
def lr_curve(rule: Rule, ctx: Context) -> list[Finding]:
    mf, mg = ctx.mf, ctx.mg
    if mf is None or mg is None:
        return []
    for v in (mf.optimizer.lr, mf.optimizer.min_lr, *mf.optimizer.lr_extra.values()):
        if v is not None and v.yaml11_string:
            return yaml11_findings(rule, v, mf, ctx)
    from cfglint.evidence import lr
    from cfglint.evidence.lr.bridge import schedule_of

    o1, o2 = mf.optimizer, mg.optimizer
    locs = _locs(
        (o1.lr, "mindformers"),
        (o1.lr_decay_style, "mindformers"),
        (o2.lr, "megatron"),
        (o2.lr_decay_style, "megatron"),
    )
    try:
        a, b = schedule_of(mf), schedule_of(mg)
    except ValueError as exc:
        return _lr_parts(rule, ctx, str(exc), locs)
    steps = max(a.total_steps, b.total_steps)
    diff = lr.compare(a, b, steps)
    if diff.first_diverging_step is None:
        return []
    params = _schedule_differences(a, b)
    detail = (
        f"MindFormers {a.style} and {label(mg)} {b.style} schedules first differ by more than 1% "
        f"at step "
        f"{diff.first_diverging_step} (MindFormers lr {diff.a_at_first:.4g} from "
        f"{o1.lr_decay_style.brief() if o1.lr_decay_style else 'its schedule'}, {label(mg)} "
        f"{diff.b_at_first:.4g}); the largest gap is {diff.max_rel_gap:.1%} at step "
        f"{diff.max_gap_step} of {steps}." + (f" Differences: {params}." if params else "")
    )
    values = {
        "mindformers": {"first_diverging_step": diff.first_diverging_step, "lr": diff.a_at_first},
        "megatron": {"lr": diff.b_at_first, "max_rel_gap": round(diff.max_rel_gap, 6)},
    }
    return [finding(rule, detail, values, locs)]


def _schedule_differences(a: Any, b: Any) -> str:
    parts = []
    for name, x, y in (
        ("peak lr", a.max_lr, b.max_lr),
        ("min lr", a.min_lr, b.min_lr),
        ("warmup steps", a.warmup_steps, b.warmup_steps),
        ("warmup start", a.warmup_init, b.warmup_init),
        ("decay ends at", a.decay_steps, b.decay_steps),
        ("style", a.style, b.style),
    ):
        if x != y and not (
            isinstance(x, float)
            and isinstance(y, float)
            and abs(x - y) <= 1e-9 * max(abs(x), abs(y))
        ):
            parts.append(f"{name} {fmt(x)} vs {fmt(y)}")
    return "; ".join(parts)


def _lr_parts(rule: Rule, ctx: Context, why: str, locs: list[Location]) -> list[Finding]:
    """The curve cannot be simulated (e.g. the length depends on the dataset): compare the
    schedule's parts that are known."""
    mf, mg = ctx.mf, ctx.mg
    assert mf is not None and mg is not None
    diffs, values = [], {}
    for name, fa, fb in (
        ("peak lr", mf.optimizer.lr, mg.optimizer.lr),
        ("min lr", mf.optimizer.min_lr, mg.optimizer.min_lr),
        ("decay style", mf.optimizer.lr_decay_style, mg.optimizer.lr_decay_style),
    ):
        if fa is None or fb is None or not fa.known or not fb.known:
            continue
        x, y = fa.value, fb.value
        same = (
            abs(x - y) <= 1e-9 * max(abs(x), abs(y))
            if isinstance(x, (int, float)) and isinstance(y, (int, float))
            else str(x).lower() == str(y).lower()
        )
        if not same:
            diffs.append(
                f"{name}: MindFormers {fmt(x)} ({fa.brief()}) vs {label(mg)} {fmt(y)} "
                f"({fb.brief()})"
            )
            values[name] = {"mindformers": x, "megatron": y}
    if not diffs:
        return not_checked(ctx, rule, f"learning-rate curve not simulated: {why}")
    detail = "; ".join(diffs) + f". (The full curve could not be simulated: {why}.)"
    return [finding(rule, detail, values, locs)]


# -- data -----------------------------------------------------------------------------------
_WEIGHT = re.compile(r"^\s*[-+]?\d+(\.\d*)?([eE][-+]?\d+)?\s*$")


def dataset_prefixes(v: Value | None) -> list[str] | None:
    """Dataset prefixes from a data_path value: weights dropped, paths kept."""
    if v is None or not v.known or v.value in (None, "", []):
        return None
    items = v.value if isinstance(v.value, list) else str(v.value).split()
    return [str(x) for x in items if not _WEIGHT.match(str(x))]


@builtin("same_dataset")
def same_dataset(rule: Rule, ctx: Context) -> list[Finding]:
    mf, mg = ctx.mf, ctx.mg
    if mf is None or mg is None:
        return []
    a, b = dataset_prefixes(mf.other.data_path), dataset_prefixes(mg.other.data_path)
    if not a or not b:
        return not_checked(ctx, rule, "a dataset path is not set on both sides")
    na = sorted(os.path.basename(p.rstrip("/")) for p in a)
    nb = sorted(os.path.basename(p.rstrip("/")) for p in b)
    if na == nb:
        return []
    if any(p.endswith(".mindrecord") or "mindrecord" in p for p in a):
        detail = (
            f"MindFormers reads MindRecord data {a} ({mf.other.data_path.brief()}) while "  # type: ignore[union-attr]
            f"{label(mg)} reads {b} ({mg.other.data_path.brief()}); make sure both were "  # type: ignore[union-attr]
            "made from the same text with the same tokenizer, in the same order"
        )
    else:
        detail = (
            f"MindFormers reads {na} ({mf.other.data_path.brief()}) but {label(mg)} reads "  # type: ignore[union-attr]
            f"{nb} ({mg.other.data_path.brief()})"
        )  # type: ignore[union-attr]
    return [
        finding(
            rule,
            detail,
            {"mindformers": a, "megatron": b},
            _locs((mf.other.data_path, "mindformers"), (mg.other.data_path, "megatron")),
        )
    ]


def _data_prefix(ctx: Context) -> str | None:
    p = ctx.data.get("data")
    if not p:
        return None
    return p[: -len(".bin")] if p.endswith((".bin", ".idx")) else p


@builtin("dataset_files")
def dataset_files(rule: Rule, ctx: Context) -> list[Finding]:
    prefix = _data_prefix(ctx)
    if prefix is None:
        return not_checked(ctx, rule, "no data given (--data PREFIX of a .bin/.idx dataset)")
    from cfglint.load.indexed_dataset import DatasetError, open_indexed

    try:
        ds = open_indexed(prefix)
    except DatasetError as exc:
        return [
            finding(rule, f"{prefix}: {exc}", {}, [Location(path=exc.path, line=1, side="source")])
        ]
    ctx.not_checked.append((rule.row, f"{rule.id}: {prefix} is consistent: {ds.describe()}"))
    return []


@builtin("input_ids_range")
def input_ids_range(rule: Rule, ctx: Context) -> list[Finding]:
    prefix = _data_prefix(ctx)
    if prefix is None:
        return not_checked(ctx, rule, "no data given (--data PREFIX of a .bin/.idx dataset)")
    from cfglint.load.indexed_dataset import DatasetError, open_indexed

    try:
        ds = open_indexed(prefix)
        top, scanned = ds.max_token()
    except DatasetError:
        return []  # dataset_files reports the broken pair
    out = []
    for cfg, field in ((ctx.mf, "structure.vocab_size"), (ctx.mg, "structure.padded_vocab_size")):
        if cfg is None:
            continue
        v = cfg.get(field)
        if v is None or not v.known or not isinstance(v.value, int):
            if cfg.side == "megatron":
                v = cfg.get("structure.vocab_size")
            if v is None or not v.known or not isinstance(v.value, int):
                continue
        if top >= v.value:
            detail = (
                f"the largest token id in {prefix}.bin is {top} (scanned {scanned} tokens) "
                f"but {label(cfg)}'s embedding has {v.value} rows ({v.brief()})"
            )
            out.append(
                finding(
                    rule,
                    detail,
                    {cfg.side: {"max_token_id": top, "vocab": v.value}},
                    value_locations(v, cfg.side) or _file_loc(cfg),
                )
            )
    return out


@builtin("special_tokens")
def special_tokens(rule: Rule, ctx: Context) -> list[Finding]:
    tok = ctx.data.get("tokenizer")
    if not tok:
        return not_checked(
            ctx,
            rule,
            "no tokenizer given (--tokenizer DIR with tokenizer_config.json / config.json)",
        )
    from cfglint.load.tokenizer_files import TokenizerError, special_ids

    try:
        ids, where = special_ids(tok)
    except TokenizerError as exc:
        return [finding(rule, str(exc), {}, [Location(path=tok, line=1, side="source")])]
    out = []
    cfg = ctx.mf
    if cfg is not None:
        pairs = [
            ("bos", cfg.other.bos_token_id),
            ("eos", cfg.other.eos_token_id),
            ("pad", cfg.other.pad_token_id),
            ("eos", cfg.other.eod_token_id),
        ]
        for name, v in pairs:
            if v is None or not v.known or v.value is None or name not in ids:
                continue
            if v.value != ids[name] and not (name == "pad" and v.value in (-1,)):
                detail = (
                    f"MindFormers {v.knob} is {v.value} ({v.brief()}) but the tokenizer's "
                    f"{name} id is {ids[name]} ({where[name]})"
                )
                out.append(
                    finding(
                        rule,
                        detail,
                        {"mindformers": v.value, "tokenizer": ids[name]},
                        value_locations(v, "mindformers") or _file_loc(cfg),
                    )
                )
    return out


# -- environment and upstream ------------------------------------------------------------------
@builtin("version_check")
def version_check(rule: Rule, ctx: Context) -> list[Finding]:
    from cfglint.evidence.versions import check_installed

    if ctx.mf is None:
        return []
    problem, info = check_installed()
    if problem is None:
        return not_checked(ctx, rule, info)
    return [finding(rule, problem, {"mindformers": info}, _file_loc(ctx.mf))]


@builtin("open_source_diff")
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
                rule, detail, {cfg.side: {n: m.value for n, m, _ in diffs}}, locs or _file_loc(cfg)
            )
        )
    return out


@builtin("same_weights")
def same_weights(rule: Rule, ctx: Context) -> list[Finding]:
    mf, mg = ctx.mf, ctx.mg
    if mf is None or mg is None:
        return []
    a, b = mf.weight.load_checkpoint, mg.weight.load_checkpoint
    la = bool(a is not None and a.known and a.value)
    lb = bool(b is not None and b.known and b.value)
    if la and lb:
        return []
    if la != lb:
        who, other = ("MindFormers", label(mg)) if la else (label(mg), "MindFormers")
        loaded = a if la else b
        detail = (
            f"{who} loads {loaded.value} ({loaded.brief()}) but {other} starts from "  # type: ignore[union-attr]
            "random initialization"
        )
        return [
            finding(
                rule,
                detail,
                {"mindformers": a.value if a else None, "megatron": b.value if b else None},
                _locs((a, "mindformers"), (b, "megatron")) or _file_loc(mf),
            )
        ]
    if ctx.profile != "align":
        return []
    detail = "neither side loads an initial checkpoint; each draws its own random weights"
    return [finding(rule, detail, {}, _file_loc(mf) + _file_loc(mg))]


# -- migration standard from logs ---------------------------------------------------------------
def _logs(ctx: Context) -> tuple[Any, Any, str]:
    from cfglint.load.losslog import read_loss_log

    paths = list(ctx.logs)
    if ctx.mg is not None and ctx.mg.kind == "megatron-log" and ctx.mg.path not in paths:
        paths.append(ctx.mg.path)
    by: dict[str, Any] = {}
    for p in paths:
        if p in ctx.log_cache:
            log = ctx.log_cache[p]
        else:
            log = ctx.log_cache[p] = read_loss_log(p)
        by.setdefault(log.framework, log)
    mf, mg = by.get("mindformers"), by.get("megatron")
    if mf is None or mg is None:
        missing = "a MindFormers" if mf is None else "a Megatron"
        return None, None, f"needs {missing} training log with per-step losses (--loss-log FILE)"
    return mf, mg, ""


def _paired(rule: Rule, ctx: Context, series: str) -> tuple[Any, Any, list[int]] | None:
    """Both logs and the steps both print ``series`` ("loss" or "grad_norm") for; records
    why when that cannot be decided."""
    a, b, why = _logs(ctx)
    if a is None:
        not_checked(ctx, rule, why)
        return None
    steps = sorted(set(getattr(a, series)) & set(getattr(b, series)))
    if not steps:
        not_checked(
            ctx, rule, f"the two logs print no {series.replace('_', ' ')} for a common step"
        )
        return None
    return a, b, steps


def _log_loc(log: Any, step: int, side: str) -> Location:
    return Location(path=log.path, line=log.first_line.get(step, 1), side=side)  # type: ignore[arg-type]


@builtin("first_loss")
def first_loss(rule: Rule, ctx: Context) -> list[Finding]:
    pair = _paired(rule, ctx, "loss")
    if pair is None:
        return []
    a, b, steps = pair
    step = steps[0]
    x, y = a.loss[step], b.loss[step]
    err, rel = abs(x - y), abs(x - y) / max(abs(y), 1e-12)
    if err < 0.005 or rel < 0.005:
        return []
    detail = (
        f"step {step}: MindFormers loss {x:.6g} vs Megatron {y:.6g}, absolute error "
        f"{err:.4g} (limit 0.005), relative {rel:.2%} (limit 0.5%)"
    )
    return [
        finding(
            rule,
            detail,
            {"mindformers": x, "megatron": y},
            [_log_loc(a, step, "mindformers"), _log_loc(b, step, "megatron")],
        )
    ]


@builtin("mean_loss")
def mean_loss(rule: Rule, ctx: Context) -> list[Finding]:
    pair = _paired(rule, ctx, "loss")
    if pair is None:
        return []
    a, b, steps = pair
    abs_err = sum(abs(a.loss[s] - b.loss[s]) for s in steps) / len(steps)
    rel_err = sum(abs(a.loss[s] - b.loss[s]) / max(abs(b.loss[s]), 1e-12) for s in steps) / len(
        steps
    )
    if abs_err < 0.01 or rel_err < 0.01:
        return []
    worst = max(steps, key=lambda s: abs(a.loss[s] - b.loss[s]))
    detail = (
        f"over {len(steps)} common steps the mean absolute loss error is {abs_err:.4g} (limit "
        f"0.01) and the mean relative error {rel_err:.2%} (limit 1%); the largest gap is at "
        f"step {worst} ({a.loss[worst]:.6g} vs {b.loss[worst]:.6g})"
    )
    return [
        finding(
            rule,
            detail,
            {
                "mindformers": round(sum(a.loss[s] for s in steps) / len(steps), 6),
                "megatron": round(sum(b.loss[s] for s in steps) / len(steps), 6),
            },
            [_log_loc(a, worst, "mindformers"), _log_loc(b, worst, "megatron")],
        )
    ]


@builtin("global_norm")
def global_norm(rule: Rule, ctx: Context) -> list[Finding]:
    pair = _paired(rule, ctx, "grad_norm")
    if pair is None:
        return []
    a, b, steps = pair
    rel = sum(
        abs(a.grad_norm[s] - b.grad_norm[s]) / max(abs(b.grad_norm[s]), 1e-12) for s in steps
    ) / len(steps)
    if rel <= 0.10:
        return []
    mean_a = sum(a.grad_norm[s] for s in steps) / len(steps)
    mean_b = sum(b.grad_norm[s] for s in steps) / len(steps)
    detail = (
        f"over {len(steps)} common steps the mean relative error of the global norm is "
        f"{rel:.1%} (limit 10%); mean global norm MindFormers {mean_a:.4g}, Megatron {mean_b:.4g}"
    )
    return [
        finding(
            rule,
            detail,
            {"mindformers": round(mean_a, 6), "megatron": round(mean_b, 6)},
            [_log_loc(a, steps[0], "mindformers"), _log_loc(b, steps[0], "megatron")],
        )
    ]


@builtin("local_norm")
def local_norm(rule: Rule, ctx: Context) -> list[Finding]:
    return not_checked(
        ctx,
        rule,
        "needs per-weight gradient norms at step 1 from both sides; "
        "the runtime probe that collects them is not part of this release",
    )


@builtin("optimizer_update")
def optimizer_update(rule: Rule, ctx: Context) -> list[Finding]:
    return not_checked(
        ctx,
        rule,
        "needs one real optimizer step on both sides; the runtime "
        "probe is not part of this release",
    )


# Source-scan checks live in cfglint.check.builtins.source and register themselves when it is
# imported. Without --source there is nothing for them to look at, so a plain config lint
# records why and never imports the scanner's modules.
SOURCE_CHECKS = (
    "source_random_seed",
    "source_pythonhashseed",
    "source_numpy_seed",
    "source_framework_seed",
    "source_deterministic",
    "source_seed_mismatch",
    "source_seed_vs_config",
    "source_dropout",
    "source_weight_decay_mismatch",
    "source_weight_decay_unclear",
    "source_noncontiguous_grad",
)


def _source_check(name: str) -> Check:
    def run(rule: Rule, ctx: Context) -> list[Finding]:
        if ctx.sources is None:
            return not_checked(ctx, rule, "no training sources given (--source)")
        import cfglint.check.builtins.source  # noqa: F401  (replaces this stub in BUILTINS)

        return BUILTINS[name](rule, ctx)

    return run


for _name in SOURCE_CHECKS:
    BUILTINS[_name] = _source_check(_name)
