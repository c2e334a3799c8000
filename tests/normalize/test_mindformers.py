"""MindFormers loading and normalization: the real corpus (both dialects, dense and MoE),
base_config inheritance, and our own fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.model.errors import InputError
from cfglint.model.values import Origin
from cfglint.normalize.mindformers.build import load_mindformers
from conftest import CORPUS, FIXTURES, need_shared


def corpus_files() -> list[Path]:
    if not CORPUS.exists():
        return []
    return sorted(CORPUS.glob("*.yaml"))


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_every_corpus_config_loads(path: Path) -> None:
    cfg = load_mindformers(str(path))
    assert cfg.side == "mindformers"
    assert cfg.kind in ("mindformers-legacy", "mindformers-mcore")
    # every value is either known or says why not
    for section in ("structure", "optimizer", "parallel", "precision"):
        for name, v in getattr(cfg, section).items():
            assert v.known or v.detail, f"{section}.{name} unknown without a reason"


def test_corpus_is_present_for_developers() -> None:
    need_shared("corpus", "mindformers")
    assert len(corpus_files()) >= 30


def _cfg(name: str):  # type: ignore[no-untyped-def]
    return load_mindformers(str(need_shared("corpus", "mindformers", name)))


def _at(v, line: int) -> None:  # type: ignore[no-untyped-def]
    assert v.origin is Origin.FILE, v
    assert v.loc is not None and v.loc.line == line, v.loc


# (file, field, value, line or origin) -- read off the files by hand
CASES = [
    # legacy dialect, dense
    ("configs__llama2__pretrain_llama2_7b_bf16.yaml", "structure.num_layers", 32, 139),
    ("configs__llama2__pretrain_llama2_7b_bf16.yaml", "optimizer.beta2", 0.95, 27),
    ("configs__llama2__pretrain_llama2_7b_bf16.yaml", "parallel.data_parallel", 8, 91),
    ("configs__llama2__pretrain_llama2_7b_bf16.yaml", "weight.param_dtype", "float16", 152),
    (
        "configs__llama2__pretrain_llama2_7b_bf16.yaml",
        "optimizer.type",
        "adamw-no-bias-correction",
        25,
    ),
    ("research__qwen2_5__finetune_qwen2_5_7b_8k.yaml", "structure.num_query_groups", 4, 139),
    ("research__qwen2_5__finetune_qwen2_5_7b_8k.yaml", "structure.rope_theta", 1000000.0, 144),
    (
        "research__llama3_1__llama3_1_8b__finetune_llama3_1_8b.yaml",
        "structure.rope_theta",
        500000.0,
        135,
    ),
    ("configs__glm4__finetune_glm4_9b.yaml", "structure.num_query_groups", 2, 46),
    ("configs__glm4__finetune_glm4_9b.yaml", "optimizer.weight_decay", 0.01, 119),
    ("research__internlm2__finetune_internlm2_7b.yaml", "structure.ffn_hidden_size", 14336, 143),
    # legacy dialect, MoE
    ("research__mixtral__mixtral_8x7b__pretrain_mixtral-8x7b.yaml", "moe.num_experts", 8, 35),
    ("research__mixtral__mixtral_8x7b__pretrain_mixtral-8x7b.yaml", "moe.capacity_factor", 1.1, 36),
    (
        "research__mixtral__mixtral_8x7b__pretrain_mixtral-8x7b.yaml",
        "precision.compute_dtype",
        "float16",
        165,
    ),
    (
        "research__deepseek3__deepseek3_671b__pretrain_deepseek3_671b.yaml",
        "moe.num_experts",
        256,
        170,
    ),
    (
        "research__deepseek3__deepseek3_671b__pretrain_deepseek3_671b.yaml",
        "parallel.pipeline_parallel",
        16,
        88,
    ),
    ("research__qwen2__pretrain_qwen2_57b.yaml", "moe.router_topk", 8, 38),
    # new dialect (use_legacy: False), dense and MoE
    ("configs__qwen3__pretrain_qwen3_32b_4k.yaml", "structure.num_layers", 64, 128),
    ("configs__qwen3__pretrain_qwen3_32b_4k.yaml", "structure.ffn_hidden_size", 25600, 127),
    ("configs__qwen3_moe__pretrain_qwen3_30b_a3b_4k.yaml", "structure.num_query_groups", 4, 152),
    ("configs__qwen3_moe__pretrain_qwen3_30b_a3b_4k.yaml", "moe.num_experts", 128, 179),
    ("configs__qwen3_moe__pretrain_qwen3_30b_a3b_4k.yaml", "moe.aux_loss_coeff", 0.001, 191),
    ("configs__qwen3_moe__pretrain_qwen3_30b_a3b_4k.yaml", "parallel.tensor_parallel", 4, 100),
    ("configs__telechat3__pretrain_telechat3_105b_a4b_4k.yaml", "moe.num_experts", 192, 214),
    (
        "configs__telechat3__pretrain_telechat3_105b_a4b_4k.yaml",
        "optimizer.lr_warmup_steps",
        2000,
        50,
    ),
]


@pytest.mark.parametrize(
    ("name", "field", "value", "line"), CASES, ids=[f"{c[0][:24]}-{c[1]}" for c in CASES]
)
def test_corpus_values_with_positions(name: str, field: str, value: object, line: int) -> None:
    v = _cfg(name).get(field)
    assert v is not None
    assert v.value == value
    _at(v, line)


def test_legacy_ffn_is_derived_from_multiple_of() -> None:
    # Llama-2-7B: no intermediate_size; 2/3 x 4 x 4096 rounded up to 256 = 11008
    v = _cfg("configs__llama2__pretrain_llama2_7b_bf16.yaml").structure.ffn_hidden_size
    assert v.value == 11008 and v.origin is Origin.DERIVED
    assert {loc.line for loc in v.locations()} >= {138, 142}  # hidden_size and multiple_of


def test_legacy_kv_heads_default_to_heads() -> None:
    v = _cfg("configs__llama2__pretrain_llama2_7b_bf16.yaml").structure.num_query_groups
    assert v.value == 32 and v.origin is Origin.DERIVED


def test_global_batch_follows_mindformers_formula() -> None:
    # llama2-7b: batch 1 x dp 8 x interleave 1 x gradient accumulation 8 (pipeline_stage 1)
    v = _cfg("configs__llama2__pretrain_llama2_7b_bf16.yaml").optimizer.global_batch_size
    assert v.value == 64 and v.origin is Origin.DERIVED
    # qwen3-moe: batch 1 x dp 1 x micro_batch_num 16 x interleave 1 (pipeline_stage 4)
    assert (
        _cfg("configs__qwen3_moe__pretrain_qwen3_30b_a3b_4k.yaml").optimizer.global_batch_size.value
        == 16
    )


def test_defaults_name_their_class() -> None:
    cfg = _cfg("configs__llama2__pretrain_llama2_7b_bf16.yaml")
    wd = cfg.optimizer.weight_decay
    assert wd.origin is Origin.DEFAULT and wd.value == 0.0
    assert "FP32StateAdamWeightDecay" in wd.detail
    theta = cfg.structure.rope_theta
    assert theta.origin is Origin.DEFAULT and "LlamaConfig" in theta.detail


def test_seed_not_applied_in_semi_auto_parallel() -> None:
    cfg = _cfg("configs__qwen3_moe__pretrain_qwen3_30b_a3b_4k.yaml")
    assert cfg.determinism.seed.value == 1234
    assert cfg.determinism.seed_applied.value is False
    assert "semi-auto" in cfg.determinism.seed_applied.detail


def test_missing_pretrained_model_dir_makes_structure_unknown() -> None:
    cfg = _cfg("configs__general__llm_pretrain_dense_template.yaml")
    v = cfg.structure.num_layers
    assert not v.known and "config.json" in v.detail


def test_base_config_inheritance_merges_every_file() -> None:
    root = need_shared("corpus", "mindformers-base-config", "configs", "gpt2", "run_gpt2_13b.yaml")
    cfg = load_mindformers(str(root))
    assert len(cfg.files) == 6  # the file, four task/model files and ../__base__.yaml
    layers = cfg.structure.num_layers
    assert layers.value == 40 and layers.loc is not None
    assert layers.loc.path.endswith("model_config/gpt2_13b.yaml")
    assert cfg.structure.hidden_size.value == 5120  # embedding_size in this older GPT2Config
    assert cfg.determinism.seed.loc.path.endswith("run_gpt2_13b.yaml")


# -- our own fixtures: run without ../shared ------------------------------------------------
def test_fixture_legacy_pair_side() -> None:
    cfg = load_mindformers(str(FIXTURES / "pairs/llama2_dense/llama2_7b_align.yaml"))
    assert cfg.kind == "mindformers-legacy" and cfg.model_class == "LlamaConfig"
    assert cfg.optimizer.beta2.value == 0.95 and cfg.optimizer.beta2.knob == "optimizer.betas[1]"
    assert cfg.optimizer.clip_grad.value == 1.0
    assert cfg.optimizer.global_batch_size.value == 4
    assert cfg.structure.hidden_dropout.value == 0.0
    assert "no dropout" in cfg.structure.hidden_dropout.detail


def test_fixture_mcore_moe_side() -> None:
    cfg = load_mindformers(str(FIXTURES / "pairs/qwen3_moe/qwen3_moe_align.yaml"))
    assert cfg.kind == "mindformers-mcore" and cfg.model_class == "Qwen3MoeConfig" and cfg.is_moe
    assert cfg.structure.num_layers.knob.endswith("num_hidden_layers")
    assert cfg.structure.activation.value == "swiglu"  # silu + gated linear unit
    assert cfg.structure.qk_norm.value is True  # Qwen3 always builds q/k norm
    assert cfg.moe.router_topk.value == 8


def test_yaml11_string_is_flagged(tmp_path: Path) -> None:
    src = (FIXTURES / "pairs/llama2_dense/llama2_7b_align.yaml").read_text()
    p = tmp_path / "c.yaml"
    p.write_text(src.replace("eps: 1.e-8", "eps: 1e-8"))
    o = load_mindformers(str(p)).optimizer
    # AdamW checks that eps is a float when the trainer builds it (adamw.py:74-84 @ v1.5.0):
    # the run stops there, so no epsilon is compared and the refusal is said instead (OPT018)
    assert not o.eps.known and "refuse to start" in o.eps.detail and o.eps.loc.line
    assert o.build_error is not None and "'1e-8'" in o.build_error.value
    assert o.build_error.locations()[0] == o.eps.loc
    # every argument the constructor type-checks, in one message
    p.write_text(
        src.replace("eps: 1.e-8", "eps: 1e-8").replace("weight_decay: 0.1", "weight_decay: 1e-1")
    )
    o = load_mindformers(str(p)).optimizer
    assert not o.weight_decay.known and "'1e-1'" in o.build_error.value
    assert len(o.build_error.locations()) == 2
    # a string where no constructor checks a type stays a value read as a string
    p.write_text(src.replace("learning_rate: 1.e-5", "learning_rate: 1e-5", 1))
    lr = load_mindformers(str(p)).optimizer.lr
    assert lr.yaml11_string and lr.value == "1e-5"


def test_unknown_model_class_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text("model:\n  model_config:\n    type: NoSuchConfig\n    num_layers: 3\n")
    cfg = load_mindformers(str(p))
    assert cfg.structure.num_layers.value == 3
    assert any("NoSuchConfig" in w for w in cfg.warnings)


def test_base_config_cycle_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("base_config: ['./b.yaml']\nseed: 1\n")
    (tmp_path / "b.yaml").write_text("base_config: ['./a.yaml']\nseed: 2\n")
    with pytest.raises(InputError, match="cycle"):
        load_mindformers(str(tmp_path / "a.yaml"))


@pytest.mark.parametrize(
    ("runner", "loader", "steps"),
    [
        # 1000 samples // global batch 64 = 15 batches; 2 epochs x sink_size 1
        ("epochs: 2\n  batch_size: 1\n  sink_mode: True\n  sink_size: 1", "", 30),
        # sink_size 4: epochs becomes int(15 / 4 * 1) = 3, x 4 = 12 (not 15): trainer/utils.py
        ("epochs: 1\n  batch_size: 1\n  sink_mode: True\n  sink_size: 4", "", 12),
        # drop_remainder False keeps the last partial batch; repeat 2 doubles the batches
        (
            "epochs: 1\n  batch_size: 1\n  sink_mode: False",
            "  drop_remainder: False\n  repeat: 2",
            32,
        ),
    ],
)
def test_total_steps_from_loader_sizes_follows_the_trainer(
    tmp_path: Path, runner: str, loader: str, steps: int
) -> None:
    """total_steps -1 with a Megatron-format loader's sizes[0] is decidable from the YAML."""
    text = (FIXTURES / "examples/llama2_7b/pretrain_llama2_7b.yaml").read_text()
    text = text.replace("epochs: 2\n  batch_size: 1\n  sink_mode: True\n  sink_size: 1", runner)
    text = text.replace(
        'type: MindDataset\n    dataset_dir: "/data/wiki103/wiki4096.mindrecord"',
        "type: BlendedMegatronDatasetDataLoader\n    sizes: [1000, 0, 0]",
    )
    text = text.replace("  drop_remainder: True", loader or "  drop_remainder: True")
    p = tmp_path / "mf.yaml"
    p.write_text(text)
    t = load_mindformers(str(p)).optimizer.train_steps
    assert t is not None and t.known and t.value == steps, (t, text[:600])


