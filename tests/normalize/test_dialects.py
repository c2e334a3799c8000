"""Dialects: each Megatron fork or MindSpeed flavour read with its own table, defaults and
post-processing (patterns of real launch scripts, written in our own words)."""

from __future__ import annotations

import json
from pathlib import Path

from cfglint.check.respell import respell
from cfglint.load.dialects import detect_dialect
from cfglint.model.values import Origin
from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/bash\n" + body, encoding="utf-8")
    return path


def test_megatron_llama_rmsnorm_and_causal_lm(tmp_path: Path) -> None:
    # alibaba/Megatron-LLaMA examples/LLaMA/*.sh: --RMSNorm and --causal-lm, no --normalization
    p = _script(
        tmp_path / "llama.sh",
        "opts='--num-layers 4 --hidden-size 64 --num-attention-heads 4 --RMSNorm --causal-lm "
        "--use-rotary-position-embeddings --layernorm-epsilon 1e-6'\n"
        "torchrun --nproc_per_node=8 pretrain_llama.py ${opts}\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and m.dialect.name == "megatron-llama"
    assert any("pretrain_llama.py" in e for e in m.evidence)
    cfg = normalize_megatron(m)
    assert cfg.structure.normalization.value == "RMSNorm"
    assert cfg.structure.tied_embeddings.value is False
    assert cfg.structure.position_embedding_type.value == "rope"
    # no GQA switch in the fork: each of the 4 heads is its own group (was "not decided")
    assert cfg.structure.num_query_groups.value == 4
    assert cfg.structure.qk_norm.value is False
    drop = cfg.structure.hidden_dropout
    assert drop.value == 0.1 and "Megatron-LLaMA" in drop.detail and "v0.19" not in drop.detail
    assert not any("--RMSNorm is not an argument" in w for w in cfg.warnings)
    # a fix never names a flag the fork lacks
    fixed = respell("Pass --normalization RMSNorm (or LayerNorm) to match.", "megatron-llama")
    assert "--RMSNorm" in fixed and "--normalization" not in fixed


def test_megatron_deepspeed_key_value_heads(tmp_path: Path) -> None:
    # microsoft/Megatron-DeepSpeed examples_deepspeed/pretrain_llama2_distributed.sh
    p = _script(
        tmp_path / "ds.sh",
        "ds_args=' --deepspeed --zero-stage=0'\n"
        "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 16 "
        "--normalization rmsnorm --num-key-value-heads 4 $ds_args\n",
    )
    cfg = normalize_megatron(load_megatron(str(p)))
    assert cfg.side_label == "Megatron-DeepSpeed"
    assert cfg.structure.num_query_groups.value == 4
    assert cfg.structure.normalization.value == "RMSNorm"
    assert cfg.moe.num_experts is None or cfg.moe.num_experts.value in (None, 0, 1)
    fixed = respell(
        "Pass --group-query-attention --num-query-groups N to match.", "megatron-deepspeed"
    )
    assert "--num-key-value-heads" in fixed and "--group-query-attention" not in fixed


def test_bigcode_multiquery_is_one_group(tmp_path: Path) -> None:
    p = _script(
        tmp_path / "sc.sh",
        "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 16 "
        "--attention-head-type multiquery --fim-rate 0.5\n",
    )
    cfg = normalize_megatron(load_megatron(str(p)))
    assert cfg.dialect_name == "bigcode-megatron"
    assert cfg.structure.num_query_groups.value == 1


def test_mindspeed_core_legacy_moe(tmp_path: Path) -> None:
    # Ascend/MindSpeed core_r0.8.0 tests_extend/system_tests/*/pretrain_*.sh: deepspeed_moe
    p = _script(
        tmp_path / "tests_extend" / "system_tests" / "moe.sh",
        "MOE='--num-experts 8 --moe-router-topk 2 --moe-aux-loss-coeff 0.01 "
        "--moe-train-capacity-factor 1.1 --moe-model-type deepspeed_moe'\n"
        "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 $MOE\n",
    )
    cfg = normalize_megatron(load_megatron(str(p)))
    assert cfg.side_label == "MindSpeed core_r0.8.0"
    assert cfg.moe.capacity_factor.value == 1.1
    assert cfg.moe.pad_to_capacity.value is True
    assert "MindSpeed-LLM" not in cfg.defaults_from


def _mm(tmp_path: Path, with_json: bool) -> Path:
    root = tmp_path / "repo"
    (root / "mindspeed_mm").mkdir(parents=True)
    if with_json:
        model = {"text_decoder": {"num_layers": 6, "hidden_dropout": 0.0, "rope_theta": 1e6}}
        (root / "examples" / "vl").mkdir(parents=True)
        (root / "examples" / "vl" / "model.json").write_text(json.dumps(model, indent=1))
    return _script(
        root / "examples" / "vl" / "finetune.sh",
        "MM='--mm-data ./examples/vl/data.json --mm-model ./examples/vl/model.json'\n"
        "torchrun pretrain_vlm.py --lr 1e-5 --micro-batch-size 1 $MM\n",
    )


def test_mindspeed_mm_reads_its_model_json(tmp_path: Path) -> None:
    cfg = normalize_megatron(load_megatron(str(_mm(tmp_path, True))))
    assert cfg.side_label == "MindSpeed-MM"
    assert cfg.structure.num_layers.value == 6
    assert cfg.structure.num_layers.loc is not None
    assert cfg.structure.num_layers.loc.path.endswith("model.json")
    assert cfg.structure.hidden_dropout.value == 0.0
    # what the JSON leaves out is not decided, never Megatron's default
    assert not cfg.structure.attention_dropout.known


def test_mindspeed_mm_without_its_json_is_unknown(tmp_path: Path) -> None:
    cfg = normalize_megatron(load_megatron(str(_mm(tmp_path, False))))
    v = cfg.structure.hidden_dropout
    assert v.origin is Origin.UNKNOWN and "model.json" in v.detail


def test_unmodelled_fork_defaults_are_not_decided(tmp_path: Path) -> None:
    p = _script(
        tmp_path / "run.sh",
        "torchrun my_train.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
        "--my-fancy-norm --my-fancy-rope 3\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and not m.dialect.modelled
    cfg = normalize_megatron(m)
    assert cfg.structure.num_layers.value == 4
    assert not cfg.structure.hidden_dropout.known
    assert "not decided" in cfg.structure.hidden_dropout.detail


def test_plain_megatron_stays_megatron() -> None:
    det = detect_dialect(["--num-layers", "--swiglu"], "pretrain_gpt.py")
    assert det.dialect.name == "megatron-lm"


def _pai(tmp_path: Path, backend: str) -> Path:
    root = tmp_path / backend
    (root / "megatron_patch").mkdir(parents=True)
    (root / "megatron_patch" / "arguments.py").write_text("")
    return _script(
        root / "examples" / "qwen" / "run.sh",
        f"export PYTHONPATH=$ROOT:$ROOT/backends/megatron/{backend}:$PYTHONPATH\n"
        "torchrun pretrain_qwen.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
        "--patch-tokenizer-type Qwen2Tokenizer --extra-vocab-size 293\n",
    )


def test_pai_megatron_patch_backend_decides_the_table(tmp_path: Path) -> None:
    # alibaba/Pai-Megatron-Patch examples/*/run_mcore_*.sh put a backend on PYTHONPATH
    m = load_megatron(str(_pai(tmp_path, "Megatron-LM-250624")))
    assert m.dialect is not None and m.dialect.name == "pai-megatron-patch-250624"
    cfg = normalize_megatron(m)
    assert "Megatron-LM-250624" in cfg.structure.hidden_dropout.detail
    assert not any("--patch-tokenizer-type is not an argument" in w for w in cfg.warnings)
    other = load_megatron(str(_pai(tmp_path, "PAI-Megatron-LM-240718")))
    assert other.dialect is not None and not other.dialect.modelled
    assert "PAI-Megatron-LM-240718" in other.dialect.project
    assert not normalize_megatron(other).structure.hidden_dropout.known


def test_mindspeed_llm_release_from_flags_it_dropped(tmp_path: Path) -> None:
    # a MindSpeed-LLM 2.1.0 script (core_r0.8.0 era) uses a flag v26.1.0 no longer has
    p = _script(
        tmp_path / "old.sh",
        "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
        "--use-mcore-models --embed-layernorm\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and m.dialect.name == "mindspeed-llm-2.1.0"
    cfg = normalize_megatron(m)
    assert cfg.side_label == "MindSpeed-LLM 2.1.0"
    assert "core_r0.8.0" in cfg.structure.hidden_dropout.detail
    new = _script(
        tmp_path / "new.sh",
        "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
        "--use-mcore-models --use-fused-rmsnorm\n",
    )
    assert load_megatron(str(new)).dialect.name == "mindspeed-llm"  # type: ignore[union-attr]


def test_mindspeed_mm_fsdp_trainer_is_named_not_read_as_megatron(tmp_path: Path) -> None:
    # Ascend/MindSpeed-MM examples/qwen3vl/finetune_qwen3vl_30B_v1.sh: trainer.py CONFIG.yaml
    p = _script(
        tmp_path / "ft.sh",
        "torchrun --nproc_per_node 16 mindspeed_mm/fsdp/train/trainer.py examples/vl/cfg.yaml\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and not m.dialect.modelled
    cfg = normalize_megatron(m)
    assert not cfg.optimizer.lr.known and not cfg.structure.hidden_dropout.known


def test_megatron_llama_overlapped_optimizer_shards_state(tmp_path: Path) -> None:
    p = _script(
        tmp_path / "llama.sh",
        "torchrun pretrain_llama.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
        "--RMSNorm --overlapped-distributed-optimizer\n",
    )
    m = load_megatron(str(p))
    v = m.arg("use_distributed_optimizer")
    assert v.value is True and "overlapped" in v.detail.lower()


# -- the repository's own parser, read by content (load/tree_parser.py) ---------------------


def _parser_module(path: Path, flags: list[str], deepspeed: bool = False) -> None:
    """A parser module registering ``flags``, shaped as Megatron's arguments.py is."""
    from cfglint.normalize.megatron.args import load_table

    path.parent.mkdir(parents=True, exist_ok=True)
    known = load_table("megatron-lm").by_flag
    body = "".join(f"    group.add_argument({f!r}, {_kwargs(known.get(f), f)})\n" for f in flags)
    if deepspeed:
        body += "    parser = deepspeed.add_config_arguments(parser)\n"
    path.write_text(
        "import argparse\n\ndef parse_args():\n    parser = argparse.ArgumentParser()\n"
        f"    group = parser.add_argument_group(title='all')\n{body}"
        "    return parser.parse_args()\n",
        encoding="utf-8",
    )


def _kwargs(spec: object, flag: str) -> str:
    """How a fork registers ``flag``: as Megatron-LM does when Megatron-LM has it (its type,
    its switch action), a switch for a GLM-style ``--block-lm``, else a string."""
    action = getattr(spec, "action", "store")
    if action in ("store_true", "store_false") or flag == "--block-lm":
        return f"action={'store_false' if action == 'store_false' else 'store_true'!r}"
    return f"type={getattr(spec, 'type', 'str')}, default=None"


def _flags_of(table: str) -> list[str]:
    from cfglint.load.dialects import table_flags

    return sorted(table_flags(table))


def test_inherited_example_runs_the_forks_code(tmp_path: Path) -> None:
    # alibaba/Megatron-LLaMA keeps Megatron-LM's examples/pretrain_gpt.sh (torchrun
    # pretrain_gpt.py ... --data-impl mmap): the flags look like Megatron-LM's, but the tree's
    # megatron/arguments.py is the fork's, so its table and defaults apply
    _parser_module(tmp_path / "megatron" / "arguments.py", _flags_of("megatron-llama"))
    (tmp_path / "pretrain_gpt.py").write_text("print('entry')\n", encoding="utf-8")
    p = _script(
        tmp_path / "examples" / "gpt.sh",
        "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
        "--data-impl mmap --DDP-impl local --fp16\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and m.dialect.name == "megatron-llama"
    assert any("megatron/arguments.py" in e for e in m.evidence)
    assert [v.knob for v in m.unknown] == []  # both flags are the fork's (OTH011 was false)
    cfg = normalize_megatron(m)
    # a default that differs from Megatron-LM's newest (apply_query_key_layer_scaling True)
    assert "Megatron-LLaMA" in cfg.structure.hidden_dropout.detail
    # without that parser the entry script is still in the tree, but the Megatron package it
    # imports is not: the parser the job runs was not read, so --data-impl (unknown to
    # core_v0.19.0) is not decided, never an OTH011 error (issue 28)
    (tmp_path / "megatron" / "arguments.py").unlink()
    m2 = load_megatron(str(p))
    assert m2.dialect is not None and m2.dialect.name == "megatron-lm"
    assert [v.knob for v in m2.unknown] == []
    assert any("--data-impl" in w and "not decided" in w for w in m2.warnings)
    # a launch script on its own (no repository, no entry on disk) runs the table's release
    alone = _script(tmp_path.parent / "alone" / "gpt.sh", p.read_text(encoding="utf-8"))
    m3 = load_megatron(str(alone))
    assert "--data-impl" in [v.knob for v in m3.unknown]


def test_flat_fork_parser_accepts_its_own_flags(tmp_path: Path) -> None:
    # THUDM/GLM: arguments.py at the root registers Megatron's --num-layers beside its own
    # --block-lm / --experiment-name; scripts/*.sh run finetune_*.py from the root
    own = [f"--glm-knob-{i}" for i in range(40)] + ["--experiment-name", "--block-lm"]
    _parser_module(
        tmp_path / "arguments.py", ["--num-layers", "--hidden-size", "--lr", *own], deepspeed=True
    )
    (tmp_path / "finetune_thing.py").write_text("import arguments\n", encoding="utf-8")
    p = _script(
        tmp_path / "scripts" / "ft.sh",
        "python -m torch.distributed.launch finetune_thing.py --num-layers 4 --hidden-size 64 "
        "--lr 1e-5 --experiment-name x --block-lm --deepspeed --no-such-flag 1\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and not m.dialect.modelled
    assert any("arguments.py" in e for e in m.evidence)
    # --deepspeed came from DeepSpeed's add_config_arguments: not Megatron-DeepSpeed
    assert m.dialect.name != "megatron-deepspeed"
    # only the flag its own parser does not register is refused
    assert [v.knob for v in m.unknown] == ["--no-such-flag"]
    cfg = normalize_megatron(m)
    assert cfg.optimizer.lr.value == 1e-5  # written values still read
    assert not cfg.structure.hidden_dropout.known  # its defaults are not decided
    # nor what Megatron-LM's defaults select: GeLU without --swiglu, float32 without
    # --fp16/--bf16, pretraining without --stage (false STR026 / PRC001 errors on GLM pairs)
    assert not cfg.structure.activation.known
    assert not cfg.precision.compute_dtype.known
    assert not cfg.other.training_stage.known


def test_fork_without_its_parser_refuses_nothing(tmp_path: Path) -> None:
    # the same launch with the fork's tree absent: its own flags cannot be told from typos
    p = _script(
        tmp_path / "ft.sh",
        "python finetune_thing.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
        "--experiment-name x --block-lm --cloze-eval\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and not m.dialect.modelled
    assert m.unknown == []
    assert any("is not decided" in w and "--block-lm" in w for w in m.warnings)


def test_entry_script_registers_task_flags(tmp_path: Path) -> None:
    # Megatron's tasks/main.py adds --task, --epochs, --pretrained-checkpoint through
    # extra_args_provider: a launch of it passes them legitimately
    tasks = tmp_path / "tasks" / "main.py"
    tasks.parent.mkdir(parents=True)
    tasks.write_text(
        "def get_tasks_args(parser):\n    group = parser.add_argument_group(title='tasks')\n"
        "    group.add_argument('--task', type=str)\n"
        "    group.add_argument('--pretrained-checkpoint', type=str)\n    return parser\n",
        encoding="utf-8",
    )
    p = _script(
        tmp_path / "examples" / "ft.sh",
        "python -m torch.distributed.launch ./tasks/main.py --task MNLI --pretrained-checkpoint "
        "c --num-layers 4 --hidden-size 64 --num-attention-heads 4 --activations-checkpoint-x\n",
    )
    # Megatron-LM's parser is not in the tree: the flag tasks/main.py does not register
    # may be the installed Megatron's, so it is not decided (issue 28) ...
    m = load_megatron(str(p))
    assert [v.knob for v in m.unknown] == []
    assert any("--activations-checkpoint-x" in w for w in m.warnings)
    # ... and with the release's parser beside it, the parser the job runs was read
    _parser_module(tmp_path / "megatron" / "training" / "arguments.py", _flags_of("core_v0.12.1"))
    m = load_megatron(str(p))
    assert [v.knob for v in m.unknown] == ["--activations-checkpoint-x"]


def test_megatron_release_tree_picks_its_table(tmp_path: Path) -> None:
    # a checkout of Megatron-LM core_v0.12.1: its own parser says which release's defaults
    _parser_module(tmp_path / "megatron" / "training" / "arguments.py", _flags_of("core_v0.12.1"))
    (tmp_path / "pretrain_gpt.py").write_text("print('entry')\n", encoding="utf-8")
    p = _script(
        tmp_path / "run.sh",
        "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and m.dialect.name == "core_v0.12.1"
    assert "core_v0.12.1" in normalize_megatron(m).structure.hidden_dropout.detail


def test_nested_fork_parser_from_a_run_time_entry_path(tmp_path: Path) -> None:
    # THUDM/CodeGeeX scripts/pretrain_*.sh: MAIN_DIR=$(dirname "$(dirname "$(realpath "$0")")")
    # and `deepspeed $MAIN_DIR/pkg/megatron/tools/pretrain_x.py ...`; the fork's parser is
    # pkg/megatron/arguments.py, a folder above the entry script. Its own --ln-fp16 and
    # --load-state are not refused (they were false OTH011 against Megatron-DeepSpeed)
    own = [f"--pkg-knob-{i}" for i in range(40)] + ["--ln-fp16", "--load-state"]
    own.append("--deepspeed-activation-checkpointing")
    _parser_module(
        tmp_path / "pkg" / "megatron" / "arguments.py",
        ["--num-layers", "--hidden-size", "--num-attention-heads", *own],
        deepspeed=True,
    )
    entry = tmp_path / "pkg" / "megatron" / "tools" / "pretrain_x.py"
    entry.parent.mkdir(parents=True)
    entry.write_text("from pkg.megatron import arguments\n", encoding="utf-8")
    p = _script(
        tmp_path / "scripts" / "pretrain.sh",
        'MAIN_DIR=$(dirname "$(dirname "$(realpath "$0")")")\n'
        "deepspeed --hostfile h $MAIN_DIR/pkg/megatron/tools/pretrain_x.py --num-layers 4 "
        "--hidden-size 64 --num-attention-heads 4 --deepspeed --zero-stage 2 "
        "--deepspeed-activation-checkpointing --ln-fp16 --load-state s\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and m.dialect.name != "megatron-deepspeed"
    assert "pkg/megatron/arguments.py" in m.dialect.label
    # --zero-stage is not in its parser: argparse refuses it
    assert [v.knob for v in m.unknown] == ["--zero-stage"]


def test_deepspeed_flags_alone_do_not_make_megatron_deepspeed(tmp_path: Path) -> None:
    # GLM scripts/ds_finetune_record.sh: `deepspeed finetune_x.py --deepspeed
    # --deepspeed_config c.json` with a dozen flags of GLM's own and no tree to read them
    # from. --deepspeed comes with DeepSpeed to any trainer: not Megatron-DeepSpeed's table
    # (whose argparse would refuse --block-lm: false OTH011 errors)
    p = _script(
        tmp_path / "ds.sh",
        "deepspeed --num_gpus 8 finetune_x.py --deepspeed --deepspeed_config c.json "
        "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --block-lm --cloze-eval "
        "--task-mask\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and not m.dialect.modelled
    assert m.unknown == []
    # Megatron-DeepSpeed's own entry with the same two typos stays Megatron-DeepSpeed
    q = _script(
        tmp_path / "mds.sh",
        "deepspeed pretrain_gpt.py --deepspeed --deepspeed_config c.json --num-layers 4 "
        "--hidden-size 64 --num-attention-heads 4 --hiden-dropout 0 --atention-dropout 0\n",
    )
    m2 = load_megatron(str(q))
    assert m2.dialect is not None and m2.dialect.name == "megatron-deepspeed"
    assert {v.knob for v in m2.unknown} == {"--hiden-dropout", "--atention-dropout"}


def test_megatron_checkout_with_an_example_entry_reports_typos(tmp_path: Path) -> None:
    # a checkout of a Megatron-LM release we have no table for (its parser: most of
    # core_v0.12.1's flags, nothing else) running an example entry (examples/x/train_x.py
    # adds its own --x-size): two misspelt flags are typos, not a fork's flags
    flags = _flags_of("core_v0.12.1")
    _parser_module(
        tmp_path / "megatron" / "training" / "arguments.py", flags[: len(flags) * 9 // 10]
    )
    entry = tmp_path / "examples" / "x" / "train_x.py"
    entry.parent.mkdir(parents=True)
    entry.write_text(
        "def extra(parser):\n    parser.add_argument('--x-size', type=int)\n", encoding="utf-8"
    )
    p = _script(
        tmp_path / "examples" / "x" / "run.sh",
        "torchrun examples/x/train_x.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
        "--x-size 3 --hiden-dropout 0 --atention-dropout 0\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and m.dialect.name == "megatron-lm"
    assert {v.knob for v in m.unknown} == {"--hiden-dropout", "--atention-dropout"}


def test_words_that_may_hold_flags_leave_defaults_undecided(tmp_path: Path) -> None:
    # GLM scripts/finetune_seq2seq.sh: `source $1` (not followed) defines $MODEL_ARGS, the
    # model's whole shape; read with a modelled table, its defaults gave false "hidden size
    # none vs 4096" errors. A word that may expand to any flags leaves what it could set
    # undecided; written flags are still read
    p = _script(
        tmp_path / "ft.sh",
        "source $1\ntorchrun pretrain_gpt.py $MODEL_ARGS --lr 1e-4 --fp16\n",
    )
    cfg = normalize_megatron(load_megatron(str(p)))
    assert cfg.optimizer.lr.value == 1e-4
    assert not cfg.structure.hidden_size.known
    assert not cfg.structure.hidden_dropout.known
    assert "may set it" in cfg.structure.hidden_dropout.detail


def test_pai_examples_reusing_other_forks_names_stay_pai(tmp_path: Path) -> None:
    # Pai-Megatron-Patch examples/llama3/run_pretrain_mcore_llama.sh starts its own
    # pretrain_llama.py (Megatron-LLaMA's entry name) on backends/megatron/PAI-Megatron-LM-*;
    # examples/falcon passes --attention-head-type (a bigcode flag). The backend decides: an
    # unmodelled Pai backend, not Megatron-LLaMA's or bigcode's table (their argparse refused
    # --norm-epsilon, --patch-tokenizer-type: false OTH011 errors)
    env = "export PYTHONPATH=${P}:${P}/backends/megatron/PAI-Megatron-LM-240718:$PYTHONPATH\n"
    p = _script(
        tmp_path / "llama.sh",
        env + "torchrun pretrain_llama.py --num-layers 4 --hidden-size 64 "
        "--num-attention-heads 4 --norm-epsilon 1e-5 --patch-tokenizer-type LLamaTokenizer\n",
    )
    m = load_megatron(str(p))
    assert m.dialect is not None and not m.dialect.modelled and "Pai" in m.dialect.label
    assert m.unknown == []
    q = _script(
        tmp_path / "falcon.sh",
        env + "torchrun pretrain_megatron_falcon.py --num-layers 4 --hidden-size 64 "
        "--num-attention-heads 4 --attention-head-type multiquery\n",
    )
    m2 = load_megatron(str(q))
    assert m2.dialect is not None and m2.dialect.name != "bigcode-megatron"


def test_tree_parser_reads_a_registering_wrapper(tmp_path: Path) -> None:
    # megatron_patch/arguments.py: patch_if_not_exist(group, "--patch-size", type=int, ...)
    # calls group.add_argument(keyname, ...) with its own parameter
    from cfglint.load.tree_parser import parser_flags

    f = tmp_path / "arguments.py"
    f.write_text(
        "def patch_if_not_exist(group, keyname, type=None, default=None):\n"
        "    return group.add_argument(keyname, type=type, default=default)\n\n"
        "def get_args(group):\n"
        "    patch_if_not_exist(group, '--patch-size', type=int, default=14)\n"
        "    group.add_argument('--extra-vocab-size', type=int, default=0)\n"
        "    helper(group, '--not-a-flag-registration')\n",
        encoding="utf-8",
    )
    assert parser_flags(str(f)) == {"--patch-size", "--extra-vocab-size"}
