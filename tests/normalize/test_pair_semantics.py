"""Issue 18: pair semantics that held-out real pairs showed missed or wrong.

Each test pairs a real file (a MindFormers config of ../shared/corpus read in place, or a
realpairs fixture restating one) with a small fixture in our own words that reproduces the
pattern of the other side's real file (fixtures/pairsem/, each naming its source).
"""

from __future__ import annotations

from pathlib import Path

from cfglint.check.pipeline import Options, lint
from cfglint.model.findings import Report
from conftest import FIXTURES, need_shared

PAIRSEM = FIXTURES / "pairsem"


def _lint(mf: Path | str, mg: Path | str, profile: str = "default") -> Report:
    report, _ = lint(Options(mindformers=[str(mf)], megatron=str(mg), profile=profile))
    return report


def _rules(report: Report) -> set[str]:
    return {f.rule for f in report.findings}


def _finding(report: Report, rule: str):  # type: ignore[no-untyped-def]
    hits = [f for f in report.findings if f.rule == rule]
    assert hits, f"{rule} not raised: {sorted(_rules(report))}"
    return hits[0]


def _edited(src: Path, tmp: Path, old: str, new: str) -> Path:
    dst = tmp / src.name
    text = src.read_text()
    assert old in text, f"{old!r} not in {src}"
    dst.write_text(text.replace(old, new, 1))
    return dst


# -- legacy Qwen2-MoE against MindSpeed-LLM softmax_topk (cases 2 and 6) -----------------------
QWEN2_MOE = ("research__qwen2__pretrain_qwen2_57b.yaml",)


def test_softmax_topk_agrees_with_legacy_router_and_dropped_aux_loss() -> None:
    """The legacy LlamaForCausalLM MoE keeps the softmax probabilities of the top-k unscaled
    (norm_topk_prob False) and drops the router's aux loss; MindSpeed-LLM's softmax_topk
    routing keeps the full-softmax probabilities too (no --norm-topk-prob) and adds no aux
    loss whatever --moe-aux-loss-coeff says. Nothing about routing or balancing differs."""
    mf = need_shared("corpus", "mindformers", *QWEN2_MOE)
    r = _lint(mf, PAIRSEM / "qwen2_moe_softmax_topk.sh")
    assert not {"MOE014", "MOE015", "MOE016", "MOE017", "MOE020"} & _rules(r)


def test_aux_loss_on_one_side_only_is_a_load_balancing_finding(tmp_path: Path) -> None:
    """The same pair with MindSpeed-LLM running aux_loss: MindFormers adds no balancing loss
    at all, so the load-balancing row differs, not only the coefficient row."""
    mf = need_shared("corpus", "mindformers", *QWEN2_MOE)
    script = PAIRSEM / "qwen2_moe_softmax_topk.sh"
    mg = _edited(script, tmp_path, "BALANCE='softmax_topk'", "BALANCE=aux_loss")
    r = _lint(mf, mg)
    lb = _finding(r, "MOE017")
    assert lb.row == "moe.load_balancing"
    assert lb.values == {"mindformers": "none", "megatron": "aux_loss"}
    assert "return_extra_loss" in lb.message  # why MindFormers has none
    assert _finding(r, "MOE020").values == {"mindformers": 0.0, "megatron": 0.001}
    # aux_loss routing reads --moe-router-pre-softmax again: the top-k softmax sums to 1
    assert _finding(r, "MOE014").values == {"mindformers": False, "megatron": True}


def test_aux_loss_with_weight_zero_is_no_balancing(tmp_path: Path) -> None:
    mf = need_shared("corpus", "mindformers", *QWEN2_MOE)
    mg = _edited(
        PAIRSEM / "qwen2_moe_softmax_topk.sh",
        tmp_path,
        "--moe-aux-loss-coeff 0.001",
        "--moe-aux-loss-coeff 0.0",
    )
    text = mg.read_text().replace("BALANCE='softmax_topk'", "BALANCE=aux_loss")
    mg.write_text(text)
    assert not {"MOE017", "MOE020"} & _rules(_lint(mf, mg))


