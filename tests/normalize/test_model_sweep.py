"""Issue 30: model features that the sweep of both frameworks' shipped recipes showed read
wrongly. Each test pairs a real MindFormers config of ../shared/corpus (read in place) with a
fixture restating the other side's real file (fixtures/pairsem/, each naming its source)."""

from __future__ import annotations

from pathlib import Path

from cfglint.check.pipeline import Options, lint
from cfglint.model.findings import Report
from conftest import FIXTURES, need_shared

PAIRSEM = FIXTURES / "pairsem"
DS2_MF = ("research__deepseek2__train_deepseek2_236B.yaml",)  # mindformers research/deepseek2
DS2_MSL = PAIRSEM / "deepseek2_236b_glg.sh"  # MindSpeed-LLM v2.2.0 deepseek2 236b pretrain


def _lint(mf: Path | str, mg: Path | str) -> Report:
    report, _ = lint(Options(mindformers=[str(mf)], megatron=str(mg)))
    return report


def _by_rule(report: Report) -> dict[str, object]:
    return {f.rule: f for f in report.findings}


def _edited(src: Path, tmp: Path, old: str, new: str) -> Path:
    dst = tmp / src.name
    text = src.read_text()
    assert old in text, f"{old!r} not in {src}"
    dst.write_text(text.replace(old, new, 1))
    return dst


def test_group_limited_greedy_keeps_full_softmax_weights_like_mindformers() -> None:
    """MindSpeed-LLM's group_limited_greedy router takes the softmax over all experts and,
    without --norm-topk-prob, keeps those probabilities times the scaling factor (router.py:
    39-61 @ c77308a1); MindFormers' TopkRouterV2 with norm_topk_prob False does the same. No
    normalization or scaling difference; the expert-level losses agree (per sequence at one
    sequence per micro-batch), and so do the device-level losses."""
    r = _by_rule(_lint(need_shared("corpus", "mindformers", *DS2_MF), DS2_MSL))
    assert not {"MOE014", "MOE015", "MOE017", "MOE020", "MOE024"} & set(r)


def test_group_limited_greedy_normalizes_only_with_the_flag_and_then_does_not_scale(
    tmp_path: Path,
) -> None:
    """With --norm-topk-prob the router divides by the sum and skips the scaling factor
    (the else branch of router.py:57-61), while MindFormers multiplies by
    routed_scaling_factor whatever it normalizes (moe.py:1573-1576 @ fd4deebc)."""
    mg = _edited(DS2_MSL, tmp_path, "    --seq-aux \\", "    --seq-aux \\\n    --norm-topk-prob \\")
    r = _by_rule(_lint(need_shared("corpus", "mindformers", *DS2_MF), mg))
    assert r["MOE014"].values == {"mindformers": False, "megatron": True}  # type: ignore[attr-defined]
    assert r["MOE015"].values == {"mindformers": 16.0, "megatron": 1.0}  # type: ignore[attr-defined]
    assert "scales only weights it does not normalize" in r["MOE015"].message  # type: ignore[attr-defined]


def test_communication_losses_are_different_functions() -> None:
    """MindFormers' "comm" loss counts the expert choices per expert-parallel rank
    (moe.py:1861-1888); MindSpeed-LLM's counts tokens reaching each group (router.py:
    149-196): at the same weight 0.02 the two penalties differ, and the message says how."""
    r = _by_rule(_lint(need_shared("corpus", "mindformers", *DS2_MF), DS2_MSL))
    f = r["MOE025"]
    assert f.values == {  # type: ignore[attr-defined]
        "mindformers": "0.02 x expert choices on each of 4 expert-parallel ranks",
        "megatron": "0.02 x tokens reaching each of 8 expert groups",
    }


