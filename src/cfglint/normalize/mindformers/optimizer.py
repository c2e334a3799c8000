"""Optimizer, learning-rate schedule, training length, gradient clipping and batch sizes of
a MindFormers config.
"""

from __future__ import annotations

import math
from typing import Any

from cfglint.load.yamltree import Node, get
from cfglint.model.config import Config
from cfglint.model.errors import InputError
from cfglint.model.values import Loc, Value
from cfglint.normalize.mindformers.defaults import Component
from cfglint.normalize.mindformers.view import MFView, class_default


def read_optimizer(view: MFView, cfg: Config) -> None:
    o = cfg.optimizer
    sec = view.node("optimizer")
    name, info, src = _optimizer_class(view, cfg, sec)
    o.eps = view.key("optimizer.eps", src, kind="float")
    o.weight_decay = view.key("optimizer.weight_decay", src, kind="float")
    _betas(view, cfg, name, info, src)
    o.wd_to_qk_layernorm = Value.default(
        False, "weight decay grouping", "MindFormers (1-D parameters and biases get no decay)"
    )
    _type_checks(view, cfg, info.get("class", name))
    # the batch first: total_steps -1 is derived from the dataset size and the global batch
    _batch(view, cfg)
    _schedule(view, cfg)
    _clip(view, cfg)
    mode = view.node("run_mode")
    trains = mode is None or str(mode.value).strip().lower() in ("train", "finetune")
    if sec is None and not view.v2 and trains:
        _no_optimizer_section(cfg)


def _optimizer_class(
    view: MFView, cfg: Config, sec: Node | None
) -> tuple[str, dict[str, Any], Component | None]:
    """Set optimizer.type; return the optimizer's name, its data entry and the class whose
    defaults fill the keys the section leaves out."""
    o = cfg.optimizer
    optimizers = view.d.knobs["optimizers"]
    tmpl = view.comp("OptimizerConfig", "optimizer")
    if sec is None or not sec.plain():
        o.type = Value.default(
            "adamw",
            "optimizer.type",
            f"{tmpl.label} (no optimizer section)" if tmpl else "MindFormers template",
        )
        comp = view.comp("AdamW", "optimizer")
        # an absent section takes the template's defaults; an empty one, AdamW's
        return "AdamW", optimizers["AdamW"], tmpl if sec is None else comp
    tnode = view.node("optimizer.type")
    name = str(tnode.value) if tnode is not None else "AdamW"
    info = optimizers.get(name, {"rule": name.lower(), "betas": "list"})
    comp = view.comp(info.get("class", name), "optimizer")
    o.type = (
        view.value(tnode, "optimizer.type")
        if tnode is not None
        else Value.unknown("optimizer.type", "optimizer section without type")
    )
    if o.type.known:
        o.type = o.type.model_copy(update={"value": info["rule"], "raw": name})
    return name, info, comp


def _betas(
    view: MFView, cfg: Config, name: str, info: dict[str, Any], src: Component | None
) -> None:
    o = cfg.optimizer
    betas = view.node("optimizer.betas")
    if betas is not None and betas.is_seq and len(betas.value) == 2:
        o.beta1 = view.value(betas.value[0], "optimizer.betas[0]", "float")
        o.beta2 = view.value(betas.value[1], "optimizer.betas[1]", "float")
        if info.get("betas") == "split":
            view.warnings.append(
                f"{betas.path}:{betas.line}: {name} takes beta1/beta2, not betas; "
                "MindFormers would fail with an unexpected keyword"
            )
    elif view.node("optimizer.beta1") is not None or view.node("optimizer.beta2") is not None:
        o.beta1 = view.key("optimizer.beta1", src, kind="float")
        o.beta2 = view.key("optimizer.beta2", src, kind="float")
        b = view.node("optimizer.beta1") or view.node("optimizer.beta2")
        if info.get("betas") == "list" and b is not None:
            view.warnings.append(
                f"{b.path}:{b.line}: {name} takes betas: [b1, b2], not "
                "beta1/beta2; MindFormers would fail with an unexpected keyword"
            )
    elif src is not None and src.has("betas"):
        bl = src.defaults["betas"]
        o.beta1 = Value.default(float(bl[0]), "optimizer.betas[0]", src.label)
        o.beta2 = Value.default(float(bl[1]), "optimizer.betas[1]", src.label)
    elif src is not None:
        o.beta1 = view.key("optimizer.beta1", src, kind="float")
        o.beta2 = view.key("optimizer.beta2", src, kind="float")


