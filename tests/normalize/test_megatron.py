"""The Megatron side: every input kind, argparse-style resolution against the real default
tables, and Megatron's own post-processing of effective values."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.load.dialects import known_versions, table_flags
from cfglint.model.values import Origin
from cfglint.normalize.megatron.args import load_table
from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron
from conftest import FIXTURES

MG = FIXTURES / "megatron"


def cfg_of(path: Path | str, version: str | None = None):  # type: ignore[no-untyped-def]
    return normalize_megatron(load_megatron(str(path), version))


def script(tmp_path: Path, body: str, name: str = "run.sh") -> Path:
    p = tmp_path / name
    p.write_text("#!/bin/bash\n" + body)
    return p


def test_tables_name_their_release() -> None:
    assert {"megatron-lm", "mindspeed-llm", "core_v0.19.0", "core_v0.12.1"} <= set(known_versions())
    t = load_table("megatron-lm")
    assert t.label.startswith("Megatron-LM core_v0.19.0")
    # the hidden defaults that cause most mismatches
    assert t.by_flag["--adam-beta2"].default == 0.999
    assert t.by_flag["--hidden-dropout"].default == 0.1
    assert t.by_flag["--weight-decay"].default == 0.01
    assert t.by_flag["--init-method-std"].default == 0.02
    assert t.by_flag["--normalization"].default == "LayerNorm"
    assert t.by_flag["--seed"].default == 1234
    ms = load_table("mindspeed-llm")
    assert ms.label.startswith("MindSpeed-LLM") and "core_v0.12.1" in ms.label
    assert "--use-fused-rmsnorm" in ms.by_flag and "--use-fused-rmsnorm" not in t.by_flag


def test_table_flags_are_the_flags_of_the_table() -> None:
    """MindSpeed-LLM detection reads the flag set without building the table."""
    for name in known_versions():
        assert table_flags(name) == frozenset(load_table(name).by_flag)
    assert "--no-gradient-accumulation-fusion" in table_flags("megatron-lm")


def test_bash_array_script(tmp_path: Path) -> None:
    cfg = cfg_of(MG / "gpt_arrays.sh")
    assert cfg.kind == "megatron-script"
    v = cfg.structure.num_layers
    assert v.value == 2 and v.origin is Origin.FILE and v.loc.line == 27
    assert cfg.launch.launcher.value == "torchrun"
    assert cfg.launch.entry_script.value == "pretrain_gpt.py"
    assert cfg.parallel.world_size.value == 8


def test_mindspeed_quoted_blocks_and_defaults_through_variables() -> None:
    cfg = cfg_of(MG / "mindspeed_blocks.sh")
    assert cfg.kind == "mindspeed-script"  # --use-fused-rmsnorm is MindSpeed-LLM's own flag
    layers = cfg.structure.num_layers
    assert layers.value == 2 and layers.loc.line == 36  # reached through ${NUM_LAYERS:-2}
    tp = cfg.parallel.tensor_parallel
    assert tp.value == 1 and any(loc.line == 18 for loc in tp.via)  # TP=1 defined on line 18
    assert cfg.optimizer.global_batch_size.value == 64  # GBS=$((8 * NPUS_PER_NODE))
    assert cfg.determinism.seed.value == 1234  # GPT_ARGS+=" --seed ${SEED:-1234}"
    assert cfg.env["HCCL_DETERMINISTIC"].value == "true"
    assert cfg.launch.device.value == "npu"


def test_sequence_parallel_is_switched_off_at_tp1() -> None:
    sp = cfg_of(MG / "mindspeed_blocks.sh").parallel.sequence_parallel
    assert sp.value is False and sp.origin is Origin.DERIVED
    assert "tensor parallel size is 1" in sp.detail
    assert sp.locations()[0].line == 35  # still points at the flag the user wrote


def test_data_parallel_and_global_batch_defaults(tmp_path: Path) -> None:
    p = script(
        tmp_path,
        "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \\\n"
        "  --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 \\\n"
        "  --micro-batch-size 3 --num-layers 4 --hidden-size 64 --num-attention-heads 4\n",
    )
    cfg = cfg_of(p)
    assert cfg.parallel.world_size.value == 16
    assert cfg.parallel.data_parallel.value == 4  # 16 / (2 x 2 x 1)
    gbs = cfg.optimizer.global_batch_size
    assert gbs.value == 12 and gbs.origin is Origin.DERIVED  # micro batch 3 x dp 4


def test_ffn_defaults_follow_megatron(tmp_path: Path) -> None:
    base = "python pretrain_gpt.py --num-layers 2 --hidden-size 4096 --num-attention-heads 32"
    assert cfg_of(script(tmp_path, base + " --swiglu\n")).structure.ffn_hidden_size.value == 10880
    assert cfg_of(script(tmp_path, base + "\n")).structure.ffn_hidden_size.value == 16384
    groups = cfg_of(script(tmp_path, base + " --num-query-groups 8\n")).structure.num_query_groups
    assert groups.value == 32  # --num-query-groups needs --group-query-attention
    groups = cfg_of(script(tmp_path, base + " --group-query-attention --num-query-groups 8\n"))
    assert groups.structure.num_query_groups.value == 8


def test_padded_vocab(tmp_path: Path) -> None:
    p = script(
        tmp_path, "python pretrain_gpt.py --vocab-size 32001 --tensor-model-parallel-size 2\n"
    )
    v = cfg_of(p).structure.padded_vocab_size
    assert v.value == 32256  # rounded up to a multiple of 128 x 2
    p = script(
        tmp_path, "python pretrain_gpt.py --vocab-size 32001 --make-vocab-size-divisible-by 1\n"
    )
    assert cfg_of(p).structure.padded_vocab_size.value == 32001
    p = script(tmp_path, "python pretrain_gpt.py --num-layers 2\n")
    assert not cfg_of(p).structure.padded_vocab_size.known  # comes from the tokenizer


def test_lr_schedule_defaults(tmp_path: Path) -> None:
    p = script(
        tmp_path, "python pretrain_gpt.py --train-iters 1000 --lr-warmup-fraction 0.01 --lr 1e-4\n"
    )
    o = cfg_of(p).optimizer
    assert o.lr_decay_steps.value == 1000 and o.lr_decay_steps.origin is Origin.DERIVED
    assert o.lr_warmup_steps.value == pytest.approx(10.0)
    assert o.lr_decay_style.value == "linear" and o.lr_decay_style.origin is Origin.DEFAULT


def test_argparse_semantics(tmp_path: Path) -> None:
    p = script(
        tmp_path,
        "python pretrain_gpt.py --lr=1e-4 --no-rope-fusion --hidden-dropout 0.2 "
        "--hidden-dropout 0.0 --made-up-flag 3 --data-path 1 /a 2 /b\n",
    )
    m = load_megatron(str(p))
    cfg = normalize_megatron(m)
    assert cfg.optimizer.lr.value == 1e-4
    assert cfg.structure.fused_rope.value is False
    assert cfg.structure.hidden_dropout.value == 0.0  # the last one wins, as in argparse
    assert any("also set" in w for w in m.warnings)
    assert [u.knob for u in cfg.unknown] == ["--made-up-flag"]
    assert cfg.other.data_path.value == ["1", "/a", "2", "/b"]


def test_args_file() -> None:
    cfg = cfg_of(MG / "args.txt")
    assert cfg.kind == "megatron-args"
    assert cfg.structure.ffn_hidden_size.value == 11008
    assert cfg.optimizer.lr_decay_style.value == "cosine"
    assert cfg.other.data_path.value == ["/data/my corpus/text_document"]
    assert not cfg.other.tokenizer_path.known  # ${TOKENIZER_MODEL} cannot be known here


def test_training_log_arguments_block() -> None:
    cfg = cfg_of(FIXTURES / "logs" / "megatron_train.log")
    assert cfg.kind == "megatron-log"
    hd = cfg.structure.hidden_dropout
    assert hd.value == 0.1 and hd.origin is Origin.FILE and hd.loc.line > 2
    # num_query_groups prints 1 for plain MHA: the normalizer knows better
    assert cfg.structure.num_query_groups.value == 32
    assert cfg.precision.compute_dtype.value == "bfloat16"  # torch.bfloat16 in the log
    assert cfg.parallel.data_parallel.value == 8
    assert cfg.structure.use_flash_attention.value is True  # AttnBackend.auto with TE
    assert cfg.structure.padded_vocab_size.value == 32000


def test_yaml_cfg() -> None:
    cfg = cfg_of(MG / "gpt_yaml_cfg.yaml")
    assert cfg.kind == "megatron-yaml"
    assert cfg.structure.num_layers.value == 4 and cfg.structure.num_layers.loc.line == 20
    assert cfg.structure.activation.value == "swiglu"
    assert cfg.parallel.sequence_parallel.value is True  # TP 2 keeps it
    assert cfg.optimizer.beta2.value == 0.95


def test_older_release_spells_norm_epsilon_differently(tmp_path: Path) -> None:
    p = script(tmp_path, "python pretrain_gpt.py --norm-epsilon 1e-6\n")
    assert cfg_of(p, "core_v0.12.1").structure.norm_epsilon.value == 1e-6
    assert cfg_of(p, "core_v0.19.0").structure.norm_epsilon.value == 1e-6


def test_scripts_are_never_executed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    p = script(
        tmp_path,
        "LR=$(touch CANARY1; echo 1e-4)\nSEED=`touch CANARY2`\n"
        'eval "touch CANARY3"\npython pretrain_gpt.py --lr $LR --seed $SEED\n',
    )
    cfg = cfg_of(p)
    assert not list(tmp_path.glob("CANARY*"))
    assert not cfg.optimizer.lr.known and "not evaluated" in cfg.optimizer.lr.detail
    assert not cfg.determinism.seed.known


def test_a_split_placeholder_is_one_warning_naming_its_flag(tmp_path: Path) -> None:
    """`--load $CKPT` with CKPT="your checkpoint load path" word-splits: argparse would refuse
    the three extra words; they are one warning (after --load), not one per word."""
    p = script(
        tmp_path,
        'CKPT="your checkpoint load path"\npython pretrain_gpt.py --load $CKPT --lr 1e-4 oops\n',
    )
    m = load_megatron(str(p))
    stray = [w for w in m.warnings if "stray" in w]
    assert len(stray) == 2, stray
    assert "stray values 'checkpoint load path' after --load" in stray[0]
    assert "stray value 'oops'" in stray[1]


def test_output_projection_init_std(tmp_path: Path) -> None:
    # TransformerConfig.__post_init__: output_layer_init_method = normal(0, std/sqrt(2L))
    base = "python pretrain_gpt.py --num-layers 8 --hidden-size 512 --num-attention-heads 8"
    w = cfg_of(script(tmp_path, base + " --init-method-std 0.02\n")).weight
    assert w.output_init_std.value == 0.005
    assert w.output_init_std.origin is Origin.DERIVED
    w = cfg_of(script(tmp_path, base + "\n")).weight  # the default std, 0.02
    assert w.output_init_std.value == 0.005
    # xavier init has no normal std to compare: unknown, and the reason names the flag
    w = cfg_of(script(tmp_path, base + " --init-method-xavier-uniform\n")).weight
    assert not w.output_init_std.known
    assert "xavier" in w.output_init_std.detail
    # a layer count that cannot be read leaves the derived std unknown, not guessed
    w = cfg_of(script(tmp_path, base.replace("8 --hidden", "$L --hidden") + "\n")).weight
    assert not w.output_init_std.known


@pytest.mark.parametrize("version", ["megatron-lm", "core_v0.12.1"])
@pytest.mark.parametrize(
    ("freq", "dense"),
    [
        ("'([0]*2+[1]*6)'", 2),  # the parenthesised form in Megatron's own help text
        ("'([0]*1+[1]*3)*2'", 1),  # a repeated group
        ("'[0,0,0,1,1,1,1,1]'", 3),
        ("2", 0),  # one MoE layer in every 2 (the first is MoE: layer 0 % 2 == 0)
    ],
)
def test_moe_layer_freq_pattern_is_read(
    tmp_path: Path, version: str, freq: str, dense: int
) -> None:
    """--moe-layer-freq takes an int or a list expression (moe_freq_type, arguments.py); a
    pattern is a valid value, not 'not a valid int', and its leading zeros are the dense
    layers."""
    p = script(
        tmp_path,
        "torchrun pretrain_gpt.py --num-layers 8 --num-experts 8 --moe-layer-freq " + freq,
    )
    m = load_megatron(str(p), version)
    assert not any("moe-layer-freq" in w for w in m.warnings)
    assert normalize_megatron(m).moe.first_k_dense.value == dense


def test_interpolation_factor_one_is_no_rescaling(tmp_path: Path) -> None:
    """--rotary-seq-len-interpolation-factor 1 divides the positions by 1 (Megatron
    rotary_pos_embedding.py `seq *= 1 / factor`): the same RoPE as none, so it must not
    compare as linear scaling against a config without any."""
    one = script(
        tmp_path,
        "torchrun pretrain_gpt.py --position-embedding-type rope "
        "--rotary-seq-len-interpolation-factor 1\n",
        "one.sh",
    )
    four = script(
        tmp_path,
        "torchrun pretrain_gpt.py --position-embedding-type rope "
        "--rotary-seq-len-interpolation-factor 4\n",
        "four.sh",
    )
    assert cfg_of(one).structure.rope_scaling.value == "none"
    assert cfg_of(four).structure.rope_scaling.value == "linear(factor=4)"


@pytest.mark.parametrize("version", ["megatron-lm", "core_v0.12.1", "mindspeed-llm"])
def test_legacy_rotary_switch_means_rope(tmp_path: Path, version: str) -> None:
    """validate_args sets position_embedding_type 'rope' for the deprecated
    --use-rotary-position-embeddings (arguments.py, "Legacy RoPE arguments")."""
    p = script(tmp_path, "torchrun pretrain_gpt.py --use-rotary-position-embeddings\n")
    s = cfg_of(p, version).structure
    assert s.position_embedding_type.value == "rope"
    assert s.rope_theta is not None and s.rope_theta.value == 10000


def test_a_forks_entry_script_is_not_mindspeed_by_shared_flag_names(tmp_path: Path) -> None:
    """A fork of Megatron-LM (Pai-Megatron-Patch) defines --qk-nope-head-dim for its own
    pretrain_deepseek.py; MindSpeed-LLM defines the same name. The entry script is not one of
    MindSpeed-LLM's, so the run is read as Megatron-LM, and the input warning says why and how
    to choose otherwise; MindSpeed-LLM's own entry script with the same flag stays MindSpeed."""
    body = "torchrun {entry} --num-layers 4 --qk-nope-head-dim 128\n"
    fork = load_megatron(str(script(tmp_path, body.format(entry="pretrain_deepseek.py"))))
    assert fork.kind == "megatron-script"
    assert any(
        "pretrain_deepseek.py is not a MindSpeed-LLM entry script" in w for w in fork.warnings
    )
    own = load_megatron(str(script(tmp_path, body.format(entry="pretrain_gpt.py"), "own.sh")))
    assert own.kind == "mindspeed-script"
    forced = load_megatron(
        str(script(tmp_path, body.format(entry="pretrain_deepseek.py"), "f.sh")), "mindspeed-llm"
    )
    assert forced.kind == "mindspeed-script"


