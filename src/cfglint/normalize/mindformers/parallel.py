"""Parallel strategy of a MindFormers config: TP/PP/CP/EP, data parallel, devices."""

from __future__ import annotations

import math

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.mindformers.defaults import Component
from cfglint.normalize.mindformers.view import MFView


def read_parallel(view: MFView, cfg: Config) -> None:
    p = cfg.parallel
    tp_comp = view.comp("TransformerOpParallelConfig", "parallel_config")
    if view.v2:
        _v2_sizes(view, cfg)
    else:
        _legacy_sizes(view, cfg, tp_comp)
    if p.data_parallel is None:
        p.data_parallel = Value.unknown(
            "data_parallel", "v2 template derives it from the device count"
        )
    _reset_without_parallel(view, cfg)
    sp, tp = p.sequence_parallel, p.tensor_parallel
    if (
        sp is not None
        and sp.known
        and sp.value is True
        and tp is not None
        and tp.known
        and tp.value == 1
    ):
        # sequence parallel splits activations across the model-parallel group: with one
        # device in it there is nothing to split (Megatron switches it off at TP 1 too)
        p.sequence_parallel = Value.derived(
            False, sp.knob, "no effect with model_parallel 1", [sp, tp]
        )
    dims = [p.data_parallel, p.tensor_parallel, p.pipeline_parallel, p.context_parallel]
    if all(d is not None and d.known and isinstance(d.value, int) for d in dims):
        p.world_size = Value.derived(
            math.prod(d.value for d in dims),
            "device count",  # type: ignore[union-attr]
            "MindFormers needs data_parallel x model_parallel x pipeline_stage x context_parallel "
            "devices",
            dims,
        )


def _v2_sizes(view: MFView, cfg: Config) -> None:
    """The parallel sizes of the v2 template (distribute_parallel_config)."""
    p = cfg.parallel
    sec = "distribute_parallel_config"
    names = {
        "data_parallel": None,
        "tensor_parallel": "tensor_model_parallel_size",
        "pipeline_parallel": "pipeline_model_parallel_size",
        "context_parallel": "context_parallel_size",
        "expert_parallel": "expert_model_parallel_size",
        "sequence_parallel": "sequence_parallel",
    }
    for field, key in names.items():
        if key is None:
            continue
        setattr(
            p,
            field,
            view.key(
                f"{sec}.{key}",
                None,
                kind="int" if field != "sequence_parallel" else "bool",
                fallback=False if field == "sequence_parallel" else 1,
            ),
        )
    p.micro_batch_interleave = view.key(
        f"{sec}.micro_batch_interleave_num", None, kind="int", fallback=1
    )
    p.distributed_optimizer = view.key(
        f"{sec}.optimizer_parallel_config.enable_parallel_optimizer",
        None,
        kind="bool",
        fallback=False,
    )
    p.virtual_pipeline = view.key(
        f"{sec}.pipeline_parallel_config.virtual_pipeline_model_parallel_size",
        None,
        kind="int",
        fallback=1,
    )
    p.micro_batch_num = Value.default(1, "micro_batch_num", "MindFormers v2 template")


def _legacy_sizes(view: MFView, cfg: Config, tp_comp: Component | None) -> None:
    """The parallel sizes of parallel_config and the top-level keys."""
    p = cfg.parallel
    p.data_parallel = view.key("parallel_config.data_parallel", tp_comp, kind="int")
    p.tensor_parallel = view.key("parallel_config.model_parallel", tp_comp, kind="int")
    p.pipeline_parallel = view.key("parallel_config.pipeline_stage", tp_comp, kind="int")
    p.context_parallel = view.key("parallel_config.context_parallel", tp_comp, kind="int")
    ep = view.node("parallel_config.expert_parallel")
    if ep is None and view.node("moe_config.expert_model_parallel") is not None:
        p.expert_parallel = view.key("moe_config.expert_model_parallel", None, kind="int")
    else:
        p.expert_parallel = view.key("parallel_config.expert_parallel", tp_comp, kind="int")
    p.sequence_parallel = view.key("parallel_config.use_seq_parallel", tp_comp, kind="bool")
    sp = view.facts().get("seq_parallel")
    if sp:  # a class whose blocks read it from its own config (knobs: legacy_classes)
        p.sequence_parallel = view.legacy([sp["key"]], "bool")
    p.micro_batch_num = view.key("parallel_config.micro_batch_num", tp_comp, kind="int")
    p.micro_batch_interleave = view.key(
        "micro_batch_interleave_num", view.comp("GeneralConfig", "top_level"), kind="int"
    )
    p.distributed_optimizer = view.key(
        "parallel.enable_parallel_optimizer",
        view.comp("MsParallelConfig", "parallel"),
        kind="bool",
    )
    p.virtual_pipeline = view.key(
        "model.model_config.pp_interleave_num", view.model_cls, kind="int", fallback=1
    )


def _reset_without_parallel(view: MFView, cfg: Config) -> None:
    """Outside (semi-)auto parallel MindFormers resets every parallel size to 1."""
    p = cfg.parallel
    use_par = view.key("use_parallel", view.comp("GeneralConfig", "top_level"), kind="bool")
    if use_par.known and use_par.value is False and not view.v2:
        for field in (
            "data_parallel",
            "tensor_parallel",
            "pipeline_parallel",
            "context_parallel",
            "expert_parallel",
        ):
            cur = getattr(p, field)
            if cur is not None and cur.known and cur.value not in (1, None):
                setattr(
                    p,
                    field,
                    Value.derived(
                        1,
                        cur.knob,
                        "reset to 1 by MindFormers because use_parallel is False",
                        [cur, use_par],
                    ),
                )
        cur = p.sequence_parallel
        if cur is not None and cur.value:
            p.sequence_parallel = Value.derived(
                False,
                cur.knob,
                "reset by MindFormers because use_parallel is False",
                [cur, use_par],
            )