# the fields the optimizer and its schedule set: none of them is used by a run that stops
_BUILT = (
    "type",
    "eps",
    "beta1",
    "beta2",
    "weight_decay",
    "lr",
    "min_lr",
    "lr_decay_style",
    "lr_warmup_steps",
    "lr_warmup_fraction",
    "lr_warmup_init",
    "lr_decay_steps",
)


def _no_optimizer_section(cfg: Config) -> None:
    """A config run through MindFormers' trainer (run_mindformer.py hands the YAML over as
    it is, with no default sections merged in: trainer.py _config_init @ v1.5.0) builds its
    optimizer from config.optimizer; without that section the trainer reads
    ``self.config.optimizer.weight_decay`` on None and stops (base_trainer.py:487 @ v1.3.2,
    :543 @ v1.5.0, :592 @ v1.7.0, :556 @ fd4deebc). The v2 template has defaults of its own
    (training_args) and is read apart. No optimizer value of such a config is ever used."""
    o = cfg.optimizer
    refuse = (
        "the config has no optimizer section, and MindFormers' trainer builds the optimizer "
        "from it: the run stops at optimizer.weight_decay on None"
    )
    for field in _BUILT:
        if getattr(o, field) is not None:
            setattr(
                o, field, Value.unknown("optimizer", f"MindFormers will refuse to start: {refuse}")
            )
    o.lr_extra = {}
    o.build_error = Value.default(
        refuse, "optimizer", "MindFormers' trainer (base_trainer.py:543 @ v1.5.0)"
    )


def _type_checks(view: MFView, cfg: Config, cls: str) -> None:
    """A PyYAML string where the optimizer's constructor checks for a float (``eps: 1e-8``)
    does not train with another epsilon: the constructor raises TypeError when the trainer
    builds it, before the first step (data: optimizer_type_checks). The field becomes
    unknown with that reason, so no rule compares a value the run never uses, and
    ``optimizer.build_error`` says why the job cannot start (OPT018)."""
    check = view.d.knobs.get("optimizer_type_checks", {}).get(cls)
    if not check:
        return
    o = cfg.optimizer
    bad = [
        (f, v)
        for f in check["fields"]
        if (v := getattr(o, f)) is not None and v.known and v.yaml11_string
    ]
    if not bad:
        return
    what = "; ".join(f"{v.knob} is the string {v.raw!r}, not a float" for _, v in bad)
    refuse = f"{cls} raises TypeError when the trainer builds it: {what}"
    for f, v in bad:
        setattr(
            o,
            f,
            Value.unknown(
                v.knob, f"MindFormers will refuse to start: {refuse}", loc=v.loc, raw=v.raw
            ),
        )
    o.build_error = Value.derived(
        refuse,
        bad[0][1].knob,
        f"type checks of its constructor, {check['where']}",
        [v for _, v in bad],
    )


def _finite_ratio(ratio: Value | None, prefix: str) -> None:
    """A warmup_ratio of inf or nan: MindFormers' schedule takes int(total x ratio), which
    cannot start the job (OverflowError, ValueError); one input error naming the line."""
    v = ratio.value if ratio is not None and ratio.known else None
    if isinstance(v, float) and not math.isfinite(v):
        loc = ratio.loc  # type: ignore[union-attr]
        raise InputError(
            loc.path if loc else None,
            f"{prefix}.warmup_ratio is {v}: MindFormers computes int(total steps x warmup_ratio) "
            "and cannot start with it",
            line=loc.line if loc else None,
        )


def _schedule(view: MFView, cfg: Config) -> None:
    read_schedule(view, cfg, *_schedule_section(view))