def test_mla_ignores_use_rope_scaling(tmp_path: Path) -> None:
    """GPTModel reads --use-rope-scaling only for its own rotary embedding, which it builds
    only without multi-latent attention (gpt_model.py `not multi_latent_attention`); MLA
    takes its RoPE from --rope-type, which cfglint does not model: unknown, not llama3."""
    p = script(
        tmp_path,
        "torchrun pretrain_gpt.py --multi-latent-attention --rope-type yarn "
        "--use-rope-scaling --position-embedding-type rope\n",
    )
    rs = cfg_of(p, "megatron-lm").structure.rope_scaling
    assert not rs.known and "multi-latent attention" in rs.detail
    plain = script(
        tmp_path,
        "torchrun pretrain_gpt.py --position-embedding-type rope --use-rope-scaling\n",
        "p.sh",
    )
    assert cfg_of(plain, "megatron-lm").structure.rope_scaling.value.startswith("llama3(")


@pytest.mark.parametrize(
    ("score", "topk", "normalized"),
    [("sigmoid", 8, True), ("sigmoid", 1, False), ("softmax", 8, False)],
)
def test_sigmoid_router_renormalizes_whatever_pre_softmax_says(
    tmp_path: Path, score: str, topk: int, normalized: bool
) -> None:
    """Megatron's sigmoid router divides the chosen scores by their sum (top-k > 1);
    --moe-router-pre-softmax changes only the softmax router (moe_utils.py)."""
    p = script(
        tmp_path,
        "torchrun pretrain_gpt.py --num-experts 16 --moe-router-pre-softmax "
        f"--moe-router-score-function {score} --moe-router-topk {topk}\n",
    )
    assert cfg_of(p, "megatron-lm").moe.norm_topk_prob.value is normalized


