"""DeepSeek-V4's mHC and DSA-indexer settings of a MindFormers (mcore or pynative) config:
the key as written (under either name the release's converter accepts), else the model
class's default, else TransformerConfig's where the release states one
(parallel_core/transformer_config.py @ mindformers-2.1.0.whl)."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.dsv4 import CSA_ON, INDEXER_DIMS, is_on
from cfglint.normalize.mindformers.view import MFView

_TC = "MindFormers TransformerConfig (parallel_core/transformer_config.py @ mindformers-2.1.0.whl"
# each field's keys: the DeepSeek (config.json) name, then TransformerConfig's
# (models/deepseek4/config_converter_deepseek_v4.py:63-69 and
# parallel_core/transformer_config_utils.py:289-292 @ mindformers-2.1.0.whl)
_KEYS: dict[str, tuple[str, ...]] = {
    "hyper_connections": ("enable_hyper_connections",),
    "hc_streams": ("hc_mult", "num_residual_streams"),
    "indexer_heads": ("index_n_heads", "dsa_indexer_n_heads"),
    "indexer_head_dim": ("index_head_dim", "dsa_indexer_head_dim"),
    "indexer_topk": ("index_topk", "dsa_indexer_topk"),
    "indexer_loss_coeff": ("dsa_indexer_loss_coeff",),
}
# the indexer is built for these attention variants: DSAIndexer and V4's CSAIndexer
# (pynative/base_models/gpt/experimental_attention_variant_module_specs.py:92-110, 126-183)
_INDEXED_VARIANTS = ("dsa", "dsv4_hybrid")


def read_dsv4(view: MFView, cfg: Config) -> None:
    if not view.mcore:
        return  # the legacy classes build neither; their code was not read for it
    s = cfg.structure
    # default False: transformer_config.py:2187-2195; a release without the field has no mHC
    no_hc = f"{_TC}:2187; a release without the field builds no mHC)"
    s.hyper_connections = _read(view, "hyper_connections", "bool", (False, no_hc))
    if is_on(s, "hyper_connections"):
        s.hc_streams = _read(view, "hc_streams", "int", (4, f"{_TC}:2210)"))
    variant = _variant(view)
    s.dsa_indexer = _indexer_on(variant)
    s.csa_compression = _csa(view, variant)
    if is_on(s, "dsa_indexer"):
        for field in INDEXER_DIMS:
            # TransformerConfig's defaults are None (transformer_config.py:1451-1480, 1593):
            # what the model then builds was not read
            setattr(s, field, _read(view, field, "float" if "coeff" in field else "int", None))


def _read(view: MFView, field: str, kind: str, tc: tuple[object, str] | None) -> Value:
    keys = _KEYS[field]
    for k in keys:
        v = view.mcore_raw(k, kind)
        if v is not None:
            return v
    knob = f"{view.model_path}.{keys[0]}"
    if view.hf_missing:
        return Value.unknown(knob, view.hf_missing)
    for k in keys:
        v = view.class_default(k, kind)
        if v.known:
            return v.model_copy(update={"knob": knob})
    if tc is None:
        return Value.unknown(knob, f"not set, and {_TC}) gives it no default (None)")
    return Value.default(tc[0], knob=knob, source=tc[1])


def _indexer_on(variant: Value) -> Value:
    if not variant.known:
        return variant
    return Value.derived(
        variant.value in _INDEXED_VARIANTS,
        variant.knob,
        "the sparse-attention indexer is built for attention variants dsa and dsv4_hybrid",
        [variant],
    )


def _csa(view: MFView, variant: Value) -> Value:
    """On where the config compresses attention: V4's hybrid variant (the CSA indexer and
    compressor, experimental_attention_variant_module_specs.py:126-183 @ 2.1.0) or written
    compress_ratios."""
    ratios = view.mcore_raw("compress_ratios", "str")
    if ratios is not None:
        return Value.derived(True, ratios.knob, CSA_ON, [ratios])
    if not variant.known:
        return variant
    on = variant.value == "dsv4_hybrid"
    how = CSA_ON if on else "no compressed attention without dsv4_hybrid"
    return Value.derived(on, variant.knob, how, [variant])


def _variant(view: MFView) -> Value:
    v = view.mcore_raw("experimental_attention_variant", "str")
    if v is not None:
        return v
    knob = f"{view.model_path}.experimental_attention_variant"
    if view.hf_missing:
        return Value.unknown(knob, view.hf_missing)
    v = view.class_default("experimental_attention_variant", "str")
    if v.known:
        return v
    # transformer_config.py:1440-1449: None, no attention variant
    return Value.default(None, knob=knob, source=f"{_TC}:1440)")