def read_schedule(
    view: MFView, cfg: Config, sec: Node | None, prefix: str, steps: Value | None = None
) -> None:
    """The learning-rate schedule from section ``sec`` (at ``prefix``), one of MindFormers'
    registered LR classes; ``steps``: the run length the caller passes the class as
    total_steps (the pynative trainer's training.steps), else what run_mindformer derives."""
    o = cfg.optimizer
    name, comp, block, src = _schedule_type(view, cfg, sec, prefix)
    o.lr = block.get("learning_rate") or class_default(
        src, "learning_rate", f"{prefix}.learning_rate"
    )
    o.min_lr = _min_lr(view, o.lr, name, comp, block, src, prefix)
    # the template fills only its own keys; the schedule class it names supplies the rest
    # (CosineWithWarmUpLR's warmup_lr_init 0.0 when the lr_schedule section is absent)
    warm_src = src if src is None or src.has("warmup_lr_init") or comp is None else comp
    o.lr_warmup_init = block.get("warmup_lr_init") or class_default(
        warm_src, "warmup_lr_init", f"{prefix}.warmup_lr_init"
    )
    extra = dict(block)
    extra["type"] = (
        Value.written(
            name, knob=f"{prefix}.type", loc=Loc.model_construct(path=view.doc.path, line=1)
        )
        if "type" not in extra
        else extra["type"]
    )
    o.lr_extra = extra
    o.length_terms = _length_terms(view)
    # total steps: the block's own value, else what the trainer would compute
    total = block.get("total_steps") if steps is None else steps
    derived_total = _train_steps(view, cfg) if steps is None else steps
    if total is None or (total.known and total.value in (-1, None)):
        o.train_steps = derived_total
        o.train_steps_bound = _take_bound(view, cfg)
    else:
        o.train_steps = total
    _warmup_steps(cfg, block, src, prefix)
    ds = block.get("decay_steps")
    o.lr_decay_steps = ds if ds is not None and ds.value is not None else o.train_steps


def _schedule_section(view: MFView) -> tuple[Node | None, str]:
    """The lr_schedule section (or grouped_lr_schedule's default) and its key prefix; one
    that is not a mapping is an input error."""
    sec = view.node("lr_schedule")
    prefix = "lr_schedule"
    if sec is None:
        grouped = view.node("grouped_lr_schedule.default")
        if grouped is not None:
            sec = grouped
            prefix = "grouped_lr_schedule.default"
    if sec is not None and not sec.is_map and sec.value is not None:
        # MindFormers builds the schedule from a mapping (build_lr reads its `type`); a list
        # or a scalar fails there, so the config cannot run as written
        kind = "a list" if sec.is_seq else f"the scalar {sec.raw or sec.value!r}"
        raise InputError(
            sec.path,
            f"{prefix} is {kind}; MindFormers expects a mapping with a type",
            line=sec.key_line or sec.line,
        )
    return sec, prefix


def _schedule_type(
    view: MFView, cfg: Config, sec: Node | None, prefix: str
) -> tuple[str, Component | None, dict[str, Value], Component | None]:
    """Set lr_decay_style; return the schedule's class name, its class, the section's
    written values and the class whose defaults fill the rest."""
    o = cfg.optimizer
    tmpl = view.comp("LrScheduleConfig", "lr_schedule")
    if sec is None or not sec.plain():
        name = tmpl.defaults.get("type", "CosineWithWarmUpLR") if tmpl else "CosineWithWarmUpLR"
        o.lr_decay_style = Value.default(
            view.d.knobs["lr_schedules"].get(name, name),
            "lr_schedule.type",
            f"{tmpl.label if tmpl else 'MindFormers'} (no lr_schedule section)",
        )
        return name, view.comp(name, "lr_schedule"), {}, tmpl
    tnode = get(view.root, f"{prefix}.type")
    name = str(tnode.value) if tnode is not None else ""
    comp = view.comp(name, "lr_schedule")
    style = view.d.knobs["lr_schedules"].get(name)
    o.lr_decay_style = (
        view.value(tnode, f"{prefix}.type").model_copy(update={"value": style or name, "raw": name})
        if tnode is not None
        else Value.unknown(f"{prefix}.type", "lr_schedule without type")
    )
    block = {k: view.value(n, f"{prefix}.{k}") for k, n in sec.value.items() if not n.is_map}
    return name, comp, block, comp


def _min_lr(
    view: MFView,
    lr: Value,
    name: str,
    comp: Component | None,
    block: dict[str, Value],
    src: Component | None,
    prefix: str,
) -> Value:
    if view.d.knobs["lr_schedules"].get(name) == "constant":
        return Value.derived(
            lr.value, f"{prefix}.learning_rate", "a constant schedule never decays", [lr]
        )
    if name in ("LinearWithWarmUpLR", "linear"):
        return Value.default(
            0.0, f"{prefix}.lr_end", f"{comp.label if comp else name} (decays to 0)"
        )
    return (
        block.get("lr_end")
        or block.get("eta_min")
        or class_default(src, "lr_end", f"{prefix}.lr_end")
    )


