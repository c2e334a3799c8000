"""A --position-embedding-type choice a fork adds for a rotary embedding of its own is not
decided, never compared as a different embedding (a false STR020 on the DeepSeek-V4 flash
pair, bench/mf_release_sweep.md "pynative configs").

Excerpt ours, from MindSpeed-LLM examples/mcore/deepseek4_flash/
pretrain_deepseek4_flash_4k_A3_ptd.sh @ c77308a1: ``--position-embedding-type deepseek4``
builds apply_deepseek4_rotary_embedding (mindspeed_llm/core/models/deepseek4/
deepseek4_model.py:126-127 @ c77308a1).
"""

from __future__ import annotations

from pathlib import Path

from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron

ARGS = (
    "--num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 4096 "
    "--max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 8 "
    "--multi-latent-attention --position-embedding-type {pe}\n"
)


def _pe(tmp_path: Path, pe: str):  # type: ignore[no-untyped-def]
    p = tmp_path / f"{pe}.txt"
    p.write_text(ARGS.format(pe=pe))
    return normalize_megatron(load_megatron(str(p))).structure.position_embedding_type


def test_a_forks_own_rotary_type_is_not_decided(tmp_path: Path) -> None:
    v = _pe(tmp_path, "deepseek4")
    assert not v.known and "deepseek4_model.py" in v.detail


def test_plain_rope_is_still_read(tmp_path: Path) -> None:
    assert _pe(tmp_path, "rope").value == "rope"


def test_its_rotation_dtype_is_not_decided_either(tmp_path: Path) -> None:
    # MindSpeed's "casts cos/sin to the query's dtype" is its RoPE's, not the fork's own
    p = tmp_path / "ds4.txt"
    p.write_text(ARGS.format(pe="deepseek4").replace("\n", " --bf16\n"))
    v = normalize_megatron(load_megatron(str(p))).precision.rotary_dtype
    assert v is None or not v.known
