"""MindFormers' pynative trainer configs (issues 29, 30): each section read with the release's
own dataclass defaults, the model through the mcore readers, what was not read not decided.

Excerpts are ours, written from configs/deepseek3/pretrain_deepseek3_1b_8p_pynative.yaml and
configs/deepseek4/pretrain_deepseek4_flash.yaml of the mindformers 2.1.0 wheel; defaults from
mindformers/pynative/config/config.py of each wheel (data/mindformers_pynative.yaml).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.cli import main
from cfglint.model.values import Origin
from cfglint.normalize.mindformers.build import load_mindformers

MODEL = """\
model:
  model_type: deepseek_v3
  architectures: DeepseekV3ForCausalLM
  vocab_size: 129280
  hidden_size: 1792
  num_hidden_layers: 16
  num_attention_heads: 4
  initializer_range: 0.01
  params_dtype: "bfloat16"
  n_routed_experts: 8
  num_experts_per_tok: 4
"""

FULL = (
    """\
checkpoint:
  load_path: ""
training:
  steps: 10
  local_batch_size: 1
  global_batch_size: 8
  max_norm: 1.0
  seed: 42
  deterministic: True
optimizer:
  type: AdamW
  betas:
    - 0.9
    - 0.95
  eps: 1.e-8
  weight_decay: 0.01
lr_scheduler:
  type: ConstantWarmUpLR
  learning_rate: 1.e-5
  warmup_ratio: 0
parallelism:
  data_parallel_shard: -1
  expert_parallel: 1
  tensor_parallel: 1
  pipeline_parallel: 1
  sequence_parallel: true
train_dataset:
  dataloader:
    type: BlendedMegatronDatasetDataLoader
    datasets_type: GPTDataset
    shuffle: false
"""
    + MODEL
)

# only what detection needs: every other setting is the release's dataclass default
BARE = (
    """\
training:
  steps: 100
parallelism:
  tensor_parallel: 2