def _warmup_steps(cfg: Config, block: dict[str, Value], src: Component | None, prefix: str) -> None:
    """lr_warmup_steps (and, when only the fraction is known, lr_warmup_fraction)."""
    o = cfg.optimizer
    ratio = block.get("warmup_ratio")
    steps = block.get("warmup_steps")
    _finite_ratio(ratio, prefix)
    if ratio is not None and ratio.known and ratio.value is not None:
        _warmup_from_ratio(cfg, ratio, prefix)
    elif steps is not None:
        o.lr_warmup_steps = steps
    else:
        o.lr_warmup_steps = class_default(src, "warmup_steps", f"{prefix}.warmup_steps", fallback=0)


def _warmup_from_ratio(cfg: Config, ratio: Value, prefix: str) -> None:
    o = cfg.optimizer
    t = o.train_steps
    is_number = isinstance(ratio.value, (int, float)) and not isinstance(ratio.value, bool)
    if (
        t is not None
        and t.known
        and isinstance(t.value, int)
        and isinstance(ratio.value, (int, float))
    ):
        o.lr_warmup_steps = Value.derived(
            int(t.value * ratio.value),
            f"{prefix}.warmup_ratio",
            "warmup_ratio x total steps (warmup_ratio wins over warmup_steps)",
            [ratio, t],
        )
    elif is_number and ratio.value == 0:
        # 0 x any length is 0: no warmup, whatever the dataset size
        o.lr_warmup_steps = Value.derived(
            0, f"{prefix}.warmup_ratio", "warmup_ratio 0: no warmup", [ratio]
        )
    elif t is None or not t.known:
        o.lr_warmup_steps = Value.unknown(
            f"{prefix}.warmup_ratio",
            "warmup_ratio needs the total step count, which depends on the dataset size",
        )
        if is_number:
            # what can still be compared: the fraction (total_steps is also the decay
            # length of MindFormers' warmup schedules)
            o.lr_warmup_fraction = ratio
    else:
        o.lr_warmup_steps = Value.derived(None, f"{prefix}.warmup_ratio", "", [ratio, t])


def _length_terms(view: MFView) -> dict[str, Value]:
    """The inputs of total_steps -1. mindformers (fd4deebc) trainer/utils.py:142-165
    check_runner_config: in sink mode with sink_size != -1, epochs becomes
    int(dataset_size / sink_size * epochs); base_trainer.py:609-612 create_lr_scheduler: the
    total is epochs x dataset_size, or (sink mode) that epoch count x sink_size.
    dataset/causal_language_model_dataset.py: batches are drop_remainder-cut (default True,
    :285) and repeated `repeat` times (default 1) after batching."""
    runner = view.comp("RunnerConfig", "runner_config")
    prefix = "training_args" if view.v2 else "runner_config"
    terms = {
        "epochs": view.key(
            f"{prefix}.epochs", runner, default_key="epochs", kind="int", fallback=1
        ),
        "sink_mode": view.key(
            "runner_config.sink_mode", runner, default_key="sink_mode", kind="bool", fallback=True
        ),
        "sink_size": view.key(
            "runner_config.sink_size", runner, default_key="sink_size", kind="int", fallback=1
        ),
        "drop_remainder": view.key(
            "train_dataset.drop_remainder", None, kind="bool", fallback=True
        ),
        "repeat": view.key("train_dataset.repeat", None, kind="int", fallback=1),
        "full_batch": view.key(
            "parallel.full_batch",
            view.comp("ParallelConfig", "parallel"),
            kind="bool",
            fallback=True,
        ),
    }
    return terms


def steps_from_samples(samples: int, global_batch: int, terms: dict[str, Value]) -> int | None:
    """MindFormers' total_steps for a dataset of ``samples`` rows, as the trainer computes it
    (see _length_terms); None when a term is unknown or not a usable number."""

    def num(name: str, kind: type) -> Any:
        v = terms.get(name)
        if (
            v is None
            or not v.known
            or v.yaml11_string
            or isinstance(v.value, bool) != (kind is bool)
        ):
            return None
        return v.value if isinstance(v.value, kind) else None

    epochs, sink_mode, sink_size = num("epochs", int), num("sink_mode", bool), num("sink_size", int)
    drop, repeat = num("drop_remainder", bool), num("repeat", int)
    if None in (epochs, sink_mode, sink_size, drop, repeat) or global_batch <= 0:
        return None
    batches = samples // global_batch if drop else -(-samples // global_batch)
    size = batches * max(repeat, 1)
    if sink_mode and sink_size not in (-1, 0):
        return int(size / sink_size * epochs) * sink_size
    return epochs * size


