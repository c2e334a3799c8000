"""Network structure of a MindFormers config, in both dialects, with each model class's
defaults and MindFormers' own derivations (FFN size, KV heads, activation).
"""

from __future__ import annotations

import math
from typing import Any

from cfglint.model.config import Config, Structure
from cfglint.model.values import Value
from cfglint.normalize.heads import PLAIN_HEAD
from cfglint.normalize.mindformers.dsv4 import read_dsv4
from cfglint.normalize.mindformers.view import (
    MFView,
    as_bool,
    as_int,
    builds_mla,
    class_fact,
    first_written,
    fixed,
)
from cfglint.normalize.mla import MLA_DIMS, mla_on, q_rank

# legacy model classes whose attention is multi-latent (DeepSeek V2/V3 under research/)
_MLA_CLASSES = ("DeepseekV2Config", "DeepseekV3Config")


def read_structure(view: MFView, cfg: Config) -> None:
    s = cfg.structure
    s.ffn_hidden_size = _ffn_size(view, s.hidden_size)
    s.num_query_groups, s.head_dim = _heads(view, s.hidden_size, s.num_heads)
    # class-fixed properties and dialect-specific keys
    if view.mcore:
        _mcore_fields(view, cfg)
        _mla_has_no_groups(s)
    else:
        _legacy_fields(view, cfg)
    _mla_dims(view, s)
    read_dsv4(view, cfg)
    _shared_fallbacks(s)
    s.recompute = _recompute(view)


def _mla_has_no_groups(s: Structure) -> None:
    """Multi-latent attention projects K and V for every head from the latent and never
    reads num_query_groups (parallel_core/training_graph/transformer/
    multi_latent_attention.py @ f52743ca and @ mindformers-2.1.0.whl): a KV-head count from
    config.json (DeepSeek-V3's 128) is no grouping of a model cut to 8 heads."""
    mla, heads = s.multi_latent_attention, s.num_heads
    if mla is None or not mla.known or mla.value is not True or as_int(heads) is None:
        return
    s.num_query_groups = Value.derived(
        heads.value,  # type: ignore[union-attr]
        "num_query_groups",
        "multi-latent attention has no KV groups: K and V are projected per head from the latent",
        [mla, heads],  # type: ignore[list-item]
    )


# the legacy DeepSeek classes' keys for each MLA dimension (research/deepseek3/
# deepseek2_config.py @ f52743ca: q_lora_rank, kv_lora_rank, qk_nope_head_dim,
# qk_rope_head_dim, v_head_dim)
_LEGACY_MLA_KEYS = {
    "q_lora_rank": "q_lora_rank",
    "kv_lora_rank": "kv_lora_rank",
    "qk_head_dim": "qk_nope_head_dim",
    "qk_pos_emb_head_dim": "qk_rope_head_dim",
    "v_head_dim": "v_head_dim",
}


def _mla_dims(view: MFView, s: Structure) -> None:
    """MLA's dimensions where the model builds it: mcore keys under their TransformerConfig
    names after the release's renames (qk_nope_head_dim -> qk_head_dim, qk_rope_head_dim ->
    qk_pos_emb_head_dim), with MLATransformerConfig's defaults; legacy keys with the class's."""
    if not mla_on(s):
        return
    for field, name in MLA_DIMS.items():
        if view.mcore:
            v = view.mcore_field(name, "int", mla=True)
        else:
            v = view.legacy([_LEGACY_MLA_KEYS[name]], "int")
        setattr(s, field, q_rank(v) if name == "q_lora_rank" else v)


def _ffn_size(view: MFView, hidden: Value | None) -> Value | None:
    if not view.mcore:
        return _legacy_ffn(view, hidden)
    ffn = view.mcore_raw("ffn_hidden_size", "int")
    if ffn is None and as_int(hidden) is not None:
        ffn = Value.derived(
            4 * hidden.value,
            "ffn_hidden_size",
            "TransformerConfig default: 4 x hidden size",
            [hidden],
        )
    return ffn or Value.unknown("ffn_hidden_size", "hidden size unknown")


