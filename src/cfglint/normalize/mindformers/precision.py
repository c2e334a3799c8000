"""Mixed-precision settings of a MindFormers config."""

from __future__ import annotations

from typing import Any

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.init_std import scaled_output_std
from cfglint.normalize.loss_scale import read_mindformers
from cfglint.normalize.mindformers.other import training_stage
from cfglint.normalize.mindformers.view import MFView, first_written
from cfglint.normalize.placeholders import as_placeholder


def read_precision(view: MFView, cfg: Config) -> None:
    pr, w, s = cfg.precision, cfg.weight, cfg.structure
    if view.mcore:
        _mcore_dtypes(view, cfg)
    else:
        _legacy_dtypes(view, cfg)
    if (
        s.use_flash_attention is not None
        and s.use_flash_attention.known
        and s.use_flash_attention.value
    ):
        # the fused kernel computes softmax internally in float32
        pr.softmax_dtype = Value.derived(
            "float32",
            "use_flash_attention",
            "flash attention computes softmax in float32 inside the kernel",
            [s.use_flash_attention],
        )
    # gradients are reduced in the weight dtype on MindSpore
    if w.param_dtype is not None:
        w.grad_reduce_dtype = Value.derived(
            w.param_dtype.value,
            "param_init_type",
            "MindSpore communicates gradients in the parameter dtype",
            [w.param_dtype],
        )
    pr.loss_dtype = Value.default(
        "float32", "loss", "MindFormers (logits cast to float32 before cross entropy)"
    )
    pr.embedding_output_dtype = _embedding_output(view, cfg)
    pr.loss_scale = read_mindformers(view)
    pr.precision_mode = _precision_mode(view, [pr.compute_dtype, w.param_dtype, w.embedding_dtype])
    w.load_checkpoint = _initial_weights(view)
    w.output_init_std = _output_init_std(cfg)


def _mcore_dtypes(view: MFView, cfg: Config) -> None:
    """Softmax, embedding and residual dtypes of the mcore dialect."""
    pr, w = cfg.precision, cfg.weight
    soft = view.mcore_raw("attention_softmax_in_fp32")
    if soft is not None and soft.known and not soft.yaml11_string:
        pr.softmax_dtype = soft.model_copy(
            update={
                "value": "float32"
                if soft.value
                else (pr.compute_dtype.value if pr.compute_dtype else None)
            }
        )
    else:
        pr.softmax_dtype = Value.default(
            "float32", "softmax_compute_dtype", "MindFormers TransformerConfig"
        )
    # LanguageModelEmbedding casts the looked-up rows to compute_dtype
    w.embedding_dtype = Value.derived(
        pr.compute_dtype.value if pr.compute_dtype else None,
        "compute_dtype",
        "the embedding output is cast to compute_dtype before the first layer",
        [pr.compute_dtype],
    )
    fp32res = view.mcore_field("fp32_residual_connection", "bool")
    if fp32res.known and fp32res.value:
        pr.residual_dtype = fp32res.model_copy(update={"value": "float32"})
    elif fp32res.known:
        pr.residual_dtype = Value.derived(
            pr.compute_dtype.value if pr.compute_dtype else None,
            "compute_dtype",
            "without fp32_residual_connection residual adds run in compute_dtype",
            [pr.compute_dtype, fp32res],
        )
    else:
        pr.residual_dtype = fp32res


def _legacy_dtypes(view: MFView, cfg: Config) -> None:
    """Softmax, rotary, embedding and residual dtypes of the legacy dialect."""
    pr, w = cfg.precision, cfg.weight
    facts = view.d.knobs["legacy_classes"].get(cfg.model_class) or {}
    pr.softmax_dtype = _legacy_softmax(view, cfg, facts)
    rot, unset = pr.rotary_dtype, facts.get("rotary_dtype_unset")
    if unset and rot is not None and rot.known and rot.value is None and pr.compute_dtype:
        # a class that takes compute_dtype for an unset rotary_dtype (knobs: legacy_classes)
        pr.rotary_dtype = Value.derived(
            pr.compute_dtype.value, "rotary_dtype", unset, [pr.compute_dtype]
        )
    emb = view.legacy(["embedding_init_type"], "dtype", "weight.embedding_dtype")
    w.embedding_dtype = emb if emb.known and emb.value is not None else w.param_dtype
    res = _legacy_residual(view, cfg)
    pr.residual_dtype = _arch_residual(view, cfg) or res