def _train_steps(view: MFView, cfg: Config) -> Value:
    """total_steps -1: known when a Megatron-style dataset gives its sample count
    (data_loader.sizes[0]); otherwise it depends on the dataset at run time."""
    if view.v2:
        stop = view.node("training_args.stop_step")
        if stop is not None and isinstance(stop.value, int) and stop.value > 0:
            return view.value(stop, "training_args.stop_step", "int")
    terms = cfg.optimizer.length_terms
    sizes = view.node("train_dataset.data_loader.sizes")
    gbs = cfg.optimizer.global_batch_size
    if (
        sizes is not None
        and sizes.is_seq
        and sizes.value
        and isinstance(sizes.value[0].value, int)
        and gbs is not None
        and gbs.known
        and isinstance(gbs.value, int)
        and not isinstance(gbs.value, bool)
        and gbs.value > 0
    ):
        samples = view.value(sizes.value[0], "train_dataset.data_loader.sizes[0]", "int")
        steps = steps_from_samples(samples.value, gbs.value, terms)
        if steps is not None:
            return Value.derived(
                steps,
                "total_steps",
                "epochs x (dataset samples // global batch size), as MindFormers' trainer "
                "computes it (sink mode, drop_remainder and repeat included)",
                [samples, gbs, *terms.values()],
            )
    return Value.unknown(
        "lr_schedule.total_steps",
        "total_steps is -1: MindFormers takes it from the dataset size at run time",
    )


# HFDataLoader handlers that never give more rows than they are given (mindformers c358dfe6):
# datasets' Dataset.take(n) keeps the first min(n, rows) rows (hf_dataloader.py:287-289 runs
# a handler type the handler module lacks as the datasets method); AlpacaInstructDataHandler
# maps each example to one row (alpaca_handler.py:72); PackingHandler's "pack" strategy puts
# each example into at most one packed row (packing_handler.py:111-132).
_NOT_GROWING = ("take", "AlpacaInstructDataHandler", "PackingHandler")


def _take_bound(view: MFView, cfg: Config) -> Value | None:
    """At most how many steps a run of total_steps -1 trains when the HF loader's handler
    list cuts the dataset with `take n` and no later handler adds rows."""
    handlers = view.node("train_dataset.data_loader.handler")
    gbs = cfg.optimizer.global_batch_size
    if handlers is None or not handlers.is_seq or gbs is None or not gbs.known:
        return None
    bound: Value | None = None
    for i, h in enumerate(handlers.value):
        spec = h.plain() if h.is_map else {}
        kind = spec.get("type")
        if kind not in _NOT_GROWING or (
            kind == "PackingHandler" and spec.get("pack_strategy", "pack") != "pack"
        ):
            bound = None  # a handler that may add rows after the cut: no bound
            continue
        n = spec.get("n") if kind == "take" else None
        usable = isinstance(n, int) and not isinstance(n, bool) and n >= 0
        if usable and (bound is None or n < bound.value):
            knob = f"train_dataset.data_loader.handler[{i}].n"
            bound = view.value(h.value["n"], knob, "int")
    if bound is None or not isinstance(gbs.value, int) or isinstance(gbs.value, bool):
        return None
    steps = steps_from_samples(bound.value, gbs.value, cfg.optimizer.length_terms)
    if steps is None:
        return None
    return Value.derived(
        steps,
        "train_steps",
        f"at most {bound.value} samples after the `take` handler (no later handler adds "
        "rows), so at most epochs x (samples // global batch) steps",
        [bound, gbs, *cfg.optimizer.length_terms.values()],
    )


def _clip(view: MFView, cfg: Config) -> None:
    use, mx, wrapper = _clip_settings(view, cfg)
    if use.known and not use.value and not use.yaml11_string:
        cfg.optimizer.clip_grad = Value.derived(
            0.0, "runner_wrapper.use_clip_grad", "gradient clipping is off", [use]
        )
    elif use.known and mx.known and not mx.yaml11_string:
        inputs = [use, mx]
        cfg.optimizer.clip_grad = Value.derived(
            mx.value, "runner_wrapper.max_grad_norm", f"{wrapper} clips to max_grad_norm", inputs
        )
        if mx.origin.value == "file" and use.origin.value == "file":
            cfg.optimizer.clip_grad = mx
    else:
        cfg.optimizer.clip_grad = mx if mx.yaml11_string else use


