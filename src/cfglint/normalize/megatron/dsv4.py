"""DeepSeek-V4's mHC and DSA-indexer settings of a Megatron-family run, each from the parser
the job runs (its table). A table without the flag leaves the value not decided: cfglint
has not read how that fork builds (or does not build) the structure."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.dsv4 import is_on
from cfglint.normalize.megatron.input import MegatronInput

# MindSpeed-LLM's dests (mindspeed_llm/features_manager/transformer/mhc_feature.py:11-12 and
# multi_latent_attention/dsa_indexer_feature.py:12-24 @ c77308a1; data/mindspeed_llm.yaml)
_HC = {"hyper_connections": "enable_mhc", "hc_streams": "hc_mult"}
_INDEXER = {
    "indexer_heads": "index_n_heads",
    "indexer_head_dim": "index_head_dim",
    "indexer_topk": "index_topk",
    "indexer_loss_coeff": "indexer_loss_coeff",
}


# upstream Megatron-LM at the recorded releases: no hyper-connections anywhere under megatron/
# (`git grep -i "hyper_conn\|hc_mult\|mhc"` finds nothing at core_v0.19.0 5be9626); its DSA
# indexer is `--experimental-attention-variant dsa` with the `--dsa-indexer-*` flags
# (megatron/training/arguments.py:3409 @ core_v0.19.0)
_CORE_INDEXER = {
    "indexer_heads": "dsa_indexer_n_heads",
    "indexer_head_dim": "dsa_indexer_head_dim",
    "indexer_topk": "dsa_indexer_topk",
    "indexer_loss_coeff": "dsa_indexer_loss_coeff",
}


def read_dsv4(m: MegatronInput, cfg: Config) -> None:
    if m.dialect is not None and m.dialect.kind == "megatron-lm":
        _read_upstream(m, cfg)
        return
    s = cfg.structure
    s.hyper_connections = _flag(m, _HC["hyper_connections"])
    if is_on(s, "hyper_connections"):
        s.hc_streams = _flag(m, _HC["hc_streams"])
    s.dsa_indexer = _flag(m, "enable_dsa_indexer")
    if is_on(s, "dsa_indexer"):
        for field, dest in _INDEXER.items():
            setattr(s, field, _flag(m, dest))


def _read_upstream(m: MegatronInput, cfg: Config) -> None:
    s = cfg.structure
    s.hyper_connections = Value.default(
        False, "hyper-connections", f"{m.table.label} (it has no hyper-connections)"
    )
    variant = _flag(m, "experimental_attention_variant")
    s.dsa_indexer = Value.derived(
        variant.value == "dsa" if variant.known else None,
        "--experimental-attention-variant",
        "on where the attention variant is dsa",
        [variant],
    )
    if is_on(s, "dsa_indexer"):
        for field, dest in _CORE_INDEXER.items():
            setattr(s, field, _flag(m, dest))


def _flag(m: MegatronInput, dest: str) -> Value:
    if dest in m.values or dest in m.table.by_dest:
        return m.arg(dest)
    return Value.unknown(
        f"--{dest.replace('_', '-')}",
        f"{m.table.label} has no such flag: how it builds DeepSeek-V4's structures is not modelled",
    )
