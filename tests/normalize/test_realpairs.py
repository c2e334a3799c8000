"""Issue 10: right on real pairs.

fixtures/realpairs/ restates six real MindFormers / MindSpeed-LLM / Megatron-LM pairs with a
ground truth derived by hand from the two files and the frameworks' sources (truth.yaml).
`test_pair_matches_truth` holds the tool to it: every true difference raised, no agreeing
row raised, no noise. The tests after it pin each defect class of the issue on edited copies
of those fixtures (one edit, the row it must move, and what must stay silent).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from realpairs import REALPAIRS, pairs, run

from cfglint.check.pipeline import Options, lint
from cfglint.model.findings import Report
from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron
from cfglint.normalize.mindformers.build import load_mindformers
from cfglint.normalize.published import names_model


@pytest.mark.parametrize("pair", pairs())
def test_pair_matches_truth(pair: str) -> None:
    s = run(pair)
    assert s.missed == set(), f"{pair}: true differences not found: {sorted(s.missed)}"
    assert s.false_flags == set(), f"{pair}: agreeing rows flagged: {sorted(s.false_flags)}"
    assert s.silent_broken == set(), f"{pair}: noise raised: {sorted(s.silent_broken)}"


def test_at_least_six_pairs_of_every_kind() -> None:
    import yaml

    kinds = [yaml.safe_load((REALPAIRS / p / "truth.yaml").read_text())["kind"] for p in pairs()]
    assert len(kinds) >= 6
    for key, want in (
        ("model", {"dense", "moe"}),
        ("megatron", {"megatron-lm", "mindspeed-llm"}),
        ("stage", {"pretrain", "finetune"}),
    ):
        assert {k[key] for k in kinds} >= want


# -- helpers --------------------------------------------------------------------------------
def _copy(pair: str, tmp: Path, mf: tuple[str, str] | None, mg: tuple[str, str] | None) -> Path:
    dst = tmp / pair
    shutil.copytree(REALPAIRS / pair, dst)
    for name, edit in (("mindformers.yaml", mf), ("megatron.sh", mg)):
        if edit is None:
            continue
        p = dst / name
        text = p.read_text()
        assert edit[0] in text, f"{edit[0]!r} not in {name}"
        p.write_text(text.replace(edit[0], edit[1], 1))
    return dst


def lint_pair(
    pair: str,
    tmp: Path,
    mf: tuple[str, str] | None = None,
    mg: tuple[str, str] | None = None,
    profile: str = "default",
) -> Report:
    d = _copy(pair, tmp, mf, mg)
    report, _ = lint(
        Options(
            mindformers=[str(d / "mindformers.yaml")],
            megatron=str(d / "megatron.sh"),
            profile=profile,
        )
    )
    return report


def rules(report: Report) -> set[str]:
    return {f.rule for f in report.findings}


def finding(report: Report, rule: str):  # type: ignore[no-untyped-def]
    hits = [f for f in report.findings if f.rule == rule]
    assert hits, f"{rule} not raised: {sorted(rules(report))}"
    return hits[0]


def not_checked(report: Report, rule: str) -> str:
    hits = [why for _, why in report.not_checked if why.startswith(rule + ":")]
    assert hits, f"-v says nothing about {rule}: {report.not_checked}"
    return hits[0]


def mf_cfg(pair: str, tmp: Path, edit: tuple[str, str] | None = None):  # type: ignore[no-untyped-def]
    return load_mindformers(str(_copy(pair, tmp, edit, None) / "mindformers.yaml"))


def mg_cfg(pair: str, tmp: Path, edit: tuple[str, str] | None = None):  # type: ignore[no-untyped-def]
    return normalize_megatron(load_megatron(str(_copy(pair, tmp, None, edit) / "megatron.sh")))


# -- 1. warmup --------------------------------------------------------------------------------
def test_warmup_ratio_zero_is_zero_steps(tmp_path: Path) -> None:
    cfg = mf_cfg("glm4_9b_sft_msl", tmp_path)
    w = cfg.optimizer.lr_warmup_steps
    assert w is not None and w.known and w.value == 0  # total_steps is -1, yet decidable


def test_warmup_ratio_compared_with_megatron_fraction(tmp_path: Path) -> None:
    r = lint_pair("llama2_7b_pretrain_msl", tmp_path)
    f = finding(r, "OPT017")
    assert f.values == {"mindformers": 0.03, "megatron": 0.01}
    assert "same length" in f.message  # the assumption is said
    same = lint_pair(
        "llama2_7b_pretrain_msl",
        tmp_path / "same",
        mg=("--lr-warmup-fraction 0.01", "--lr-warmup-fraction 0.03"),
    )
    assert not {"OPT011", "OPT017"} & rules(same)


def test_warmup_iters_become_a_fraction_of_the_decay_length(tmp_path: Path) -> None:
    cfg = mg_cfg("mixtral_8x7b_pretrain_msl", tmp_path)
    assert cfg.optimizer.lr_warmup_fraction.value == pytest.approx(2 / 1280)


# -- 2. legacy MindFormers MoE ----------------------------------------------------------------
def test_legacy_moe_facts(tmp_path: Path) -> None:
    e = mf_cfg("mixtral_8x7b_pretrain_msl", tmp_path).moe
    assert e.first_k_dense.value == 0  # the boolean MoEConfig default is not a count here
    assert e.aux_loss_coeff.value == 0.0  # aux_loss_factor 0.05 is stored, never read
    assert "return_extra_loss" in e.aux_loss_coeff.detail
    assert e.norm_topk_prob.value is True  # softmax over all, top-k, renormalized


def test_legacy_moe_no_false_errors(tmp_path: Path) -> None:
    r = lint_pair("mixtral_8x7b_pretrain_msl", tmp_path)
    assert not {"MOE013", "MOE014", "MOE019", "MOE004", "MOE006"} & rules(r)
    assert finding(r, "MOE020").values == {"mindformers": 0.0, "megatron": 0.02}


def test_legacy_llama_moe_drops_the_aux_loss_whatever_aux_loss_types_say(
    tmp_path: Path,
) -> None:
    # LlamaForCausalLM builds MoEV2 without return_extra_loss (llama_transformer.py:775-779
    # @ 31a92de4): an 'expert' entry with factor 0.02 still adds nothing to the loss
    r = lint_pair(
        "mixtral_8x7b_pretrain_msl",
        tmp_path,
        mf=(
            "  aux_loss_factor: 0.05\n",
            '  aux_loss_types: ["expert"]\n  aux_loss_factors: [0.02]\n',
        ),
    )
    f = finding(r, "MOE020")
    assert f.values == {"mindformers": 0.0, "megatron": 0.02}
    assert "return_extra_loss" in f.message or "return_extra_loss" in str(f.model_dump())


def test_first_k_dense_minus_one_is_no_dense_layer(tmp_path: Path) -> None:
    assert mg_cfg("qwen3_30b_a3b_pretrain_msl", tmp_path).moe.first_k_dense.value == 0


def test_unused_dense_ffn_size_is_not_structural(tmp_path: Path) -> None:
    r = lint_pair(
        "qwen3_30b_a3b_pretrain_msl",
        tmp_path,
        mg=("--ffn-hidden-size 6144", "--ffn-hidden-size 5120"),
    )
    assert "STR004" not in rules(r)  # every layer is MoE on both sides


def test_sinkhorn_differs_whatever_the_coefficient(tmp_path: Path) -> None:
    r = lint_pair(
        "mixtral_8x7b_pretrain_msl",
        tmp_path,
        mg=(
            "--moe-router-load-balancing-type aux_loss",
            "--moe-router-load-balancing-type sinkhorn",
        ),
    )
    assert finding(r, "MOE017").values["megatron"] == "sinkhorn"


def test_unnormalized_routing_is_found(tmp_path: Path) -> None:
    r = lint_pair("qwen3_30b_a3b_pretrain_msl", tmp_path)
    assert finding(r, "MOE014").values == {"mindformers": False, "megatron": True}


# -- 3. RoPE variants -------------------------------------------------------------------------
def test_llama3_rope_scaling(tmp_path: Path) -> None:
    r = lint_pair("llama31_8b_sft_msl", tmp_path)
    assert finding(r, "STR028").values == {
        "mindformers": "none",
        "megatron": "llama3(factor=8, low=1, high=4, original=8192)",
    }
    same = lint_pair(
        "llama31_8b_sft_msl",
        tmp_path / "same",
        mf=(
            "    scaling_factor: 1.0\n",
            "    scaling_factor: {factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0,"
            " original_max_position_embeddings: 8192}\n",
        ),
    )
    assert "STR028" in rules(same)  # extend_method is still None
    same = lint_pair(
        "llama31_8b_sft_msl",
        tmp_path / "same2",
        mf=(
            '    scaling_factor: 1.0\n    theta: 500000\n    extend_method: "None"\n',
            "    scaling_factor: {factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0,"
            " original_max_position_embeddings: 8192}\n"
            '    theta: 500000\n    extend_method: "LLAMA3"\n',
        ),
    )
    assert "STR028" not in rules(same)


def test_glm_rope_ratio_scales_the_base(tmp_path: Path) -> None:
    theta = mf_cfg("glm4_9b_sft_msl", tmp_path, ("rope_ratio: 1", "rope_ratio: 500")).structure
    assert theta.rope_theta.value == 5_000_000
    r = lint_pair("glm4_9b_sft_msl", tmp_path / "pair", mf=("rope_ratio: 1", "rope_ratio: 500"))
    assert "STR021" not in rules(r)


def test_interleaved_rope(tmp_path: Path) -> None:
    r = lint_pair("glm4_9b_sft_msl", tmp_path, mg=("    --use-glm-rope \\\n", ""))
    assert finding(r, "STR029").values == {"mindformers": True, "megatron": False}


def test_megatron_lm_rope_scaling_flag(tmp_path: Path) -> None:
    cfg = mg_cfg(
        "mixtral_8x7b_pretrain_mlm",
        tmp_path,
        ("    --rotary-base 1000000\n", "    --rotary-base 1000000\n    --use-rope-scaling\n"),
    )
    assert cfg.structure.rope_scaling.value == "llama3(factor=8, low=1, high=4, original=8192)"


def test_partial_rotary_compared(tmp_path: Path) -> None:
    r = lint_pair("glm4_9b_sft_msl", tmp_path, mg=("--rotary-percent 0.5", "--rotary-percent 1.0"))
    assert finding(r, "STR022").values == {"mindformers": 0.5, "megatron": 1.0}


# -- 4. data order ----------------------------------------------------------------------------
def test_data_seed_separate_from_model_seed(tmp_path: Path) -> None:
    r = lint_pair("qwen3_30b_a3b_pretrain_msl", tmp_path)
    assert finding(r, "DET007").values == {"mindformers": 1234, "megatron": 42}
    assert "DET001" in rules(r)
    r = lint_pair(
        "qwen3_30b_a3b_pretrain_msl",
        tmp_path / "b",
        mf=("    config:\n      seed: 1234", "    config:\n      seed: 42"),
    )
    assert "DET007" not in rules(r) and "DET001" in rules(r)


def test_mindrecord_order_is_not_compared_by_seed(tmp_path: Path) -> None:
    assert mf_cfg("llama2_7b_pretrain_msl", tmp_path).determinism.data_seed is None


# -- 5. initial weights -----------------------------------------------------------------------
def test_placeholder_load_loads_unless_the_directory_is_empty(tmp_path: Path) -> None:
    """Issue 18: --load with the recipe's placeholder still loads whatever checkpoint the user
    puts there; against a MindFormers side that starts from random weights the starts differ,
    unless that directory is empty (Megatron then starts random too)."""
    load = mg_cfg("llama2_7b_pretrain_msl", tmp_path).weight.load_checkpoint
    assert load.known and "placeholder" in load.value
    r = lint_pair("llama2_7b_pretrain_msl", tmp_path / "pair")
    msg = finding(r, "ALN011").message
    assert "MindFormers starts from random initialization" in msg
    assert "unless that directory is empty" in msg and "checkpointing.py" in msg


def test_positional_load_loads_too(tmp_path: Path) -> None:
    r = lint_pair("mixtral_8x7b_pretrain_mlm", tmp_path)
    msg = finding(r, "ALN011").message
    assert "$1" in msg and "unless that directory is empty" in msg


def test_hf2mg_convert_loads_a_checkpoint(tmp_path: Path) -> None:
    r = lint_pair("qwen3_30b_a3b_pretrain_msl", tmp_path)
    assert "Hugging Face" in finding(r, "ALN011").message
    # init std does not apply when a side loads weights
    assert "WGT003" not in rules(r)


def test_init_std_compared_only_when_both_start_random(tmp_path: Path) -> None:
    edit = ("--init-method-std 0.01", "--init-method-std 0.02")
    r = lint_pair("llama2_7b_pretrain_msl", tmp_path, mg=edit)
    assert "WGT003" not in rules(r)  # Megatron loads the checkpoint at --load
    no_load = lint_pair(
        "llama2_7b_pretrain_msl", tmp_path / "random", mg=("--load $CKPT_LOAD_DIR \\\n", "")
    )
    assert "ALN011" not in rules(no_load)
    assert "WGT003" not in rules(no_load)  # 0.01 on both sides
    # both random, and the stds differ: now the init std is what each side starts from
    d = tmp_path / "random" / "llama2_7b_pretrain_msl" / "megatron.sh"
    d.write_text(d.read_text().replace(*edit))
    both = lint(Options(mindformers=[str(d.parent / "mindformers.yaml")], megatron=str(d)))[0]
    assert finding(both, "WGT003").values == {"mindformers": 0.01, "megatron": 0.02}


def test_real_load_dir_counts_as_loading(tmp_path: Path) -> None:
    cfg = mg_cfg(
        "llama2_7b_pretrain_msl",
        tmp_path,
        ('CKPT_LOAD_DIR="your model ckpt path"', "CKPT_LOAD_DIR=/ckpt/llama2_7b"),
    )
    assert cfg.weight.load_checkpoint.value == "/ckpt/llama2_7b"


def test_empty_load_in_a_finetune_config_is_unknown(tmp_path: Path) -> None:
    cfg = mf_cfg("glm4_9b_sft_msl", tmp_path)
    assert not cfg.weight.load_checkpoint.known
    assert "fine-tuning" in cfg.weight.load_checkpoint.detail


# -- 6. parallel ------------------------------------------------------------------------------
def test_sequence_parallel_at_model_parallel_one_is_a_no_op(tmp_path: Path) -> None:
    sp = mf_cfg("glm4_9b_sft_msl", tmp_path).parallel.sequence_parallel
    assert sp.value is False and "model_parallel 1" in sp.detail


def test_optimizer_sharding_on_one_side_is_a_note(tmp_path: Path) -> None:
    r = lint_pair("qwen3_30b_a3b_pretrain_msl", tmp_path)
    f = finding(r, "PAR014")
    assert f.severity == "note" and f.values == {"mindformers": False, "megatron": True}


def test_defaulted_world_size_that_cannot_hold_the_layout(tmp_path: Path) -> None:
    cfg = mg_cfg("mixtral_8x7b_pretrain_mlm", tmp_path)
    assert not cfg.parallel.world_size.known and not cfg.parallel.data_parallel.known
    assert "SLURM_NNODES" in cfg.parallel.data_parallel.detail
    r = lint_pair("mixtral_8x7b_pretrain_mlm", tmp_path / "pair")
    assert "experts" in finding(r, "PAR013").message
    assert not {"PAR001", "PAR010"} & rules(r)
    fits = mg_cfg(
        "mixtral_8x7b_pretrain_mlm",
        tmp_path / "fits",
        ('NNODES=${SLURM_NNODES:-"1"}', 'NNODES=${SLURM_NNODES:-"4"}'),
    )
    assert fits.parallel.data_parallel.value == 8  # 32 devices / PP 4


# -- 7. published-model identity ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "alias", "names"),
    [
        ("pretrain_qwen2_57b.yaml", "qwen2.5-7b", False),
        ("finetune_qwen2_5_7b_8k.yaml", "qwen2.5-7b", True),
        ("pretrain_gpt2_13b_fp16.yaml", "gpt2", False),
        ("run_gpt2.yaml", "gpt2", True),
        ("finetune_llama3_1_8b.yaml", "llama3-8b", False),
        ("finetune_llama3_1_8b.yaml", "llama3.1-8b", True),
        ("pretrain_qwen3_30b_a3b_4k.yaml", "qwen3-30b-a3b", True),
        ("pretrain_qwen3_30b_a3b_4k.yaml", "qwen3-32b", False),
    ],
)
def test_whole_model_identity(text: str, alias: str, names: bool) -> None:
    assert names_model(text, alias) is names


# -- 8. noise ---------------------------------------------------------------------------------
def test_precision_mode_default_depends_on_the_chip(tmp_path: Path) -> None:
    # a float16 run names no chip: 910A and Atlas A2 both run it
    fp16 = tmp_path / "fp16.yaml"
    text = (REALPAIRS / "llama2_7b_pretrain_msl" / "mindformers.yaml").read_text()
    fp16.write_text(text.replace('"bfloat16"', '"float16"'))
    pm = load_mindformers(str(fp16)).precision.precision_mode
    assert not pm.known and "Atlas A2" in pm.detail
    # bfloat16 compute needs Atlas A2 or later (the Atlas training series has no bfloat16)
    pm = mf_cfg("llama2_7b_pretrain_msl", tmp_path).precision.precision_mode
    assert pm.value == "must_keep_origin_dtype" and "bfloat16" in pm.detail
    pm = mf_cfg(
        "llama2_7b_pretrain_msl",
        tmp_path / "a2",
        ('  device_target: "Ascend"\n', '  device_target: "Ascend"\n  max_device_memory: "58GB"\n'),
    ).precision.precision_mode
    assert pm.value == "must_keep_origin_dtype"
    assert "PRC010" not in rules(lint_pair("llama2_7b_pretrain_msl", tmp_path / "pair"))


def test_placeholder_data_paths_are_not_a_difference(tmp_path: Path) -> None:
    r = lint_pair("qwen3_30b_a3b_pretrain_msl", tmp_path)
    assert "OTH001" not in rules(r)
    assert "placeholder" in not_checked(r, "OTH001")


def test_instruction_data_is_fine_tuning(tmp_path: Path) -> None:
    assert mf_cfg("llama31_8b_sft_msl", tmp_path).other.training_stage.value == "sft"
    assert mf_cfg("llama2_7b_pretrain_msl", tmp_path / "b").other.training_stage.value == "pretrain"
    # Megatron-dataset loaders return labels for pretraining too
    assert (
        mf_cfg("qwen3_30b_a3b_pretrain_msl", tmp_path / "c").other.training_stage.value
        == "pretrain"
    )


def test_balancing_type_spelled_as_written(tmp_path: Path) -> None:
    r = lint_pair("qwen3_30b_a3b_pretrain_msl", tmp_path)
    assert "gbs_aux_loss" in finding(r, "MOE017").message


def test_no_default_sentence_when_both_sides_set_it(tmp_path: Path) -> None:
    r = lint_pair("glm4_9b_sft_msl", tmp_path)
    assert "default is 0.01" not in finding(r, "OPT008").message
    assert "default is" not in finding(r, "DET001").message.split("). ")[-1]


# -- 9. model classes -------------------------------------------------------------------------
def test_chatglm2_fields_are_read(tmp_path: Path) -> None:
    s = mf_cfg("glm4_9b_sft_msl", tmp_path).structure
    assert s.num_heads.value == 32 and s.num_heads.loc is not None
    assert s.vocab_size.value == 151552
    assert s.tied_embeddings.value is False
    r = lint_pair(
        "glm4_9b_sft_msl",
        tmp_path / "pair",
        mf=("num_attention_heads: 32", "num_attention_heads: 16"),
    )
    assert finding(r, "STR002").values == {"mindformers": 16, "megatron": 32}


def test_telechat_and_qwen1_have_tables(tmp_path: Path) -> None:
    base = (REALPAIRS / "llama2_7b_pretrain_msl" / "mindformers.yaml").read_text()
    for cls, release in (("TelechatConfig", "master"), ("QwenConfig", "v1.3.2")):
        p = tmp_path / f"{cls}.yaml"
        p.write_text(base.replace("type: LlamaConfig", f"type: {cls}"))
        cfg = load_mindformers(str(p), version=release)
        assert cfg.model_class == cls
        unknown = [k for k, v in cfg.structure.items() if not v.known]
        assert unknown == [], (cls, unknown)
    # in no release, a TelechatConfig config may be v1.3.2's (no qkv_concat / out_proj_has_bias
    # there): what that release's class does not state is not decided, and says so
    open_ = [
        v.detail
        for _, v in load_mindformers(str(tmp_path / "TelechatConfig.yaml")).structure.items()
        if not v.known
    ]
    assert open_ and all("v1.3.2" in d and "not decided" in d for d in open_)
    q = load_mindformers(str(tmp_path / "QwenConfig.yaml"))
    assert q.structure.add_qkv_bias.value is True  # QwenModel builds QKV with bias


def test_parallel_mode_names_are_valid(tmp_path: Path) -> None:
    cfg = mf_cfg(
        "llama2_7b_pretrain_msl", tmp_path, ("parallel_mode: 1", "parallel_mode: STAND_ALONE")
    )
    assert not any("not a number" in w for w in cfg.warnings)


def test_global_batch_never_zero_for_unknown(tmp_path: Path) -> None:
    cfg = mg_cfg("mixtral_8x7b_pretrain_mlm", tmp_path, ("    --global-batch-size 256\n", ""))
    g = cfg.optimizer.global_batch_size
    assert not g.known and g.value is None


def test_negative_flag_default_names_the_setting(tmp_path: Path) -> None:
    cfg = mg_cfg("llama2_7b_pretrain_msl", tmp_path, ("    --disable-bias-linear \\\n", ""))
    v = cfg.structure.add_bias_linear
    assert v.value is True and v.knob == "add_bias_linear"


def test_yarn_on_a_non_mla_mcore_model_is_unknown(tmp_path: Path) -> None:
    # MindFormers mcore builds YaRN from the MLA head fields only (gpt_model.py:315-325 @
    # f52743ca); Qwen3-MoE is not MLA, so its run fails: unknown, said under -v, no finding
    mf = (
        "    rope_theta: 1000000\n",
        "    rope_theta: 1000000\n"
        "    rope_scaling: {rope_type: yarn, factor: 4.0,"
        " original_max_position_embeddings: 32768}\n",
    )
    r = lint_pair("qwen3_30b_a3b_pretrain_msl", tmp_path, mf=mf)
    assert not {"STR020", "STR028", "STR030"} & rules(r)
    assert "is not built as MLA" in not_checked(r, "STR028")


def test_mindspeed_yarn_factor_of_a_non_mla_model(tmp_path: Path) -> None:
    # rotary_pos_embedding.py:41-47 @ v26.1.0: max_position_embeddings / original context,
    # written back over --rope-scaling-factor
    mg = (
        "    --rotary-base 1000000 \\\n",
        "    --rotary-base 1000000 \\\n    --rope-scaling-type yarn \\\n"
        "    --rope-scaling-factor 4 \\\n"
        "    --rope-scaling-original-max-position-embeddings 1024 \\\n",
    )
    s = mg_cfg("qwen3_30b_a3b_pretrain_msl", tmp_path, mg).structure
    assert s.rope_scaling.value == "yarn(factor=4, original=1024, beta_fast=32, beta_slow=1)"
    # --rope-scaling-mscale 1.0 / --rope-scaling-mscale-all-dim 0.0: cos/sin x g(4, 1)
    assert s.yarn_mscale.value == "cos/sin x1.13863, softmax scale x1"
    s = mg_cfg(
        "qwen3_30b_a3b_pretrain_msl",
        tmp_path / "b",
        (mg[0], mg[1].replace("embeddings 1024", "embeddings 4096")),
    ).structure
    assert s.rope_scaling.value.startswith("yarn(factor=1, original=4096")  # 4096 / 4096
    assert s.yarn_mscale.value == "cos/sin x1, softmax scale x1"


def test_device_and_comm_balance_losses_are_part_of_the_method(tmp_path: Path) -> None:
    # a DeepSeek-style class, whose layers return the router's extra loss (LlamaConfig's
    # drop it: test_legacy_llama_moe_drops_the_aux_loss_whatever_aux_loss_types_say)
    d = _copy(
        "mixtral_8x7b_pretrain_msl",
        tmp_path,
        (
            "  aux_loss_factor: 0.05\n",
            '  aux_loss_types: ["expert", "device", "comm"]\n'
            "  aux_loss_factors: [0.003, 0.05, 0.02]\n",
        ),
        None,
    )
    y = d / "mindformers.yaml"
    y.write_text(y.read_text().replace("type: LlamaConfig", "type: DeepseekV3Config"))
    e = load_mindformers(str(y)).moe
    assert e.aux_loss_coeff.value == 0.003  # the expert term only, not the sum
    # the expert-level loss is the method; the device and comm losses are rows of their own
    assert e.load_balancing_type.value == "aux_loss"
    assert e.device_balancing.value.startswith("0.05 x group scores x group loads over ")
    assert e.comm_balancing.value.startswith("0.02 x expert choices on each of ")
