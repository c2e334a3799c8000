"""A MindFormers config is read with the defaults of its own release (issue 18: one report
mixed "MindFormers master LlamaConfig" with "v1.5.0 FP32StateAdamWeightDecay")."""

from __future__ import annotations

from pathlib import Path

from cfglint.model.values import Origin
from cfglint.normalize.mindformers.build import load_mindformers

_LEGACY = """\
seed: 0
run_mode: train
optimizer:
  type: {opt}
  learning_rate: 1.e-5
lr_schedule:
  type: CosineWithWarmUpLR
  learning_rate: 1.e-5
  warmup_ratio: 0.03
  total_steps: -1
model:
  model_config:
    type: LlamaConfig
    hidden_size: 256
    num_layers: 2
    num_heads: 4
{moe}"""

_MOE = """\
moe_config:
  expert_num: 4
  num_experts_chosen: 2
"""


def _labels(cfg) -> set[str]:  # type: ignore[no-untyped-def]
    out = set()
    for section in (cfg.structure, cfg.optimizer, cfg.moe, cfg.precision):
        for v in section.__dict__.values():
            if getattr(v, "origin", None) is Origin.DEFAULT and "MindFormers" in v.detail:
                out.add(v.detail)
    return out


def _write(tmp_path: Path, opt: str, moe: str = "") -> str:
    p = tmp_path / "cfg.yaml"
    p.write_text(_LEGACY.format(opt=opt, moe=moe), encoding="utf-8")
    return str(p)


def test_a_class_gone_from_master_puts_the_config_in_its_release(tmp_path: Path) -> None:
    # no release holds it: every release with all its classes is a candidate (issue 30)
    cfg = load_mindformers(_write(tmp_path, "FP32StateAdamWeightDecay"))
    assert cfg.dialect.startswith("MindFormers v1.3.0-v1.5.0")
    labels = _labels(cfg)
    assert labels and not any("master" in x for x in labels)
    assert any("v1.3.0-v1.5.0 LlamaConfig" in x for x in labels)


def test_a_config_of_current_classes_spans_every_release(tmp_path: Path) -> None:
    # not master alone: nothing says the job runs master rather than an older release, or
    # one of the package index's releases after it (v1.8.0-v2.1.0, read from their wheels)
    cfg = load_mindformers(_write(tmp_path, "AdamW"))
    assert cfg.dialect.startswith("MindFormers v1.3.0-v2.1.0")
    labels = _labels(cfg)
    assert labels and all("v1.3.0-v2.1.0" in x for x in labels if "LlamaConfig" in x)


def test_an_explicit_release_names_classes_it_lacks(tmp_path: Path) -> None:
    cfg = load_mindformers(_write(tmp_path, "FP32StateAdamWeightDecay"), "master")
    assert any("no such class in MindFormers master" in x for x in _labels(cfg))


def test_moe_aux_loss_citation_is_the_release_s(tmp_path: Path) -> None:
    cfg = load_mindformers(_write(tmp_path, "FP32StateAdamWeightDecay", _MOE))
    why = cfg.moe.aux_loss_coeff.detail
    assert "06e1af77" in why and "llama_transformer.py:961-965" in why
    cfg = load_mindformers(_write(tmp_path, "AdamW", _MOE))
    assert "mindformers-2.1.0.whl" in cfg.moe.aux_loss_coeff.detail
    cfg = load_mindformers(_write(tmp_path, "AdamW", _MOE), "master")
    assert "f52743ca" in cfg.moe.aux_loss_coeff.detail


def test_cli_mindformers_version(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from cfglint.cli import main

    path = _write(tmp_path, "AdamW")
    main(["show", path])
    assert "MindFormers v1.3.0-v2.1.0" in capsys.readouterr().out
    main(["show", path, "--mindformers-version", "v1.5.0"])
    out = capsys.readouterr().out
    assert "MindFormers v1.5.0" in out and "MindFormers master" not in out


def test_published_model_picks_its_config_class(tmp_path: Path) -> None:
    # configs/qwen3/finetune_qwen3_32b_4k.yaml: HF-style, pretrained_model_dir not here;
    # Qwen3's MLP is gated by its class (mf_overrides), whatever config.json says
    p = tmp_path / "q.yaml"
    p.write_text(
        "use_legacy: False\npretrained_model_dir: /path/to/Qwen3-32B\n"
        "model:\n  model_config:\n    compute_dtype: bfloat16\n",
        encoding="utf-8",
    )
    cfg = load_mindformers(str(p))
    assert cfg.model_class == "Qwen3Config"
    assert cfg.structure.activation.value == "swiglu"
