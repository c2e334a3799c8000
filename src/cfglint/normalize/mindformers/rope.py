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
from cfglint.normalize.mindformers.view import MFView, fixed
from cfglint.normalize.rope import spell

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


def _mcore(view: MFView, cfg: Config) -> None:
    s = cfg.structure
    s.rope_interleaved = view.mcore_field("rotary_interleaved", "bool")
    node = view.node(f"{view.model_path}.rope_scaling")
    if node is not None and isinstance(node.plain(), dict):
        d = node.plain()
        kind = str(d.get("rope_type") or d.get("type") or "none")
        s.rope_scaling = view.value(node, f"{view.model_path}.rope_scaling").model_copy(
            update={"value": spell(kind, _params(d))}
        )
        return
    hf = view.hf.get("rope_scaling")
    if hf is not None:
        d = hf.value if isinstance(hf.value, dict) else {}
        kind = str(d.get("rope_type") or d.get("type") or "none")
        s.rope_scaling = hf.model_copy(update={"value": spell(kind, _params(d))})
        return
    pe = s.position_embedding_type
    if pe is not None and pe.known and pe.value in ("yarn", "llama3"):
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
