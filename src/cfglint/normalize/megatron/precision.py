"""Mixed-precision settings of a Megatron run."""

from __future__ import annotations

import re

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.init_std import scaled_output_std
from cfglint.normalize.loss_scale import megatron_loss_scale
from cfglint.normalize.megatron.common import implementation_fact
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.placeholders import as_placeholder


def read_precision(m: MegatronInput, cfg: Config) -> None:
    pr, w = cfg.precision, cfg.weight
    compute = _compute_dtype(m)
    pr.compute_dtype = compute
    pr.loss_scale = megatron_loss_scale(
        compute,
        m.arg("loss_scale"),
        m.arg("initial_loss_scale"),
        m.arg("loss_scale_window"),
        m.arg("hysteresis"),
    )
    # Megatron keeps bf16/fp16 model weights (fp32 master copies live in the optimizer)
    w.param_dtype = compute
    w.embedding_dtype = compute
    pr.embedding_output_dtype = compute
    w.grad_reduce_dtype = _grad_reduce_dtype(m, compute)
    w.init_method_std = m.arg("init_method_std")
    w.output_init_std = _output_init_std(m, cfg)
    w.load_checkpoint = initial_weights(m)
    pr.layernorm_dtype = implementation_fact(
        "float32",
        "normalization",
        "Megatron's fused LayerNorm / RMSNorm kernels compute the statistics in float32",
    )
    pr.softmax_dtype = _softmax_dtype(m, cfg, compute)
    pr.rotary_dtype = _rotary_dtype(m, cfg, compute)
    res = m.arg("fp32_residual_connection")
    # a dtype taken from a branch-chosen --bf16/--fp16 is a branch choice too
    pr.residual_dtype = res.model_copy(
        update={
            "value": "float32" if res.value else compute.value,
            "branch_choice": res.branch_choice or (not res.value and compute.branch_choice),
        }
    )
    pr.loss_dtype = implementation_fact(
        "float32", "cross entropy", "Megatron's vocab-parallel cross entropy computes in float32"
    )
    pr.cross_entropy_fusion = m.arg("cross_entropy_loss_fusion")


def _compute_dtype(m: MegatronInput) -> Value:
    """--params-dtype where the final arguments give it, else --bf16 / --fp16 / float32."""
    bf16, fp16 = m.arg("bf16"), m.arg("fp16")
    if m.final and m.given("params_dtype"):
        return m.arg("params_dtype")
    if bf16.value:
        return bf16.model_copy(update={"value": "bfloat16"})
    if fp16.value:
        return fp16.model_copy(update={"value": "float16"})
    if not (bf16.known and fp16.known):
        # an unmodelled fork without --bf16/--fp16: float32 is Megatron-LM's default only
        return bf16 if not bf16.known else fp16
    return implementation_fact(
        "float32",
        "--bf16/--fp16",
        f"default of {m.table.label}: no --bf16 or --fp16, so everything runs in float32",
    )


def _grad_reduce_dtype(m: MegatronInput, compute: Value) -> Value:
    grad_bf16 = m.arg("grad_reduce_in_bf16") if "grad_reduce_in_bf16" in m.table.by_dest else None
    if compute.value == "bfloat16" and not (grad_bf16 and grad_bf16.value):
        return Value.derived(
            "float32",
            "--accumulate-allreduce-grads-in-fp32",
            "Megatron forces fp32 gradient accumulation and all-reduce with --bf16",
            [compute],
        )
    if grad_bf16 is not None and grad_bf16.value:
        return grad_bf16.model_copy(update={"value": "bfloat16"})
    acc = m.arg("accumulate_allreduce_grads_in_fp32")
    return acc.model_copy(
        update={
            "value": "float32" if acc.value or compute.value == "float32" else compute.value,
            "branch_choice": acc.branch_choice or compute.branch_choice,
        }
    )


def _softmax_dtype(m: MegatronInput, cfg: Config, compute: Value) -> Value:
    soft = m.arg("attention_softmax_in_fp32")
    qk_scale = m.arg("apply_query_key_layer_scaling")
    if cfg.structure.use_flash_attention is not None and cfg.structure.use_flash_attention.value:
        return Value.derived(
            "float32",
            "--attention-softmax-in-fp32",
            "fused attention kernels keep softmax in float32",
            [cfg.structure.use_flash_attention],
        )
    if soft.value or qk_scale.value:
        return (soft if soft.value else qk_scale).model_copy(update={"value": "float32"})
    return soft.model_copy(update={"value": compute.value, "branch_choice": compute.branch_choice})