# -- one side random, the other loading (case 1) ---------------------------------------------
REALPAIRS = FIXTURES / "realpairs"


def test_mindformers_loading_against_megatron_random(tmp_path: Path) -> None:
    """MindFormers' published Llama-2 fine-tuning config loads '{path}/llama2_7b.ckpt'; the
    MindSpeed-LLM Llama-2 launch without --load starts from random weights."""
    mf = need_shared("corpus", "mindformers", "configs__llama2__run_llama2_7b_910b_finetune.yaml")
    script = REALPAIRS / "llama2_7b_pretrain_msl" / "megatron.sh"
    mg = _edited(script, tmp_path, "    --load $CKPT_LOAD_DIR \\\n", "")
    f = _finding(_lint(mf, mg), "ALN011")
    assert "MindFormers loads {path}/llama2_7b.ckpt" in f.message
    assert "MindSpeed-LLM starts from random initialization" in f.message
    # MindFormers has no "empty directory" way out: it refuses to start without the file
    assert "refuses to start" in f.message and "unless" not in f.message


# -- the same seed, one side shuffling its fine-tuning data (case 5) -------------------------
QWEN3_SFT = ("configs__qwen3__finetune_qwen3_32b_4k.yaml",)


def test_sft_data_read_in_order_against_shuffled() -> None:
    """MindFormers' Qwen3 fine-tuning config reads its HFDataLoader in order (shuffle: False);
    MindSpeed-LLM's instruction dataset shuffles with --seed unless --no-shuffle. Both seeds
    are 42, yet every step sees different samples."""
    mf = need_shared("corpus", "mindformers", *QWEN3_SFT)
    r = _lint(mf, PAIRSEM / "qwen3_32b_sft_msl.sh")
    assert "DET001" not in _rules(r)  # the seeds agree
    f = _finding(r, "DET008")
    assert f.values == {"mindformers": False, "megatron": True}
    assert "shuffles them with --seed" in f.message


def test_no_shuffle_on_both_sides_agrees(tmp_path: Path) -> None:
    mf = need_shared("corpus", "mindformers", *QWEN3_SFT)
    mg = _edited(PAIRSEM / "qwen3_32b_sft_msl.sh", tmp_path, "--seed 42", "--seed 42 --no-shuffle")
    assert "DET008" not in _rules(_lint(mf, mg))
    shuffled = _edited(Path(mf), tmp_path, "shuffle: False", "shuffle: True")
    f = _finding(_lint(shuffled, mg), "DET008")
    assert f.values == {"mindformers": True, "megatron": False}
    assert "reads the documents in order" in f.message


def test_mindrecord_default_is_shuffled(tmp_path: Path) -> None:
    """A MindDataset without a shuffle key shuffles (MindSpore's default shuffle=None)."""
    mf = need_shared("corpus", "mindformers", "research__qwen2_5__finetune_qwen2_5_7b_8k.yaml")
    cfg = _edited(mf, tmp_path, "    shuffle: True\n", "")
    from cfglint.normalize.mindformers.build import load_mindformers

    v = load_mindformers(str(cfg)).determinism.data_shuffle
    assert v.value is True and "MindDataset" in v.detail


# -- where the rotation runs (case 3) -------------------------------------------------------
def test_mindspeed_rotates_in_the_compute_dtype() -> None:
    """The Qwen3-30B-A3B pair restates MindSpeed-LLM's launch (--use-fused-rotary-pos-emb,
    --bf16): MindSpeed casts cos/sin to the bf16 query before its fused kernel, so against
    MindFormers' rotary_dtype float32 the rotation precision differs."""
    d = REALPAIRS / "qwen3_30b_a3b_pretrain_msl"
    r = _lint(d / "mindformers.yaml", d / "megatron.sh")
    f = _finding(r, "PRC004")
    assert f.values == {"mindformers": "float32", "megatron": "bfloat16"}
    assert "MindSpeed casts cos/sin" in f.message


