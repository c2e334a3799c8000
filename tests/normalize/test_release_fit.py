"""Issue 30: every label from the release that holds the file (normalize/release_fit.py,
data/release_files/ from `git ls-tree` of each release tag), what several candidate
releases disagree on left not decided, and the DeepSeek-V2 research class's own copy.
Fixtures in fixtures/releases/ are excerpts of the real files, each naming its source; they
lie at the path the real file has in its repository, which is the evidence read."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cfglint.load.datacache import DATA_DIR
from cfglint.model.config import Config
from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron
from cfglint.normalize.mindformers.build import load_mindformers
from cfglint.normalize.mindformers.defaults import MF_RELEASES
from cfglint.normalize.release_fit import blob_id, fit_file, release_data
from conftest import FIXTURES, need_shared

REL = FIXTURES / "releases"
DS2_MF = REL / "research" / "deepseek2" / "finetune_deepseek2_236B.yaml"  # v1.3.2 excerpt
DS2_MSL = REL / "examples" / "mcore" / "deepseek2" / "pretrain_deepseek2_236b_8k_ptd.sh"


def _undecided(cfg: Config, words: str) -> dict[str, str]:
    return {
        p: v.detail
        for p in Config.field_paths()
        if (v := cfg.get(p)) is not None and not v.known and words in v.detail
    }


# -- the evidence ----------------------------------------------------------------------
def test_blob_id_is_the_id_git_gives_the_same_content() -> None:
    text = "seed: 0\nrun_mode: 'train'\n"
    git = shutil.which("git")
    if git is None:
        pytest.skip("no git")
    out = subprocess.run(
        [git, "hash-object", "--stdin"], input=text, capture_output=True, text=True, check=True
    )
    assert blob_id(text) == out.stdout.strip()[:12]


def test_a_path_tail_decides_and_a_name_alone_is_only_a_hint(tmp_path: Path) -> None:
    text = DS2_MF.read_text()
    fit = fit_file("mindformers", str(DS2_MF), text)
    assert fit is not None and fit.releases == ("v1.3.0", "v1.3.2") and not fit.by_name
    assert fit.path == "research/deepseek2/finetune_deepseek2_236B.yaml"
    alone = tmp_path / DS2_MF.name
    alone.write_text(text)
    hint = fit_file("mindformers", str(alone), text)
    assert hint is not None and hint.by_name and hint.path == ""
    assert fit_file("mindformers", str(tmp_path / "mine.yaml"), text) is None


def test_the_recorded_facts_are_compact_and_consistent() -> None:
    folder = DATA_DIR / "release_files"
    assert sum(p.stat().st_size for p in folder.glob("*.json")) < 400_000
    data = release_data()
    for key in ("mindformers", "mindspeed_llm"):
        n = len(data[key]["releases"])
        masks = [*data[key]["paths"].values(), *data[key]["blobs"].values()]
        assert all(0 < m < 1 << n for m in masks)
    names = [r[0] for r in data["mindformers"]["releases"]]
    assert set(MF_RELEASES) <= set(names)
    spd = data["mindspeed_llm"]
    # the release whose defaults the MindSpeed-LLM table holds is the one compared against
    assert spd["table_release"] == _msl_table_version()
    assert set(spd["args_differ"]) == set(spd["parsers"])


def _msl_table_version() -> str:
    from cfglint.load.datacache import load_data

    return str(load_data(DATA_DIR / "mindspeed_llm.yaml")["version"])


# -- MindFormers ---------------------------------------------------------------------
def test_a_research_config_is_labelled_with_a_release_that_ships_its_folder() -> None:
    """Before: labelled MindFormers master (the newest release with a DeepseekV2Config, in
    research/deepseek3), which ships no research/deepseek2 at all."""
    cfg = load_mindformers(str(DS2_MF))
    assert cfg.dialect.startswith("MindFormers v1.3.0-v1.3.2 (a file at research/deepseek2/")
    assert "master" not in cfg.dialect
    # the folder's own DeepseekV2Config, cited where it was read
    assert "research/deepseek2/deepseek2_config.py:35@024279c2" in cfg.defaults_from


def test_the_research_folder_copy_fixes_its_own_values() -> None:
    """research/deepseek2's copy has no RoPE or SwiGLU fusion switch (its signature lacks
    use_fused_rope / use_fused_swiglu); research/deepseek3's has both, default False."""
    cfg = load_mindformers(str(DS2_MF))
    assert cfg.structure.fused_rope is None
    assert "deepseek2_layer.py:26-47 @ 024279c2" in cfg.not_applicable["structure.fused_rope"]
    assert cfg.structure.qk_norm is not None and cfg.structure.qk_norm.value is True