def _rotary_dtype(m: MegatronInput, cfg: Config, compute: Value) -> Value | None:
    """The dtype the rotation itself runs in (the frequencies are always float32).

    - MindSpeed (MindSpeed-LLM on NPU) patches rope_utils._apply_rotary_pos_emb_bshd: cos and
      sin are cast to the query's dtype before the fused npu_rotary_position_embedding kernel
      or the plain formula (mindspeed/core/fusions/fused_rope.py:65-72 @ 26.1.0_core_r0.12.1
      57a33053; mindspeed_llm/core/models/common/embeddings/rotary_pos_embedding.py:259-264 @
      c77308a1), and Apex's fused RoPE does not exist there (fused_rope.py:104-111), so the
      rotation runs in the compute dtype.
    - Megatron-LM with --apply-rope-fusion (the default) runs Transformer Engine's fused
      kernel, which takes float32 frequencies and rotates in float32 (TransformerEngine
      common/fused_rope/fused_rope.cu fused_rope_block_forward), except where it falls back
      to the unfused path: a YaRN cos/sin mscale other than 1 and MLA's interleaving
      (rope_utils.py:292-319 @ core_v0.19.0). The unfused path casts cos/sin to the query's
      dtype (rope_utils.py:133-134 @ core_v0.19.0, :119-120 @ core_v0.12.1)."""
    knob = "rotary"
    pe = cfg.structure.position_embedding_type
    if pe is not None and pe.known and pe.value not in ("rope", "yarn", "mrope"):
        return None  # no rotary embedding at all
    if pe is not None and not pe.known:
        # which rotary code runs (a fork's own: --position-embedding-type deepseek4) is open
        return Value.derived(None, knob, "", [pe])
    if m.kind.startswith("mindspeed"):
        return Value.derived(
            compute.value,
            knob,
            "MindSpeed casts cos/sin to the query's dtype before its rotary kernel",
            [compute],
        )
    fusion = m.arg("apply_rope_fusion") if "apply_rope_fusion" in m.table.by_dest else None
    fallback = _unfused_reason(cfg)
    if isinstance(fallback, Value):
        return fallback
    if fusion is not None and fusion.known and fusion.value and not fallback:
        return Value.derived(
            "float32",
            knob,
            "Transformer Engine's fused RoPE (--apply-rope-fusion) rotates in float32",
            [fusion],
        )
    if fusion is not None and not fusion.known:
        return Value.derived(None, knob, "", [fusion])
    why = (
        f"the fused RoPE falls back to the unfused path for {fallback}"
        if fallback
        else "without rope fusion"
    )
    return Value.derived(
        compute.value,
        knob,
        f"{why}, Megatron casts cos/sin to the query's dtype before rotating",
        [v for v in (compute, fusion) if v is not None],
    )


def _unfused_reason(cfg: Config) -> str | Value:
    """Why the fused RoPE falls back to the unfused path ("" when it does not), or an
    unknown value when the YaRN magnitude that decides it is not known."""
    mla, yarn = cfg.structure.multi_latent_attention, cfg.structure.yarn_mscale
    if mla is not None and mla.known and mla.value:
        return "multi-latent attention's interleaving"
    if yarn is not None and not yarn.known:
        return Value.derived(None, "rotary", "", [yarn])
    if yarn is not None and _cos_sin_scale(yarn.value) not in (None, 1.0):
        return "YaRN's cos/sin mscale"
    return ""


def _cos_sin_scale(text: object) -> float | None:
    """The cos/sin multiplier of a YaRN magnitude ("cos/sin x1.13863, softmax scale x1",
    normalize/rope.py magnitude); None when it cannot be read."""
    hit = re.match(r"cos/sin x([0-9.eE+-]+)", str(text))
    try:
        return float(hit.group(1)) if hit else None
    except ValueError:
        return None


