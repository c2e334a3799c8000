"""Multi-latent attention's dimensions compared (issue 30, STR033-STR038).

Excerpts are ours, restated from:
- MindFormers configs/deepseek3/pretrain_deepseek3_1b_8p_pynative.yaml @ mindformers-2.1.0.whl
  (model: q_lora_rank 1536, kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128,
  v_head_dim 192);
- MindFormers research/deepseek3/deepseek3_671b/pretrain_deepseek3_671b.yaml @ 1d7cbefc
  (legacy DeepseekV3Config, the same dimensions with v_head_dim 128);
- MindSpeed-LLM examples/mcore/deepseek3/pretrain_deepseek3_671b_4k_ptd.sh @ 015ce048
  (MLA_ARGS: --multi-head-latent-attention --qk-rope-head-dim 64 --qk-nope-head-dim 128
  --q-lora-rank 1536 --kv-lora-rank 512 --v-head-dim 128).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.check.pipeline import load_megatron_side, load_mindformers_side
from cfglint.cli import main

PYNATIVE = """\
training:
  steps: 10
  global_batch_size: 8
parallelism:
  tensor_parallel: 1
model:
  model_type: deepseek_v3
  architectures: DeepseekV3ForCausalLM
  vocab_size: 129280
  hidden_size: 1792
  num_hidden_layers: 16
  num_attention_heads: 4
  multi_latent_attention: True
  kv_lora_rank: 512
  q_lora_rank: 1536
  qk_rope_head_dim: 64
  v_head_dim: 192
  qk_nope_head_dim: 128
"""

LEGACY = """\
run_mode: 'train'
trainer:
  type: CausalLanguageModelingTrainer
model:
  model_config:
    type: DeepseekV3Config
    seq_length: 4096
    hidden_size: 7168
    num_layers: 61
    num_heads: 128
    kv_lora_rank: 512
    n_kv_heads: 128
    q_lora_rank: 1536
    qk_rope_head_dim: 64
    v_head_dim: 128
    qk_nope_head_dim: 128
    vocab_size: 129280
  arch:
    type: DeepseekV3ForCausalLM
"""

MLA_ARGS = """\
    --multi-head-latent-attention \\
    --qk-rope-head-dim 64 \\
    --qk-nope-head-dim 128 \\
    --q-lora-rank 1536 \\
    --kv-lora-rank 512 \\
    --v-head-dim 128 \\
    --qk-layernorm \\
"""

MSL = """\
#!/bin/bash
MLA_ARGS="
{mla}"
GPT_ARGS="
    --use-mcore-models \\
    --num-layers 61 \\
    --hidden-size 7168 \\
    --num-attention-heads 128 \\
    --seq-length 4096 \\
    --vocab-size 129280 \\
    --position-embedding-type rope \\
    --bf16