def _legacy_softmax(view: MFView, cfg: Config, facts: dict[str, Any]) -> Value:
    compute = cfg.precision.compute_dtype
    soft = view.legacy(
        ["softmax_compute_type", "softmax_compute_dtype"], "dtype", "precision.softmax_dtype"
    )
    if soft.known and soft.value == "compute_dtype":
        # the class runs its softmax in the compute dtype (CLIP's text encoder)
        soft = Value.derived(
            compute.value if compute else None,
            "attention softmax dtype",
            soft.detail.removeprefix("default of "),
            [compute],
        )
    if facts.get("softmax_fp32_any"):
        # the attention softmax runs in float32 when any of these switches is on, else in
        # compute_dtype (YiZhao: yizhao_transformer.py:43-46, 112 @ v1.5.0)
        sw = [view.legacy([k], "bool") for k in facts["softmax_fp32_any"]]
        on = any(v.known and v.value for v in sw)
        soft = Value.derived(
            "float32" if on else (compute.value if compute else None),
            "attention softmax dtype",
            "float32 when " + " or ".join(facts["softmax_fp32_any"]) + ", else compute_dtype",
            [*sw, *([] if on else [compute])],
        )
    return soft


def _legacy_residual(view: MFView, cfg: Config) -> Value:
    compute = cfg.precision.compute_dtype
    res = view.legacy(["residual_dtype", "res_dtype"], "dtype", "precision.residual_dtype")
    if res.known and res.value is None:
        res = Value.derived(
            compute.value if compute else None,
            "residual_dtype",
            "residual_dtype unset: residual adds run in compute_dtype",
            [compute],
        )
    fp32 = view.node(f"{view.model_path}.fp32_residual_connection")
    if fp32 is not None and fp32.value:
        res = view.value(fp32, f"{view.model_path}.fp32_residual_connection").model_copy(
            update={"value": "float32"}
        )
    return res


def _output_init_std(cfg: Config) -> Value | None:
    std, layers = cfg.weight.init_method_std, cfg.structure.num_layers
    if std is None:
        return None
    if cfg.kind == "mindformers-legacy":
        # legacy models build wo and w2 like every other Linear: normal(0, init_method_std)
        # (models/llama/llama_transformer.py:303-305, llama_layer.py:370-372, modules/layers.py
        # Linear(init_method_std=0.01) @ fd4deebc); no depth scaling anywhere in the legacy tree
        return Value.derived(
            std.value,
            "init_method_std",
            "legacy MindFormers initializes the output projections (wo, w2) like every Linear,"
            " with init_method_std (no 1/sqrt(2 x num_layers) scaling)",
            [std],
        )
    if layers is None:
        return None
    # Megatron-style models port TransformerConfig: output_layer_init_method defaults to
    # normal(0, init_method_std / sqrt(2 x num_layers)) (parallel_core/transformer_config.py:
    # 543-548, parallel_core/utils/init_method.py:43-45 @ fd4deebc)
    return scaled_output_std(std, layers, "MindFormers' Megatron-style models")


def _embedding_output(view: MFView, cfg: Config) -> Value | None:
    """The dtype the looked-up rows enter the first layer in, for the classes whose code was
    read (knobs: legacy_classes.*.embedding_cast); None for the others, so PRC005 compares
    the stored dtypes for them as before."""
    pr, w = cfg.precision, cfg.weight
    compute = pr.compute_dtype.value if pr.compute_dtype else None
    if view.mcore:
        return Value.derived(
            compute,
            "compute_dtype",
            "LanguageModelEmbedding casts the looked-up rows to compute_dtype",
            [pr.compute_dtype],
        )
    facts = view.d.knobs["legacy_classes"].get(cfg.model_class) or {}
    cast = facts.get("embedding_cast")
    if cast is None:
        return None
    on, why = cast
    if on:
        return Value.derived(compute, "compute_dtype", why, [pr.compute_dtype])
    return Value.derived(
        w.embedding_dtype.value if w.embedding_dtype else None,
        "embedding_init_type",
        why,
        [w.embedding_dtype],
    )


