"""The parser the job really runs decides OTH011 and the certainty of defaults (issue 28).

Each tree below is a minimal excerpt, written for the test, of a real fork's layout; the
repository, path and commit are named where it is used.
"""

from __future__ import annotations

from pathlib import Path

from cfglint.normalize.megatron.input import load_megatron

MODEL = "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _repo(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    return root


def _hygon(root: Path, with_megatron: bool = False) -> Path:
    """HYGON-AI/Megatron-LM-das @ 0685d1f5: hcu_megatron/training/arguments.py registers
    the vendor's flags (:130 --use-hip-profiler, :133 --profile-dir); Megatron-LM itself is
    the 3rdparty/Megatron-LM submodule (absent from a plain clone); examples/llama2/
    train_llama2_7B.sh runs ${MEGATRON_PATH}/pretrain_gpt.py with MEGATRON_PATH computed by
    `dirname` command substitutions."""
    _repo(root)
    _write(
        root / "hcu_megatron" / "training" / "arguments.py",
        "def _add_hcu_args(parser):\n"
        "    group = parser.add_argument_group(title='hcu')\n"
        "    group.add_argument('--use-hip-profiler', action='store_true',\n"
        "                       help='Use HIP PROFILER', dest='use_hip_profiler')\n"
        "    group.add_argument('--profile-dir', type=str, default=\"./\")\n"
        "    return parser\n",
    )
    _write(root / "pretrain_gpt.py", "from megatron.core import mpu\nimport hcu_megatron\n")
    if with_megatron:
        from tests.normalize.test_dialects import _flags_of, _parser_module

        _parser_module(root / "megatron" / "training" / "arguments.py", _flags_of("megatron-lm"))
    return _write(
        root / "examples" / "llama2" / "train_llama2_7B.sh",
        '#!/bin/bash\nCURRENT_DIR="$( cd "$( dirname "$0" )" && pwd )"\n'
        "MEGATRON_PATH=$( dirname $( dirname ${CURRENT_DIR}))\n"
        f"torchrun --nproc_per_node 8 ${{MEGATRON_PATH}}/pretrain_gpt.py {MODEL}"
        "--use-hip-profiler --profile-dir prof --combined-1f1b --lr 1e-4\n",
    )


def test_vendor_fork_flags_are_its_parsers_not_errors(tmp_path: Path) -> None:
    # before: 260 OTH011 errors over the repository's 48 launches, every one false
    script = _hygon(tmp_path / "das")
    m = load_megatron(str(script))
    assert m.unknown == []  # no OTH011: the vendor's flags are registered by its package
    # --combined-1f1b is in no file of the repository; Megatron-LM's parser (a submodule)
    # was not read, so whether it accepts it is not decided
    said = [w for w in m.warnings if "--combined-1f1b" in w]
    assert said and "not decided" in said[0] and "submodule" in said[0]
    assert "--use-hip-profiler" not in " ".join(said)


def test_set_fork_flag_leaves_defaults_undecided(tmp_path: Path) -> None:
    # with Megatron-LM's parser in the tree (read), the vendor's flags are read with their own
    # definition (a switch, a string) as values
    m = load_megatron(str(_hygon(tmp_path / "das", with_megatron=True)))
    assert m.values["use_hip_profiler"].value is True
    assert m.values["profile_dir"].value == "prof"
    # a setting left to a default may be changed by the flags cfglint does not model
    drop = m.arg("hidden_dropout")
    assert not drop.known
    assert "--use-hip-profiler" in drop.detail
    assert "hcu_megatron/training/arguments.py" in drop.detail
    # what the launch writes is still read
    assert m.arg("lr").value == 1e-4
    assert m.arg("num_layers").value == 4