def test_megatron_lm_fused_rope_rotates_in_float32(tmp_path: Path) -> None:
    """The Mixtral pair's Megatron-LM launch keeps the default TE fused RoPE (float32), as
    MindFormers' rotary_dtype float32 does; --no-rope-fusion sends it down the bf16 path."""
    d = REALPAIRS / "mixtral_8x7b_pretrain_mlm"
    assert "PRC004" not in _rules(_lint(d / "mindformers.yaml", d / "megatron.sh"))
    mg = _edited(d / "megatron.sh", tmp_path, "    --bf16\n", "    --bf16\n    --no-rope-fusion\n")
    f = _finding(_lint(d / "mindformers.yaml", mg), "PRC004")
    assert f.values == {"mindformers": "float32", "megatron": "bfloat16"}


# -- HF-style structure from the config class or the published config.json (case 4) ----------
def test_hf_style_eps_from_the_published_config_it_names(tmp_path: Path) -> None:
    """MindFormers' Qwen3-32B fine-tuning config (use_legacy: False) writes no rms_norm_eps:
    MindFormers reads it from pretrained_model_dir "/path/to/Qwen3-32B"/config.json, which
    for the published Qwen3-32B holds 1e-6. A MindSpeed-LLM launch without --norm-epsilon
    keeps Megatron's default 1e-5: the structure row differs."""
    mf = need_shared("corpus", "mindformers", *QWEN3_SFT)
    eps = "--norm-epsilon 1e-6 "
    mg = _edited(PAIRSEM / "qwen3_32b_sft_msl.sh", tmp_path, eps, "")
    f = _finding(_lint(mf, mg), "STR008")
    assert f.values == {"mindformers": 1e-6, "megatron": 1e-5}
    assert "published qwen3-32b config.json" in f.message
    # written as the published file says, the sides agree, and so do layers, heads and sizes
    r = _lint(mf, PAIRSEM / "qwen3_32b_sft_msl.sh")
    assert not {"STR001", "STR002", "STR003", "STR004", "STR005", "STR008"} & _rules(r)


def test_hf_style_eps_from_the_config_class(tmp_path: Path) -> None:
    """Without pretrained_model_dir the HF config class's default applies: Qwen3Config's
    rms_norm_eps 1e-6 (configuration_qwen3.py, data/mindformers.yaml)."""
    src = need_shared("corpus", "mindformers", "configs__qwen3__pretrain_qwen3_32b_4k.yaml")
    mf = _edited(src, tmp_path, "    rms_norm_eps: 1.e-6\n", "")
    mg = _edited(PAIRSEM / "qwen3_32b_sft_msl.sh", tmp_path, "--norm-epsilon 1e-6 ", "")
    f = _finding(_lint(mf, mg), "STR008")
    assert f.values == {"mindformers": 1e-6, "megatron": 1e-5}
    assert "Qwen3Config" in f.message


# -- the dataset seed of MindFormers' Megatron-dataset loader ------------------------------------
DENSE = FIXTURES / "pairs" / "llama2_dense"


def _dense_with(tmp_path: Path, old: str, new: str) -> Path:
    """The aligned dense pair's MindFormers side with its global seed 42 and one edit."""
    mf = _edited(DENSE / "llama2_7b_align.yaml", tmp_path, "seed: 1234\n", "seed: 42\n")
    return _edited(mf, tmp_path, old, new)


def test_loader_without_a_seed_key_orders_with_1234_not_the_global_seed(tmp_path: Path) -> None:
    """BlendedMegatronDatasetDataLoader passes ``config.get("seed", 1234)`` to GPTDataset
    (blended_megatron_dataloader.py:197): a run seeded 42 on both sides still orders its
    samples with 1234 on MindFormers when the loader's config has no seed."""
    mf = _dense_with(tmp_path, "      seed: 1234\n", "")
    mg = _edited(DENSE / "pretrain_llama2_align.sh", tmp_path, "--seed 1234", "--seed 42")
    r = _lint(mf, mg)
    assert "DET001" not in _rules(r)
    f = _finding(r, "DET007")
    assert "1234" in f.message and "42" in f.message, f.message