def test_device_loss_on_one_side_and_unread_outside_its_router(tmp_path: Path) -> None:
    """Weight 0 leaves MindSpeed-LLM without the device loss; a routing type other than
    group_limited_greedy never reads the flag (only that router computes it)."""
    mf = need_shared("corpus", "mindformers", *DS2_MF)
    off = _edited(
        DS2_MSL,
        tmp_path,
        "--moe-device-level-aux-loss-coeff 0.05",
        "--moe-device-level-aux-loss-coeff 0",
    )
    f = _by_rule(_lint(mf, off))["MOE024"]
    assert f.values == {  # type: ignore[attr-defined]
        "mindformers": "0.05 x group scores x group loads over 8 expert groups",
        "megatron": "none",
    }
    other = tmp_path / "aux"
    other.mkdir()
    plain = _edited(DS2_MSL, other, "type group_limited_greedy", "type aux_loss")
    f = _by_rule(_lint(mf, plain))["MOE024"]
    assert f.values["megatron"] == "none"  # type: ignore[attr-defined]
    assert "only group_limited_greedy" in f.message  # type: ignore[attr-defined]


def test_router_z_loss_on_one_side() -> None:
    """TopkRouterV2 adds the z-loss at z_loss_factor 0.01 on every step (moe.py:1526);
    the MindSpeed-LLM script sets no --moe-z-loss-coeff."""
    r = _by_rule(_lint(need_shared("corpus", "mindformers", *DS2_MF), DS2_MSL))
    assert r["MOE026"].values == {"mindformers": 0.01, "megatron": 0.0}  # type: ignore[attr-defined]


# -- the model class the job instantiates (Baichuan2 research classes on LlamaConfig) -------
MODELS = FIXTURES / "models"
BC2_MF = MODELS / "baichuan2_13b_finetune_mf.yaml"  # mindformers research/baichuan2 @ v1.3.2
BC2_MSL = MODELS / "baichuan2_13b_tune_msl.sh"  # MindSpeed-LLM v2.2.0 baichuan2 13b tune


def test_position_embedding_comes_from_the_arch_class_not_the_config_class() -> None:
    """model_config.type LlamaConfig (RoPE) but model.arch.type Baichuan13BV2ForCausalLM,
    which builds ALiBi (baichuan2_13b.py:326 @ 024279c2), as the MindSpeed-LLM script does
    with --position-embedding-type alibi: no position-embedding finding."""
    from cfglint.normalize.mindformers.build import load_mindformers

    pe = load_mindformers(str(BC2_MF)).structure.position_embedding_type
    assert pe.value == "alibi"
    assert "Baichuan13BV2ForCausalLM" in pe.detail
    assert "STR020" not in _by_rule(_lint(BC2_MF, BC2_MSL))


def test_an_unknown_research_class_on_a_shared_config_is_not_decided(tmp_path: Path) -> None:
    from cfglint.normalize.mindformers.build import load_mindformers

    y = _edited(BC2_MF, tmp_path, "type: Baichuan13BV2ForCausalLM", "type: MyResearchForCausalLM")
    s = load_mindformers(str(y)).structure
    assert not s.position_embedding_type.known
    assert "MyResearchForCausalLM" in s.position_embedding_type.detail
    assert not {"STR020", "STR031"} & set(_by_rule(_lint(y, BC2_MSL)))


def test_row_normalized_head_on_one_side_is_reported() -> None:
    """Baichuan2's NormHead divides each vocabulary row by its norm on every training step
    (baichuan2_13b.py:885-898 @ 024279c2); MindSpeed-LLM's output layer is plain."""
    f = _by_rule(_lint(BC2_MF, BC2_MSL))["STR031"]
    assert f.values == {"mindformers": "row-normalized", "megatron": "plain"}  # type: ignore[attr-defined]
    assert "NormHead" in f.message  # type: ignore[attr-defined]


def test_real_baichuan2_7b_config_reads_rope_and_the_norm_head() -> None:
    from cfglint.normalize.mindformers.build import load_mindformers

    y = need_shared(
        "corpus", "mindformers", "research__baichuan2__finetune_baichuan2_7b_auto_parallel.yaml"
    )
    s = load_mindformers(str(y)).structure
    assert s.position_embedding_type.value == "rope"
    assert s.output_head.value == "row-normalized"
    assert "Baichuan7BV2ForCausalLM" in s.output_head.detail


