"""Issue 29/30: a MindFormers pynative trainer config is read, never skipped as "not a
MindFormers config" (a silently empty run).

The excerpt is ours, written from configs/deepseek3/pretrain_deepseek3_1b_8p_pynative.yaml of
the mindformers 2.1.0 wheel (same file in 2.0.0): the sections its pynative trainer reads
(mindformers/pynative/config/config.py @ 2.1.0: TrainingConfig, ParallelismConfig,
OptimizerConfig, ModelConfig). torchtitan's JobConfig shares the section names `training` and
`parallelism` but spells its sizes `*_degree`: it stays some other YAML.
"""

from __future__ import annotations

from pathlib import Path

from cfglint.load.detect import PYNATIVE_DIALECT, InputKind, classify

PYNATIVE = """\
training:
  steps: 10
  local_batch_size: 1
  global_batch_size: 8
  max_norm: 1.0
  seed: 42
optimizer:
  type: AdamW
  betas: [0.9, 0.95]
parallelism:
  data_parallel_shard: -1
  tensor_parallel: 1
  pipeline_parallel: 1
model:
  model_type: deepseek_v3
  architectures: DeepseekV3ForCausalLM
  hidden_size: 1792
"""

# torchtitan's train config written as YAML (its JobConfig sections, `_degree` names)
TITAN = """\
training:
  steps: 10
  local_batch_size: 8
parallelism:
  data_parallel_shard_degree: -1
  tensor_parallel_degree: 1
model:
  name: llama3
  flavor: debugmodel
"""


def test_a_pynative_config_is_a_mindformers_training_config(tmp_path: Path) -> None:
    p = tmp_path / "pretrain_deepseek3_1b_8p_pynative.yaml"
    p.write_text(PYNATIVE)
    c = classify(str(p))
    assert c.kind is InputKind.MF_TRAIN
    assert c.role == "mindformers"
    assert c.dialect == PYNATIVE_DIALECT
    assert "pynative" in c.why


def test_torchtitan_sections_are_not_mistaken_for_pynative(tmp_path: Path) -> None:
    p = tmp_path / "titan.yaml"
    p.write_text(TITAN)
    c = classify(str(p), named=False)
    assert c.kind is InputKind.OTHER_YAML


def test_a_pynative_config_that_does_not_parse_is_an_error_even_in_a_folder(
    tmp_path: Path,
) -> None:
    p = tmp_path / "pretrain_pynative.yaml"
    p.write_text(PYNATIVE.replace("  seed: 42\n", "  seed: [42\n"))
    c = classify(str(p), named=False)
    assert c.kind is InputKind.BROKEN and c.line is not None