def initial_weights(m: MegatronInput) -> Value:
    """What the run starts from: the checkpoint it loads (a path or a description), "" for
    random weights, unknown when that cannot be told from the script.

    - ``--load DIR``: Megatron loads DIR's checkpoint whenever --load is given
      (setup_model_and_optimizer calls load_checkpoint for any args.load); a directory without
      one starts from random weights with a warning (megatron/training/checkpointing.py:
      1690-1691 @ core_v0.19.0, :926-927 @ core_v0.12.1, "could not find the metadata file
      ... will start from random"), which only the file system can tell. So a path the script
      leaves for the user (the recipe's placeholder) or one only known at run time still
      means "loads a checkpoint, unless that directory is empty".
    - MindSpeed-LLM ``--enable-hf2mg-convert``: refuses to start unless --load holds
      Hugging Face safetensors, which it converts and loads
      (mindspeed_llm/features_manager/convert_checkpoint/convert_checkpoint.py:137 @ c77308a1).
    - ``--finetune`` / ``--stage sft`` without --load: the checkpoint may come from
      --pretrained-checkpoint or the run starts random.
    """
    load = m.arg("load")
    placeholder = as_placeholder(load, "--load")
    hf2mg = m.arg("enable_hf2mg_convert") if "enable_hf2mg_convert" in m.table.by_dest else None
    tune = [m.arg(d) for d in ("finetune", "stage") if d in m.table.by_dest]
    tune = [v for v in tune if v.known and v.value]
    if hf2mg is not None and hf2mg.known and hf2mg.value:
        path = load.value if load.known and placeholder is load else "a path still to be filled in"
        return Value.derived(
            f"Hugging Face weights converted at start ({path})",
            "--enable-hf2mg-convert",
            "MindSpeed-LLM converts and loads the Hugging Face weights at --load; it refuses "
            "to start without them",
            [hf2mg],
        )
    if placeholder is not None and not placeholder.known and placeholder.loc is not None:
        return _unresolved_load(load, placeholder)
    if load.known and not load.value and tune:
        return Value.unknown(
            "--load",
            f"a fine-tuning run ({tune[0].knob}) without --load: the checkpoint may come from "
            "--pretrained-checkpoint or start random",
        )
    if load.known and load.value:
        return load.model_copy(update={"detail": LOAD_UNLESS_EMPTY})
    return load


def _unresolved_load(load: Value, placeholder: Value) -> Value:
    """A --load path left as a placeholder or only known at run time: a checkpoint is
    loaded unless that directory is empty (or, under a branch, not known)."""
    if load.branch_choice or load.conditional:
        return placeholder  # whether the branch that passes --load runs is not known
    what = (
        f"the recipe's placeholder {placeholder.raw!r}"
        + (" split into words, unquoted" if str(placeholder.raw).lower() == "your" else "")
        + ", to be filled in"
        if placeholder is not load
        else f"a path not known statically: {placeholder.detail}"
    )
    return Value.written(
        f"the checkpoint in the --load directory ({what})",
        "--load",
        placeholder.loc,
        via=placeholder.via,
        detail=LOAD_UNLESS_EMPTY,
    )


# what a --load directory means for the starting weights (see initial_weights)
LOAD_UNLESS_EMPTY = (
    "unless that directory is empty: with no checkpoint there Megatron warns and starts from "
    "random weights (megatron/training/checkpointing.py:1690-1691 @ core_v0.19.0, :926-927 @ "
    "core_v0.12.1)"
)


def _output_init_std(m: MegatronInput, cfg: Config) -> Value | None:
    """TransformerConfig.__post_init__ sets output_layer_init_method, when none is given, to
    normal(0, init_method_std / sqrt(2 x num_layers)) (megatron/core/transformer/
    transformer_config.py:2263-2277 @ core_v0.19.0, :939-943 @ core_v0.12.1)."""
    # the configured count: MindSpeed's no-op layers are still counted in num_layers here
    std, layers = cfg.weight.init_method_std, m.arg("num_layers")
    if std is None:
        return None
    for dest, what in (
        # arguments.py: both init methods become xavier_uniform_ (:1345-1347 @ core_v0.16.1)
        ("init_method_xavier_uniform", "initializes with xavier_uniform, not a normal std"),
        # core_v0.19.0: MuP scales the output layers' std by width as well as depth
        ("use_mup", "scales the output layers' std by the MuP width multiplier too"),
    ):
        if dest not in m.table.by_dest:
            continue
        v = m.arg(dest)
        if not v.known:
            return Value.derived(None, "init_method_std", "", [v])
        if v.value:
            return Value.unknown(
                v.knob or dest,
                f"{v.knob or dest} {what}; cfglint does not model that init",
                loc=v.loc,
            )
    return scaled_output_std(std, layers, "Megatron's models")