# -- run length from the dataset: `take n` on the HF loader -------------------------------
QWEN3_SFT = ("configs__qwen3__finetune_qwen3_32b_4k.yaml",)  # mindformers configs/qwen3 @ c358dfe6


def test_take_bounds_the_run_length(tmp_path: Path) -> None:
    """total_steps -1 with `take n: 2000` then Alpaca and packing handlers: at most 2000
    samples / global batch 4 = 500 steps, shorter than --train-iters 2000."""
    mf = need_shared("corpus", "mindformers", *QWEN3_SFT)
    f = _by_rule(_lint(mf, PAIRSEM / "qwen3_32b_sft_msl.sh"))["OPT019"]
    assert f.values == {"mindformers": 500, "megatron": 2000}  # type: ignore[attr-defined]
    assert "handler[0].n" in f.message  # type: ignore[attr-defined]
    # a bound at least as long as the other run says nothing
    y = _edited(mf, tmp_path, "n: 2000", "n: 100000")
    assert "OPT019" not in _by_rule(_lint(y, PAIRSEM / "qwen3_32b_sft_msl.sh"))


def test_a_handler_that_may_add_rows_after_take_lifts_the_bound(tmp_path: Path) -> None:
    from cfglint.normalize.mindformers.build import load_mindformers

    mf = need_shared("corpus", "mindformers", *QWEN3_SFT)
    y = _edited(mf, tmp_path, "pack_strategy: 'pack'", "pack_strategy: 'truncate'")
    assert load_mindformers(str(y)).optimizer.train_steps_bound is None


# -- two shufflers with one seed -------------------------------------------------------------
def test_two_different_shufflers_are_reported() -> None:
    """research/qwen2_5 fine-tuning reads a MindDataset (MindSpore's sampler shuffles it);
    MindSpeed-LLM's instruction dataset shuffles its documents with numpy
    (decoder_packed_mtf_dataset.py:449-454 @ c77308a1): no seed makes the orders equal."""
    mf = need_shared("corpus", "mindformers", "research__qwen2_5__finetune_qwen2_5_7b_8k.yaml")
    f = _by_rule(_lint(mf, PAIRSEM / "qwen3_32b_sft_msl.sh"))["DET009"]
    assert f.values == {  # type: ignore[attr-defined]
        "mindformers": "MindSpore dataset sampler",
        "megatron": "MindSpeed-LLM instruction dataset shuffle (numpy, per document)",
    }


def test_the_same_gpt_dataset_on_both_sides_is_one_shuffler() -> None:
    """MindFormers' BlendedMegatronDatasetDataLoader builds Megatron's GPTDataset: the seeds
    decide (DET007), not the shuffler."""
    pair = FIXTURES / "realpairs" / "qwen3_30b_a3b_pretrain_msl"
    r = _by_rule(_lint(pair / "mindformers.yaml", pair / "megatron.sh"))
    assert "DET009" not in r
    assert "DET007" in r


# -- optimizer sharding at data-parallel size 1 ------------------------------------------
def test_distributed_optimizer_at_data_parallel_one_shards_nothing(tmp_path: Path) -> None:
    """MindSpeed-LLM tune_qwen3_32b_4K_full_ptd.sh (c77308a1): 16 devices, TP 8 x PP 2, so
    data-parallel size 1, with --use-distributed-optimizer: one shard, nothing sharded, the
    same as MindFormers' enable_parallel_optimizer False. No PAR014."""
    mf = need_shared("corpus", "mindformers", *QWEN3_SFT)
    sh = _edited(
        PAIRSEM / "qwen3_32b_sft_msl.sh",
        tmp_path,
        "--seed 42",
        "--seed 42 --use-distributed-optimizer",
    )
    assert "PAR014" not in _by_rule(_lint(mf, sh))
    # two data-parallel ranks: the state is sharded on one side
    wide = tmp_path / "wide"
    wide.mkdir()
    sh2 = _edited(sh, wide, "--nnodes 2", "--nnodes 4")
    f = _by_rule(_lint(mf, sh2))["PAR014"]
    assert f.values == {"mindformers": False, "megatron": True}  # type: ignore[attr-defined]