def test_random_seed_key_is_not_read_and_says_so(tmp_path: Path) -> None:
    """The DeepSeek-V3 recipe writes ``random_seed: 1234`` in the loader's config with a
    global seed of 0: the loader ignores the key and uses its default 1234, which is what
    Megatron's --seed 1234 orders with. The global seeds differ (DET001); the data order
    does not (no DET007), and the ignored key is an input warning."""
    mf = _dense_with(tmp_path, "      seed: 1234\n", "      random_seed: 7\n")
    r = _lint(mf, DENSE / "pretrain_llama2_align.sh")
    assert "DET001" in _rules(r)
    assert "DET007" not in _rules(r)
    assert any("random_seed" in w.message for w in r.warnings), r.warnings


# -- MindSpeed-LLM's --seq-aux (the DeepSeek-V3 recipe: routing type none, --seq-aux) ----------
QWEN3_MOE = FIXTURES / "pairs" / "qwen3_moe"


DEEPSEEK3 = ("research__deepseek3__deepseek3_671b__pretrain_deepseek3_671b.yaml",)


def _seq_aux_pair(tmp_path: Path, mg_flags: str, batch: int) -> Report:
    """The published DeepSeek-V3 MindFormers recipe (legacy TopkRouterV2, an "expert"
    balancing loss of 1e-4 over one sequence per micro-batch) against the aligned
    MindSpeed-LLM MoE script with routing type and flags ``mg_flags``, a 1e-4 weight and
    ``batch`` sequences per micro-batch."""
    mf = need_shared("corpus", "mindformers", *DEEPSEEK3)
    if batch != 1:
        mf = _edited(mf, tmp_path, "batch_size: 1\n", f"batch_size: {batch}\n")
    mg = _edited(
        QWEN3_MOE / "pretrain_qwen3_moe_align.sh",
        tmp_path,
        "--moe-router-load-balancing-type aux_loss \\\n    --moe-aux-loss-coeff 0 \\",
        f"--moe-router-load-balancing-type {mg_flags} \\\n    --moe-aux-loss-coeff 0.0001 \\",
    )
    mg = _edited(mg, tmp_path, "--micro-batch-size 2", f"--micro-batch-size {batch}")
    return _lint(mf, mg)


def test_seq_aux_on_routing_none_adds_the_loss(tmp_path: Path) -> None:
    """MindSpeed-LLM's none routing with --seq-aux adds the sequence-wise loss weighted by
    --moe-aux-loss-coeff (router.py:627-632 @ c77308a1); with one sequence per micro-batch it
    is the micro-batch loss MindFormers adds. Nothing about balancing differs (before: a
    false MOE020 error, "MindSpeed-LLM adds no loss")."""
    r = _seq_aux_pair(tmp_path, "none --seq-aux", batch=1)
    assert not {"MOE017", "MOE020"} & _rules(r), [f.message for f in r.findings]


def test_seq_aux_over_several_sequences_is_another_method(tmp_path: Path) -> None:
    """With two sequences per micro-batch the per-sequence loss is not the micro-batch one:
    the method differs (MOE017), the weights do not (no MOE020)."""
    r = _seq_aux_pair(tmp_path, "none --seq-aux", batch=2)
    f = _finding(r, "MOE017")
    assert "seq_aux_loss" in f.message and "--seq-aux" in f.message, f.message
    assert "MOE020" not in _rules(r)


def test_routing_none_without_seq_aux_adds_no_loss(tmp_path: Path) -> None:
    r = _seq_aux_pair(tmp_path, "none", batch=1)
    assert {"MOE017", "MOE020"} <= _rules(r)


# -- MindSpeed's --noop-layers (the DeepSeek-V3 recipe pads 61 layers to 64 with no-op ones) ---
def _noop_pair(tmp_path: Path, layers: int, noop: str) -> Report:
    mg = _edited(
        QWEN3_MOE / "pretrain_qwen3_moe_align.sh",
        tmp_path,
        "NUM_LAYERS=${NUM_LAYERS:-2}",
        f"NUM_LAYERS={layers}",
    )
    mg = _edited(
        mg,
        tmp_path,
        "--num-layers ${NUM_LAYERS} \\",
        f"--num-layers ${{NUM_LAYERS}} --noop-layers {noop} \\",
    )
    return _lint(QWEN3_MOE / "qwen3_moe_align.yaml", mg)


