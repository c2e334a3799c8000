"""MindFormers model classes beyond the LLM families: their defaults, class facts and the
checklist fields that do not apply to them (issue 10, unknown share).

Fixtures are our own YAML in the style of the published recipes (fixtures/model_classes/).
Every expected value below is read from the MindFormers source at the release named in the
comment, not from the tool's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.model.config import Config
from cfglint.normalize.mindformers.build import load_mindformers
from conftest import FIXTURES

HERE = FIXTURES / "model_classes"

# what the config cannot say before the run: the chip picks precision_mode's default
RUN_TIME = {"precision.precision_mode"}


def load(name: str) -> Config:
    return load_mindformers(str(HERE / name))


def value(cfg: Config, field: str) -> object:
    v = cfg.get(field)
    assert v is not None, f"{field} is empty ({cfg.not_applicable.get(field)})"
    assert v.known, f"{field} unknown: {v.detail}"
    return v.value


def unknown_fields(cfg: Config) -> set[str]:
    out = set()
    for section in ("structure", "moe", "optimizer", "weight", "precision", "other"):
        for name, v in getattr(cfg, section).items():
            if not v.known:
                out.add(f"{section}.{name}")
    return out


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in HERE.glob("*.yaml") if p.name != "general_template.yaml"),
)
def test_no_unknown_but_run_time_ones(name: str) -> None:
    cfg = load(name)
    assert cfg.model_class, "the class has tables"
    assert unknown_fields(cfg) <= RUN_TIME


def test_internlm_v132_defaults_and_biases() -> None:
    cfg = load("internlm_finetune.yaml")
    assert cfg.model_class == "InternLMConfig"
    # internlm_config.py @ v1.3.2: vocab 103168, rms_norm_eps 1e-6, has_bias True
    assert value(cfg, "structure.vocab_size") == 103168
    assert value(cfg, "structure.norm_epsilon") == pytest.approx(1e-6)
    # has_bias puts biases on wq/wk/wv/wo (internlm_transformer.py:35-70)
    assert value(cfg, "structure.add_qkv_bias") is True
    # own lm_head (internlm.py:104-110); Linear/LlamaEmbedding 'normal' init, sigma 0.01
    assert value(cfg, "structure.tied_embeddings") is False
    assert value(cfg, "weight.init_method_std") == pytest.approx(0.01)
    # LLamaDecodeLayer defaults, not passed by InternLMModel (llama_transformer.py:584, 602)
    assert value(cfg, "structure.fused_norm") is True
    assert value(cfg, "structure.fused_qkv") is False
    # a v1.3.2 class must not borrow the master LlamaConfig's defaults
    assert "master" not in cfg.get("structure.vocab_size").detail  # type: ignore[union-attr]


def test_yizhao_glm_style_rope_groups_and_softmax() -> None:
    cfg = load("yizhao_pretrain.yaml")
    assert cfg.model_class == "YiZhaoConfig"
    # base 10000 x rope_ratio on half of each head (yizhao.py:90-100, yizhao_modules.py:46)
    assert value(cfg, "structure.rope_theta") == pytest.approx(20000.0)
    assert value(cfg, "structure.rotary_percent") == pytest.approx(0.5)
    # multi_query_attention True and multi_query_group_num 2 by default (yizhao_config.py)
    assert value(cfg, "structure.num_query_groups") == 2
    # apply_query_key_layer_scaling forces the fp32 softmax (yizhao_transformer.py:43-46)
    assert value(cfg, "precision.softmax_dtype") == "float32"
    # residual adds in float32 whatever the config says (yizhao_transformer.py:529)
    assert value(cfg, "precision.residual_dtype") == "float32"
    # MegatronLR (yizhao_scheduler.py:54-60): warmup_lr_init 0
    assert value(cfg, "optimizer.lr_warmup_init") == 0


def test_yizhao_softmax_follows_compute_dtype_when_both_switches_off(tmp_path: Path) -> None:
    text = (HERE / "yizhao_pretrain.yaml").read_text()
    text = text.replace(
        "apply_query_key_layer_scaling: True", "apply_query_key_layer_scaling: False"
    )
    p = tmp_path / "yizhao.yaml"
    p.write_text(text)
    cfg = load_mindformers(str(p))
    assert value(cfg, "precision.softmax_dtype") == "bfloat16"


def test_glm_style_groups_follow_the_class_default_when_omitted(tmp_path: Path) -> None:
    # ChatGLM2Config: multi_query_attention True, multi_query_group_num 2 (glm2_config.py);
    # n_kv_heads = group num when MQA is on
    p = tmp_path / "glm.yaml"
    p.write_text(
        "run_mode: train\nmodel:\n  model_config:\n    type: ChatGLM2Config\n"
        "    num_layers: 2\n    hidden_size: 512\n    num_attention_heads: 8\n"
    )
    assert value(load_mindformers(str(p)), "structure.num_query_groups") == 2
    p.write_text(p.read_text() + "    multi_query_attention: False\n")
    assert value(load_mindformers(str(p)), "structure.num_query_groups") == 8


def test_qwenvl_reads_its_language_model_with_outer_dtypes() -> None:
    cfg = load("qwenvl_finetune.yaml")
    assert cfg.model_class == "QwenConfig"
    assert "QwenVLConfig" in cfg.defaults_from
    # the language model's sizes, not the vision tower's
    assert value(cfg, "structure.num_layers") == 6
    assert value(cfg, "structure.hidden_size") == 1536
    # compute_dtype / param_init_type written on QwenVLConfig override the inner ones
    # (qwenvl_config.py:219-229 @ v1.5.0)
    assert value(cfg, "precision.compute_dtype") == "bfloat16"
    assert value(cfg, "weight.param_dtype") == "float32"
    # Qwen always builds QKV bias (qwen_model.py:342 @ v1.5.0)
    assert value(cfg, "structure.add_qkv_bias") is True


def test_mllama_outer_defaults_overwrite_the_text_model() -> None:
    cfg = load("mllama_finetune.yaml")
    assert cfg.model_class == "MllamaTextConfig"
    # MllamaConfig sets compute_dtype (default float16) and seq_length on the text model
    # whatever it says (mllama_config.py:212-227 @ v1.5.0)
    assert value(cfg, "precision.compute_dtype") == "float16"
    assert value(cfg, "structure.seq_length") == 1024
    assert value(cfg, "weight.param_dtype") == "bfloat16"
    assert value(cfg, "structure.num_query_groups") == 4
    assert str(value(cfg, "structure.rope_scaling")).startswith("llama3(")


def test_bert_encoder_facts() -> None:
    cfg = load("bert_pretrain.yaml")
    assert cfg.model_class == "BertConfig"
    assert value(cfg, "structure.num_layers") == 6  # num_hidden_layers
    # the encoder's LayerNorm keeps its default epsilon (modules/layers.py:294)
    assert value(cfg, "structure.norm_epsilon") == pytest.approx(1e-5)
    # the encoder computes in float16; compute_dtype sets its parameter dtype (bert.py:227)
    assert value(cfg, "precision.compute_dtype") == "float16"
    assert value(cfg, "weight.param_dtype") == "float32"
    # initializer_range is for the heads only; the encoder uses 'normal' (sigma 0.01)
    assert value(cfg, "weight.init_method_std") == pytest.approx(0.01)
    assert value(cfg, "structure.tied_embeddings") is True
    # nn.AdamWeightDecay's eps 1e-6 (MindSpore), registered as adamw
    assert value(cfg, "optimizer.eps") == pytest.approx(1e-6)
    # absent by design, with the reason
    for field in ("structure.rope_theta", "structure.rope_scaling", "other.eos_token_id"):
        assert cfg.get(field) is None
        assert cfg.not_applicable[field]


def test_t5_keys_and_relative_positions() -> None:
    cfg = load("t5_finetune.yaml")
    # num_hidden_layers is not a T5Config argument: num_layers keeps its default 6
    assert value(cfg, "structure.num_layers") == 6
    assert value(cfg, "structure.head_dim") == 48  # d_kv
    assert value(cfg, "structure.ffn_hidden_size") == 1536  # d_ff
    assert value(cfg, "structure.normalization") == "RMSNorm"  # t5.py:63-100
    assert value(cfg, "structure.position_embedding_type") == "relative"
    assert value(cfg, "structure.add_bias_linear") is False
    # layers compute in float16; T5Config.compute_dtype only casts the output (t5.py:1609)
    assert value(cfg, "precision.compute_dtype") == "float16"
    assert cfg.get("structure.max_position_embeddings") is None
    assert "relative" in cfg.not_applicable["structure.max_position_embeddings"]


def test_clip_text_encoder() -> None:
    cfg = load("clip_pretrain.yaml")
    assert cfg.model_class == "CLIPTextConfig"
    # the MLP is 4 x d_model whatever intermediate_size says (clip_modules.py:220-224)
    assert value(cfg, "structure.ffn_hidden_size") == 4 * 384
    # CLIPConfig.dtype is the compute dtype (clip.py:66-84)
    assert value(cfg, "precision.compute_dtype") == "float32"
    assert value(cfg, "precision.softmax_dtype") == "float32"
    assert value(cfg, "structure.seq_length") == 64
    assert cfg.get("weight.init_method_std") is None
    assert "per-layer" in cfg.not_applicable["weight.init_method_std"]


def test_clip_dtype_default_passes_down(tmp_path: Path) -> None:
    p = tmp_path / "clip.yaml"
    p.write_text((HERE / "clip_pretrain.yaml").read_text().replace("    dtype: float32\n", ""))
    cfg = load_mindformers(str(p))
    # CLIPConfig's dtype default float16 (clip_config.py:162)
    assert value(cfg, "precision.compute_dtype") == "float16"
    assert value(cfg, "precision.softmax_dtype") == "float16"


def test_whisper_encoder_decoder_fields() -> None:
    cfg = load("whisper_finetune.yaml")
    assert value(cfg, "structure.hidden_size") == 768  # d_model
    assert value(cfg, "structure.tied_embeddings") is True
    assert value(cfg, "weight.embedding_dtype") == "float16"  # embedding_init_type default
    for field in ("structure.num_layers", "structure.num_heads", "structure.add_qkv_bias"):
        assert cfg.get(field) is None
        assert cfg.not_applicable[field]
    assert "num_heads" in cfg.not_applicable["structure.num_query_groups"]


def test_vision_models() -> None:
    vit = load("vit_train.yaml")
    assert value(vit, "structure.add_qkv_bias") is False  # qkv_bias
    assert value(vit, "weight.init_method_std") == pytest.approx(0.02)  # initializer_range
    assert value(vit, "precision.compute_dtype") == "float16"
    assert vit.get("structure.vocab_size") is None
    assert "patches" in vit.not_applicable["structure.vocab_size"]
    mae = load("mae_train.yaml")
    assert "Xavier" in mae.not_applicable["weight.init_method_std"]
    assert mae.get("structure.rope_theta") is None


def test_swin_per_stage_lists_are_not_applicable_without_a_warning() -> None:
    cfg = load("swin_train.yaml")
    assert cfg.get("structure.num_heads") is None
    assert "per stage" in cfg.not_applicable["structure.num_heads"]
    assert not cfg.warnings  # the list is not "not a number"
    assert value(cfg, "weight.init_method_std") == pytest.approx(0.02)  # swin.py:68-73
    assert value(cfg, "precision.residual_dtype") == "float32"


def test_template_without_a_model_says_so() -> None:
    cfg = load("general_template.yaml")
    assert not cfg.model_class
    for field in ("structure.num_layers", "structure.hidden_dropout", "structure.head_dim"):
        v = cfg.get(field)
        assert v is not None and not v.known
        assert "filled in" in v.detail
    # an empty type is not reported as a class missing from cfglint's tables
    assert not any("not in cfglint's" in w for w in cfg.warnings)


def test_no_model_section_reason(tmp_path: Path) -> None:
    p = tmp_path / "ctx.yaml"
    p.write_text("context:\n  mode: 0\nrun_mode: train\n")
    v = load_mindformers(str(p)).get("structure.num_layers")
    assert v is not None and not v.known
    assert "no model.model_config section" in v.detail


def test_show_prints_the_reason_of_a_field_that_does_not_apply(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from cfglint.cli.app import main

    main(["show", str(HERE / "bert_pretrain.yaml"), "--all", "--format", "json"])
    out = capsys.readouterr().out
    assert '"not_applicable"' in out
    assert "no RoPE" in out


def test_t5_head_size_defaults_to_d_kv(tmp_path: Path) -> None:
    # T5's attention width is num_heads x d_kv (t5.py:352, t5_config.py:195 @ v1.5.0), not
    # hidden_size / num_heads: 384 / 8 would be 48, the class default d_kv is 64
    p = tmp_path / "t5.yaml"
    p.write_text((HERE / "t5_finetune.yaml").read_text().replace("    d_kv: 48\n", ""))
    assert value(load_mindformers(str(p)), "structure.head_dim") == 64