def test_unread_parser_leaves_defaults_undecided(tmp_path: Path) -> None:
    # without Megatron-LM in the tree (the das submodule), upstream's table is no reading of
    # the job's defaults: a row from a default is not decided, never an error
    m = load_megatron(str(_hygon(tmp_path / "das")))
    drop = m.arg("hidden_dropout")
    assert not drop.known and "was not read" in drop.detail
    assert m.arg("lr").value == 1e-4


def test_fork_with_its_megatron_in_tree_refuses_what_none_registers(tmp_path: Path) -> None:
    # the same fork with Megatron-LM's parser in the tree: the parser the job runs was read,
    # and a flag neither it nor any module of the repository registers is refused (OTH011)
    m = load_megatron(str(_hygon(tmp_path / "das", with_megatron=True)))
    assert [v.knob for v in m.unknown] == ["--combined-1f1b"]


def test_cd_into_the_forks_megatron_tree(tmp_path: Path) -> None:
    # A vendor layout whose launch scripts `cd` into the fork's own Megatron tree and run the
    # standard entry (issue 28, mechanism 1): the parser is the one beside that entry, not
    # Megatron-LM core_v0.19.0's table
    root = _repo(tmp_path / "vendor")
    fork = root / "Megatron-LM-fork"
    _write(
        fork / "megatron" / "arguments.py",
        "def _add_vendor_args(parser):\n    group = parser.add_argument_group(title='v')\n"
        + "".join(
            f"    group.add_argument('--vendor-knob-{i}', type=int, default=0)\n" for i in range(45)
        )
        + "    group.add_argument('--use-rmsnorm', action='store_true')\n    return parser\n",
    )
    _write(fork / "pretrain_gpt.py", "from megatron import get_args\n")
    # an upstream copy nearer the script: only the `cd` says the fork's is the one run
    _write(root / "pretrain_gpt.py", "from megatron import get_args\n")
    script = _write(
        root / "scripts" / "run.sh",
        '#!/bin/bash\ncd "$(dirname "$0")/../Megatron-LM-fork"\n'
        f"torchrun --nproc_per_node 8 pretrain_gpt.py {MODEL}--use-rmsnorm --vendor-knob-3 2\n",
    )
    m = load_megatron(str(script))
    assert m.unknown == []
    assert m.dialect is not None and not m.dialect.modelled
    assert any("megatron/arguments.py" in e for e in m.evidence)
    # the fork switches its norm with its own flag: the Megatron side's norm is not decided
    assert not m.arg("normalization").known


def test_pythonpath_names_the_forks_megatron(tmp_path: Path) -> None:
    # `export PYTHONPATH=$PYTHONPATH:$(pwd)/third_party/Megatron-LM` then an entry of the
    # repository's own: the parser is the one on PYTHONPATH
    root = _repo(tmp_path / "proj")
    _write(
        root / "third_party" / "Megatron-LM" / "megatron" / "arguments.py",
        "def add(parser):\n"
        + "".join(f"    parser.add_argument('--knob-{i}', type=int)\n" for i in range(45))
        + "    parser.add_argument('--num-layers', type=int)\n",
    )
    _write(root / "train.py", "from megatron import get_args\n")
    script = _write(
        root / "run.sh",
        "#!/bin/bash\nexport PYTHONPATH=$PYTHONPATH:$(pwd)/third_party/Megatron-LM\n"
        f"torchrun --nproc_per_node 8 train.py {MODEL}--knob-2 1 --not-a-flag 3\n",
    )
    m = load_megatron(str(script))
    assert [v.knob for v in m.unknown] == ["--not-a-flag"]


def test_vlm_entry_name_is_not_mindspeed_when_the_code_is_not(tmp_path: Path) -> None:
    # HYGON-AI/Megatron-LM-das @ 0685d1f5 examples/gemma3/train_gemma3vl_12B.sh runs the
    # repository's own pretrain_vlm.py (Megatron-LM's, no MindSpeed anywhere): the name is
    # MindSpeed-MM's entry too, but the code present decides
    root = _repo(tmp_path / "das")
    _write(root / "pretrain_vlm.py", "from megatron.core import mpu\n")
    script = _write(
        root / "examples" / "gemma3" / "train.sh",
        f"#!/bin/bash\ntorchrun --nproc_per_node 8 ../../pretrain_vlm.py {MODEL}\n",
    )
    m = load_megatron(str(script))
    assert m.dialect is not None and m.dialect.kind == "megatron-lm"