def test_two_copies_in_one_release_leave_what_they_disagree_on_not_decided(
    tmp_path: Path,
) -> None:
    """MindFormers v1.5.0 ships DeepseekV2Config twice (research/deepseek2 and
    research/deepseek3); a config outside both folders may build either."""
    mine = tmp_path / "mine.yaml"
    mine.write_text(DS2_MF.read_text())
    cfg = load_mindformers(str(mine), version="v1.5.0")
    split = _undecided(cfg, "disagree")
    assert "structure.fused_rope" in split
    assert "v1.5.0 research/deepseek2" in split["structure.fused_rope"]
    # what both copies give alike stays decided
    assert cfg.structure.normalization is not None and cfg.structure.normalization.known


QWEN3_MOE = REL / "user" / "qwen3_moe_no_balancing.yaml"  # master excerpt, in no release


def test_a_config_no_release_holds_is_read_at_every_release_with_its_classes() -> None:
    """A user's Qwen3-MoE config (no release holds it) leaves the load-balancing type to
    TransformerConfig, whose default is aux_loss at v1.6.0 and sub_seq_aux_loss at v1.7.0 and
    master. Before: labelled master, its default stated as the job's."""
    cfg = load_mindformers(str(QWEN3_MOE))
    # Qwen3MoeConfig and the mcore layout exist from v1.6.0 on (to v2.1.0, the newest wheel)
    assert cfg.dialect.startswith("MindFormers v1.6.0-v2.1.0 (in no release; every class")
    split = _undecided(cfg, "disagree")["moe.load_balancing_type"]
    assert "aux_loss at v1.6.0" in split and "sub_seq_aux_loss" in split
    assert "--mindformers-version" in split
    # what every candidate gives alike stays decided, labelled with the range
    norm = cfg.structure.normalization
    assert norm is not None and norm.value == "RMSNorm"
    assert norm.detail == "default of MindFormers v1.6.0-v2.1.0 Qwen3MoeConfig"
    # naming the release decides it
    one = load_mindformers(str(QWEN3_MOE), version="v1.6.0")
    got = one.moe.load_balancing_type
    assert got is not None and got.value == "aux_loss"
    assert got.detail == "default of MindFormers v1.6.0 TransformerConfig"


def test_a_legacy_config_no_release_holds_spans_the_releases_with_its_classes(
    tmp_path: Path,
) -> None:
    """research/deepseek2's config outside its folder: DeepseekV2Config exists in every
    release cfglint has tables for (research/deepseek2's copy up to v1.5.0, research/deepseek3's
    from v1.5.0), so all are candidates, and where the copies differ it is not decided."""
    mine = tmp_path / "mine.yaml"
    mine.write_text(DS2_MF.read_text())
    cfg = load_mindformers(str(mine))
    # v1.8.0 and v1.9.0: research/ at their tags in mindspore-ai/mindformers
    assert cfg.dialect.startswith("MindFormers v1.3.0-v1.9.0 (in no release; every class")
    assert "structure.fused_rope" in _undecided(cfg, "disagree")


def test_a_file_several_releases_hold_is_labelled_with_their_range() -> None:
    path = need_shared(
        "corpus", "mindformers", "research__llama3_1__llama3_1_8b__finetune_llama3_1_8b.yaml"
    )
    cfg = load_mindformers(str(path))
    # and at the v1.8.0 / v1.9.0 tags of mindspore-ai/mindformers (research/ is in no wheel)
    assert cfg.dialect.startswith("MindFormers v1.6.0-v1.9.0 (byte for byte")
    assert cfg.defaults_from == "MindFormers v1.6.0-v1.9.0 LlamaConfig"