@pytest.mark.parametrize(
    ("launch", "world"),
    [
        ("deepspeed pretrain_gpt.py", None),  # every device of the node: machine-dependent
        ("deepspeed --include localhost:0,1 pretrain_gpt.py", None),
        ("deepspeed --num_gpus 4 pretrain_gpt.py", 4),
        ("torchrun pretrain_gpt.py", 1),  # torchrun's --nproc_per_node defaults to 1
    ],
)
def test_deepspeed_launcher_uses_every_device_by_default(
    tmp_path: Path, launch: str, world: int | None
) -> None:
    """deepspeed's --num_gpus defaults to -1, all devices (launcher/runner.py); only torchrun
    and torch.distributed.launch start one process per node by default."""
    p = script(
        tmp_path, f"{launch} --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2\n"
    )
    ws = cfg_of(p, "megatron-lm").parallel.world_size
    if world is None:
        assert not ws.known and "depends on the machine" in ws.detail
    else:
        assert ws.value == world


@pytest.mark.parametrize(
    ("head", "world"),
    [
        ("", None),  # $DIST never set: it may hold --nproc_per_node, no default applies
        ('DIST="--nproc_per_node 8"\n', 8),
        ('DIST="--nnodes 2"\n', 2),  # known options, nproc_per_node's default 1
    ],
)
def test_unknown_launcher_options_leave_the_world_size_unknown(
    tmp_path: Path, head: str, world: int | None
) -> None:
    p = script(tmp_path, head + "torchrun $DIST pretrain_gpt.py --tensor-model-parallel-size 2\n")
    ws = cfg_of(p, "megatron-lm").parallel.world_size
    if world is None:
        assert not ws.known and "options are not all known" in ws.detail
    else:
        assert ws.value == world