def _heads(
    view: MFView, hidden: Value | None, heads: Value | None
) -> tuple[Value | None, Value | None]:
    """Attention query groups and head size."""
    if view.mcore:
        g = view.mcore_raw("num_query_groups", "int")
        groups = g or Value.derived(
            heads.value,
            "num_query_groups",
            "defaults to the number of attention heads",
            [heads],
        )
        hd = view.mcore_raw("kv_channels", "int")
    elif heads is None:
        # no single head count (Swin's per-stage list): groups and head size do not apply
        return None, None
    else:
        groups = _legacy_kv_heads(view, heads)
        hd = _legacy_head_dim(view)
    if hd is None and heads is not None and as_int(hidden) and as_int(heads):
        hd = Value.derived(
            hidden.value // heads.value,
            "head_dim",
            "derived as hidden size / attention heads",
            [hidden, heads],
        )
    if (
        hd is None
        and heads is not None
        and hidden is not None
        and not (heads.known and hidden.known)
    ):
        hd = Value.derived(None, "head_dim", "", [hidden, heads])  # unknown, with the reason
    return groups, hd


def _legacy_head_dim(view: MFView) -> Value | None:
    for k in ("head_dim", "kv_channels", "d_kv"):
        n = view.node(f"{view.model_path}.{k}")
        if n is not None:
            return view.value(n, f"{view.model_path}.{k}", "int")
    # a class whose head size is its own setting with a default: T5's d_kv 64
    # (t5_config.py:195 kv_size = d_kv), GLM-style kv_channels 128
    own = [
        k
        for k in ("kv_channels", "d_kv")
        if any(c.defaults.get(k) is not None for c in view.class_chain())
    ]
    return view.legacy(own, "int") if own else None


def _mcore_fields(view: MFView, cfg: Config) -> None:
    s = cfg.structure
    s.multi_latent_attention = view.mcore_field("multi_latent_attention", "bool")
    if view.mcore_raw("multi_latent_attention") is None and builds_mla(view, cfg.model_class):
        # TrainingDeepseekV3ForCausalLM converts with is_mla_model=True, so its
        # defaults are MLATransformerConfig's (models/deepseek3/
        # modeling_deepseek_v3_train.py:31 @ 477621fd)
        s.multi_latent_attention = Value.default(
            True, knob="multi_latent_attention", source="MindFormers MLATransformerConfig"
        )
    s.normalization = view.mcore_field("normalization")
    s.hidden_dropout = view.mcore_field("hidden_dropout", "float")
    s.attention_dropout = view.mcore_field("attention_dropout", "float")
    s.position_embedding_type = view.mcore_field("position_embedding_type")
    s.rotary_percent = view.mcore_field("rotary_percent", "float")
    if s.rotary_percent is not None and not s.rotary_percent.known:
        s.rotary_percent = view.mcore_field("partial_rotary_factor", "float")
    s.add_bias_linear = view.mcore_field("add_bias_linear", "bool")
    s.activation = _mcore_activation(view)
    tie = view.mcore_field("tie_word_embeddings", "bool")
    s.tied_embeddings = tie
    s.output_head = Value.default(
        PLAIN_HEAD, "output head", "MindFormers mcore GPTModel (a linear output layer)"
    )
    s.seq_length = first_written(
        view,
        [f"{view.model_path}.seq_length", "train_dataset.data_loader.config.seq_length"],
        "int",
    ) or view.mcore_field("seq_length", "int")
    _train_fixed(view, cfg)