def test_a_release_cfglint_has_not_read_leaves_its_defaults_not_decided() -> None:
    """research/qwen1_5/pretrain_qwen1_5_72b.yaml is byte for byte the same in v1.2.0,
    v1.3.0 and v1.3.2; cfglint has no tables for v1.2.0, so what rests on a default is not
    decided until --mindformers-version says which release runs."""
    path = need_shared("corpus", "mindformers", "research__qwen1_5__pretrain_qwen1_5_72b.yaml")
    cfg = load_mindformers(str(path))
    assert cfg.dialect.startswith("MindFormers v1.2.0-v1.3.2")
    gaps = _undecided(cfg, "has not read the defaults of MindFormers v1.2.0")
    assert (
        "structure.normalization" in gaps
        and "--mindformers-version" in gaps["structure.normalization"]
    )
    written = cfg.structure.hidden_size
    assert written is not None and written.known  # what the file sets stays decided
    pinned = load_mindformers(str(path), version="v1.3.2")
    assert not _undecided(pinned, "has not read")


# -- MindSpeed-LLM ---------------------------------------------------------------------
def test_a_script_of_older_releases_gets_the_table_default_only_where_they_agree(
    tmp_path: Path,
) -> None:
    """Before: --rope-scaling-factor was 8.0, the default of v26.1.0's parser (Megatron
    core_v0.12.1), for a v2.2.0 example; v2.2.0's own parser gives 1.0
    (mindspeed_llm/training/arguments.py:154 @ 53f3639c)."""
    m = load_megatron(str(DS2_MSL))
    cfg = normalize_megatron(m)
    factor = m.arg("rope_scaling_factor")
    assert not factor.known and "1 in v2.2.0" in factor.detail
    assert "local in v2.2.0" in m.arg("transformer_impl").detail
    beta2 = m.arg("adam_beta2")  # the same default in every one of those parsers
    assert beta2.known and beta2.value == 0.999
    notes = [w for w in cfg.warnings if "MindSpeed-LLM v2.0.0-v2.2.0" in w]
    assert len(notes) == 1 and "not decided" in notes[0]
    mine = tmp_path / "mine.sh"
    mine.write_text(DS2_MSL.read_text())
    plain = load_megatron(str(mine))
    normalize_megatron(plain)
    assert plain.arg("rope_scaling_factor").value == 8.0


def test_a_config_in_a_research_folder_belongs_to_the_releases_that_ship_the_folder(
    tmp_path: Path,
) -> None:
    """research/deepseek2/train_deepseek2_236B.yaml (mindformers @ 1f28e204, renamed before
    v1.3.0) is in no release; its folder, whose model classes the job registers, is in
    v1.3.0-v1.5.0 only. Before: labelled master, which has no research/deepseek2."""
    folder = tmp_path / "research" / "deepseek2"
    folder.mkdir(parents=True)
    train = folder / "train_deepseek2_236B.yaml"
    train.write_text(DS2_MF.read_text())
    cfg = load_mindformers(str(train))
    assert cfg.dialect.startswith(
        "MindFormers v1.3.0-v1.5.0 (a file in research/deepseek2, a folder of MindFormers"
    )
    assert "research/deepseek2/deepseek2_config.py" in cfg.defaults_from
    # a configs/ folder holds no code: no evidence from it
    other = tmp_path / "configs" / "llama2"
    other.mkdir(parents=True)
    (other / "mine.yaml").write_text(DS2_MF.read_text())
    assert fit_file("mindformers", str(other / "mine.yaml"), DS2_MF.read_text()) is None


def test_a_setting_one_candidate_has_no_switch_for_is_not_decided(tmp_path: Path) -> None:
    """Whichever candidate comes first: research/deepseek2's copy leaves fused RoPE empty (no
    switch), research/deepseek3's gives false; the merged setting is not decided either way."""
    from cfglint.load.mindformers_yaml import load_mindformers_yaml
    from cfglint.normalize.mindformers.build import read_at_release
    from cfglint.normalize.release_fit import settle

    mine = tmp_path / "mine.yaml"
    mine.write_text(DS2_MF.read_text())
    doc = load_mindformers_yaml(str(mine))
    for order in (("research/deepseek2", None), (None, "research/deepseek2")):
        cfgs = {f"v1.5.0 {c}": read_at_release(doc, "v1.5.0", "test", copy=c) for c in order}
        got = settle(cfgs, [], "MindFormers", "test").structure.fused_rope
        assert got is not None and not got.known and "disagree" in got.detail
        assert "false at" in got.detail and "none at" in got.detail