def test_noop_layers_do_not_count_as_layers(tmp_path: Path) -> None:
    """Two computing layers on each side: MindSpeed-LLM's four with layers 2 and 3 no-op
    (NoopTransformerLayer returns its input) are not a layer-count difference."""
    assert "STR001" not in _rules(_noop_pair(tmp_path, 4, "2,3"))


def test_noop_layers_listed_twice_count_once(tmp_path: Path) -> None:
    """MindSpeed keeps the no-op layer numbers as a set: "3,3" is one no-op layer, so four
    layers leave three computing ones against MindFormers' two."""
    f = _finding(_noop_pair(tmp_path, 4, "3,3"), "STR001")
    assert "3" in f.message and "no-op" in f.message, f.message


# -- document ends inside a packed sample (OTH012) ----------------------------------------------
def _unchecked(report: Report, row: str) -> str:
    return " ".join(reason for r, reason in report.not_checked if r == row)


def test_reset_attention_mask_is_undecided_outside_mindspeed(tmp_path: Path) -> None:
    """Upstream Megatron-LM builds the reset mask in the dataset, but a causal flash-attention
    kernel may never read it: not a finding, and the reason is said."""
    mg = _edited(
        DENSE / "pretrain_llama2_align.sh",
        tmp_path,
        "    --bf16\n",
        "    --bf16\n    --reset-attention-mask\n",
    )
    r = _lint(DENSE / "llama2_7b_align.yaml", mg)
    assert "OTH012" not in _rules(r)
    assert "attention implementation" in _unchecked(r, "other.data_check")


def test_reset_attention_mask_counts_in_mindspeed_llm(tmp_path: Path) -> None:
    """The packed Llama2-13B recipe's pattern: MindSpeed-LLM with --reset-attention-mask
    against a MindFormers side whose loader sets no boundary option."""
    mg = _edited(
        QWEN3_MOE / "pretrain_qwen3_moe_align.sh",
        tmp_path,
        "    --seed 1234 \\\n",
        "    --seed 1234 --reset-attention-mask \\\n",
    )
    f = _finding(_lint(QWEN3_MOE / "qwen3_moe_align.yaml", mg), "OTH012")
    assert "MindFormers none" in f.message and "attention stops at document ends" in f.message


def test_loader_option_reaching_the_model_by_position_is_undecided(tmp_path: Path) -> None:
    """The dense pair's legacy Llama config has a loss_mask column but no construct_args_key:
    the columns reach LlamaForCausalLM.construct by position, so whether eod_mask_loss takes
    effect is not decided."""
    mf = _edited(
        DENSE / "llama2_7b_align.yaml",
        tmp_path,
        "      pad: 0\n",
        "      pad: 0\n      eod_mask_loss: True\n",
    )
    r = _lint(mf, DENSE / "pretrain_llama2_align.sh")
    assert "OTH012" not in _rules(r)
    assert "by position" in _unchecked(r, "other.data_check")


def test_loader_option_without_its_column_does_nothing(tmp_path: Path) -> None:
    """reset_position_ids builds position ids the dataset never hands over when position_ids
    is not a column: the model's positions run on, as on the Megatron side."""
    mf = _edited(
        DENSE / "llama2_7b_align.yaml",
        tmp_path,
        "      pad: 0\n",
        "      pad: 0\n      reset_position_ids: True\n",
    )
    mf = _edited(mf, tmp_path, '"loss_mask", "position_ids"]', '"loss_mask"]')
    r = _lint(mf, DENSE / "pretrain_llama2_align.sh")
    assert "OTH012" not in _rules(r)
    assert "OTH012" not in _unchecked(r, "other.data_check")


def test_mindrecord_with_mask_columns_is_undecided(tmp_path: Path) -> None:
    mf = _edited(
        FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml",
        tmp_path,
        'input_columns: ["input_ids"]',
        'input_columns: ["input_ids", "attention_mask"]',
    )
    r = _lint(mf, FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh")
    assert "OTH012" not in _rules(r)
    assert "depends on how it was built" in _unchecked(r, "other.data_check")