# -- release labels ----------------------------------------------------------------------
def test_a_research_class_labels_the_config_with_a_release_that_ships_it() -> None:
    """research/baichuan2 exists up to v1.3.2 (gone from v1.5.0 on): the config's defaults
    and labels are v1.3.2's, not those of the newest release with its optimizer class."""
    from cfglint.normalize.mindformers.build import load_mindformers

    cfg = load_mindformers(str(BC2_MF))
    # in no release: every release with its classes (v1.3.0 and v1.3.2), not v1.5.0
    assert cfg.dialect.startswith("MindFormers v1.3.0-v1.3.2")
    assert "v1.3.0-v1.3.2" in cfg.defaults_from


def test_a_script_named_like_an_older_example_says_whose_defaults_apply(tmp_path: Path) -> None:
    """pretrain_deepseek2_236b_8k_ptd.sh ships with MindSpeed-LLM v2.0.0-v2.2.0 only; the
    defaults cfglint reads are v26.1.0's, and the input warnings say so."""
    from cfglint.normalize.megatron.build import normalize_megatron
    from cfglint.normalize.megatron.input import load_megatron

    named = tmp_path / "pretrain_deepseek2_236b_8k_ptd.sh"
    named.write_text(DS2_MSL.read_text())
    notes = [w for w in normalize_megatron(load_megatron(str(named))).warnings if "example" in w]
    assert len(notes) == 1 and "v2.2.0" in notes[0] and "v26.1.0" in notes[0]
    plain = normalize_megatron(load_megatron(str(DS2_MSL))).warnings
    assert not [w for w in plain if "named like" in w]


# -- values a class derives from others when unset (ChatGLM2Config's rotary dtype) --------
GLM3_MF = MODELS / "glm3_6b_finetune_mf.yaml"  # mindformers configs/glm3 @ v1.5.0
GLM3_MSL = MODELS / "chatglm3_6b_tune_msl.sh"  # MindSpeed-LLM v2.3.0 chatglm3 tune


def test_unset_rotary_dtype_of_chatglm2_is_the_compute_dtype() -> None:
    """glm2_config.py:211 @ v1.5.0: rotary_dtype None -> compute_dtype (bfloat16), the dtype
    MindSpeed-LLM rotates in under --bf16: no rotary-precision finding. The 0.51 rotary
    fraction is a true difference: int(128 x 0.51) = 65 gives frequencies base^(-2i/65)."""
    r = _by_rule(_lint(GLM3_MF, GLM3_MSL))
    assert "PRC004" not in r
    assert r["STR022"].values == {"mindformers": 0.5, "megatron": 0.51}  # type: ignore[attr-defined]


# -- a legacy training config without an optimizer section -----------------------------------
def test_no_optimizer_section_stops_the_run_instead_of_taking_defaults(tmp_path: Path) -> None:
    """research/yi/yi_34b/pretrain_yi_34b.yaml @ v1.5.0 has no optimizer or lr_schedule: the
    trainer reads config.optimizer.weight_decay on None (base_trainer.py:543) and stops, so
    no learning-rate or weight-decay default is compared (they were false errors)."""
    from cfglint.normalize.mindformers.build import load_mindformers

    yi = MODELS / "yi_34b_pretrain_mf.yaml"
    o = load_mindformers(str(yi)).optimizer
    assert o.build_error is not None and "no optimizer section" in o.build_error.value
    assert not o.lr.known and not o.weight_decay.known
    r = _by_rule(_lint(yi, DS2_MSL))
    assert "OPT018" in r and not {"OPT008", "OPT010", "OPT011"} & set(r)
    # a prediction config builds no optimizer: nothing is said
    pred = _edited(yi, tmp_path, "run_mode: 'train'", "run_mode: 'predict'")
    assert load_mindformers(str(pred)).optimizer.build_error is None


