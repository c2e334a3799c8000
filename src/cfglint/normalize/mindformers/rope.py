"""RoPE variants of a MindFormers config: the effective base, the frequency rescaling and
the rotated layout, in the spelling of ``normalize/rope.py``.

Facts (mindspore-lab/mindformers):
- legacy FreqsMgr (mindformers/modules/layers.py @ 7d7323d9): ``extend_method`` is one of
  None / PI / NTK / YARN / LLAMA3 / DYNAMIC_NTK / linear (SeqExtendMethod, lines 1158-1166);
  NTK multiplies theta by ``scaling_factor`` (line 1187); LLAMA3 and YARN take a dict
  ``scaling_factor`` (lines 1197-1229); the swap mask rotates the two halves of each head
  (get_swap_mask, lines 1327-1331).
- ChatGLM2 (GLM-2/3/4, @ f5656852): base = 10000 x rope_ratio (glm2.py:135-136,
  glm2_modules.py:48); RotaryPosEmb rotates interleaved pairs of the first half of each head
  (glm2_transformer.py:601-612).
- mcore: ``rope_scaling`` {type/rope_type, factor, ...} becomes position_embedding_type and
  rotary_scaling_factor (TransformerConfig conversion, see data/mindformers.yaml notes);
  ``rotary_interleaved`` is a TransformerConfig field (default False).
"""

from __future__ import annotations

from typing import Any

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.mindformers.view import MFView, builds_mla, fixed
from cfglint.normalize.rope import as_rope, spell, yarn

_LEGACY_KINDS = {
    "none": "none",
    "pi": "linear",
    "linear": "linear",
    "ntk": "ntk",
    "yarn": "yarn",
    "llama3": "llama3",
    "dynamic_ntk": "dynamic_ntk",
}


def _params(d: dict[str, Any]) -> dict[str, Any]:
    return {
        "factor": d.get("factor"),
        "low": d.get("low_freq_factor"),
        "high": d.get("high_freq_factor"),
        "original": d.get("original_max_position_embeddings"),
        "beta_fast": d.get("beta_fast"),
        "beta_slow": d.get("beta_slow"),
        "mscale": d.get("mscale"),
        "mscale_all_dim": d.get("mscale_all_dim"),
    }


def read_rope(view: MFView, cfg: Config) -> None:
    s = cfg.structure
    pe = s.position_embedding_type
    if pe is not None and pe.known and pe.value not in ("rope", "yarn", "llama3", "partial_rope"):
        s.rope_scaling = s.rope_interleaved = None
        return
    if view.mcore:
        _mcore(view, cfg)
        if pe is not None and pe.known and pe.value == "yarn":
            s.position_embedding_type = as_rope(pe)
    elif cfg.model_class in ("ChatGLM2Config", "YiZhaoConfig"):
        _glm(view, cfg)
    else:
        _legacy(view, cfg)


def _legacy(view: MFView, cfg: Config) -> None:
    s = cfg.structure
    s.rope_interleaved = fixed(view, False, "rotary layout (the two halves of each head)")
    if view.model_cls is None:
        s.rope_scaling = Value.unknown("extend_method", view.no_class_reason())
        return
    em = view.node(f"{view.model_path}.extend_method")
    sf = view.node(f"{view.model_path}.scaling_factor")
    if em is None or str(em.value).lower() in ("none", ""):
        knob = f"{view.model_path}.extend_method"
        s.rope_scaling = (
            view.value(em, knob).model_copy(update={"value": "none"})
            if em is not None
            else Value.default("none", knob, f"{view.model_cls.label} (extend_method None)")
        )
        return
    kind = _LEGACY_KINDS.get(str(em.value).lower(), str(em.value).lower())
    raw = sf.plain() if sf is not None else None
    ins = [view.value(em, f"{view.model_path}.extend_method")]
    if sf is not None:
        ins.append(view.value(sf, f"{view.model_path}.scaling_factor"))
    if kind == "ntk":
        # NTK folds into the base: theta x scaling_factor, no other rescaling
        th = s.rope_theta
        if th is not None and th.known and isinstance(raw, (int, float)):
            s.rope_theta = Value.derived(
                th.value * raw, th.knob, "NTK: theta x scaling_factor", [th, *ins]
            )
        s.rope_scaling = Value.derived("none", "extend_method", "NTK rescales the base", ins)
        return
    if kind == "yarn":
        # the dict's items carry their own lines; extend_method says which method
        s.rope_scaling, s.yarn_mscale = _legacy_yarn(view, cfg, sf, ins[:1])
        return
    params = _params(raw) if isinstance(raw, dict) else {"factor": raw}
    s.rope_scaling = Value.derived(
        spell(kind, params), "extend_method", f"extend_method {em.value} with scaling_factor", ins
    )


