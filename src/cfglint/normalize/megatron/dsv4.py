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


def read_dsv4(m: MegatronInput, cfg: Config) -> None:
    s = cfg.structure
    s.hyper_connections = _flag(m, _HC["hyper_connections"])
    if is_on(s, "hyper_connections"):
        s.hc_streams = _flag(m, _HC["hc_streams"])
    s.dsa_indexer = _flag(m, "enable_dsa_indexer")
    if is_on(s, "dsa_indexer"):
        for field, dest in _INDEXER.items():
            setattr(s, field, _flag(m, dest))


def _flag(m: MegatronInput, dest: str) -> Value:
    if dest in m.values or dest in m.table.by_dest:
        return m.arg(dest)
    return Value.unknown(
        f"--{dest.replace('_', '-')}",
        f"{m.table.label} has no such flag: how it builds DeepSeek-V4's structures is not modelled",
    )
