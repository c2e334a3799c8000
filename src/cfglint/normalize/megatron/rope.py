"""RoPE variants of a Megatron / MindSpeed-LLM run: frequency rescaling and the rotated
layout (interleaved pairs vs the two halves)."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.rope import spell


def _opt(m: MegatronInput, dest: str) -> Value | None:
    return m.arg(dest) if dest in m.table.by_dest else None


def read_rope(m: MegatronInput, cfg: Config) -> None:
    s = cfg.structure
    pe = s.position_embedding_type
    if pe is None or not pe.known or pe.value not in ("rope", "yarn", "mrope"):
        s.rope_scaling = None
        s.rope_interleaved = None
        return
    s.rope_scaling = _scaling(m, pe)
    glm = _opt(m, "use_glm_rope")
    inter = _opt(m, "rotary_interleaved")
    if glm is not None and glm.known and glm.value:
        # MindSpeed-LLM's GLM rope rotates interleaved pairs like GLM's own code
        s.rope_interleaved = glm.model_copy(update={"value": True})
    elif inter is not None:
        s.rope_interleaved = inter
    else:
        s.rope_interleaved = Value.default(False, "--rotary-interleaved", m.table.label)


def _scaling(m: MegatronInput, pe: Value) -> Value:
    typ = _opt(m, "rope_scaling_type")  # MindSpeed-LLM
    factor = _opt(m, "rope_scaling_factor")
    if typ is not None and typ.known and typ.value:
        params = {
            "factor": factor.value if factor is not None else None,
            "low": _val(m, "low_freq_factor"),
            "high": _val(m, "high_freq_factor"),
            "original": _val(m, "original_max_position_embeddings"),
        }
        if typ.value == "yarn":
            params = {
                "factor": _val(m, "rope_scaling_factor"),
                "original": _val(m, "rope_scaling_original_max_position_embeddings"),
                "beta_fast": _val(m, "rope_scaling_beta_fast"),
                "beta_slow": _val(m, "rope_scaling_beta_slow"),
                "mscale": _val(m, "rope_scaling_mscale"),
                "mscale_all_dim": _val(m, "rope_scaling_mscale_all_dim"),
            }
        ins = [v for v in (typ, factor) if v is not None]
        return Value.derived(
            spell(str(typ.value), params),
            "--rope-scaling-type",
            f"MindSpeed-LLM --rope-scaling-type {typ.value}",
            ins,
        )
    use = _opt(m, "use_rope_scaling")
    if use is not None and use.known and use.value:
        # Megatron-LM: Llama-3.1 scaling with factor --rope-scaling-factor and fixed
        # low/high/original (rotary_pos_embedding.py _apply_scaling: 1, 4, 8192)
        f = factor.value if factor is not None and factor.known else None
        return Value.derived(
            spell("llama3", {"factor": f, "low": 1, "high": 4, "original": 8192}),
            "--use-rope-scaling",
            "Megatron-LM Llama-3.1 RoPE scaling (low 1, high 4, original 8192 fixed)",
            [use] + ([factor] if factor is not None else []),
        )
    if pe.value == "yarn":
        return Value.derived(
            spell(
                "yarn",
                {
                    "factor": _val(m, "yarn_rotary_scaling_factor"),
                    "original": _val(m, "yarn_original_max_position_embeddings"),
                    "beta_fast": _val(m, "yarn_beta_fast"),
                    "beta_slow": _val(m, "yarn_beta_slow"),
                    "mscale": _val(m, "yarn_mscale"),
                    "mscale_all_dim": _val(m, "yarn_mscale_all_dim"),
                },
            ),
            "--position-embedding-type",
            "Megatron YaRN",
            [pe],
        )
    interp = _opt(m, "rotary_seq_len_interpolation_factor")
    if interp is not None and interp.known and interp.value:
        return interp.model_copy(update={"value": spell("linear", {"factor": interp.value})})
    knob = "--rope-scaling-type" if typ is not None else "--use-rope-scaling"
    return Value.default("none", knob, f"{m.table.label} (no RoPE rescaling)")


def _val(m: MegatronInput, dest: str) -> object:
    v = _opt(m, dest)
    return v.value if v is not None and v.known else None