def test_sample_based_run_warms_up_over_lr_warmup_samples(tmp_path: Path) -> None:
    # flagos-ai/Megatron-LM-FL @ 175ae90e examples/mamba/train.sh:69-84 (Megatron-LM's
    # examples/mamba/train.sh): --train-samples, --lr-warmup-samples, --lr-decay-samples
    # with --global-batch-size; training.py get_optimizer_param_scheduler then warms up over
    # lr_warmup_samples (issue 28: it was read as 0 warmup iterations)
    p = script(
        tmp_path,
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 64 "
        "--num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 "
        "--train-samples 2560000 --lr-warmup-samples 25600 --lr-decay-samples 2560000 "
        "--global-batch-size 256 --micro-batch-size 4 --lr 2.5e-4 --min-lr 2.5e-5 "
        "--lr-decay-style cosine\n",
    )
    o = cfg_of(p).optimizer
    assert o.train_steps.value == 10000
    assert o.lr_warmup_steps.value == 100  # 25600 samples / 256 a step
    assert o.lr_decay_steps.value == 10000
    assert o.lr_warmup_fraction.value == 0.01


def test_sgd_run_has_no_adam_betas_to_compare(tmp_path: Path) -> None:
    # Megatron-LM core_v0.19.0 megatron/core/optimizer/__init__.py builds SGD(lr, weight_decay,
    # momentum=config.sgd_momentum) for --optimizer sgd: --adam-beta1/2 and --adam-eps are
    # never read, so their defaults are no value of the run (issue 28)
    p = script(
        tmp_path,
        "torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 64 "
        "--num-attention-heads 4 --seq-length 128 --max-position-embeddings 128 "
        "--optimizer sgd --sgd-momentum 0.9 --lr 0.1 --train-iters 100 --micro-batch-size 1\n",
    )
    o = cfg_of(p).optimizer
    for v in (o.beta1, o.beta2, o.eps):
        assert not v.known and "sgd" in v.detail
    q = script(
        tmp_path, p.read_text(encoding="utf-8").replace("sgd --sgd-momentum 0.9", "adam"), "a.sh"
    )
    assert cfg_of(q).optimizer.beta1.value == 0.9


