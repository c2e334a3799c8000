"""DeepSeek-V4's structures as both sides' readers fill them: manifold-constrained
hyper-connections (mHC) and the sparse-attention indexer (DSA / CSA)."""

from __future__ import annotations

from cfglint.model.config import Structure

# the Structure field of each indexer setting, set only where the indexer is on
INDEXER_DIMS: tuple[str, ...] = (
    "indexer_heads",
    "indexer_head_dim",
    "indexer_topk",
    "indexer_loss_coeff",
)


def is_on(s: Structure, field: str) -> bool:
    """Whether this side is known to build the structure ``field`` switches on."""
    v = getattr(s, field)
    return v is not None and v.known and v.value is True


# what STR046 leaves out: the per-layer ratios differ in length between the frameworks (MTP
# layers; MindSpeed-LLM's converter trims trailing zeros,
# tasks/checkpoint/convert_ckpt_deepseek4.py:62 @ c77308a1), which is not modelled
CSA_ON = "compressed sparse attention is built (the per-layer ratios are not compared)"
