"""Data rows: the same dataset on both sides, consistent ``.bin/.idx`` files, token ids within
the embedding, special token ids that match the tokenizer.
"""

from __future__ import annotations

import os

from cfglint.check.context import (
    Context,
    builtin,
    file_location,
    finding,
    label,
    locations_of,
    not_checked,
    unset_knobs,
    value_locations,
)
from cfglint.check.rule import Rule
from cfglint.model.findings import Finding, Location
from cfglint.model.lazy_re import compile_on_use
from cfglint.model.values import Value

# -- data -----------------------------------------------------------------------------------
_WEIGHT = compile_on_use(r"^\s*[-+]?\d+(\.\d*)?([eE][-+]?\d+)?\s*$")


def dataset_prefixes(v: Value | None) -> list[str] | None:
    """Dataset prefixes from a data_path value: weights dropped, paths kept."""
    if v is None or not v.known or v.value in (None, "", []):
        return None
    items = v.value if isinstance(v.value, list) else str(v.value).split()
    return [str(x) for x in items if not _is_weight(str(x))]


def _is_weight(text: str) -> bool:
    # the pattern only for a text that starts, after blanks and a sign, with a digit (a
    # prefix seldom does): str.isdigit holds for every digit \d matches
    return text.lstrip().lstrip("+-")[:1].isdigit() and _WEIGHT.match(text) is not None


@builtin("OTH001")
def same_dataset(rule: Rule, ctx: Context) -> list[Finding]:
    mf, mg = ctx.mf, ctx.mg
    if mf is None or mg is None:
        return []
    for v, who in ((mf.other.data_path, "MindFormers"), (mg.other.data_path, label(mg))):
        if v is not None and not v.known:
            return not_checked(ctx, rule, f"{who}'s dataset is unknown: {v.knob} is {v.where()}")
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
            locations_of((mf.other.data_path, "mindformers"), (mg.other.data_path, "megatron")),
        )
    ]


def _data_prefix(ctx: Context) -> str | None:
    p = ctx.data.get("data")
    if not p:
        return None
    return p[: -len(".bin")] if p.endswith((".bin", ".idx")) else p


@builtin("OTH002")
def dataset_files(rule: Rule, ctx: Context) -> list[Finding]:
    prefix = _data_prefix(ctx)
    if prefix is None:
        return not_checked(ctx, rule, "no data given (--data PREFIX of a .bin/.idx dataset)")
    from cfglint.load.indexed_dataset import DatasetError, open_indexed

    try:
        ds = open_indexed(prefix)
    except DatasetError as exc:
        return [
            finding(
                rule,
                f"{prefix}: {exc}",
                {},
                [Location.model_construct(path=exc.path, line=1, side="source")],
            )
        ]
    ctx.not_checked.append((rule.row, f"{rule.id}: {prefix} is consistent: {ds.describe()}"))
    return []


@builtin("OTH004")
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
                    value_locations(v, cfg.side) or file_location(cfg, *unset_knobs(v)),
                )
            )
    return out


@builtin("OTH003")
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
        return [
            finding(rule, str(exc), {}, [Location.model_construct(path=tok, line=1, side="source")])
        ]
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
                        value_locations(v, "mindformers") or file_location(cfg, *unset_knobs(v)),
                    )
                )
    return out