def _legacy_fields(view: MFView, cfg: Config) -> None:
    s = cfg.structure
    facts = view.d.knobs["legacy_classes"].get(cfg.model_class, {})
    s.normalization = class_fact(view, facts, "normalization", "normalization")
    s.activation = class_fact(view, facts, "activation", "hidden_act")
    if s.activation.known and s.activation.value in ("silu", "swish"):
        s.activation = s.activation.model_copy(update={"value": "swiglu"})
    s.position_embedding_type = view.arch_fact("position", "position_embedding_type") or class_fact(
        view, facts, "position", "position_embedding_type"
    )
    s.output_head = _output_head(view)
    rp = facts.get("rotary_percent")
    s.rotary_percent = fixed(view, float(rp), "rotary fraction") if rp is not None else None
    s.seq_length = view.legacy(["seq_length"], "int", "structure.seq_length")
    s.tied_embeddings = view.legacy(
        ["tie_word_embeddings", "share_embedding_weight"], "bool", "structure.tied_embeddings"
    )
    _legacy_biases(view, cfg, facts)
    s.hidden_dropout, s.attention_dropout = _legacy_dropout(view, facts)
    if view.model_cls is not None:
        # the research DeepSeek classes train DeepseekV2ForCausalLM, whose attention is
        # MLA with RMSNorms on both latents, always built (research/deepseek3/
        # deepseek3_model_train.py:20; deepseek2_model.py:311,445,484 @ f52743c)
        s.multi_latent_attention = fixed(
            view, cfg.model_class in _MLA_CLASSES, "multi-latent attention"
        )
    if s.qk_norm is not None and not s.qk_norm.known:
        s.qk_norm = fixed(view, False, "qk norm")


def _legacy_biases(view: MFView, cfg: Config, facts: dict[str, Any]) -> None:
    s = cfg.structure
    lb = facts.get("linear_bias")
    if isinstance(lb, dict):
        s.add_bias_linear = view.legacy([lb["key"]], "bool")
    elif lb is not None:
        s.add_bias_linear = fixed(view, bool(lb), "linear bias")
    else:
        s.add_bias_linear = view.legacy(["add_bias_linear", "has_bias"], "bool")
    s.add_qkv_bias = _bias_fact(view, facts.get("qkv_bias"), "QKV bias") or s.add_qkv_bias
    s.add_dense_bias = _bias_fact(view, facts.get("dense_bias"), "output-projection bias")


def _shared_fallbacks(s: Structure) -> None:
    """What both dialects fall back to when a setting is left unknown."""
    if s.add_qkv_bias is not None and not s.add_qkv_bias.known and s.add_bias_linear is not None:
        s.add_qkv_bias = s.add_bias_linear
    if s.add_dense_bias is None or not s.add_dense_bias.known:
        # no class fact of its own: the output projection is one of the linear layers
        s.add_dense_bias = s.add_bias_linear
    if (
        s.rope_theta is not None
        and s.position_embedding_type is not None
        and s.position_embedding_type.value not in ("rope", "yarn", "partial_rope", "llama3")
    ):
        s.rope_theta = None
    if s.max_position_embeddings is not None and (
        not s.max_position_embeddings.known or not s.max_position_embeddings.value
    ):
        s.max_position_embeddings = Value.derived(
            s.seq_length.value if s.seq_length else None,
            "max_position_embedding",
            "falls back to seq_length",
            [s.seq_length],
        )


def _recompute(view: MFView) -> Value:
    rc = view.node("recompute_config.recompute")
    sel = view.node("recompute_config.select_recompute")
    recomp = [x for x in (rc, sel) if x is not None and x.plain()]
    if recomp:
        got = view.value(
            recomp[0],
            "recompute_config." + ("recompute" if recomp[0] is rc else "select_recompute"),
        )
        return got.model_copy(update={"value": True})
    if rc is not None:
        return view.value(rc, "recompute_config.recompute", "bool")
    return Value.default(False, "recompute_config.recompute", "MindFormers template")