def test_legacy_moe_without_sdrop_fills_slots_k_major(tmp_path: Path) -> None:
    """Legacy TopkRouterV2 without enable_sdrop keeps every token's first choice before any
    second choice (moe.py:1551-1553 @ 31a92de4): not Megatron's default "probs" policy, so
    with a capacity on both sides MOE006 says which tokens each side drops."""
    from cfglint.check.pipeline import Options, lint

    mf = FIXTURES / "probe/moe_fp32_knobs.yaml"
    mg = tmp_path / "mg.sh"
    mg.write_text(
        (FIXTURES / "probe/moe_fp32_knobs.sh")
        .read_text()
        .replace(
            "    --moe-router-topk 2\n",
            "    --moe-router-topk 2\n    --moe-expert-capacity-factor 1.1\n",
        )
    )
    report, ctx = lint(Options(mindformers=[str(mf)], megatron=str(mg)))
    assert ctx.mf.moe.token_drop_policy.value == "kmajor"
    (f,) = [f for f in report.findings if f.rule == "MOE006"]
    assert f.values == {"mindformers": "kmajor", "megatron": "probs"}
    assert "first choice before any second choice" in f.message


def test_output_projection_init_std() -> None:
    # legacy models: wo / w2 use init_method_std like every Linear (no depth scaling)
    legacy = load_mindformers(str(FIXTURES / "pairs" / "llama2_dense" / "llama2_7b_align.yaml"))
    assert legacy.weight.init_method_std.value == 0.02
    assert legacy.weight.output_init_std.value == 0.02
    # Megatron-style models port TransformerConfig: std / sqrt(2 x num_layers), 2 layers here
    mcore = load_mindformers(str(FIXTURES / "pairs" / "qwen3_moe" / "qwen3_moe_align.yaml"))
    std = mcore.weight.init_method_std.value
    assert mcore.structure.num_layers.value == 2
    assert mcore.weight.output_init_std.value == pytest.approx(std / 2)


@pytest.mark.parametrize(
    ("gmm", "shared", "capacity"),
    [("True", 1, None), ("False", 1, 1.5), ("True", 0, 1.5)],
)
def test_gmm_with_shared_experts_is_dropless(
    tmp_path: Path, gmm: str, shared: int, capacity: float | None
) -> None:
    """Legacy layers with shared experts route through MoEV3 when use_gmm is on, and MoEV3
    has no expert capacity (llama_layer.py:785-786 @ v1.5.0): capacity_factor is not read."""
    text = (FIXTURES / "probe" / "moe_fp32.yaml").read_text()
    text = text.replace(
        "  capacity_factor: -1\n",
        f"  capacity_factor: 1.5\n  use_gmm: {gmm}\n  shared_expert_num: {shared}\n",
    )
    p = tmp_path / "moe.yaml"
    p.write_text(text)
    cf = load_mindformers(str(p)).moe.capacity_factor
    assert cf.known and cf.value == capacity
