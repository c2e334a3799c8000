"""RoPE variants of a Megatron / MindSpeed-LLM run: frequency rescaling and the rotated
layout (interleaved pairs vs the two halves)."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value, fmt
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.rope import as_rope, spell, yarn


def _opt(m: MegatronInput, dest: str) -> Value | None:
    return m.arg(dest) if dest in m.table.by_dest else None


def read_rope(m: MegatronInput, cfg: Config) -> None:
    s = cfg.structure
    pe = s.position_embedding_type
    if pe is None or not pe.known or pe.value not in ("rope", "yarn", "mrope"):
        s.rope_scaling = None
        s.rope_interleaved = None
        s.yarn_mscale = None
        return
    s.rope_scaling, s.yarn_mscale = _scaling(m, cfg, pe)
    if pe.value == "yarn":
        s.position_embedding_type = as_rope(pe)
    glm = _opt(m, "use_glm_rope")
    inter = _opt(m, "rotary_interleaved")
    if glm is not None and glm.known and glm.value:
        # MindSpeed-LLM's GLM rope rotates interleaved pairs like GLM's own code
        s.rope_interleaved = glm.model_copy(update={"value": True})
    elif inter is not None:
        s.rope_interleaved = inter
    else:
        s.rope_interleaved = Value.default(False, "--rotary-interleaved", m.table.label)


def multi_latent_attention(m: MegatronInput) -> Value:
    """--multi-latent-attention, or MindSpeed-LLM's deprecated --multi-head-latent-attention,
    which validate_args copies onto it (deprecated_args.py @ v26.1.0); on MindSpeed 2.1.0,
    whose Megatron (core_r0.8.0) has no --multi-latent-attention, that flag is MLA's own
    switch (mindspeed/arguments.py:87 @ 1e898a29)."""
    old = _opt(m, "deprecated_multi_head_latent_attention") or _opt(
        m, "multi_head_latent_attention"
    )
    if old is not None and "multi_latent_attention" not in m.table.by_dest:
        return old
    v = m.arg("multi_latent_attention")
    if old is not None and old.known and old.value and not (v.known and v.value):
        return old
    return v


def _scaling(m: MegatronInput, cfg: Config, pe: Value) -> tuple[Value, Value | None]:
    typ = _opt(m, "rope_scaling_type")  # MindSpeed-LLM
    factor = _opt(m, "rope_scaling_factor")
    if typ is not None and typ.known and typ.value:
        return _mindspeed_scaling(m, cfg, typ, factor)
    mla = multi_latent_attention(m)
    if typ is None and mla.known and mla.value:
        # Megatron-LM's MLA builds its rotary embedding from MLATransformerConfig
        # (--rope-type, --rotary-scaling-factor, --mscale, --mscale-all-dim, beta and
        # original context from the dataclass: transformer_config.py:2927-2952,
        # multi_latent_attention.py:177-200 @ core_v0.19.0), whatever
        # --position-embedding-type says; GPTModel's own rotary embedding, the one that
        # reads --use-rope-scaling, is built only without MLA (gpt_model.py:177)
        why = (
            "Megatron-LM's multi-latent attention takes its RoPE from --rope-type and "
            "MLATransformerConfig, which cfglint does not model"
        )
        return Value.unknown("--rope-type", why), Value.unknown("--rope-type", why)
    use = _opt(m, "use_rope_scaling")
    if use is not None and use.known and use.value:
        return _llama31_scaling(use, factor), None
    return _megatron_scaling(m, pe, typ)


def _mindspeed_scaling(
    m: MegatronInput, cfg: Config, typ: Value, factor: Value | None
) -> tuple[Value, Value | None]:
    """MindSpeed-LLM's --rope-scaling-type."""
    if typ.value == "yarn":
        return _mindspeed_yarn(m, cfg, typ)
    params = {
        "factor": factor.value if factor is not None else None,
        "low": _val(m, "low_freq_factor"),
        "high": _val(m, "high_freq_factor"),
        "original": _val(m, "original_max_position_embeddings"),
    }
    ins = [v for v in (typ, factor) if v is not None]
    return Value.derived(
        spell(str(typ.value), params),
        "--rope-scaling-type",
        f"MindSpeed-LLM --rope-scaling-type {typ.value}",
        ins,
    ), None


def _llama31_scaling(use: Value, factor: Value | None) -> Value:
    # Megatron-LM: Llama-3.1 scaling with factor --rope-scaling-factor and fixed
    # low/high/original (rotary_pos_embedding.py _apply_scaling: 1, 4, 8192)
    f = factor.value if factor is not None and factor.known else None
    return Value.derived(
        spell("llama3", {"factor": f, "low": 1, "high": 4, "original": 8192}),
        "--use-rope-scaling",
        "Megatron-LM Llama-3.1 RoPE scaling (low 1, high 4, original 8192 fixed)",
        [use] + ([factor] if factor is not None else []),
    )


def _megatron_scaling(m: MegatronInput, pe: Value, typ: Value | None) -> tuple[Value, Value | None]:
    """Megatron-LM's YaRN or linear interpolation, else no rescaling."""
    if pe.value == "yarn":
        return _megatron_yarn(m, pe)
    interp = _opt(m, "rotary_seq_len_interpolation_factor")
    if interp is not None and interp.known and interp.value:
        return interp.model_copy(update={"value": spell("linear", {"factor": interp.value})}), None
    knob = "--rope-scaling-type" if typ is not None else "--use-rope-scaling"
    return Value.default("none", knob, f"{m.table.label} (no RoPE rescaling)"), None