def test_a_script_only_master_holds_is_read_against_masters_parser() -> None:
    """master (c77308a1) runs with MindSpeed master and core_v0.12.1; where its parser's
    default is not v26.1.0's (--make-vocab-size-divisible-by: 128 there, not a literal in
    v26.1.0's reading), a script of master alone leaves it not decided."""
    from cfglint.normalize.megatron.release_note import release_gaps
    from cfglint.normalize.release_fit import Fit

    m = load_megatron(str(DS2_MSL))
    fit = Fit("MindSpeed-LLM", (), ("master",), "a file of MindSpeed-LLM master")
    gaps = release_gaps(m, fit)
    assert "128 in master" in gaps["make_vocab_size_divisible_by"]
    assert "adam_beta2" not in gaps


def test_legacy_llama_before_init_method_std_initializes_with_sigma_0_01() -> None:
    """LlamaConfig has no init_method_std or residual_dtype at v1.3.0 / v1.3.2; the model
    initializes every Linear and the embedding with MindSpore's 'normal' (sigma 0.01) and adds
    residuals in compute_dtype, as v1.5.0's defaults say. Before: unknown there, so a config
    no release holds lost WGT003/WGT005 when v1.3.x joined its candidates."""
    example = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
    for version in ("v1.3.0", "v1.3.2"):
        cfg = load_mindformers(str(example), version=version)
        std = cfg.weight.init_method_std
        assert std is not None and std.value == 0.01, version
        assert "llama_layer.py:116" in std.detail
        res, comp = cfg.precision.residual_dtype, cfg.precision.compute_dtype
        assert res is not None and comp is not None and res.value == comp.value == "bfloat16"
    cfg = load_mindformers(str(example))
    assert cfg.dialect.startswith("MindFormers v1.3.0-v1.5.0 (in no release; every class")
    assert not _undecided(cfg, "disagree")


QWEN3_NO_DROPOUT = REL / "user" / "qwen3_no_hidden_dropout.yaml"  # 2.1.0 wheel excerpt


def test_a_base_class_a_release_drops_gives_no_default_there() -> None:
    """From v1.9.0 on no MFModelConfig (hidden_dropout 0.0) sits between Qwen3Config and
    TransformerConfig (hidden_dropout 0.1): read from the wheels, a user's Qwen3 config
    without hidden_dropout trains with 0.0 up to v1.8.0 and 0.1 after. Before: every release
    was read with master's MFModelConfig, 0.0 stated for a range that holds v1.9.0-v2.1.0."""
    one = load_mindformers(str(QWEN3_NO_DROPOUT), version="v1.8.0").structure.hidden_dropout
    assert one is not None and one.value == 0.0 and "v1.8.0 MFModelConfig" in one.detail
    two = load_mindformers(str(QWEN3_NO_DROPOUT), version="v1.9.0").structure.hidden_dropout
    assert two is not None and two.value == 0.1 and "v1.9.0 TransformerConfig" in two.detail
    cfg = load_mindformers(str(QWEN3_NO_DROPOUT))
    assert cfg.dialect.startswith("MindFormers v1.6.0-v2.1.0 (in no release")
    split = _undecided(cfg, "disagree")["structure.hidden_dropout"]
    assert "0.1 at v2.1.0" in split and "0 at v1.8.0" in split


def test_a_research_class_no_wheel_ships_keeps_its_range(tmp_path: Path) -> None:
    """A wheel has no research/: a research class is not read at v2.0.0 and v2.1.0 (v1.8.0's
    and v1.9.0's research/ is read at their tags in mindspore-ai/mindformers), so a config
    that names one keeps the releases cfglint read it at, and says why the others are not
    candidates (not that the class is absent there)."""
    mine = tmp_path / "mine.yaml"
    mine.write_text(DS2_MF.read_text())
    cfg = load_mindformers(str(mine))
    assert cfg.dialect.startswith("MindFormers v1.3.0-v1.9.0 (in no release")
    assert "DeepseekV2Config (not read there: research/ is not in its wheel)" in cfg.dialect