def _legacy_dropout(view: MFView, facts: dict[str, Any]) -> tuple[Value, Value]:
    spec = facts.get("dropout")
    if view.model_cls is None:
        why = view.no_class_reason()
        return (
            Value.unknown(f"{view.model_path}.hidden_dropout", why),
            Value.unknown(f"{view.model_path}.attention_dropout", why),
        )
    if spec == "none" or spec is None:
        cls = view.model_cls
        name = cls.label if cls else "MindFormers"
        why = f"{name} has no dropout argument (the legacy model applies none)"
        # derived from nothing: no setting holds it, so no fix or advice may write it
        return (
            Value.derived(0.0, "hidden_dropout", why, []),
            Value.derived(0.0, "attention_dropout", why, []),
        )
    return (view.legacy(spec["hidden"], "float"), view.legacy(spec["attention"], "float"))


def _legacy_ffn(view: MFView, hidden: Value | None) -> Value | None:
    keys = view.keys_for("structure.ffn_hidden_size", ["intermediate_size", "ffn_hidden_size"])
    for k in keys:
        n = view.node(f"{view.model_path}.{k}")
        if n is not None and n.value is not None:
            return view.value(n, f"{view.model_path}.{k}", "int")
    absent = (view.facts().get("absent") or {}).get("structure.ffn_hidden_size", [None])[0]
    if absent == "not_applicable":
        return None
    if hidden is None:
        return None
    times = view.facts().get("ffn_times_hidden")
    if times:
        # the class fixes the MLP width as a multiple of the hidden size (CLIP: 4 x d_model)
        return Value.derived(
            times * hidden.value if as_int(hidden) is not None else None,
            "ffn size",
            f"{times} x hidden size, fixed by the model class",
            [hidden],
        )
    # a class whose FFN size is a plain setting with a default (BERT's intermediate_size)
    own = [k for k in keys if any(c.defaults.get(k) is not None for c in view.class_chain())]
    if own:
        return view.legacy(own, "int")
    ratio_key = (
        view.d.knobs["legacy_classes"]
        .get(view.model_cls.name if view.model_cls else "", {})
        .get("ffn_ratio")
    )
    if ratio_key:
        return _ffn_by_ratio(view, hidden, ratio_key)
    return _llama_ffn(view, hidden)


def _ffn_by_ratio(view: MFView, hidden: Value, ratio_key: str) -> Value:
    """The class's FFN size is the hidden size times one of its settings."""
    ratio = view.legacy([ratio_key], "int")
    if (
        hidden.known
        and ratio.known
        and isinstance(ratio.value, int)
        and isinstance(hidden.value, int)
    ):
        return Value.derived(
            hidden.value * ratio.value,
            "ffn size",
            f"hidden size x {ratio_key}",
            [hidden, ratio],
        )
    return Value.derived(None, "ffn size", "", [hidden, ratio])


def _llama_ffn(view: MFView, hidden: Value) -> Value:
    """LlamaFeedForward's size from hidden size, multiple_of and ffn_dim_multiplier."""
    if not hidden.known:
        return Value.derived(None, "intermediate_size", "", [hidden])
    mult = view.legacy(["multiple_of"], "int")
    fdm = view.legacy(["ffn_dim_multiplier"], "float")
    if not (hidden.known and isinstance(hidden.value, int)) or not mult.known or not mult.value:
        return Value.unknown(
            "intermediate_size", "cannot derive: hidden_size or multiple_of unknown"
        )
    if isinstance(fdm.value, str) or isinstance(mult.value, str):
        return Value.unknown("intermediate_size", "ffn_dim_multiplier / multiple_of is a string")
    h = 4 * hidden.value
    if fdm.known and fdm.value is not None:
        h = int((fdm.value + 0.01) * h)
    h = int(2 * h / 3)
    h = mult.value * math.ceil(h / mult.value)
    return Value.derived(
        h,
        "intermediate_size",
        "derived like LlamaFeedForward: 2/3 x 4 x hidden (x ffn_dim_multiplier), "
        "rounded up to multiple_of",
        [hidden, mult, fdm],
    )


