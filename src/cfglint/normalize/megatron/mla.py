"""Multi-latent attention's dimensions of a Megatron-LM / MindSpeed-LLM / PAI-Megatron-Patch
run, each from the parser the job runs (its table), never from another project's default."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.mla import MLA_DIMS, mla_on, q_rank

# a dimension's dests: Megatron-LM's (megatron/training/arguments.py @ core_v0.19.0, the
# parser's defaults go into MLATransformerConfig), then the forks' older spellings:
# MindSpeed-LLM's deprecated --qk-nope-head-dim / --qk-rope-head-dim (validate_args copies
# them onto --qk-head-dim / --qk-pos-emb-head-dim, deprecated_args.py @ v26.1.0) and
# MindSpeed 2.1.0's own --qk-nope-head-dim / --qk-rope-head-dim (mindspeed/arguments.py:92-93
# @ 1e898a29)
_FORK_DESTS: dict[str, tuple[str, ...]] = {
    "qk_head_dim": ("deprecated_qk_nope_head_dim", "qk_nope_head_dim"),
    "qk_pos_emb_head_dim": ("deprecated_qk_rope_head_dim", "qk_rope_head_dim"),
}


def read_mla(m: MegatronInput, cfg: Config) -> None:
    s = cfg.structure
    if not mla_on(s):
        return
    for field, name in MLA_DIMS.items():
        v = _dim(m, (name, *_FORK_DESTS.get(name, ())))
        if name == "q_lora_rank":
            v = q_rank(v)
        elif v.known and v.value is None:
            # MindSpeed 2.1.0's dimensions default to None (mindspeed/arguments.py:89-93 @
            # 1e898a29): what the model then builds is its code's, which cfglint has not read
            v = Value.unknown(
                v.knob, f"not set, and {m.table.label}'s parser gives it no default (None)"
            )
        setattr(s, field, v)


def _dim(m: MegatronInput, dests: tuple[str, ...]) -> Value:
    """The written spelling, else the first the parser has (its default, or "not decided"
    where the parser was not read)."""
    dest = next((d for d in dests if d in m.values), None) or next(
        (d for d in dests if d in m.table.by_dest), None
    )
    if dest is None:
        return Value.unknown(
            f"--{dests[0].replace('_', '-')}",
            f"{m.table.label} has no such flag: its multi-latent attention is not modelled",
        )
    return m.arg(dest)
