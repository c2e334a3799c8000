"""Published architectures of well-known models, and what a config claims to be."""

from __future__ import annotations

import os
from typing import Any

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.published import longest_alias

# depth and context length are shrunk on purpose in alignment runs; not compared
FIELDS = {
    "hidden_size": "structure.hidden_size",
    "num_heads": "structure.num_heads",
    "num_query_groups": "structure.num_query_groups",
    "ffn_hidden_size": "structure.ffn_hidden_size",
    "vocab_size": "structure.vocab_size",
    "norm_epsilon": "structure.norm_epsilon",
    "rope_theta": "structure.rope_theta",
    "tied_embeddings": "structure.tied_embeddings",
    "add_qkv_bias": "structure.add_qkv_bias",
    "activation": "structure.activation",
    "normalization": "structure.normalization",
    "qk_norm": "structure.qk_norm",
    "num_experts": "moe.num_experts",
    "router_topk": "moe.router_topk",
    "expert_ffn_size": "moe.expert_ffn_size",
    "first_k_dense": "moe.first_k_dense",
}


def _names(cfg: Config) -> list[tuple[str, str]]:
    """(text, where) that may name the model: file name, checkpoint, model type, tokenizer."""
    out = [(os.path.basename(cfg.path), f"file name {os.path.basename(cfg.path)}")]
    for v in (cfg.weight.load_checkpoint, cfg.other.tokenizer_path):
        if v is not None and v.known and isinstance(v.value, str) and v.value:
            out.append((os.path.basename(v.value.rstrip("/")), v.brief()))
    if cfg.model_class:
        out.append((cfg.model_class, "model class"))
    return out


def claimed_model(cfg: Config) -> tuple[dict[str, Any] | None, str]:
    best: tuple[int, dict[str, Any], str] | None = None
    for text, where in _names(cfg):
        found = longest_alias(text)
        if found is not None and (best is None or found[0] > best[0]):
            best = (found[0], found[1], f"{found[2]!r} in {where}")
    if best is None:
        return None, "does not name a published model cfglint knows"
    return best[1], best[2]


def differences(cfg: Config, ref: dict[str, Any]) -> list[tuple[str, Value, Any]]:
    out = []
    for key, path in FIELDS.items():
        if key not in ref:
            continue
        mine = cfg.get(path)
        if mine is None or not mine.known or mine.value is None:
            continue
        a, b = mine.value, ref[key]
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            same = abs(a - b) <= 1e-6 * max(abs(a), abs(b))
        else:
            same = str(a).lower() == str(b).lower()
        if not same:
            out.append((key.replace("_", " "), mine, b))
    return out
