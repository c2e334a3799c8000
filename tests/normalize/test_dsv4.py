"""DeepSeek-V4's hyper-connections and sparse-attention indexer compared (issue 30,
STR039-STR045).

Excerpts are ours, restated from:
- MindFormers configs/deepseek4/pretrain_deepseek4_flash.yaml @ mindformers-2.1.0.whl (model:
  enable_hyper_connections True, num_residual_streams 4, index_n_heads 64, index_head_dim
  128, index_topk 512, dsa_indexer_loss_coeff 1.0, experimental_attention_variant dsv4_hybrid);
- MindSpeed-LLM examples/mcore/deepseek4_flash/pretrain_deepseek4_flash_4k_A3_ptd.sh @ c77308a1
  (--enable-mhc --hc-mult 4 --enable-dsa-indexer --index-n-heads 64 --index-head-dim 128
  --index-topk 512 --indexer-loss-coeff 1.0).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.check.pipeline import load_megatron_side, load_mindformers_side
from cfglint.cli import main

MF = """\
training:
  steps: 10
  global_batch_size: 8
parallelism:
  tensor_parallel: 1
model:
  model_type: deepseek_v4
  architectures: DeepseekV4ForCausalLM
  vocab_size: 129280
  hidden_size: 4096
  num_hidden_layers: 43
  num_attention_heads: 64
  multi_latent_attention: True
{hc}
  index_n_heads: 64
  index_head_dim: 128
  index_topk: 512
{coeff}
  experimental_attention_variant: dsv4_hybrid
"""
HC = "  enable_hyper_connections: True\n  num_residual_streams: 4"
COEFF = "  dsa_indexer_loss_coeff: 1.0"

DSV4_ARGS = """\
    --enable-mhc \\
    --hc-mult 4 \\
    --enable-dsa-indexer \\
    --index-n-heads 64 \\
    --index-head-dim 128 \\
    --index-topk 512 \\
    --indexer-loss-coeff {coeff} \\
"""

MSL = """\
#!/bin/bash
DSV4_ARGS="
{args}"
GPT_ARGS="
    --use-mcore-models \\
    --num-layers 43 \\
    --hidden-size 4096 \\
    --num-attention-heads 64 \\
    --seq-length 4096 \\
    --vocab-size 129280 \\
    --bf16