def test_fork_float_flag_is_read_with_the_forks_type(tmp_path: Path) -> None:
    # ModelLink's modellink/arguments.py _add_algorithm_args (found through the code index):
    # `group.add_argument('--rotary-base', type=float, help='rotary-base.')`, where
    # Megatron-LM core_v0.19.0 registers an int; `--rotary-base 1e6` is valid there
    root = _repo(tmp_path / "fork")
    _write(
        root / "megatron" / "arguments.py",
        "def _add_algorithm_args(parser):\n    group = parser.add_argument_group(title='a')\n"
        "    group.add_argument('--rotary-base', type=float, help='rotary-base.')\n"
        + "".join(f"    group.add_argument('--k{i}', type=int)\n" for i in range(45)),
    )
    _write(root / "pretrain_gpt.py", "from megatron import get_args\n")
    script = _write(
        root / "run.sh",
        f"#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py {MODEL}--rotary-base 1e6\n",
    )
    m = load_megatron(str(script))
    assert not [w for w in m.warnings if "not a valid" in w]
    assert m.values["rotary_base"].value == 1e6


# -- launch forms (issue 28, mechanism 4) ----------------------------------------------


def test_python_after_the_distributed_launcher_is_not_the_entry(tmp_path: Path) -> None:
    # ROCm/Megatron-LM @ 2b855baf tools/retro/sft/sft_retro_lm.sh:128-145:
    # run_cmd="python -u ${SFT_HOME}/tools/retro/sft/sft_retro.py ${options}", then
    # `python -m torch.distributed.run --nproc_per_node ${NPROCS} ... ${run_cmd}`
    from cfglint.load.detect import classify_script

    script = _write(
        tmp_path / "sft.sh",
        '#!/bin/bash\nrun_cmd="python -u ${SFT_HOME}/tools/retro/sft/sft_retro.py '
        f'{MODEL}--lr 1e-5"\npython -m torch.distributed.run --nproc_per_node 8 --nnodes 1 '
        "--master_port 6000 ${run_cmd}\n",
    )
    c = classify_script(str(script))
    assert c.entry is not None and c.entry.endswith("sft_retro.py")
    m = load_megatron(str(script))
    assert "-u" not in [v.knob for v in m.unknown]


def test_rendezvous_flags_do_not_make_a_megatron_launch(tmp_path: Path) -> None:
    # a data-loader test run the way every DDP script is: the launcher's --local_rank,
    # --master_addr and --master_port are no evidence of Megatron's parser
    from cfglint.load.detect import InputKind, classify_script

    script = _write(
        tmp_path / "test_loader.sh",
        "#!/bin/bash\npython test_dataloader.py --local_rank 0 --master_addr localhost "
        "--master_port 6000 --data-path /data/x\n",
    )
    assert classify_script(str(script)).kind is not InputKind.MG_LAUNCH