def _precision_mode(view: MFView, dtypes: list[Value | None]) -> Value:
    """CANN's operator precision mode. Unset, MindSpore picks it by chip: allow_fp32_to_fp16
    on the Atlas training series (910A), must_keep_origin_dtype on Atlas A2 and later
    (mindspore.device_context.ascend.op_precision.precision_mode, MindSpore docs r2.5 and
    master). Two things in a config tell the chip: a max_device_memory above the 32 GB of a
    910A, and bfloat16 weights or compute, which the Atlas training series does not have
    (CANN 8.5 Ascend C API ToBfloat16, product support: Atlas A2 and A3 only)."""
    knob = "context.ascend_config.precision_mode"
    pm = view.node(knob)
    if pm is not None:
        return view.value(pm, knob)
    mem = view.node("context.max_device_memory")
    gb = _gigabytes(mem.value) if mem is not None else None
    if gb is not None and gb > 32:
        return Value.derived(
            "must_keep_origin_dtype",
            knob,
            "MindSpore's default on Atlas A2 and later: max_device_memory "
            f"{mem.value} is more than a 910A (Atlas training series, 32 GB) holds",  # type: ignore[union-attr]
            [view.value(mem, "context.max_device_memory")],  # type: ignore[arg-type]
        )
    bf16 = next((v for v in dtypes if v is not None and v.known and v.value == "bfloat16"), None)
    if bf16 is not None:
        return Value.derived(
            "must_keep_origin_dtype",
            knob,
            "MindSpore's default on Atlas A2 and later: the run uses bfloat16, which the "
            "Atlas training series (910A) does not support",
            [bf16],
        )
    return Value.unknown(
        knob,
        "not set: MindSpore's default depends on the chip (allow_fp32_to_fp16 on the Atlas "
        "training series, must_keep_origin_dtype on Atlas A2 and later), which the config "
        "does not name",
    )


def _gigabytes(text: object) -> float | None:
    s = str(text).strip().upper()
    for unit, scale in (("GB", 1.0), ("MB", 1 / 1024)):
        if s.endswith(unit):
            try:
                return float(s[: -len(unit)]) * scale
            except ValueError:
                return None
    return None


MF_LOAD_OR_REFUSE = (
    "MindFormers refuses to start when no checkpoint is there (FileNotFoundError, "
    "mindformers/trainer/utils.py:466 @ v1.5.0)"
)


def _initial_weights(view: MFView) -> Value:
    """The checkpoint the run starts from ("" for random weights), unknown for a placeholder
    or for the empty path a published fine-tuning config leaves for the user to fill in."""
    v = first_written(view, ["load_checkpoint", "checkpoint_config.load_checkpoint"], "str")
    if v is None:
        v = Value.default("", "load_checkpoint", "MindFormers template")
    held = as_placeholder(v, "load_checkpoint")
    if held is not None and held is not v and v.loc is not None:
        # a path for the user to fill in still loads a checkpoint: MindFormers refuses to
        # start when none is there (FileNotFoundError, trainer/utils.py:466 @ v1.5.0)
        return Value.written(
            f"the checkpoint at load_checkpoint (the recipe's placeholder {held.raw!r}, to be "
            "filled in)",
            v.knob,
            v.loc,
            detail=MF_LOAD_OR_REFUSE,
        )
    if v.known and v.value:
        v = v.model_copy(update={"detail": MF_LOAD_OR_REFUSE})
    if v.known and not v.value:
        stage = training_stage(view)
        if stage.known and stage.value == "sft":
            return Value.unknown(
                v.knob,
                f"empty in a fine-tuning config ({stage.knob}): the checkpoint to tune is "
                "to be filled in",
                loc=v.loc,
            )
    return v


def _arch_residual(view: MFView, cfg: Config) -> Value | None:
    """The residual dtype of an arch class whose stream starts from the embedding table's
    dtype (knobs: arch_classes ``residual: embedding_and_compute``): the rows enter uncast
    and each add meets a compute_dtype output, which MindSpore widens to the wider of the
    two (float32 against a half dtype); two different half dtypes are not decided."""
    got = view.arch_fact("residual", "residual_dtype")
    if got is None or not got.known:
        return got
    emb, comp = cfg.weight.embedding_dtype, cfg.precision.compute_dtype
    if emb is None or comp is None or not emb.known or not comp.known:
        return Value.derived(None, "residual_dtype", "", [emb, comp])
    a, b = emb.value, comp.value
    wider = a if a == b else "float32" if "float32" in (a, b) else None
    if wider is None:
        return Value.unknown("residual_dtype", f"{a} rows added to {b} outputs: not decided")
    return Value.derived(wider, "residual_dtype", got.detail, [*got.inputs, emb, comp])