"""
    + MODEL
)


def _load(tmp_path: Path, text: str, name: str = "pynative.yaml"):  # type: ignore[no-untyped-def]
    p = tmp_path / name
    p.write_text(text)
    return load_mindformers(str(p))


def test_written_sections_are_read(tmp_path: Path) -> None:
    cfg = _load(tmp_path, FULL)
    assert cfg.kind == "mindformers-pynative"
    o = cfg.optimizer
    assert (o.type.value, o.beta1.value, o.beta2.value) == ("adamw", 0.9, 0.95)
    assert (o.eps.value, o.weight_decay.value, o.clip_grad.value) == (1e-8, 0.01, 1.0)
    assert o.beta2.knob == "optimizer.betas[1]" and o.beta2.loc.line == 14
    assert (o.global_batch_size.value, o.micro_batch_size.value) == (8, 1)
    # the LR class gets total_steps = training.steps (pynative/trainer/utils.py:594-609)
    assert (o.lr.value, o.lr_decay_style.value, o.train_steps.value) == (1e-5, "constant", 10)
    assert o.lr_warmup_steps.value == 0
    p = cfg.parallel
    assert (p.tensor_parallel.value, p.pipeline_parallel.value, p.expert_parallel.value) == (
        1,
        1,
        1,
    )
    d = cfg.determinism
    assert (d.seed.value, d.seed_applied.value, d.deterministic.value) == (42, True, True)
    assert d.data_shuffle.value is False
    assert cfg.weight.load_checkpoint.value == ""


def test_model_keys_go_through_the_mcore_readers(tmp_path: Path) -> None:
    cfg = _load(tmp_path, FULL)
    assert cfg.model_class == "DeepseekV3Config"
    s = cfg.structure
    assert (s.num_layers.value, s.hidden_size.value, s.num_heads.value) == (16, 1792, 4)
    assert s.num_layers.knob == "model.num_hidden_layers"
    assert cfg.moe.num_experts.value == 8 and cfg.moe.router_topk.value == 4
    assert cfg.weight.init_method_std.value == 0.01
    # MLA, as DeepseekV3 is built (modeling_deepseek_v3_pynative.py:36 is_mla_model=True)
    assert s.multi_latent_attention.value is True


def test_unwritten_settings_are_the_releases_dataclass_defaults(tmp_path: Path) -> None:
    cfg = _load(tmp_path, BARE)
    o, d = cfg.optimizer, cfg.determinism
    # OptimizerConfig (config.py:572-593 @ 2.1.0): AdamW, betas [0.9, 0.95], eps 1e-8, wd 0.01
    assert o.beta2.origin is Origin.DEFAULT and o.beta2.value == 0.95
    assert "OptimizerConfig" in o.beta2.detail and "pynative/config/config.py" in o.beta2.detail
    assert (o.eps.value, o.weight_decay.value) == (1e-8, 0.01)
    # TrainingConfig: max_norm 1.0, seed 42, deterministic False, global batch 1
    assert (o.clip_grad.value, d.seed.value, d.deterministic.value) == (1.0, 42, False)
    assert o.global_batch_size.value == 1
    # DataloaderConfig.shuffle False
    assert d.data_shuffle.origin is Origin.DEFAULT and d.data_shuffle.value is False
    assert cfg.parallel.tensor_parallel.value == 2 and cfg.parallel.pipeline_parallel.value == 1


def test_what_was_not_read_is_not_decided(tmp_path: Path) -> None:
    cfg = _load(tmp_path, FULL)
    for v in (
        cfg.parallel.data_parallel,  # the device count is not in the file
        cfg.precision.loss_dtype,  # pynative/loss/loss.py not read
        cfg.precision.loss_scale,  # runner_wrapper is a classic section
        cfg.structure.output_head,  # the pynative GPTModel's head not read
        cfg.determinism.shuffler,
    ):
        assert not v.known and v.detail


def test_release_is_the_one_whose_config_module_takes_every_key(tmp_path: Path) -> None:
    # 2.0.0's TrainingConfig has no rampup_batch_size (2.1.0's has, default None):
    # BaseConfig.from_dict raises on a key a class without allow_extra does not define
    text = FULL.replace(
        "  deterministic: True\n", "  deterministic: True\n  rampup_batch_size: null\n"
    )
    cfg = _load(tmp_path, text)
    assert "v2.1.0" in cfg.dialect and "v2.0.0" not in cfg.dialect
    both = _load(tmp_path, FULL, "both.yaml")
    assert "v2.0.0-v2.1.0" in both.dialect


def test_a_key_no_release_takes_leaves_the_defaults_not_decided(tmp_path: Path) -> None:
    cfg = _load(tmp_path, BARE.replace("  steps: 100\n", "  steps: 100\n  no_such_knob: 1\n"))
    assert any("no release's pynative config module takes it" in w for w in cfg.warnings)
    assert not cfg.optimizer.beta2.known  # no release's defaults apply
    assert cfg.optimizer.train_steps.value == 100  # what is written still is


def test_another_optimizer_is_not_read_as_adamw(tmp_path: Path) -> None:
    text = FULL.replace("  type: AdamW\n", "  type: Muon\n")
    cfg = _load(tmp_path, text)
    assert not cfg.optimizer.eps.known and "Muon" in cfg.optimizer.eps.detail


def test_no_half_precision_master_warning_for_the_pynative_adamw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the pynative AdamW keeps a float32 copy of every bfloat16 parameter
    # (pynative/optimizer/adamw.py:222-243 @ 2.1.0): WGT002's "no master copy" is false here
    p = tmp_path / "pynative.yaml"
    p.write_text(FULL)
    args = tmp_path / "args.txt"
    args.write_text("--num-layers 16 --hidden-size 1792 --num-attention-heads 4 --bf16\n")
    main([str(p), "--megatron", str(args)])
    out = capsys.readouterr().out
    assert "WGT001" in out or "WGT" in out  # the weight rules ran on the pair
    assert "WGT002" not in out


def test_a_release_that_refuses_the_file_is_said_when_named(tmp_path: Path) -> None:
    # 1.9.0's ParallelismConfig has no data_parallel_shard / expert_parallel
    p = tmp_path / "pynative.yaml"
    p.write_text(FULL)
    cfg = load_mindformers(str(p), "v1.9.0")
    assert any("v1.9.0 refuses parallelism." in w for w in cfg.warnings)


def test_sequence_parallel_has_no_effect_at_tensor_parallel_1(tmp_path: Path) -> None:
    cfg = _load(tmp_path, FULL)
    assert cfg.parallel.sequence_parallel.value is False
    two = _load(
        tmp_path, FULL.replace("  tensor_parallel: 1\n", "  tensor_parallel: 2\n"), "b.yaml"
    )
    assert two.parallel.sequence_parallel.value is True


def test_the_stage_is_read_from_the_dataset_not_run_mode(tmp_path: Path) -> None:
    assert _load(tmp_path, FULL).other.training_stage.value == "pretrain"
    # run_mode train also fine-tunes in the pynative trainer: no GPTDataset, no stage
    bare = _load(tmp_path, BARE, "bare.yaml").other.training_stage
    assert not bare.known and bare.detail


def test_a_classic_config_with_a_training_section_stays_classic(tmp_path: Path) -> None:
    text = FULL.replace("model:\n", "use_parallel: True\nmodel:\n")
    assert _load(tmp_path, text).kind != "mindformers-pynative"
