"""Mixed-precision settings of a MindFormers config."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.mindformers.view import MFView, first_written


def read_precision(view: MFView, cfg: Config) -> None:
    pr, w, s = cfg.precision, cfg.weight, cfg.structure
    if view.mcore:
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
    else:
        pr.softmax_dtype = view.legacy(["softmax_compute_type", "softmax_compute_dtype"], "dtype")
        emb = view.legacy(["embedding_init_type"], "dtype")
        w.embedding_dtype = emb if emb.known and emb.value is not None else w.param_dtype
        res = view.legacy(["residual_dtype"], "dtype")
        if res.known and res.value is None:
            res = Value.derived(
                pr.compute_dtype.value if pr.compute_dtype else None,
                "residual_dtype",
                "residual_dtype unset: residual adds run in compute_dtype",
                [pr.compute_dtype],
            )
        fp32 = view.node(f"{view.model_path}.fp32_residual_connection")
        if fp32 is not None and fp32.value:
            res = view.value(fp32, f"{view.model_path}.fp32_residual_connection").model_copy(
                update={"value": "float32"}
            )
        pr.residual_dtype = res
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
    pm = view.node("context.ascend_config.precision_mode")
    pr.precision_mode = (
        view.value(pm, "context.ascend_config.precision_mode")
        if pm is not None
        else Value.default(
            None, "context.ascend_config.precision_mode", "MindSpore (CANN default mode)"
        )
    )
    w.load_checkpoint = first_written(
        view, ["load_checkpoint", "checkpoint_config.load_checkpoint"], "str"
    ) or Value.default("", "load_checkpoint", "MindFormers template")