"
python -m torch.distributed.launch pretrain_gpt.py $GPT_ARGS $DSV4_ARGS
"""

RULES = ("STR039", "STR040", "STR041", "STR042", "STR043", "STR044", "STR045")


def _write(tmp_path: Path, hc: str, coeff: str, args: str) -> tuple[Path, Path]:
    a, b = tmp_path / "mf.yaml", tmp_path / "msl.sh"
    a.write_text(MF.format(hc=hc, coeff=coeff))
    b.write_text(MSL.format(args=args))
    return a, b


def _run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    hc: str = HC,
    coeff: str = COEFF,
    args: str = DSV4_ARGS.format(coeff="1.0"),
    extra: tuple[str, ...] = (),
) -> tuple[str, str]:
    """The findings part and the "Not checked" part of the report, whitespace folded."""
    a, b = _write(tmp_path, hc, coeff, args)
    main([str(a), "--megatron", str(b), "--select", ",".join(RULES), "-v", *extra])
    out = " ".join(capsys.readouterr().out.split())
    found, _, unchecked = out.partition("Not checked")
    return found, unchecked


def test_both_sides_read_every_setting(tmp_path: Path) -> None:
    a, b = _write(tmp_path, HC, COEFF, DSV4_ARGS.format(coeff="1.0"))
    for cfg in (load_mindformers_side(str(a)), load_megatron_side(str(b))):
        s = cfg.structure
        got = {
            f: getattr(s, f).value
            for f in (
                "hyper_connections",
                "hc_streams",
                "dsa_indexer",
                "indexer_heads",
                "indexer_head_dim",
                "indexer_topk",
                "indexer_loss_coeff",
            )
        }
        assert got == {
            "hyper_connections": True,
            "hc_streams": 4,
            "dsa_indexer": True,
            "indexer_heads": 64,
            "indexer_head_dim": 128,
            "indexer_topk": 512,
            "indexer_loss_coeff": 1.0,
        }


def test_equal_streams_and_indexer_give_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found, unchecked = _run(tmp_path, capsys)
    for rid in RULES:
        assert f"{rid} " not in found
        assert rid not in unchecked


def test_a_differing_indexer_loss_coefficient_is_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found, _ = _run(tmp_path, capsys, args=DSV4_ARGS.format(coeff="0.5"))
    assert "STR045" in found and "1.0" in found and "0.5" in found
    assert "model.dsa_indexer_loss_coeff" in found and "--indexer-loss-coeff" in found


def test_an_unwritten_indexer_loss_coefficient_is_not_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """TransformerConfig's dsa_indexer_loss_coeff defaults to None (transformer_config.py:1593
    @ mindformers-2.1.0.whl) and the class gives none: no guessed 1.0."""
    found, unchecked = _run(tmp_path, capsys, coeff="", args=DSV4_ARGS.format(coeff="0.5"))
    assert "STR045 " not in found
    assert "STR045" in unchecked and "no default" in unchecked


def test_megatron_without_mhc_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = DSV4_ARGS.format(coeff="1.0").replace("    --enable-mhc \\\n", "")
    found, _ = _run(tmp_path, capsys, args=args)
    assert "STR039" in found and "--enable-mhc" in found
    # the stream count applies only where both build mHC
    assert "STR040 " not in found


def test_the_class_turns_mhc_on_where_the_key_is_unwritten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """DeepseekV4Config's enable_hyper_connections=True (models/deepseek4/
    configuration_deepseek_v4.py:212 @ mindformers-2.1.0.whl): no key is no plain residual at
    that release; a release without the class (v1.9.0) says otherwise, so unnamed it is not
    decided."""
    args = DSV4_ARGS.format(coeff="1.0").replace("    --enable-mhc \\\n", "")
    found, _ = _run(tmp_path, capsys, hc="", args=args, extra=("--mindformers-version", "v2.1.0"))
    assert "STR039" in found and "True" in found and "False" in found
    found, unchecked = _run(tmp_path, capsys, hc="", args=args)
    assert "STR039 " not in found and "STR039" in unchecked and "disagree" in unchecked


def test_mindformers_mhc_off_is_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found, _ = _run(tmp_path, capsys, hc="  enable_hyper_connections: False")
    assert "STR039" in found and "model.enable_hyper_connections" in found


CORE = """\
#!/bin/bash
torchrun pretrain_gpt.py --use-mcore-models --num-layers 4 --hidden-size 1024 \\
    --num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 --bf16 {dsa}
"""


def test_upstream_megatron_is_read_not_left_unknown(tmp_path: Path) -> None:
    """Upstream Megatron-LM has no hyper-connections at core_v0.19.0 (no mHC code under
    megatron/ at 5be9626), and builds the DSA indexer only with --experimental-attention-variant
    dsa (arguments.py:3409 @ core_v0.19.0): both read, not "not decided"."""
    plain = tmp_path / "plain.sh"
    plain.write_text(CORE.format(dsa=""))
    s = load_megatron_side(str(plain), version="core_v0.19.0").structure
    assert (s.hyper_connections.value, s.dsa_indexer.value) == (False, False)
    assert s.hyper_connections.known and s.dsa_indexer.known
    dsa = tmp_path / "dsa.sh"
    dsa.write_text(
        CORE.format(
            dsa="--experimental-attention-variant dsa --dsa-indexer-n-heads 64 "
            "--dsa-indexer-head-dim 128 --dsa-indexer-topk 2048"
        )
    )
    s = load_megatron_side(str(dsa), version="core_v0.19.0").structure
    assert s.dsa_indexer.value is True
    assert (s.indexer_heads.value, s.indexer_head_dim.value, s.indexer_topk.value) == (
        64,
        128,
        2048,
    )
