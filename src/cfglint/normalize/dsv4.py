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