def test_a_config_only_the_wheels_ship_is_labelled_with_their_releases() -> None:
    """The wheels carry configs/ (no research/): a path only they hold, such as
    configs/telechat3_moe/pretrain_telechat3_105b_a4b_4k.yaml (new at 1.9.0), is recorded for
    those releases, after master."""
    data = release_data()["mindformers"]
    names = [r[0] for r in data["releases"]]
    assert names[-5:] == ["master", "v1.8.0", "v1.9.0", "v2.0.0", "v2.1.0"]
    held = data["paths"]["configs/telechat3_moe/pretrain_telechat3_105b_a4b_4k.yaml"]
    assert [n for bit, n in enumerate(names) if held >> bit & 1] == ["v1.9.0", "v2.0.0", "v2.1.0"]


TELECHAT3_MOE = REL / "user" / "telechat3_moe_105b.yaml"  # 2.1.0 wheel excerpt


def test_a_model_type_only_newer_releases_register_fits_them() -> None:
    """model_type telechat3_moe exists from v1.9.0 on (TeleChat3MoeConfig): a user's config
    naming it fits v1.9.0-v2.1.0 and is read with that class. Before: no class had that
    model_type, so its model class and every class default were unknown."""
    cfg = load_mindformers(str(TELECHAT3_MOE))
    assert cfg.model_class == "TeleChat3MoeConfig"
    assert cfg.dialect.startswith("MindFormers v1.9.0-v2.1.0 (in no release")
    assert "model_type: telechat3_moe" in cfg.dialect  # why the older ones are not candidates


def test_a_model_type_picks_the_class_its_release_registers() -> None:
    """ "telechat3" is master's MoE TeleChat3Config and v1.9.0's dense one; "telechat3_mtp"
    moved to TeleChat3MoeConfig (search_names of each release's register decorator)."""
    from cfglint.normalize.mindformers.defaults import mf_defaults

    at_master, at_new = mf_defaults("master").by_model_type, mf_defaults("v1.9.0").by_model_type
    assert at_master["telechat3_mtp"].name == "TeleChat3Config"
    assert at_new["telechat3_mtp"].name == "TeleChat3MoeConfig"
    assert "telechat3_moe" not in at_master
    dense = at_new["telechat3"]
    assert dense.name == "TeleChat3Config" and dense.defaults["hidden_size"] == 4096
    assert at_master["telechat3"].defaults["hidden_size"] == 2560


# tests/st/test_grace_exit_save_ckpt/test_grace_exit_save_ckpt.yaml @ mindspore-ai/mindformers
# 167a50de (2026-07-24, between v1.9.0 and v2.0.0), lines 1-35 and 115-159, abridged
_GRACE_EXIT = """\
seed: 0
run_mode: 'train'
trainer:
  type: CausalLanguageModelingTrainer
runner_config:
  epochs: 2
  batch_size: 1
optimizer:
  type: AdamW
  betas: [0.9, 0.95]
  eps: 1.e-8
lr_schedule:
  type: CosineWithWarmUpLR
  learning_rate: 1.e-5
  lr_end: 0.0
  warmup_ratio: 0.03
  total_steps: -1
model:
  model_config:
    type: LlamaConfig
    seq_length: 1024
    hidden_size: 512
    num_layers: 2
    num_heads: 4
    vocab_size: 128256
  arch:
    type: LlamaForCausalLM
runner_wrapper:
  type: MFTrainOneStepCell
  scale_sense: 1.0
  use_clip_grad: True
"""


def test_a_legacy_arch_class_the_wheels_ship_fits_them(tmp_path: Path) -> None:
    """LlamaForCausalLM is in every wheel (mindformers/models/llama/llama.py): a legacy Llama
    config written in 2026-07 fits v1.3.0-v2.1.0. The first held-out run labelled it
    v1.3.0-master, "not in the others: model.arch.type: LlamaForCausalLM", because the arch
    class's releases (mindformers_knobs.yaml arch_classes) ended at master."""
    p = tmp_path / "grace_exit.yaml"
    p.write_text(_GRACE_EXIT, encoding="utf-8")
    cfg = load_mindformers(str(p))
    assert cfg.dialect.startswith("MindFormers v1.3.0-v2.1.0 (in no release")