def _megatron_yarn(m: MegatronInput, pe: Value) -> tuple[Value, Value]:
    """Megatron-LM --position-embedding-type yarn (a non-MLA GPT). argument_utils.py:384-413
    @ core_v0.19.0 copies the flags onto config.yarn_* with YarnRotaryEmbedding's defaults,
    which gpt_model.py:190-208 reads; attention.py:326 multiplies cos/sin by
    g(factor, mscale) / g(factor, mscale_all_dim) and the softmax scale is untouched."""
    if "yarn_beta_fast" not in m.table.by_dest:
        why = f"{m.table.label} has no --yarn-beta-fast: cfglint reads YaRN from core_v0.19.0 on"
        return Value.unknown("--position-embedding-type", why), Value.unknown(
            "--position-embedding-type", why
        )
    src = f"{m.table.label} argument_utils.py:_apply_yarn_config_from_args"

    def arg(dest: str, flag: str, dflt: float) -> Value:
        v = m.arg(dest)
        if v.known and v.value is None:  # argparse default None -> the YaRN default
            return Value.default(dflt, flag, src)
        return v

    p = {
        "factor": arg("rotary_scaling_factor", "--rotary-scaling-factor", 1.0),
        "original": arg(
            "yarn_original_max_position_embeddings", "--yarn-original-max-position-embeddings", 4096
        ),
        "beta_fast": arg("yarn_beta_fast", "--yarn-beta-fast", 32.0),
        "beta_slow": arg("yarn_beta_slow", "--yarn-beta-slow", 1.0),
        "mscale": arg("mscale", "--mscale", 1.0),
        "mscale_all_dim": arg("mscale_all_dim", "--mscale-all-dim", 0.0),
    }
    rnd = m.arg("yarn_correction_range_round_to_int")
    if rnd.known and rnd.value is None:
        rnd = Value.default(True, "--yarn-correction-range-round-to-int", src)
    return yarn(
        "--position-embedding-type",
        "Megatron YaRN",
        p,
        None,
        "the softmax scale is not rescaled (non-MLA attention)",
        extra=[pe],
        round_to_int=rnd,
    )


def _mindspeed_yarn(m: MegatronInput, cfg: Config, typ: Value) -> tuple[Value, Value]:
    """MindSpeed-LLM --rope-scaling-type yarn (v26.1.0).

    - Frequencies: core/models/common/embeddings/rotary_pos_embedding.py:37-67. An MLA
      model uses --rope-scaling-factor; any other model uses max_position_embeddings /
      --rope-scaling-original-max-position-embeddings and writes it back onto
      args.rope_scaling_factor (lines 41-47), so --rope-scaling-factor is ignored there.
      The ramp ends are floored / ceiled (tasks/common/yarn_rope.py:18-27).
    - --beta-fast 32 / --beta-slow 1 (features_manager/common/rotary.py:22-25); the
      deprecated --rope-scaling-beta-* are copied onto them (deprecated_args.py:108-117).
    - cos/sin x g(factor, --rope-scaling-mscale) / g(factor, --rope-scaling-mscale-all-dim)
      (rotary_pos_embedding.py:235-239; defaults 1.0 / 0.0, rotary.py:26-29).
    - MLA: softmax scale x g(factor, mscale_all_dim)^2 when mscale_all_dim is not 0
      (tasks/models/transformer/mla_dot_product_attention.py:43-49 and 79-86).
    """
    mla = multi_latent_attention(m)
    if not mla.known:
        return Value.derived(None, "", "", [mla]), Value.derived(None, "", "", [mla])
    knob = "--rope-scaling-type"
    orig = m.arg("rope_scaling_original_max_position_embeddings")
    if orig.known and orig.value is None:
        orig = Value.unknown(
            "--rope-scaling-original-max-position-embeddings",
            "not given: MindSpeed-LLM's YaRN divides by it (rotary_pos_embedding.py:45-56 @ "
            "v26.1.0), so the run fails",
        )
    if mla.value:
        factor = m.arg("rope_scaling_factor")
        how = "MindSpeed-LLM YaRN (MLA: --rope-scaling-factor)"
    else:
        mpe = cfg.structure.max_position_embeddings
        if mpe is None:
            mpe = Value.unknown("--max-position-embeddings", "not read")
        f = (
            mpe.value / orig.value
            if mpe.known and orig.known and isinstance(mpe.value, (int, float)) and orig.value
            else None
        )
        factor = Value.derived(
            f,
            f"YaRN factor (--max-position-embeddings {fmt(mpe.value)} / "
            f"--rope-scaling-original-max-position-embeddings {fmt(orig.value)})",
            "MindSpeed-LLM YaRN factor = max_position_embeddings / original context "
            "(--rope-scaling-factor is overwritten)",
            [mpe, orig],
        )
        how = "MindSpeed-LLM YaRN"

    def beta(dest: str, old: str) -> Value:
        v = _opt(m, old)
        return v if v is not None and v.known and v.value else m.arg(dest)

    p = {
        "factor": factor,
        "original": orig,
        "beta_fast": beta("beta_fast", "deprecated_rope_scaling_beta_fast"),
        "beta_slow": beta("beta_slow", "deprecated_rope_scaling_beta_slow"),
        "mscale": m.arg("rope_scaling_mscale"),
        "mscale_all_dim": m.arg("rope_scaling_mscale_all_dim"),
    }
    if mla.value:
        return yarn(
            knob,
            how,
            p,
            "mscale_all_dim",
            "MLA softmax scale x g(factor, mscale_all_dim)^2 (mla_dot_product_attention.py:43-49)",
            extra=[typ, mla],
        )
    return yarn(
        knob,
        how,
        p,
        None,
        "the softmax scale is not rescaled (non-MLA attention)",
        extra=[typ],
    )


def _val(m: MegatronInput, dest: str) -> object:
    v = _opt(m, dest)
    return v.value if v is not None and v.known else None