def _glm(view: MFView, cfg: Config) -> None:
    s = cfg.structure
    s.rope_interleaved = fixed(view, True, "rotary layout (interleaved pairs, GLM)")
    s.rope_scaling = fixed(view, "none", "RoPE rescaling")
    # YiZhao (research/yizhao @ v1.5.0): the same base (yizhao.py:94-100, yizhao_modules.py:46);
    # its convert_weight.py reorders q/k rows so that MindFormers' half-split rotation is the
    # original model's interleaved one
    ratio = view.legacy(["rope_ratio"], "float")
    base = Value.default(10000.0, "rotary base", f"{view.model_cls.label} (fixed 10000)")  # type: ignore[union-attr]
    if ratio.known and isinstance(ratio.value, (int, float)):
        s.rope_theta = Value.derived(
            10000.0 * ratio.value,
            f"{view.model_path}.rope_ratio",
            f"{cfg.model_class} RoPE base = 10000 x rope_ratio",
            [base, ratio],
        )
    else:
        s.rope_theta = Value.derived(None, "rope base", "", [ratio])


def _legacy_yarn(view: MFView, cfg: Config, sf: Any, ins: list[Value]) -> tuple[Value, Value]:
    """Legacy FreqsMgr YARN (modules/layers.py @ f52743ca): ``scaling_factor`` must be a dict
    with exactly factor, original_max_position_embeddings, beta_fast, beta_slow, mscale and
    mscale_all_dim (lines 1065-1080, no defaults); the ramp ends are floored / ceiled
    (_yarn_find_correction_range); cos and sin are multiplied by
    g(factor, mscale) / g(factor, mscale_all_dim) (lines 1201-1202, 1241-1242). The legacy
    DeepSeek attention (research/deepseek3/deepseek2_model.py:532-539) also multiplies its
    softmax scale by g(factor, mscale_all_dim)^2 when mscale_all_dim is not 0 (the same at
    v1.5.0 research/deepseek2/deepseek2_model.py:481-484 and v1.3.2
    research/deepseek2/deepseek2_transformer.py:227-230); other legacy
    attentions keep 1/sqrt(head_dim)."""
    knob = f"{view.model_path}.scaling_factor"
    raw = sf.plain() if sf is not None else None
    if not isinstance(raw, dict):
        why = (
            "extend_method YARN needs a scaling_factor dict (layers.py:1065-1069): "
            "MindFormers refuses this config"
        )
        return Value.unknown(knob, why), Value.unknown(knob, why)
    keys = {"factor": "factor", "original": "original_max_position_embeddings"}
    keys |= {k: k for k in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim")}
    missing = [v for v in keys.values() if v not in raw]
    if missing:
        why = (
            f"scaling_factor lacks {', '.join(missing)}: MindFormers' YARN needs all six keys "
            "and stops with a KeyError (layers.py:1069-1075)"
        )
        return Value.unknown(knob, why), Value.unknown(knob, why)
    p = {k: _sub(view, sf, key, f"{knob}.{key}") for k, key in keys.items()}
    if cfg.model_class in _LEGACY_MLA:
        return yarn(
            "extend_method",
            "extend_method YARN with scaling_factor",
            p,
            "mscale_all_dim",
            "DeepSeek MLA softmax scale x g(factor, mscale_all_dim)^2 (deepseek2_model.py:532-539)",
            extra=ins,
        )
    return yarn(
        "extend_method",
        "extend_method YARN with scaling_factor",
        p,
        None,
        "the softmax scale is not rescaled (the attention keeps 1/sqrt(head_dim))",
        extra=ins,
    )


def _sub(view: MFView, node: Any, key: str, knob: str) -> Value:
    """One item of a flow or block mapping, with its own line."""
    child = node.value.get(key) if node is not None and node.is_map else None
    if child is None:
        return Value.unknown(knob, "not written")
    return view.value(child, knob)


# legacy classes whose attention is MLA (research/deepseek3 @ f52743ca)
_LEGACY_MLA = ("DeepseekV2Config", "DeepseekV3Config")


def _mcore(view: MFView, cfg: Config) -> None:
    s = cfg.structure
    s.rope_interleaved = view.mcore_field("rotary_interleaved", "bool")
    node = view.node(f"{view.model_path}.rope_scaling")
    if node is not None and isinstance(node.plain(), dict):
        d = node.plain()
        kind = str(d.get("type") or d.get("rope_type") or "none")
        v = view.value(node, f"{view.model_path}.rope_scaling")
        if kind.lower() == "yarn":
            s.rope_scaling, s.yarn_mscale = _mcore_yarn(view, cfg, v, node, None)
            return
        s.rope_scaling = v.model_copy(update={"value": spell(kind, _params(d))})
        return
    hf = view.hf.get("rope_scaling")
    if hf is not None:
        d = hf.value if isinstance(hf.value, dict) else {}
        kind = str(d.get("type") or d.get("rope_type") or "none")
        if kind.lower() == "yarn":
            s.rope_scaling, s.yarn_mscale = _mcore_yarn(view, cfg, hf, None, d)
            return
        s.rope_scaling = hf.model_copy(update={"value": spell(kind, _params(d))})
        return
    pe = s.position_embedding_type
    if pe is not None and pe.known and pe.value == "yarn":
        s.rope_scaling, s.yarn_mscale = _mcore_yarn(view, cfg, pe, None, None)
        return
    if pe is not None and pe.known and pe.value == "llama3":
        factor = view.mcore_field("rotary_scaling_factor", "float")
        s.rope_scaling = Value.derived(
            spell(str(pe.value), {"factor": factor.value}),
            "position_embedding_type",
            f"position_embedding_type {pe.value}",
            [pe, factor],
        )
        return
    if view.hf_missing:
        s.rope_scaling = Value.unknown("rope_scaling", view.hf_missing)
        return
    s.rope_scaling = Value.default("none", "rope_scaling", "MindFormers TransformerConfig (None)")


def _mcore_yarn(
    view: MFView, cfg: Config, src: Value, node: Any, hf: dict[str, Any] | None
) -> tuple[Value, Value]:
    """mcore YaRN (@ f52743ca). TransformerConfig.__post_init__ turns a ``rope_scaling`` dict
    into fields (transformer_config.py:678-686): type -> position_embedding_type, factor ->
    rotary_scaling_factor (required), original_max_position_embeddings ->
    max_position_embeddings (else seq_length), every other item set as it is. The YaRN
    embedding is built from MLA fields only (training_graph/base_models/gpt/gpt_model.py:315-325
    reads qk_pos_emb_head_dim), so only MLA classes run it; what is not written takes
    MLATransformerConfig's defaults (transformer_config.py:854-869: factor 40, 4096, beta 32 / 1,
    mscale 0.707 / 0.707). cos/sin x g(factor, mscale) / g(factor, mscale_all_dim)
    (yarn_rotary_pos_embedding.py:91) and the MLA softmax scale x g(factor, mscale)^2 -
    mscale, not mscale_all_dim (training_graph/transformer/multi_latent_attention.py:124)."""
    knob = f"{view.model_path}.rope_scaling"
    if not builds_mla(view, cfg.model_class):
        why = (
            f"{cfg.model_class or 'this model'} is not built as MLA, and MindFormers' mcore YaRN "
            "reads the MLA head fields (gpt_model.py:315-325 @ f52743ca): the run fails"
        )
        return Value.unknown(knob, why), Value.unknown(knob, why)
    mla = view.comp("MLATransformerConfig", "model_config")
    label = mla.label if mla is not None else "MindFormers MLATransformerConfig"
    dflt = {
        "factor": 40.0,
        "original": 4096,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "mscale": 0.707,
        "mscale_all_dim": 0.707,
    }
    if mla is not None:
        fields = (("factor", "rotary_scaling_factor"), ("original", "max_position_embeddings"))
        for k, key in fields:
            dflt[k] = mla.defaults.get(key, dflt[k])
        for k in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim"):
            dflt[k] = mla.defaults.get(k, dflt[k])
    names = {
        "factor": ("factor", "rotary_scaling_factor"),
        "original": ("original_max_position_embeddings", "max_position_embeddings"),
    }
    p: dict[str, Value] = {}
    for k in dflt:
        in_dict, field = names.get(k, (k, k))
        if node is not None or hf is not None:
            if node is not None:
                child = node.value.get(in_dict) if node.is_map else None
                got = view.value(child, f"{knob}.{in_dict}") if child is not None else None
            else:
                got = (
                    src.model_copy(update={"value": hf[in_dict], "knob": f"rope_scaling.{in_dict}"})
                    if hf is not None and in_dict in hf
                    else None
                )
            if got is not None:
                p[k] = got
                continue
            if k == "factor":
                why = (
                    "rope_scaling has no factor: TransformerConfig pops it and stops "
                    "(transformer_config.py:681)"
                )
                return Value.unknown(knob, why), Value.unknown(knob, why)
            if k == "original":
                seq = cfg.structure.seq_length
                p[k] = Value.derived(
                    seq.value if seq is not None else None,
                    "seq_length",
                    "rope_scaling without original_max_position_embeddings takes seq_length "
                    "(transformer_config.py:682-683)",
                    [seq],
                )
                continue
        raw = view.mcore_raw(field)
        if raw is None:
            raw = Value.default(dflt[k], f"{view.model_path}.{field}", label)
        p[k] = raw
    return yarn(
        knob,
        "MindFormers mcore YaRN",
        p,
        "mscale",
        "MLA softmax scale x g(factor, mscale)^2 (multi_latent_attention.py:124)",
        extra=[src],
    )