# configs/deepseek3/finetune_deepseek3_12b_16p_pp16.yaml in the mindformers-1.9.0 to 2.1.0
# wheels, lines 9-12 and 125-141 (the model section's attention rows): a DeepSeek-V3 cut to 8
# heads whose other architecture comes from the published config.json (128 KV heads)
_DS3_12B = """\
use_parallel: True
run_mode: 'train'
pretrained_model_dir: "/path/to/DeepSeek-V3"
print_separate_loss: True
use_legacy: False
model:
  model_config:
    offset: 0
    hidden_size: 1792
    intermediate_size: 3072
    num_hidden_layers: 16
    num_attention_heads: 8
    multi_latent_attention: True
    mla_qkv_concat: False
    v_head_dim: 192
    qk_layernorm: True
    initializer_range: 0.01
"""


def test_multi_latent_attention_has_no_kv_groups(tmp_path: Path) -> None:
    """The held-out run on the wheels' configs raised STR006 (error): "8 heads cannot be split
    into 128 groups", the 128 being config.json's num_key_value_heads. MindFormers' MLA never
    reads num_query_groups (parallel_core/training_graph/transformer/
    multi_latent_attention.py @ mindformers-2.1.0.whl): the KV groups are the heads."""
    p = tmp_path / "ds3_12b.yaml"
    p.write_text(_DS3_12B, encoding="utf-8")
    s = load_mindformers(str(p)).structure
    assert s.num_query_groups is not None and s.num_query_groups.value == 8
    assert "no KV groups" in s.num_query_groups.detail


# configs/deepseek3/pretrain_deepseek3_671b.yaml in the mindformers-1.9.0 to 2.1.0 wheels,
# lines 125-168 abridged to the routing rows, and the MoE arguments of MindSpeed-LLM
# examples/mcore/deepseek3/pretrain_deepseek3_671b_4k_ptd.sh @ c77308a1 (no
# --moe-router-bias-update-rate: Megatron's 1e-3)
_DS3_BIAS_MF = """\
run_mode: 'train'
use_legacy: False
model:
  model_config:
    model_type: "deepseek_v3"
    num_hidden_layers: 61
    hidden_size: 7168
    moe_router_load_balancing_type: 'seq_aux_loss'
    moe_aux_loss_coeff: 0.0001
    moe_router_enable_expert_bias: True
    moe_router_bias_update_rate: 0.0001
"""
_DS3_BIAS_MG = """\
python pretrain_gpt.py \\
    --use-mcore-models \\
    --num-layers 61 \\
    --hidden-size 7168 \\
    --num-attention-heads 128 \\
    --num-experts 256 \\
    --moe-router-topk 8 \\
    --moe-router-score-function sigmoid \\
    --moe-router-enable-expert-bias \\
    --seq-length 4096 \\
    --bf16
"""


def test_expert_bias_update_rate_is_compared(tmp_path: Path) -> None:
    """The held-out 2.1.0 DeepSeek-V3 pair's one miss: both sides move each expert's bias by
    sign(load error) x the rate (gpt_model.py:642 @ mindformers-2.1.0.whl), 1e-4 against
    Megatron's default 1e-3, and no rule compared the rate (MOE027 now does)."""
    mf, mg = tmp_path / "ds3.yaml", tmp_path / "ds3.sh"
    mf.write_text(_DS3_BIAS_MF, encoding="utf-8")
    mg.write_text(_DS3_BIAS_MG, encoding="utf-8")
    a = load_mindformers(str(mf)).moe.expert_bias_update_rate
    b = normalize_megatron(load_megatron(str(mg))).moe.expert_bias_update_rate
    assert a is not None and a.value == 0.0001 and b is not None and b.value == 0.001
    from cfglint.check.pipeline import Options, lint

    report, _ = lint(Options(mindformers=[str(mf)], megatron=str(mg)))
    assert "MOE027" in {f.rule for f in report.findings}