def _legacy_kv_heads(view: MFView, heads: Value) -> Value:
    n = view.node(f"{view.model_path}.n_kv_heads")
    if n is not None and n.value is not None:
        return view.value(n, f"{view.model_path}.n_kv_heads", "int")
    mqa = view.node(f"{view.model_path}.multi_query_attention")
    grp = view.node(f"{view.model_path}.multi_query_group_num")
    if mqa is not None and mqa.value and grp is not None:
        return view.value(grp, f"{view.model_path}.multi_query_group_num", "int")
    if any("multi_query_attention" in c.defaults for c in view.class_chain()):
        # GLM-style classes (ChatGLM2, YiZhao) default to grouped queries: the class's
        # multi_query_attention / multi_query_group_num apply when the YAML leaves them out
        on = view.legacy(["multi_query_attention"], "bool")
        if on.known and on.value:
            return view.legacy(["multi_query_group_num"], "int")
        if on.known:
            return Value.derived(
                heads.value,
                "n_kv_heads",
                "multi_query_attention off: one group per head",
                [heads, on],
            )
    for k in ("num_key_value_heads", "num_query_groups"):
        n = view.node(f"{view.model_path}.{k}")
        if n is not None and n.value is not None:
            return view.value(n, f"{view.model_path}.{k}", "int")
    return Value.derived(
        heads.value, "n_kv_heads", "n_kv_heads unset: every head is its own group", [heads]
    )


def _bias_fact(view: MFView, spec: Any, what: str) -> Value | None:
    """A bias the class fixes (a bool) or reads from one key ({key: ...}); None: no fact."""
    if isinstance(spec, dict):
        return view.legacy([spec["key"]], "bool")
    return fixed(view, bool(spec), what) if spec is not None else None


def _mcore_activation(view: MFView) -> Value:
    act = view.mcore_field("hidden_act")
    glu = view.mcore_field("gated_linear_unit", "bool")
    if not glu.known and view.mcore_raw("gated_linear_unit") is None and view.model_cls:
        # not a config.json key: the model class sets it (Qwen3Config's mf_overrides gate
        # the MLP), so a config.json that is not here cannot change it
        glu = view.class_default("gated_linear_unit", "bool")
    if not act.known:
        return act
    name = str(act.value).lower()
    if name in ("swiglu", "fusedswiglu") or (name in ("silu", "swish") and as_bool(glu)):
        return Value.derived("swiglu", "hidden_act", "SiLU with a gated linear unit", [act, glu])
    if name == "gelu" and as_bool(glu):
        return Value.derived("geglu", "hidden_act", "GeLU with a gated linear unit", [act, glu])
    return act.model_copy(update={"value": name})


def _train_fixed(view: MFView, cfg: Config) -> None:
    """Settings the model's training class fixes whatever the YAML says
    (data/mindformers_knobs.yaml: mcore_train_fixed)."""
    fixed_by = view.d.knobs["mcore_train_fixed"].get(cfg.model_class) or {}
    for field, (value, why) in fixed_by.items():
        cur = cfg.get(field)
        if cur is None:  # not a setting of this model (no rotary embedding, ...)
            continue
        if cur.origin.value != "file":
            label = view.model_cls.label  # type: ignore[union-attr]
            cfg.set(field, Value.default(value, cur.knob, f"{label} ({why})"))
        elif cur.value != value:
            ignored = f"{why}; the YAML's value is ignored"
            cfg.set(field, Value.derived(value, cur.knob, ignored, [cur]))


# Only Baichuan2's research classes build a head that normalizes its rows (NormHead: a grep of
# mindformers v1.0.0, v1.3.2, v1.5.0, v1.7.0 and fd4deebc finds it in research/baichuan2 alone)


def _output_head(view: MFView) -> Value | None:
    got = view.arch_fact("output_head", "output head")
    if got is not None:
        return got
    if view.model_cls is None:
        return Value.unknown("output head", view.no_class_reason())
    return Value.default(
        PLAIN_HEAD,
        "output head",
        f"{view.model_cls.label} (a linear lm_head: only Baichuan2's research classes "
        "normalize it, and this config does not name one)",
    )
