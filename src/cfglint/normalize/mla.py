"""Multi-latent attention's dimensions, as both sides' readers fill them."""

from __future__ import annotations

from cfglint.model.config import Structure
from cfglint.model.values import Value

# the Structure field of each dimension and its name in Megatron-LM's MLATransformerConfig
# and MindFormers' (parallel_core/transformer_config.py MLATransformerConfig, the same names)
MLA_DIMS: dict[str, str] = {
    "mla_q_lora_rank": "q_lora_rank",
    "mla_kv_lora_rank": "kv_lora_rank",
    "mla_qk_head_dim": "qk_head_dim",
    "mla_qk_pos_emb_head_dim": "qk_pos_emb_head_dim",
    "mla_v_head_dim": "v_head_dim",
}


def mla_on(s: Structure) -> bool:
    """Whether this side is known to build multi-latent attention: the dimensions apply."""
    mla = s.multi_latent_attention
    return mla is not None and mla.known and mla.value is True


def q_rank(v: Value) -> Value:
    """No query compression is None in Megatron-LM (multi_latent_attention.py: ``if
    self.config.q_lora_rank is None``) and 0 in MindFormers' legacy DeepSeek: both read 0."""
    if v.known and v.value is None:
        return v.model_copy(update={"value": 0})
    return v