def test_a_forks_own_evaluation_task_is_not_training(tmp_path: Path) -> None:
    # tasks/main.py dispatches on --task (ROCm/Megatron-LM @ 2b855baf tasks/main.py:86-98);
    # a fork adds tasks of its own to the zero-shot branch (WIKITEXT2 and C4 beside
    # WIKITEXT103 in a fork's tasks/zeroshot_gpt/evaluate.py, found through the code index)
    from cfglint.load.detect import InputKind, classify_script

    _write(
        tmp_path / "tasks" / "main.py",
        "def main():\n    args = get_args()\n    if args.task == 'RACE':\n"
        "        from race.finetune import main\n"
        "    elif args.task in ['LAMBADA', 'WIKITEXT103', 'WIKITEXT2', 'C4']:\n"
        "        from zeroshot_gpt.evaluate import main\n"
        "    elif args.task in ['RET-FINETUNE-NQ']:\n"
        "        from orqa.supervised.finetune import main\n",
    )
    ev = _write(
        tmp_path / "examples" / "eval_c4.sh",
        f"#!/bin/bash\npython tasks/main.py --task C4 {MODEL}--load ckpt --micro-batch-size 8\n",
    )
    assert classify_script(str(ev)).kind is not InputKind.MG_LAUNCH
    ft = _write(
        tmp_path / "examples" / "ft_race.sh",
        f"#!/bin/bash\npython tasks/main.py --task RACE {MODEL}--lr 1e-5 --epochs 3\n",
    )
    assert classify_script(str(ft)).kind is InputKind.MG_LAUNCH


def test_srun_sh_c_of_a_command_built_with_unknown_parts(tmp_path: Path) -> None:
    # argonne-lcf/Megatron-DeepSpeed @ ffa3456d examples/pretrain_gpt3_175B.sh:55-61 (as in
    # Megatron-LM's): run_cmd="python -u ${DIR}/pretrain_gpt.py $@ ${options}" then
    # `srun -l --container-image ... sh -c "${run_cmd}"`; it was called a helper script
    from cfglint.load.detect import InputKind, classify_script

    script = _write(
        tmp_path / "pretrain_gpt3_175B.sh",
        "#!/bin/bash\nDIR=`pwd`\n"
        f'options=" {MODEL}--lr 6.0e-5 --train-iters 10"\n'
        'run_cmd="python -u ${DIR}/pretrain_gpt.py $@ ${options}"\n'
        'srun -l --container-image "nvcr.io/nvidia/pytorch:20.12-py3" '
        '--output=$DIR/logs/x.log sh -c "${run_cmd}"\n',
    )
    c = classify_script(str(script))
    assert c.kind is InputKind.MG_LAUNCH
    assert c.entry is not None and c.entry.endswith("pretrain_gpt.py")


def test_renamed_megatron_package_is_the_parser(tmp_path: Path) -> None:
    # Ascend/AscendSpeed @ e35df80d: pretrain_gpt.py does `from ascendspeed import get_args`,
    # and ascendspeed/arguments.py (a renamed Megatron-DeepSpeed parser) registers the flags
    # examples/gpt/pretrain_gpt_ptd_8p.sh passes, --DDP-impl among them
    root = _repo(tmp_path / "AscendSpeed")
    _write(
        root / "ascendspeed" / "arguments.py",
        "def _add_training_args(parser):\n    group = parser.add_argument_group(title='t')\n"
        "    group.add_argument('--DDP-impl', default='local', choices=['local', 'torch'])\n"
        + "".join(f"    group.add_argument('--k{i}', type=int)\n" for i in range(45)),
    )
    _write(root / "pretrain_gpt.py", "import torch_npu\nfrom ascendspeed import get_args\n")
    script = _write(
        root / "examples" / "gpt" / "pretrain_gpt_ptd_8p.sh",
        "#!/bin/bash\npython -m torch.distributed.launch --nproc_per_node 8 pretrain_gpt.py "
        f"{MODEL}--DDP-impl local --no-such-flag\n",
    )
    m = load_megatron(str(script))
    assert any("ascendspeed/arguments.py" in e for e in m.evidence)
    assert [v.knob for v in m.unknown] == ["--no-such-flag"]  # the parser was read


