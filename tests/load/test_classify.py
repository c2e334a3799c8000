"""Issue 17: one classifier decides what each input is and which role it plays.

Each case reproduces, in our own words, a pattern found in a real repository cfglint had not
seen (bench/classify_trials.md lists them with commits): Hugging Face Trainer launches in an
NPU model zoo, a Megatron fork whose arguments come from ``source $1``, MindSpeed-MM launches
whose settings live in a positional YAML, LAVIS-style and GPT-NeoX YAML, GitLab CI files,
MindFormers inference configs, entry scripts written through variables and ``eval``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.cli import main
from cfglint.load.classify import plan
from cfglint.load.detect import InputKind, classify
from conftest import FIXTURES

EX = FIXTURES / "examples" / "llama2_7b"
EX_MF, EX_MG = str(EX / "pretrain_llama2_7b.yaml"), str(EX / "pretrain_llama2_7b.sh")

MEGATRON_FLAGS = (
    "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 "
    "--micro-batch-size 4 --global-batch-size 32 --lr 1e-4 --train-iters 1000"
)

SCRIPTS = {
    # ModelZoo-PyTorch ChatGLM p-tuning: HF Trainer arguments through main.py
    "hf_trainer.sh": (
        "torchrun --nproc_per_node 8 main.py --do_train --train_file t.json "
        "--model_name_or_path THUDM/chatglm-6b --per_device_train_batch_size 1 "
        "--learning_rate 2e-2 --max_steps 3000\n",
        InputKind.OTHER_FRAMEWORK,
        "Hugging Face Trainer",
    ),
    # MiniGPT-4 / LAVIS: train.py configured by its own YAML, no Megatron flag
    "train_lavis.sh": (
        "torchrun --nproc_per_node 4 train.py --cfg-path train_configs/stage1.yaml\n",
        InputKind.OTHER_FRAMEWORK,
        "not Megatron's",
    ),
    # GLM-10B: a Megatron-derived trainer whose arguments come from the sourced $1
    "glm_pretrain.sh": (
        'source $1\nrun_cmd="deepspeed --num_gpus 8 pretrain_glm.py ${gpt_options}"\n'
        "eval ${run_cmd}\n",
        InputKind.UNREADABLE_LAUNCH,
        "not known statically",
    ),
    # MindSpeed-MM FSDP backend: the settings are a positional YAML, not Megatron flags
    "mm_transformers.sh": (
        "config_path=examples/qwen3vl/qwen3vl_full_sft_8B.yaml\n"
        "torchrun --nproc_per_node 8 pretrain_transformers.py ${config_path} "
        "--distributed-backend nccl\n",
        InputKind.UNREADABLE_LAUNCH,
        "qwen3vl_full_sft_8B.yaml",
    ),
    # Megatron-DeepSpeed examples: the entry path is built from `pwd`
    "ds_pretrain.sh": (
        "dir=`pwd`\ndeepspeed --num_gpus 8 ${dir}/../../pretrain_gpt.py " + MEGATRON_FLAGS + "\n",
        InputKind.MG_LAUNCH,
        "pretrain_gpt.py",
    ),
    # the whole command in a variable, run with eval
    "eval_launch.sh": (
        f'run_cmd="deepspeed --num_gpus 8 pretrain_gpt.py {MEGATRON_FLAGS}"\neval ${{run_cmd}}\n',
        InputKind.MG_LAUNCH,
        "pretrain_gpt.py",
    ),
    # Megatron-DeepSpeed examples_deepspeed: both at once, the path from `pwd` inside eval
    "ds_eval_pwd.sh": (
        "DIR=`pwd`\n"
        f'run_cmd="deepspeed ${{DIR}}/../../pretrain_gpt.py {MEGATRON_FLAGS} &> log.txt"\n'
        "echo ${run_cmd}\neval ${run_cmd}\n",
        InputKind.MG_LAUNCH,
        "deepspeed runs pretrain_gpt.py",
    ),
    # Megatron-LM's tasks/main.py: --task decides between fine-tuning and evaluation
    "zeroshot.sh": (
        "python -m torch.distributed.launch --nproc_per_node 8 ./tasks/main.py --task LAMBADA "
        + MEGATRON_FLAGS
        + "\n",
        InputKind.EVALUATION,
        "tasks/main.py",
    ),
    "finetune_race.sh": (
        "python -m torch.distributed.launch --nproc_per_node 8 ./tasks/main.py --task RACE "
        + MEGATRON_FLAGS
        + "\n",
        InputKind.MG_LAUNCH,
        "tasks/main.py",
    ),
    # data preparation, then the training run: the training run decides
    "prep_then_train.sh": (
        "python tools/preprocess_data.py --input x.json --output-prefix data/x --workers 8\n"
        f"torchrun --nproc_per_node 8 pretrain_gpt.py {MEGATRON_FLAGS}\n",
        InputKind.MG_LAUNCH,
        "torchrun runs pretrain_gpt.py",
    ),
    # InternEvo / verl: other frameworks' launchers
    "verl_ppo.sh": (
        "python3 -m verl.trainer.main_ppo data.train_batch_size=256 trainer.n_gpus_per_node=8\n",
        InputKind.OTHER_FRAMEWORK,
        "verl",
    ),
    # verl examples/sft: the device count from the command line (`--nproc_per_node=$1`, an
    # option whatever its value) and a module of verl's own package
    "verl_sft.sh": (
        "n=$1\ntorchrun --standalone --nnodes=1 --nproc_per_node=$n -m verl.trainer.sft_x "
        "data.train_files=t.parquet trainer.total_epochs=2\n",
        InputKind.OTHER_FRAMEWORK,
        "verl's own module (verl.trainer.sft_x)",
    ),
    # ChatLearn scripts/*: its entry point under its own package, Hydra-style overrides
    "chatlearn_grpo.sh": (
        "python chatlearn/entrypoint.py grpo --config-file template/grpo_megatron.yaml "
        "runtime_args.train_backend=megatron models.policy_trainer.num_layers=4\n",
        InputKind.OTHER_FRAMEWORK,
        "ChatLearn",
    ),
    # verl recipes (recipe.dapo.main_dapo) and NeMo examples: a module nobody lists, configured
    # by Hydra overrides, even with values known only at run time
    "hydra_recipe.sh": (
        "python3 -m recipe.dapo.main_dapo data.train_files=$1 "
        "actor_rollout_ref.actor.megatron.tensor_model_parallel_size=$TP "
        "trainer.total_epochs=2 +trainer.val_before_train=False\n",
        InputKind.OTHER_FRAMEWORK,
        "Hydra-style overrides",
    ),
    # Pai-Megatron-Patch toolkits: a converter started with torchrun and 30 Megatron flags
    # (it builds the model to load the weights) is no training launch (a false STR006 error)
    "hf2mcore_convertor.sh": (
        f"torchrun --nproc_per_node 1 hf2mcore.py --load hf --save mc {MEGATRON_FLAGS}\n",
        InputKind.CONVERTER,
        "hf2mcore.py",
    ),
    # ... and an entry the table does not know, named by the launch script's own name
    "llama_weights_convertor.sh": (
        f"torchrun --nproc_per_node 1 swap_weights.py --load a --save b {MEGATRON_FLAGS}\n",
        InputKind.CONVERTER,
        "swap_weights.py",
    ),
    "run_build_idxmap.sh": (
        "python build_idxmap_sft_dataset.py --input x.json --seq-length 2048 --workers 8 "
        "--tokenizer-type NullTokenizer --vocab-size 1000\n",
        InputKind.PREPROCESS,
        "build_idxmap_sft_dataset.py",
    ),
    "run_estimate_memory.sh": (
        f"torchrun --nproc_per_node 1 report_theoretical_memory.py {MEGATRON_FLAGS}\n",
        InputKind.ANALYSIS,
        "report_theoretical_memory.py",
    ),
    "neox.sh": (
        "python ./deepy.py train.py configs/20B.yml\n",
        InputKind.OTHER_FRAMEWORK,
        "GPT-NeoX",
    ),
    # a feature extractor launched with torchrun is preprocessing, not training
    "feature_extraction.sh": (
        "torchrun --nproc_per_node 8 ./mindspeed_mm/tools/feature_extraction/get_wan_feature.py "
        "examples/wan2.1/feature_data.yaml\n",
        InputKind.PREPROCESS,
        "get_wan_feature.py",
    ),
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_scripts_are_classified_by_what_they_launch(tmp_path: Path, name: str) -> None:
    body, kind, why = SCRIPTS[name]
    script = tmp_path / name
    script.write_text("#!/bin/bash\n" + body)
    c = classify(str(script))
    assert c.kind is kind, c
    assert why in c.describe(), c


YAMLS = {
    # LAVIS / MiniGPT-4: `model: {arch: minigpt4}` names an architecture; not MindFormers'
    "minigpt4.yaml": (
        "model:\n  arch: minigpt4\n  model_type: pretrain_vicuna\nrun:\n  task: image_text\n"
        "  lr_sched: linear_warmup_cosine_lr\n",
        InputKind.OTHER_YAML,
    ),
    # GPT-NeoX: optimizer and parallel sizes, no MindFormers section
    "neox.yml": (
        "pipe_parallel_size: 1\nmodel_parallel_size: 1\nnum_layers: 12\n"
        "optimizer:\n  type: Adam\n  params: {lr: 0.0006}\n",
        InputKind.OTHER_YAML,
    ),
    ".gitlab-ci.yml": (
        "stages: [test]\nvariables:\n  PIP_CACHE_DIR: .cache\nunit:\n  stage: test\n"
        "  script: [pytest]\n",
        InputKind.OTHER_YAML,
    ),
    # MindFormers predict_*.yaml: run_mode predict trains nothing
    "predict_qwen3.yaml": (
        "seed: 0\nrun_mode: 'predict'\nuse_parallel: False\nuse_legacy: False\n"
        "model:\n  model_config:\n    hidden_size: 4096\n",
        InputKind.MF_INFER,
    ),
    "finetune_qwen3.yaml": (
        "seed: 0\nrun_mode: 'finetune'\nuse_parallel: True\nrunner_config:\n  epochs: 1\n"
        "model:\n  model_config:\n    hidden_size: 4096\n",
        InputKind.MF_TRAIN,
    ),
}


@pytest.mark.parametrize("name", sorted(YAMLS))
def test_yaml_is_classified_by_mindformers_own_sections(tmp_path: Path, name: str) -> None:
    body, kind = YAMLS[name]
    f = tmp_path / name
    f.write_text(body)
    c = classify(str(f), named=False)
    assert c.kind is kind, c


def test_a_broken_yaml_in_a_folder_is_an_error_only_when_it_looks_like_mindformers(
    tmp_path: Path,
) -> None:
    other = tmp_path / "20B.yml"
    other.write_text('{\n  "num_layers": 44,\n  "norm": "layernorm"\n  "pos_emb": "rotary",\n}\n')
    mine = tmp_path / "run_llama.yaml"
    mine.write_text("run_mode: 'train'\nrunner_config:\n  epochs: [1\n")
    assert classify(str(other), named=False).kind is InputKind.OTHER_YAML
    assert classify(str(other), named=True).kind is InputKind.BROKEN
    broken = classify(str(mine), named=False)
    assert broken.kind is InputKind.BROKEN and broken.line is not None


def test_a_folder_lints_training_inputs_only(tmp_path: Path) -> None:
    for name, (body, _, _) in SCRIPTS.items():
        (tmp_path / name).write_text("#!/bin/bash\n" + body)
    for name, (body, _) in YAMLS.items():
        (tmp_path / name).write_text(body)
    p = plan([str(tmp_path)])
    linted = sorted(
        Path(x).name for j in p.jobs for x in (j.mindformers, j.megatron) if x is not None
    )
    assert linted == [
        "ds_eval_pwd.sh",
        "ds_pretrain.sh",
        "eval_launch.sh",
        "finetune_qwen3.yaml",
        "finetune_race.sh",
        "prep_then_train.sh",
    ]
    skipped = {Path(c.path).name: c.kind for c in p.skipped}
    assert skipped["predict_qwen3.yaml"] is InputKind.MF_INFER
    assert skipped["hf_trainer.sh"] is InputKind.OTHER_FRAMEWORK
    assert len(skipped) == len(SCRIPTS) + len(YAMLS) - 6


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["lint", "show", "lr", "probe"])
def test_swapped_roles_are_a_usage_error_naming_each_file(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, out, err = run(capsys, command, EX_MG, "--megatron", EX_MF)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "MindFormers training config" in err and "given as --megatron" in err
    assert f"swapped? `cfglint {EX_MF} --megatron {EX_MG}`" in err


def test_mix_ups_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "pretrain_other.sh"
    other.write_text(f"#!/bin/bash\ntorchrun pretrain_gpt.py {MEGATRON_FLAGS}\n")
    code, _, err = run(capsys, EX_MF, EX_MG, "--megatron", str(other))
    assert code == 2 and "two Megatron sides" in err
    code, _, err = run(capsys, EX_MF, "--launch", EX_MG, "--megatron", str(other))
    assert code == 2 and "given as --launch" in err and "give it with --megatron" in err
    neox = tmp_path / "neox.yml"
    neox.write_text("pipe_parallel_size: 1\nattention_config: [[[global], 12]]\n")
    code, _, err = run(capsys, EX_MF, "--megatron", str(neox))
    assert code == 2 and "holds no Megatron arguments" in err
    predict = tmp_path / "predict_llama2_7b.yaml"
    predict.write_text("run_mode: predict\nuse_parallel: False\nmodel:\n  model_config: {}\n")
    code, _, err = run(capsys, str(predict), "--megatron", EX_MG)
    assert code == 2 and "MindFormers inference config" in err and "trains nothing" in err


def test_a_yaml_cfg_file_is_the_megatron_side(tmp_path: Path) -> None:
    cfg = tmp_path / "gpt.yaml"
    cfg.write_text("num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nlr: 0.0001\n")
    p = plan([EX_MF], megatron=str(cfg))
    assert [(j.mindformers, j.megatron_form) for j in p.jobs] == [(EX_MF, "yaml")]


def test_skipped_files_say_what_they_are_with_v(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = SCRIPTS["hf_trainer.sh"][0]
    (tmp_path / "hf_trainer.sh").write_text("#!/bin/bash\n" + body)
    (tmp_path / "pretrain.sh").write_text(
        f"#!/bin/bash\ntorchrun pretrain_gpt.py {MEGATRON_FLAGS}\n"
    )
    code, _, err = run(capsys, str(tmp_path), "-v")
    assert code in (0, 1)
    assert "hf_trainer.sh: skipped: training launch of another framework (runs main.py: " in err
    assert "Hugging Face Trainer arguments" in err


def test_configured_pairs_are_checked_for_their_roles() -> None:
    from cfglint.load.classify import plan_pairs
    from cfglint.model.errors import InputError

    good = plan_pairs([{"mindformers": EX_MF, "megatron": EX_MG, "source": []}], [], None)
    assert [(j.mindformers, j.megatron, j.megatron_form) for j in good.jobs] == [
        (EX_MF, EX_MG, "script")
    ]
    with pytest.raises(
        InputError, match=r"given as megatron in \[tool.cfglint\] pairs, but it is a MindFormers"
    ):
        plan_pairs([{"mindformers": EX_MG, "megatron": EX_MF, "source": []}], [], None)


def test_an_unparsable_template_in_a_folder_is_an_error_only_when_it_trains(
    tmp_path: Path,
) -> None:
    # Megatron-LM's older examples ship templates bash refuses until filled in
    # (`VALID_DATA=<lambada path>`): an evaluation template is skipped with why, a training
    # template is the input error bash would give.
    evaluate = tmp_path / "evaluate_zeroshot_gpt.sh"
    evaluate.write_text(
        "#!/bin/bash\nTASK=LAMBADA\nVALID_DATA=<lambada path>\nVOCAB_FILE=gpt2-vocab.json\n"
        "CHECKPOINT=checkpoints/gpt2_345m\n\n"
        "python tasks/main.py --task $TASK --valid-data $VALID_DATA --num-layers 24 \\\n"
        "       --load $CHECKPOINT --vocab-file $VOCAB_FILE\n"
    )
    pretrain = tmp_path / "pretrain_ict.sh"
    pretrain.write_text(
        "#!/bin/bash\nRANK=0\nPRETRAINED_BERT_PATH=<Specify path of pretrained BERT model>\n"
        "CHECKPOINT_PATH=<Specify path>\n\npython pretrain_ict.py --num-layers 12 \\\n"
        "        --hidden-size 768 --save $CHECKPOINT_PATH\n"
    )
    skipped = classify(str(evaluate), named=False)
    assert skipped.kind is InputKind.OTHER and "names no training entry" in skipped.why
    assert classify(str(evaluate)).kind is InputKind.BROKEN
    broken = classify(str(pretrain), named=False)
    assert broken.kind is InputKind.BROKEN and broken.line == 3


def test_a_megatron_family_launch_names_its_dialect(tmp_path: Path) -> None:
    # Megatron-DeepSpeed's GQA flag (--num-key-value-heads) is not Megatron-LM's
    script = tmp_path / "ds_pretrain_llama.sh"
    script.write_text(
        "#!/bin/bash\ndeepspeed pretrain_gpt.py " + MEGATRON_FLAGS + " --num-key-value-heads 4 "
        "--deepspeed --deepspeed_config ds.json\n"
    )
    c = classify(str(script))
    assert c.kind is InputKind.MG_LAUNCH and c.dialect == "megatron-deepspeed", c
    assert "dialect Megatron-DeepSpeed" in c.describe()
