"""Network structure of a Megatron run, with ``validate_args`` and ``TransformerConfig``
post-processing (FFN size, KV groups, padded vocabulary, fusions).
"""

from __future__ import annotations

import math

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.heads import PLAIN_HEAD
from cfglint.normalize.megatron.common import as_int, implementation_fact
from cfglint.normalize.megatron.dsv4 import read_dsv4
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.megatron.mla import read_mla
from cfglint.normalize.megatron.rope import multi_latent_attention


def _computing_layers(m: MegatronInput) -> Value:
    """The transformer layers that compute. MindSpeed's --noop-layers turns the listed layer
    numbers (0 <= n < --num-layers, a set: a repeat counts once; mindspeed/arguments.py:794-801
    @ 028de58c) into NoopTransformerLayer, which returns its input unchanged
    (core/pipeline_parallel/noop_layers/adaptor.py:32-72): recipes pad --num-layers to a
    multiple of the pipeline size with them (DeepSeek-V3: 64 layers, 61-63 no-op)."""
    layers = m.arg("num_layers")
    if "noop_layers" not in m.table.by_dest:
        return layers
    noop = m.arg("noop_layers")
    if noop.known and noop.value in (None, ""):
        return layers
    if not noop.known or not layers.known:
        return Value.derived(None, "--num-layers", "", [layers, noop])
    try:
        listed = {int(x) for x in str(noop.value).split(",")}
    except ValueError:
        return Value.unknown(
            "--noop-layers", f"{noop.value!r} is not a list of layer numbers", loc=noop.loc
        )
    return Value.derived(
        layers.value - len(listed),
        "--num-layers",
        f"{len(listed)} of them no-op (MindSpeed returns the input unchanged in those layers)",
        [layers, noop],
    )


def read_structure(m: MegatronInput, cfg: Config) -> None:
    s = cfg.structure
    s.num_layers = _computing_layers(m)
    s.num_heads = m.arg("num_attention_heads")
    s.hidden_size = m.arg("hidden_size")
    hidden, heads = s.hidden_size, s.num_heads
    swiglu = m.arg("swiglu")
    if m.values.get("activation_func") is not None:  # --yaml-cfg spells it out
        act = m.values["activation_func"]
        swiglu = act.model_copy(update={"value": str(act.value).lower() == "swiglu"})
    ffn = m.arg("ffn_hidden_size")
    if ffn.known and ffn.value is None and as_int(hidden):
        if swiglu.value:
            ffn = Value.derived(
                int((4 * hidden.value * 2 / 3) / 64) * 64,
                "--ffn-hidden-size",
                "Megatron default with --swiglu: 8/3 x hidden rounded down to a multiple of 64",
                [hidden, swiglu],
            )
        else:
            ffn = Value.derived(
                4 * hidden.value,
                "--ffn-hidden-size",
                "Megatron default: 4 x hidden size",
                [hidden, swiglu],
            )
    s.ffn_hidden_size = ffn
    gqa = m.arg("group_query_attention")
    if gqa.value:
        s.num_query_groups = m.arg("num_query_groups")
    else:
        s.num_query_groups = Value.derived(
            heads.value,
            "--num-query-groups",
            "without --group-query-attention every head is its own group",
            [heads, gqa],
        )
    kv = m.arg("kv_channels")
    if kv.known and kv.value is None and as_int(hidden) and as_int(heads):
        kv = Value.derived(
            hidden.value // heads.value,
            "--kv-channels",
            "derived as hidden size / attention heads",
            [hidden, heads],
        )
    s.head_dim = kv
    s.normalization = m.arg("normalization")
    s.norm_epsilon = m.arg("layernorm_epsilon", "norm_epsilon")
    s.hidden_dropout = m.arg("hidden_dropout")
    s.attention_dropout = m.arg("attention_dropout")
    gran = m.arg("recompute_granularity")
    s.recompute = gran.model_copy(update={"value": gran.value is not None}) if gran.known else gran
    s.use_flash_attention = _flash(m)
    s.fused_rope = _fused_rope(m)
    s.fused_norm = m.arg("use_fused_rmsnorm") if "use_fused_rmsnorm" in m.table.by_dest else None
    s.fused_swiglu = (
        m.arg("use_fused_swiglu")
        if "use_fused_swiglu" in m.table.by_dest
        else m.arg("bias_swiglu_fusion")
    )
    s.fused_qkv = implementation_fact(
        True,
        "linear_qkv",
        "Megatron's attention always projects Q, K and V with one fused linear layer (linear_qkv)",
    )
    s.vocab_size = m.arg("vocab_size")
    s.padded_vocab_size = _padded_vocab(m)
    s.seq_length = m.arg("seq_length")
    mpe = m.arg("max_position_embeddings")
    s.max_position_embeddings = mpe
    s.position_embedding_type = _position_embedding_type(m)
    rope = s.position_embedding_type.value in ("rope", "yarn", "mrope")
    s.rope_theta = m.arg("rotary_base") if rope else None
    s.rotary_percent = m.arg("rotary_percent") if rope else None
    untie = m.arg("untie_embeddings_and_output_weights")
    s.tied_embeddings = (
        untie.model_copy(update={"value": not untie.value}) if untie.known else untie
    )
    s.output_head = (
        Value.default(
            PLAIN_HEAD,
            "output layer",
            "Megatron-LM's GPT model, a linear output_layer (ColumnParallelLinear); "
            "MindSpeed-LLM adds no normalized head (no such layer at v1.0.0, v2.1.0, v2.2.0 "
            "or v26.1.0)",
        )
        if m.modelled
        else m.undecided("output layer")
    )
    s.add_bias_linear = m.arg("add_bias_linear")
    qkv = m.arg("add_qkv_bias")
    if s.add_bias_linear.value and not qkv.value:
        qkv = Value.derived(
            True,
            "--add-qkv-bias",
            "Megatron turns QKV bias on whenever linear biases are on",
            [s.add_bias_linear],
        )
    s.add_qkv_bias = qkv
    s.add_dense_bias = _dense_bias(m, s.add_bias_linear)
    s.activation = _activation(m, swiglu)
    s.qk_norm = m.arg("qk_layernorm")
    s.multi_latent_attention = multi_latent_attention(m)
    read_mla(m, cfg)
    read_dsv4(m, cfg)