def test_read_parsers_literal_default_replaces_the_tables(tmp_path: Path) -> None:
    # swiss-ai/Megatron-LM @ 81d44dbe megatron/training/arguments.py:1633 registers
    # `--lr-wsd-decay-style ... default='1-sqrt'` where Megatron-LM core_v0.19.0 defaults to
    # 'exponential': the tree's parser (read) is the run's, so its default is the value
    from tests.normalize.test_dialects import _flags_of, _parser_module

    root = _repo(tmp_path / "swiss")
    parser = root / "megatron" / "training" / "arguments.py"
    _parser_module(parser, [f for f in _flags_of("megatron-lm") if f != "--lr-wsd-decay-style"])
    text = parser.read_text(encoding="utf-8").replace(
        "    return parser.parse_args()",
        "    group.add_argument('--lr-wsd-decay-style', type=str, default='1-sqrt',\n"
        "                       choices=['exponential', 'linear', 'cosine', '1-sqrt'])\n"
        "    return parser.parse_args()",
    )
    parser.write_text(text, encoding="utf-8")
    _write(root / "pretrain_gpt.py", "from megatron.training import pretrain\n")
    script = _write(
        root / "run.sh", f"#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py {MODEL}\n"
    )
    m = load_megatron(str(script))
    got = m.arg("lr_wsd_decay_style")
    assert got.value == "1-sqrt"
    assert "megatron/training/arguments.py" in got.detail


def test_two_mindspeed_flags_do_not_make_a_fork_mindspeed(tmp_path: Path) -> None:
    # issue 28 mechanism 3: a fork with no MindSpeed anywhere registers flags MindSpeed-LLM
    # also has (ModelLink's _add_network_size_args registers --use-fused-rmsnorm and
    # --use-fused-swiglu; forks copy such flags); its launches were read as MindSpeed-LLM
    # v26.1.0 and the flags its own parser defines beside them were refused
    root = _repo(tmp_path / "fork")
    _write(
        root / "megatron" / "training" / "arguments.py",
        "def _add_network_size_args(parser):\n    group = parser.add_argument_group(title='n')\n"
        "    group.add_argument('--use-fused-rmsnorm', action='store_true')\n"
        "    group.add_argument('--use-fused-swiglu', action='store_true')\n"
        "    group.add_argument('--vendor-overlap', action='store_true')\n"
        + "".join(f"    group.add_argument('--k{i}', type=int)\n" for i in range(45)),
    )
    _write(root / "pretrain_gpt.py", "from megatron.training import pretrain\n")
    script = _write(
        root / "run.sh",
        "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py "
        f"{MODEL}--use-fused-rmsnorm --use-fused-swiglu --vendor-overlap\n",
    )
    m = load_megatron(str(script))
    assert m.dialect is not None and m.dialect.kind not in ("mindspeed-llm", "mindspeed-core")
    assert m.unknown == []
    # the same launch beside MindSpeed-LLM's package is MindSpeed-LLM's
    (root / "mindspeed_llm").mkdir()
    (root / "pretrain_gpt.py").write_text("import mindspeed_llm\n", encoding="utf-8")
    m = load_megatron(str(script))
    assert m.dialect is not None and m.dialect.kind == "mindspeed-llm"


def test_a_parser_that_is_not_python_is_named_as_unread(tmp_path: Path) -> None:
    # shifang99/Megatron-LM_core_v0.7.0_trace @ 2f49af71: every copy's
    # megatron/training/arguments.py is instrumented with `'world size'\# trace_info : t_1102`
    # and does not parse; the reason says so instead of "no parser"
    root = _repo(tmp_path / "trace")
    _write(
        root / "megatron" / "training" / "arguments.py",
        "def validate_args(args):\n    assert args.world_size % 2 == 0, 'world size'"
        "\\# trace_info : t_1102\n",
    )
    _write(root / "pretrain_gpt.py", "from megatron.training import pretrain\n")
    script = _write(
        root / "examples" / "run.sh",
        f"#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py {MODEL}--retro-workdir x\n",
    )
    m = load_megatron(str(script))
    assert m.unknown == []
    assert "megatron/training/arguments.py" in m.unread and "not valid Python" in m.unread