"
python -m torch.distributed.launch pretrain_gpt.py $GPT_ARGS $MLA_ARGS
"""

MLA_RULES = ("STR033", "STR034", "STR035", "STR036", "STR037", "STR038")


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], mf: str, mla: str = MLA_ARGS) -> str:
    a, b = tmp_path / "mf.yaml", tmp_path / "msl.sh"
    a.write_text(mf)
    b.write_text(MSL.format(mla=mla))
    main([str(a), "--megatron", str(b), "--select", ",".join(MLA_RULES), "-v"])
    return capsys.readouterr().out


def test_the_pynative_value_head_size_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run(tmp_path, capsys, PYNATIVE)
    assert "STR038" in out and "192" in out and "128" in out
    assert "model.v_head_dim" in out and "--v-head-dim" in out
    for rid in ("STR033", "STR034", "STR035", "STR036", "STR037"):
        assert f"{rid} " not in out.split("Not checked")[0]


def test_equal_dimensions_in_a_legacy_config_give_no_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _run(tmp_path, capsys, LEGACY)
    assert not any(f"{rid} " in out.split("Not checked")[0] for rid in MLA_RULES)


def test_the_forks_spellings_and_the_legacy_keys_are_read(tmp_path: Path) -> None:
    a, b = tmp_path / "mf.yaml", tmp_path / "msl.sh"
    a.write_text(LEGACY)
    b.write_text(MSL.format(mla=MLA_ARGS))
    mf, mg = load_mindformers_side(str(a)), load_megatron_side(str(b))
    got = {
        f: (getattr(mf.structure, f).value, getattr(mg.structure, f).value)
        for f in ("mla_qk_head_dim", "mla_qk_pos_emb_head_dim", "mla_v_head_dim")
    }
    assert got == {
        "mla_qk_head_dim": (128, 128),
        "mla_qk_pos_emb_head_dim": (64, 64),
        "mla_v_head_dim": (128, 128),
    }
    assert mf.structure.mla_qk_head_dim.knob == "model.model_config.qk_nope_head_dim"
    assert mg.structure.mla_qk_pos_emb_head_dim.knob == "--qk-rope-head-dim"


def test_mla_on_one_side_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(tmp_path, capsys, LEGACY, mla="    --qk-layernorm \\\n")
    head = out.split("Not checked")[0]
    assert "STR033" in head
    # without MLA on the Megatron side its dimensions do not apply: no dimension row
    assert not any(f"{rid} " in head for rid in MLA_RULES[1:])


def test_unwritten_dimensions_take_each_sides_own_defaults(tmp_path: Path) -> None:
    """MindFormers mcore: the class's, then MLATransformerConfig's (q_lora_rank 512 there,
    DeepseekV3Config's 1536 first); Megatron-LM core: its parser's (q_lora_rank None: no
    query compression; kv_lora_rank 32, arguments.py @ core_v0.19.0)."""
    bare = "\n".join(
        line for line in PYNATIVE.splitlines() if "lora" not in line and "head_dim" not in line
    )
    a = tmp_path / "mf.yaml"
    a.write_text(bare + "\n")
    s = load_mindformers_side(str(a)).structure
    assert s.mla_v_head_dim is not None and s.mla_v_head_dim.origin.value == "default"
    b = tmp_path / "args.txt"
    b.write_text(
        "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --multi-latent-attention\n"
    )
    g = load_megatron_side(str(b)).structure
    assert (g.mla_q_lora_rank.value, g.mla_kv_lora_rank.value) == (0, 32)
    assert g.mla_q_lora_rank.origin.value == "default"


def test_no_mla_leaves_the_dimensions_empty(tmp_path: Path) -> None:
    b = tmp_path / "args.txt"
    b.write_text("--num-layers 2 --hidden-size 64 --num-attention-heads 4 --v-head-dim 96\n")
    g = load_megatron_side(str(b)).structure
    assert g.mla_v_head_dim is None


def test_mindspeed_2_1_spellings_and_its_none_defaults(tmp_path: Path) -> None:
    """MindSpeed 2.1.0 (core_r0.8.0, no --multi-latent-attention): --multi-head-latent-attention
    is MLA's switch and its dimensions default to None (mindspeed/arguments.py:87-93 @
    1e898a29): an unwritten one is not decided, never upstream's 128."""
    b = tmp_path / "msl.sh"
    b.write_text(MSL.format(mla=MLA_ARGS.replace("    --v-head-dim 128 \\\n", "")))
    s = load_megatron_side(str(b), "mindspeed-llm-2.1.0").structure
    assert s.multi_latent_attention.value is True
    assert s.mla_qk_head_dim.value == 128 and s.mla_qk_head_dim.knob == "--qk-nope-head-dim"
    assert not s.mla_v_head_dim.known and "no default" in s.mla_v_head_dim.detail


def test_no_query_compression_reads_the_same_on_both_sides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Megatron-LM's q_lora_rank None and MindFormers' 0 both mean uncompressed queries."""
    out = _run(
        tmp_path,
        capsys,
        LEGACY.replace("q_lora_rank: 1536", "q_lora_rank: 0"),
        MLA_ARGS.replace("    --q-lora-rank 1536 \\\n", ""),
    )
    assert "STR034 " not in out.split("Not checked")[0]
    mf = load_mindformers_side(str(tmp_path / "mf.yaml")).structure.mla_q_lora_rank
    mg = load_megatron_side(str(tmp_path / "msl.sh")).structure.mla_q_lora_rank
    assert (mf.value, mg.value) == (0, 0) and mf.known and mg.known