def test_baichuan2_residual_stream_starts_in_the_embedding_dtype() -> None:
    """Baichuan13BV2's embedding rows enter the layers uncast (param_init_type, here float32)
    and each residual add meets a bfloat16 output: MindSpore adds in float32, MindSpeed-LLM
    in bf16 (baichuan2_13b.py:292-295, 381, 819, 824 @ 024279c2)."""
    from cfglint.normalize.mindformers.build import load_mindformers

    res = load_mindformers(str(BC2_MF)).precision.residual_dtype
    assert res.value == "float32" and "Baichuan13BV2ForCausalLM" in res.detail
    assert _by_rule(_lint(BC2_MF, BC2_MSL))["PRC007"].values == {  # type: ignore[attr-defined]
        "mindformers": "float32",
        "megatron": "bfloat16",
    }


# -- which linear layers carry a bias (InternLM's has_bias, MindSpeed-LLM's --add-dense-bias) --
ILM_MF = MODELS / "internlm_7b_finetune_mf.yaml"  # mindformers research/internlm @ v1.3.2
ILM_MSL = MODELS / "internlm_7b_pretrain_msl.sh"  # MindSpeed-LLM v1.0.0 legacy intern pretrain


def test_attention_biases_on_both_sides_are_not_a_linear_bias_difference() -> None:
    """InternLM's has_bias puts biases on wq, wk, wv and wo only (internlm_transformer.py:
    34-64 @ 024279c2); MindSpeed-LLM's --add-qkv-bias and --add-dense-bias put them on the
    same four projections with --disable-bias-linear keeping the MLP bias-free
    (legacy/model/transformer.py:357-374 @ v1.0.0): no bias finding."""
    from cfglint.normalize.mindformers.build import load_mindformers

    s = load_mindformers(str(ILM_MF)).structure
    assert (s.add_bias_linear.value, s.add_qkv_bias.value, s.add_dense_bias.value) == (
        False,
        True,
        True,
    )
    r = _by_rule(_lint(ILM_MF, ILM_MSL))
    assert not {"STR024", "STR025", "STR032"} & set(r)


def test_output_projection_bias_on_one_side_is_reported(tmp_path: Path) -> None:
    mg = _edited(ILM_MSL, tmp_path, "    --add-dense-bias \\\n", "")
    f = _by_rule(_lint(ILM_MF, mg))["STR032"]
    assert f.values == {"mindformers": True, "megatron": False}  # type: ignore[attr-defined]


# -- BloomConfig (mindformers/models/bloom, v1.3.2 the last release that ships it) -----------
BLOOM_MF = MODELS / "bloom_7b1_train_mf.yaml"  # mindformers configs/bloom @ v1.2.0
BLOOM_MSL = MODELS / "bloom_7b1_pretrain_msl.sh"  # MindSpeed-LLM v1.0.0 legacy bloom pretrain


def test_bloom_structure_is_decided_from_the_class_source() -> None:
    """BloomConfig's facts (LayerNorm, ALiBi, a biased GeLU MLP of expand_ratio x hidden,
    the head tied to the word embedding: bloom.py:82,149-172,236-239 @ 024279c2) agree with
    the MindSpeed-LLM script; its dropout 0.1 and fast GeLU do not."""
    from cfglint.normalize.mindformers.build import load_mindformers

    s = load_mindformers(str(BLOOM_MF)).structure
    assert (s.normalization.value, s.position_embedding_type.value) == ("LayerNorm", "alibi")
    assert (s.ffn_hidden_size.value, s.tied_embeddings.value) == (16384, True)
    r = _by_rule(_lint(BLOOM_MF, BLOOM_MSL))
    assert not {"STR001", "STR002", "STR003", "STR004", "STR007", "STR020", "STR024"} & set(r)
    assert r["STR009"].values == {"mindformers": 0.1, "megatron": 0.0}  # type: ignore[attr-defined]
    assert r["STR010"].values == {"mindformers": 0.1, "megatron": 0.0}  # type: ignore[attr-defined]
    assert r["STR026"].values["mindformers"] == "fast_gelu"  # type: ignore[attr-defined]