def _clip_settings(view: MFView, cfg: Config) -> tuple[Value, Value, str]:
    """use_clip_grad, max_grad_norm and the wrapper class MindFormers runs."""
    sec = view.node("runner_wrapper")
    tmpl = view.comp("WrapperConfig", "runner_wrapper")
    if sec is None or not sec.plain():
        use = Value.default(
            True,
            "runner_wrapper.use_clip_grad",
            f"{tmpl.label if tmpl else 'MindFormers template'} (no runner_wrapper section)",
        )
        mx = Value.default(1.0, "runner_wrapper.max_grad_norm", "MindFormers MFTrainOneStepCell")
        return use, mx, "MFTrainOneStepCell"
    t = view.node("runner_wrapper.type")
    wrapper = str(t.value) if t is not None else "MFTrainOneStepCell"
    pp, ga = (
        cfg.parallel.pipeline_parallel,
        view.node("runner_config.gradient_accumulation_steps"),
    )
    switched = (pp is not None and pp.known and isinstance(pp.value, int) and pp.value > 1) or (
        ga is not None and isinstance(ga.value, int) and ga.value > 1
    )
    if switched and wrapper in ("MFTrainOneStepCell", "mf_wrapper"):
        wrapper = "MFPipelineWithLossScaleCell"
    comp = view.comp(wrapper, "runner_wrapper")
    use = view.key("runner_wrapper.use_clip_grad", comp, kind="bool", fallback=False)
    mx = view.key("runner_wrapper.max_grad_norm", comp, kind="float", fallback=1.0)
    if switched and view.node("runner_wrapper.use_clip_grad") is None:
        use = Value.derived(
            use.value,
            "runner_wrapper.use_clip_grad",
            f"default of {comp.label if comp else wrapper}, which MindFormers "
            "uses when pipeline_stage or gradient accumulation is above 1",
            [pp],
        )
    return use, mx, wrapper


def _batch(view: MFView, cfg: Config) -> None:
    o, p = cfg.optimizer, cfg.parallel
    if view.v2:
        gb = view.node("training_args.global_batch_size")
        o.global_batch_size = (
            view.value(gb, "training_args.global_batch_size", "int")
            if gb is not None
            else Value.unknown(
                "training_args.global_batch_size",
                "not set: the v2 template derives it from the data-parallel size, which "
                "depends on the device count",
            )
        )
        o.micro_batch_size = view.key(
            "training_args.micro_batch_size", None, kind="int", fallback=1
        )
        return
    rc = view.comp("RunnerConfig", "runner_config")
    bs = view.key("runner_config.batch_size", rc, kind="int")
    ga = view.key("runner_config.gradient_accumulation_steps", rc, kind="int")
    o.micro_batch_size = bs
    dp, pp, mbn, mbi = (
        p.data_parallel,
        p.pipeline_parallel,
        p.micro_batch_num,
        p.micro_batch_interleave,
    )
    use_par = view.key("use_parallel", view.comp("GeneralConfig", "top_level"), kind="bool")
    vals = [bs, dp, pp, mbn, mbi, ga]
    if not all(v is not None and v.known and isinstance(v.value, int) for v in vals):
        o.global_batch_size = Value.derived(None, "global batch size", "", [v for v in vals if v])
        return
    if not use_par.value:
        o.global_batch_size = Value.derived(
            bs.value * ga.value,
            "global batch size",
            "batch_size x gradient_accumulation_steps (single device, use_parallel False)",
            [bs, ga],
        )
    elif pp.value > 1:
        o.global_batch_size = Value.derived(
            bs.value * dp.value * mbn.value * mbi.value,
            "global batch size",
            "batch_size x data_parallel x micro_batch_num x micro_batch_interleave_num "
            "(pipeline_stage > 1)",
            [bs, dp, mbn, mbi],
        )
    else:
        o.global_batch_size = Value.derived(
            bs.value * dp.value * mbi.value * ga.value,
            "global batch size",
            "batch_size x data_parallel x micro_batch_interleave_num x gradient_accumulation_steps",
            [bs, dp, mbi, ga],
        )