def _dense_bias(m: MegatronInput, linear: Value) -> Value:
    """The attention output projection's bias: every linear layer's with biases on, else
    MindSpeed-LLM's --add-dense-bias (legacy/model/transformer.py:366 @ v1.0.0; tasks/models/
    transformer/attention.py:25 @ c77308a1); Megatron-LM has no such switch."""
    if linear.value or "add_dense_bias" not in m.table.by_dest:
        return linear
    return m.arg("add_dense_bias")


def _activation(m: MegatronInput, swiglu: Value) -> Value:
    """The MLP activation: a switch that is on names it; with every switch known to be off
    it is Megatron's GeLU; a switch not known leaves it not decided."""
    switches = [("swiglu", swiglu), ("squared_relu", m.arg("squared_relu"))]
    if "quick_geglu" in m.table.by_dest:
        # gated quick GeLU (arguments.py core_transformer_config_from_args @ core_v0.16.1)
        switches.append(("quick_geglu", m.arg("quick_geglu")))
    for name, v in switches:
        if v.known and v.value:
            return v.model_copy(update={"value": name})
    unknown = [v for _, v in switches if not v.known]
    if unknown:
        return Value.derived(None, "--swiglu", "", unknown)
    return Value.default("gelu", knob="--swiglu", source=f"{m.table.label} (GeLU MLP)")


def _flash(m: MegatronInput) -> Value:
    if m.kind.startswith("mindspeed") or "attention_backend" not in m.table.by_dest:
        return m.arg("use_flash_attn")
    backend = m.arg("attention_backend")
    impl = m.arg("transformer_impl")
    if not backend.known:
        return backend
    if backend.value in ("flash", "fused"):
        return Value.derived(
            True,
            "--attention-backend",
            f"--attention-backend {backend.value} is a fused attention kernel",
            [backend],
        )
    if backend.value == "auto" and impl.value == "transformer_engine":
        return Value.derived(
            True,
            "--attention-backend",
            "--attention-backend auto with Transformer Engine selects a fused "
            "(flash or cuDNN) attention kernel",
            [backend, impl],
        )
    return Value.derived(
        False,
        "--attention-backend",
        f"--attention-backend {backend.value} computes attention unfused",
        [backend, impl],
    )


def _fused_rope(m: MegatronInput) -> Value | None:
    if m.kind.startswith("mindspeed") and "use_fused_rotary_pos_emb" in m.table.by_dest:
        return m.arg("use_fused_rotary_pos_emb")
    if "apply_rope_fusion" in m.table.by_dest:
        return m.arg("apply_rope_fusion")
    return None


def _padded_vocab(m: MegatronInput) -> Value:
    given = m.arg("padded_vocab_size")
    if given.known and given.value:
        return given
    vocab = m.arg("vocab_size")
    div = m.arg("make_vocab_size_divisible_by")
    tp = m.arg("tensor_model_parallel_size")
    if not vocab.known or vocab.value is None:
        return Value.unknown(
            "padded vocab size",
            "Megatron takes the vocabulary size from the tokenizer; give "
            "--padded-vocab-size or --vocab-size to compare it",
        )
    if m.arg("pad_vocab_size").value is False:
        return vocab
    multiple = (div.value or 1) * (tp.value or 1)
    padded = int(math.ceil(vocab.value / multiple) * multiple)
    return Value.derived(
        padded,
        "padded vocab size",
        "vocab size rounded up to make-vocab-size-divisible-by x TP",
        [vocab, div, tp],
    )


# --position-embedding-type choices a fork adds for a rotary embedding of its own
_OWN_ROTARY = {
    "deepseek4": "MindSpeed-LLM apply_deepseek4_rotary_embedding, "
    "mindspeed_llm/core/models/deepseek4/deepseek4_model.py:126-127 @ c77308a1",
}


def _position_embedding_type(m: MegatronInput) -> Value:
    """--position-embedding-type, after the legacy switch: validate_args turns
    ``--use-rotary-position-embeddings`` into ``position_embedding_type = 'rope'``
    whatever the type flag says (megatron/training/arguments.py:1571-1572 @ core_v0.19.0,
    :811-812 @ core_v0.12.1, which MindSpeed-LLM runs)."""
    pe = m.arg("position_embedding_type")
    own = _OWN_ROTARY.get(str(pe.value)) if pe.known else None
    if own is not None:
        return Value.unknown(
            pe.knob,
            f"--position-embedding-type {pe.value}: a rotary embedding the fork implements "
            f"itself ({own}), which cfglint has not compared with a plain or YaRN RoPE",
            loc=pe.loc,
        )
    legacy = (
        m.arg("use_rotary_position_embeddings")
        if "use_rotary_position_embeddings" in m.table.by_dest
        else None
    )
    if legacy is None or not legacy.known or not legacy.value or pe.value == "rope":
        return pe
    return Value.derived(
        "rope",
        "--use-rotary-position-embeddings",
        "Megatron's legacy --use-rotary-position-embeddings sets position_embedding_type rope",
        [legacy],
    )