def test_bloom_takes_sequence_parallelism_from_its_model_config() -> None:
    """BloomModel passes config.use_seq_parallel to its blocks (bloom.py:167 @ 024279c2):
    the model_config key, not parallel_config's, decides, and here it is on as in the
    MindSpeed-LLM script (--sequence-parallel at TP 8): no sequence-parallel finding."""
    assert "PAR004" not in _by_rule(_lint(BLOOM_MF, BLOOM_MSL))


# -- a release cfglint has not read: what the file writes is compared, defaults are not ------
BC1_MF = MODELS / "baichuan_13b_train_mf.yaml"  # mindformers research/baichuan @ v1.0.0
BC1_MSL = MODELS / "baichuan_13b_pretrain_msl.sh"  # MindSpeed-LLM v1.0.0 legacy baichuan 13B


def test_no_release_with_the_classes_leaves_class_defaults_not_decided() -> None:
    """Only MindFormers v1.0.0 ships Baichuan13BForCausalLM; cfglint has not read v1.0.0's
    defaults, so FP32StateAdamWeightDecay's unset weight_decay is not decided (before: 0 from
    v1.5.0's class, an error against 0.1), while the written eps 1e-8 vs 1e-5 still is."""
    report = _lint(BC1_MF, BC1_MSL)
    r = _by_rule(report)
    assert "OPT008" not in r
    assert r["OPT002"].values == {"mindformers": 1e-8, "megatron": 1e-5}  # type: ignore[attr-defined]
    why = [reason for row, reason in report.not_checked if "OPT008" in reason]
    assert why and "no MindFormers release cfglint has read" in why[0]


def test_an_older_release_given_by_name_decides_no_default(tmp_path: Path) -> None:
    """--mindformers-version v1.2.0 names a release whose defaults cfglint has not read: the
    same file, matched to v1.5.0 by its classes otherwise, then decides no class default."""
    from cfglint.normalize.mindformers.build import load_mindformers

    mf = _edited(BC1_MF, tmp_path, "type: Baichuan13BForCausalLM", "type: LlamaForCausalLM")
    wd = load_mindformers(str(mf)).optimizer.weight_decay
    assert wd.known and wd.value == 0.0  # FP32StateAdamWeightDecay at v1.5.0 (its classes)
    wd = load_mindformers(str(mf), "v1.2.0").optimizer.weight_decay
    assert not wd.known
    assert "has not read the defaults of MindFormers v1.2.0" in wd.detail


def test_loss_scalers_are_compared() -> None:
    """Both sides float16: MindSpore's DynamicLossScaleUpdateCell from 2^32, halving on each
    overflow, against Megatron's dynamic scaler from --initial-loss-scale 1024 that halves
    after --hysteresis 2 overflows (megatron/core/optimizer/__init__.py:390-406 @
    core_v0.12.1): a different number of skipped steps from the start."""
    f = _by_rule(_lint(BC1_MF, BC1_MSL))["PRC011"]
    assert f.values == {  # type: ignore[attr-defined]
        "mindformers": "dynamic from 4294967296, x2 after 1000 clean steps, /2 after each overflow",
        "megatron": "dynamic from 1024, x2 after 1000 clean steps, /2 after 2 overflows",
    }


def test_bf16_builds_no_scaler_and_scale_sense_one_is_none(tmp_path: Path) -> None:
    """Megatron builds no scaler for bf16 without --loss-scale; scale_sense 1.0 (the
    wrappers' default, wrapper.py:161 @ 024279c2) scales nothing: the same, no finding."""
    mf = _edited(BC1_MF, tmp_path, 'compute_dtype: "float16"', 'compute_dtype: "bfloat16"')
    mf.write_text(
        mf.read_text().replace(
            "  scale_sense:\n    type: DynamicLossScaleUpdateCell\n"
            "    loss_scale_value: 4294967296\n    scale_factor: 2\n"
            "    scale_window: 1000\n",
            "  scale_sense: 1.0\n",
        )
    )
    mg = _edited(BC1_MSL, tmp_path, "    --fp16", "    --bf16")
    assert "PRC011" not in _by_rule(_lint(mf, mg))