def test_misspelt_flags_are_matched_once_each_and_at_most_a_bounded_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fuzz campaign's seed 12 case 1770: a launch line that repeats one unknown flag
    20,000 times took 11 s (a fuzzy match against every known flag each time) and hung the
    run past its 20 s bound under load. A repeated flag is matched once; a script inventing
    thousands gets suggestions for the first SUGGESTED_FLAGS only, and each still reads."""
    import difflib

    from cfglint.normalize.megatron import args

    calls: list[str] = []
    real = difflib.get_close_matches

    def counting(word, *a, **k):  # type: ignore[no-untyped-def]
        calls.append(word)
        return real(word, *a, **k)

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    invented = " ".join(f"--made-up-{n} 1" for n in range(args.SUGGESTED_FLAGS + 50))
    script = tmp_path / "pretrain.sh"
    script.write_text(
        "torchrun pretrain_gpt.py --hidden-dropot 0.1 "
        + "--f 1 " * 2000
        + invented
        + " --num-layers 2\n"
    )
    m = load_megatron(str(script))
    assert len(calls) == args.SUGGESTED_FLAGS  # --hidden-dropot, --f, then invented ones
    assert calls.count("--f") == 1
    flags = {u.knob: u for u in m.unknown}
    assert "did you mean --hidden-dropout?" in flags["--hidden-dropot"].detail
    assert f"--made-up-{args.SUGGESTED_FLAGS + 49}" in flags  # read, with no suggestion
    assert m.values["num_layers"].value == 2
