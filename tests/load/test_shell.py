"""Launch-script parser: shell scripts are interpreted statically, never run."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cfglint.load.shell import (
    Invocation,
    ShellScript,
    Word,
    main_invocation,
    parse_args_file,
    parse_script,
    parse_script_text,
)
from cfglint.model.errors import InputError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "megatron"


def fixture(name: str) -> str:
    return str(FIXTURES / name)


def line_of(path: str, needle: str, nth: int = 1) -> int:
    """1-based line of the nth line containing ``needle``: keeps tests readable."""
    hits = [i for i, line in enumerate(Path(path).read_text().splitlines(), 1) if needle in line]
    return hits[nth - 1]


def value_of(words: list[Word], flag: str) -> Word:
    for i, w in enumerate(words):
        if w.text == flag:
            return words[i + 1]
    raise AssertionError(f"{flag} not among {[w.text for w in words]}")


def texts(words: list[Word]) -> list[str | None]:
    return [w.text for w in words]


def only(script: ShellScript) -> Invocation:
    assert len(script.invocations) == 1, script.invocations
    return script.invocations[0]


def lines(locs: tuple) -> list[int]:
    return [loc.line for loc in locs]


# -- gpt_arrays.sh: Megatron-LM examples style (bash arrays) ------------------------------


@pytest.fixture(scope="module")
def arrays() -> ShellScript:
    return parse_script(fixture("gpt_arrays.sh"))


def test_arrays_launcher_args_are_expanded(arrays: ShellScript) -> None:
    inv = only(arrays)
    assert inv.launcher == "torchrun"
    assert texts(inv.launcher_args) == [
        "--nproc_per_node",
        "8",
        "--nnodes",
        "1",
        "--node_rank",
        "0",
        "--master_addr",
        "localhost",
        "--master_port",
        "6000",
    ]
    assert inv.script is not None and inv.script.text == "pretrain_gpt.py"
    assert inv.conditional is False


def test_arrays_element_location_and_via(arrays: ShellScript) -> None:
    path = fixture("gpt_arrays.sh")
    inv = only(arrays)
    nproc = value_of(inv.launcher_args, "--nproc_per_node")
    # Typed as `$GPUS_PER_NODE` inside the array: that line, via the definition and the use.
    assert nproc.loc.line == line_of(path, "--nproc_per_node $GPUS_PER_NODE")
    assert lines(nproc.via) == [line_of(path, "GPUS_PER_NODE=8"), line_of(path, "torchrun ")]
    hidden = value_of(inv.args, "--hidden-size")
    assert hidden.text == "4096"
    assert hidden.loc.line == line_of(path, "--hidden-size 4096")
    assert hidden.loc.column == 19
    assert lines(hidden.via) == [line_of(path, "${GPT_MODEL_ARGS[@]}")]


def test_arrays_llama_shape(arrays: ShellScript) -> None:
    args = only(arrays).args
    expected = {
        "--num-layers": "2",
        "--ffn-hidden-size": "11008",
        "--num-attention-heads": "32",
        "--normalization": "RMSNorm",
        "--position-embedding-type": "rope",
        "--lr": "3.0e-4",
        "--lr-decay-style": "cosine",
        "--adam-beta2": "0.95",
        "--tensor-model-parallel-size": "1",
        "--split": "949,50,1",
    }
    for flag, value in expected.items():
        assert value_of(args, flag).text == value, flag
    for switch in (
        "--swiglu",
        "--bf16",
        "--disable-bias-linear",
        "--untie-embeddings-and-output-weights",
    ):
        assert switch in texts(args)


def test_arrays_append_with_plus_equals(arrays: ShellScript) -> None:
    path = fixture("gpt_arrays.sh")
    seed = value_of(only(arrays).args, "--seed")
    assert seed.text == "1234"
    assert seed.loc.line == line_of(path, "TRAINING_ARGS+=(--seed 1234)")
    # Appended after the original elements, i.e. after --lr-warmup-iters 50.
    words = texts(only(arrays).args)
    assert words.index("--seed") == words.index("--lr-warmup-iters") + 2


def test_arrays_positional_parameters_are_unknown(arrays: ShellScript) -> None:
    path = fixture("gpt_arrays.sh")
    data = value_of(only(arrays).args, "--data-path")
    assert data.text is None
    assert data.unknown == "$3 is a positional parameter"
    assert lines(data.via) == [line_of(path, "DATA_PATH=$3"), line_of(path, "${DATA_ARGS[@]}")]


def test_arrays_variables_and_env(arrays: ShellScript) -> None:
    assert arrays.variables["WORLD_SIZE"].text == "8"
    assert arrays.env["CUDA_DEVICE_MAX_CONNECTIONS"].text == "1"
    assert arrays.env["CUDA_DEVICE_MAX_CONNECTIONS"].loc.line == 5
    assert "GPUS_PER_NODE" not in arrays.env  # set, never exported
    assert arrays.warnings == []


# -- mindspeed_blocks.sh: MindSpeed-LLM style (quoted multi-line blocks) -------------------


@pytest.fixture(scope="module")
def blocks() -> ShellScript:
    return parse_script(fixture("mindspeed_blocks.sh"))


def test_blocks_default_expansion_located_inside_block(blocks: ShellScript) -> None:
    path = fixture("mindspeed_blocks.sh")
    layers = value_of(only(blocks).args, "--num-layers")
    assert layers.text == "2"  # ${NUM_LAYERS:-2}, NUM_LAYERS never set
    assert layers.loc.line == line_of(path, "--num-layers ${NUM_LAYERS:-2}")
    assert layers.loc.column == line_of_text(path, "--num-layers").index("${") + 1
    assert lines(layers.via) == [line_of(path, "    $GPT_ARGS")]
    flag = next(w for w in only(blocks).args if w.text == "--num-layers")
    assert flag.loc.line == layers.loc.line and flag.loc.column == 5


def line_of_text(path: str, needle: str) -> str:
    return Path(path).read_text().splitlines()[line_of(path, needle) - 1]


def test_blocks_variable_in_block_has_definition_in_via(blocks: ShellScript) -> None:
    path = fixture("mindspeed_blocks.sh")
    tp = value_of(only(blocks).args, "--tensor-model-parallel-size")
    assert tp.text == "1"
    assert tp.loc.line == line_of(path, "--tensor-model-parallel-size ${TP}")
    assert lines(tp.via) == [line_of(path, "TP=1 PP=1"), line_of(path, "    $GPT_ARGS")]
    seq = value_of(only(blocks).args, "--seq-length")
    assert seq.text == "4096"
    assert line_of(path, "SEQ_LEN=${SEQ_LEN:-4096}") in lines(seq.via)


def test_blocks_arithmetic_and_string_append(blocks: ShellScript) -> None:
    path = fixture("mindspeed_blocks.sh")
    args = only(blocks).args
    gbs = value_of(args, "--global-batch-size")
    assert gbs.text == "64"  # $((8 * NPUS_PER_NODE))
    assert lines(gbs.via)[:2] == [line_of(path, "GBS=$(("), line_of(path, "NPUS_PER_NODE=8")]
    seed = value_of(args, "--seed")
    assert seed.text == "1234"
    assert seed.loc.line == line_of(path, 'GPT_ARGS+=" --seed')


def test_blocks_distributed_args_and_tee_pipeline(blocks: ShellScript) -> None:
    path = fixture("mindspeed_blocks.sh")
    inv = only(blocks)  # `tee` and `mkdir` are no launch
    assert inv.launcher == "torchrun"
    assert texts(inv.launcher_args)[:4] == ["--nproc_per_node", "8", "--nnodes", "1"]
    assert inv.launcher_args[0].loc.line == line_of(path, "--nproc_per_node $NPUS_PER_NODE")
    assert inv.loc.line == line_of(path, "torchrun $DISTRIBUTED_ARGS")
    backend = value_of(inv.args, "--distributed-backend")
    assert backend.text == "nccl" and backend.via == ()
    assert backend.loc.line == line_of(path, "--distributed-backend nccl")
    assert texts(inv.args)[-4:] == [
        "--load",
        "./model_weights/llama-2-7b-mcore/",
        "--save",
        "./ckpt/llama-2-7b",
    ]
    assert "--use-flash-attn" in texts(inv.args)


def test_blocks_env_and_multiple_assignments_on_one_line(blocks: ShellScript) -> None:
    path = fixture("mindspeed_blocks.sh")
    assert blocks.env["HCCL_DETERMINISTIC"].text == "true"
    assert blocks.env["HCCL_DETERMINISTIC"].loc.line == line_of(path, "HCCL_DETERMINISTIC")
    assert blocks.env["PYTORCH_NPU_ALLOC_CONF"].text == "expandable_segments:True"
    # `TP=1 PP=1` is a plain statement: shell variables, not a command's environment.
    assert blocks.variables["TP"].text == "1" and blocks.variables["PP"].text == "1"
    assert "TP" not in blocks.env


# -- msrun_launch.sh ----------------------------------------------------------------------


def test_msrun_launch() -> None:
    path = fixture("msrun_launch.sh")
    script = parse_script(path)
    inv = only(script)
    assert inv.launcher == "msrun"
    assert texts(inv.launcher_args) == [
        "--worker_num=8",
        "--local_worker_num=8",
        "--master_port=8118",
        "--log_dir=msrun_log",
        "--join=True",
        "--cluster_time_out=300",
    ]
    assert lines(inv.launcher_args[0].via) == [line_of(path, "WORKER_NUM=8")]
    assert inv.script is not None and inv.script.text == "run_mindformer.py"
    assert inv.script.loc.line == line_of(path, "run_mindformer.py")
    assert value_of(inv.args, "--config").text == "configs/llama2/pretrain_llama2_7b.yaml"
    assert script.env["MS_ASCEND_CHECK_OVERFLOW_MODE"].text == "INFNAN_MODE"
    assert script.env["ASCEND_LAUNCH_BLOCKING"].text == "1"
    assert main_invocation(script) is inv


# -- args.txt -----------------------------------------------------------------------------


def test_args_file() -> None:
    path = fixture("args.txt")
    words, text = parse_args_file(path)
    assert text == Path(path).read_text()
    assert texts(words) == [
        "--num-layers",
        "2",
        "--hidden-size",
        "4096",
        "--num-attention-heads",
        "32",
        "--ffn-hidden-size",
        "11008",
        "--lr",
        "3e-4",
        "--lr-decay-style",
        "cosine",
        "--data-path",
        "/data/my corpus/text_document",
        "--tokenizer-model",
        None,
        "--bf16",
    ]
    assert value_of(words, "--ffn-hidden-size").loc.line == line_of(path, "--ffn-hidden-size")
    assert value_of(words, "--lr").loc.column == 6
    assert "TOKENIZER_MODEL" in value_of(words, "--tokenizer-model").unknown


def test_args_file_unterminated_quote(tmp_path: Path) -> None:
    p = tmp_path / "args.txt"
    p.write_text("--lr 1e-4\n--data-path 'oops\n--bf16\n")
    with pytest.raises(InputError) as err:
        parse_args_file(str(p))
    assert err.value.line == 2 and "unterminated quote" in err.value.message


# -- conditional.sh -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def cond() -> ShellScript:
    return parse_script(fixture("conditional.sh"))


def test_conditional_branches_are_marked(cond: ShellScript) -> None:
    path = fixture("conditional.sh")
    guarded, main = cond.invocations
    assert guarded.conditional is True and main.conditional is False
    assert all(w.conditional for w in guarded.args)
    assert main_invocation(cond) is main
    extra = next(w for w in main.args if w.text == "--use-flash-attn")
    assert extra.conditional is True
    assert lines(extra.via) == [line_of(path, 'EXTRA="--use-flash-attn"')]
    layers = value_of(main.args, "--num-layers")
    assert layers.text == "32" and layers.conditional is True
    assert value_of(main.args, "--hidden-size").conditional is False
    assert any("EXTRA" in w and "branch" in w for w in cond.warnings)
    assert any("LAYERS" in w and "branch" in w for w in cond.warnings)


def test_conditional_unknowns_have_reasons(cond: ShellScript) -> None:
    main = cond.invocations[1]
    save = value_of(main.args, "--save")
    assert save.text is None and "command substitution $(date" in save.unknown
    tb = value_of(main.args, "--tensorboard-dir")
    assert tb.text is None and "`git rev-parse --short HEAD`" in tb.unknown
    assert value_of(main.args, "--mode").unknown == "$1 is a positional parameter"
    assert value_of(main.args, "--seed").unknown == "loop variable SEED takes several values"
    # ${2:-1}: $2 may be set, so the default is not taken on faith.
    assert cond.variables["USE_FA"].text is None


# -- canary: nothing is ever executed -----------------------------------------------------


def test_nothing_is_executed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "evil.sh"
    script.write_text(
        "STAMP=$(touch CANARY)\n"
        'LR=$(python -c \'open("CANARY4","w")\')\n'
        'eval "touch CANARY3"\n'
        "torchrun pretrain_gpt.py --a $(touch CANARY) --b `touch CANARY2` --lr $LR\n"
    )
    parsed = parse_script(str(script))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.sh"]
    args = only(parsed).args
    assert value_of(args, "--a").unknown == "command substitution $(touch CANARY) is not evaluated"
    assert value_of(args, "--b").unknown == "command substitution `touch CANARY2` is not evaluated"
    assert "command substitution $(python -c" in value_of(args, "--lr").unknown
    assert lines(value_of(args, "--lr").via) == [2]
    assert any(w.startswith("line 3: eval") for w in parsed.warnings)


# -- expansion rules ----------------------------------------------------------------------


def run(text: str) -> ShellScript:
    return parse_script_text(text, "launch.sh")


def test_default_expansion_unset_and_set() -> None:
    script = run(
        "torchrun pretrain_gpt.py --a ${A:-7}\nA=9\ntorchrun pretrain_gpt.py --a ${A:-7}\n"
    )
    unset, with_a = (value_of(inv.args, "--a") for inv in script.invocations)
    assert (unset.text, unset.loc.line, unset.loc.column, unset.via) == ("7", 1, 30, ())
    assert (with_a.text, with_a.loc.line, lines(with_a.via)) == ("9", 3, [2])


def test_default_operator_variants() -> None:
    script = run(
        'EMPTY=""\n'
        "A=${EMPTY-d1} B=${EMPTY:-d2} C=${NOPE-d3} D=${NEW:=d4} E=${EMPTY:+alt} F=${D:+alt}\n"
    )
    got = {k: script.variables[k].text for k in "ABCDEF"}
    assert got == {"A": "", "B": "d2", "C": "d3", "D": "d4", "E": "", "F": "alt"}
    assert script.variables["NEW"].text == "d4"


def test_arithmetic() -> None:
    script = run(
        "N=8\n"
        "A=$(( (N + 2) * 3 % 7 - -7 / 2 ))\n"
        "B=$((N*N)) C=$((010 + 0x10)) D=$((N / 0)) E=$((UNSET + 1)) F=$((N > 1))\n"
    )
    v = script.variables
    assert (v["A"].text, v["B"].text, v["C"].text) == ("5", "64", "24")
    assert v["A"].via == (v["N"].loc,)
    assert v["D"].text is None and "division by zero" in v["D"].unknown
    assert v["E"].text is None and "UNSET is never set" in v["E"].unknown
    assert v["F"].text is None and "operator >" in v["F"].unknown


def test_word_splitting_and_quoting() -> None:
    script = run(
        'X="a  b"\n'
        'ARR=(one "two three" "")\n'
        'python train.py $X "$X" "${ARR[@]}" ${ARR[@]} "${ARR[*]}" ${#ARR[@]} ${ARR[1]} ""\n'
    )
    assert texts(only(script).args) == [
        "a",
        "b",
        "a  b",
        "one",
        "two three",
        "",
        "one",
        "two",
        "three",
        "one two three ",
        "3",
        "two",
        "three",
        "",
    ]


def test_string_append_and_array_forms() -> None:
    script = run(
        'ARGS="--a 1"\n'
        'ARGS+=" --b 2"\n'
        "ARR=(--c 3)\n"
        "ARR+=(--d 4)\n"
        "ARR[9]=--e\n"
        "python train.py $ARGS ${ARR[@]}\n"
    )
    args = only(script).args
    assert texts(args) == ["--a", "1", "--b", "2", "--c", "3", "--d", "4", "--e"]
    assert [w.loc.line for w in args] == [1, 1, 2, 2, 3, 3, 4, 4, 5]
    assert all(lines(w.via) == [6] for w in args)


def test_exports_declare_local_readonly_and_prefix_env() -> None:
    script = run(
        "A=1\nexport A\n"
        "declare -x B=2\n"
        "readonly C=3\n"
        "export D=4\nexport -n D\n"
        "f() { local L=5; export M=6; }\nf\n"
        "NCCL_DEBUG=INFO torchrun pretrain_gpt.py\n"
        "X=1 echo not-a-launch\n"
    )
    assert {k: w.text for k, w in script.env.items()} == {
        "A": "1",
        "B": "2",
        "M": "6",
        "NCCL_DEBUG": "INFO",
    }
    assert script.env["A"].loc.line == 1
    assert script.variables["C"].text == "3" and script.variables["L"].text == "5"
    assert "NCCL_DEBUG" not in script.variables and "X" not in script.variables


def test_launchers() -> None:
    script = run(
        "python -m torch.distributed.launch --nproc_per_node 8 --use_env pretrain_gpt.py --a 1\n"
        "python3 -u -m torch.distributed.run --nnodes=1 pretrain_bert.py --b 2\n"
        "deepspeed --num_gpus 8 train.py --deepspeed ds.json\n"
        "/usr/bin/python3.10 tools/preprocess_data.py --input x\n"
        "nohup torchrun --standalone pretrain_t5.py > log 2>&1 &\n"
        "env FOO=1 msrun --worker_num=2 run_mindformer.py --config c.yaml\n"
    )
    got = [
        (i.launcher, texts(i.launcher_args), i.script.text if i.script else None, texts(i.args))
        for i in script.invocations
    ]
    assert got == [
        (
            "python -m torch.distributed.launch",
            ["--nproc_per_node", "8", "--use_env"],
            "pretrain_gpt.py",
            ["--a", "1"],
        ),
        ("python -m torch.distributed.run", ["--nnodes=1"], "pretrain_bert.py", ["--b", "2"]),
        ("deepspeed", ["--num_gpus", "8"], "train.py", ["--deepspeed", "ds.json"]),
        ("python", [], "tools/preprocess_data.py", ["--input", "x"]),
        ("torchrun", ["--standalone"], "pretrain_t5.py", []),
        ("msrun", ["--worker_num=2"], "run_mindformer.py", ["--config", "c.yaml"]),
    ]
    assert script.env["FOO"].text == "1"


def test_launcher_in_a_variable() -> None:
    script = run(
        'LAUNCHER="torchrun --nproc_per_node 4"\n'
        "$LAUNCHER pretrain_gpt.py --lr 1\n"
        "$UNSET_PY pretrain_gpt.py --lr 2\n"
    )
    first, second = script.invocations
    assert first.launcher == "torchrun" and texts(first.launcher_args) == ["--nproc_per_node", "4"]
    assert first.launcher_args[0].loc.line == 1
    assert second.launcher == "$UNSET_PY" and value_of(second.args, "--lr").text == "2"


def test_launcher_option_values_and_lookups() -> None:
    script = run(
        "command -v torchrun\n"
        "torchrun --nproc_per_node $UNSET_N --nnodes 1 $UNSET_SCRIPT --lr 1\n"
        "python -u $TRAIN --x 1\n"
    )
    first, second = script.invocations  # `command -v` only looks torchrun up
    assert texts(first.launcher_args) == ["--nproc_per_node", None, "--nnodes", "1"]
    assert first.script is not None and first.script.unknown == "variable UNSET_SCRIPT is never set"
    assert texts(first.args) == ["--lr", "1"]
    assert texts(second.launcher_args) == ["-u"] and second.script is not None
    assert second.script.unknown == "variable TRAIN is never set"


def test_not_followed_and_warned() -> None:
    script = run(
        "source ./env.sh\n"
        ". ./more.sh\n"
        "bash other.sh --x\n"
        "sh -c 'torchrun a.py'\n"
        "torchrun pretrain_gpt.py\n"
    )
    missing = "no .sh file found next to the script or in a folder above it"
    assert script.warnings[:3] == [
        f"line 1: source ./env.sh is not followed: {missing}",
        f"line 2: . ./more.sh is not followed: {missing}",
        "line 3: bash other.sh --x is not followed",
    ]
    # `sh -c STRING` runs the string as a script: its launch counts, like eval's
    assert [i.launcher for i in script.invocations] == ["torchrun", "torchrun"]
    assert [i.script.text for i in script.invocations if i.script] == ["a.py", "pretrain_gpt.py"]


def test_sourced_file_is_read_in_place(tmp_path: Path) -> None:
    """`source` runs the file in the current shell: its variables and exports count, and
    each value keeps the sourced file's own line."""
    (tmp_path / "common.sh").write_text(
        '# shared settings\nexport NCCL_ALGO=Ring\nLAUNCH="torchrun --nproc_per_node 4"\n'
    )
    script = tmp_path / "train.sh"
    script.write_text(
        'source "$(dirname "$0")/common.sh"\n$LAUNCH pretrain_gpt.py --num-layers 2\n'
    )
    sh = parse_script(str(script))
    (inv,) = sh.invocations
    assert inv.launcher == "torchrun" and texts(inv.launcher_args) == ["--nproc_per_node", "4"]
    assert inv.launcher_args[1].loc.path.endswith("common.sh")
    assert inv.launcher_args[1].loc.line == 3
    assert sh.env["NCCL_ALGO"].text == "Ring" and sh.env["NCCL_ALGO"].loc.line == 2
    assert inv.args[1].loc.path == str(script) and inv.args[1].loc.line == 2


def test_uv_run_and_variable_prefix_launchers() -> None:
    uv = run(
        "uv run --extra ssm --no-sync python -m torch.distributed.run --nproc_per_node 2 "
        "pretrain_gpt.py --num-layers 2\n"
    )
    (inv,) = uv.invocations
    assert inv.launcher == "python -m torch.distributed.run" and inv.script is not None
    assert inv.script.text == "pretrain_gpt.py" and texts(inv.args) == ["--num-layers", "2"]
    empty = run("P=\n$P torchrun --nproc_per_node 2 pretrain_gpt.py --num-layers 2\n")
    assert [i.launcher for i in empty.invocations] == ["torchrun"]
    unknown = run("$VENV torchrun --nproc_per_node 2 pretrain_gpt.py --num-layers 2\n")
    (inv,) = unknown.invocations
    assert inv.launcher == "torchrun" and texts(inv.launcher_args) == ["--nproc_per_node", "2"]
    # uv doing something else runs nothing we read
    assert run("uv pip install -r requirements.txt\n").invocations == []


def test_lists_and_short_circuit_assignments() -> None:
    script = run(
        "cd /work && torchrun pretrain_gpt.py --a 1 ; echo done\n"
        '[ -z "$NNODES" ] && NNODES=2\n'
        "mkdir -p out || python fallback.py\n"
    )
    first, fallback = script.invocations
    assert first.conditional is False and fallback.conditional is True
    assert script.variables["NNODES"].text == "2"
    assert script.variables["NNODES"].conditional is True


def test_runtime_only_values_are_unknown() -> None:
    script = run('python train.py $@ "$*" $# $$ $RANDOM data/*.bin ~/ckpt {1..3} $NOPE\n')
    reasons = [w.unknown for w in only(script).args]
    assert all(w.text is None for w in only(script).args)
    assert reasons == [
        "$@ is a positional parameter",
        "$* is a positional parameter",
        "$# is a positional parameter",
        "$$ is only known at run time",
        "$RANDOM changes on every run",
        "glob pattern 'data/*.bin' is not expanded",
        "tilde expansion in '~/ckpt' depends on $HOME",
        "brace expansion {1..3} is not expanded",
        "variable NOPE is never set",
    ]


def test_escapes_and_quotes() -> None:
    script = run('python train.py a\\ b \'x $Y\' "q\\"q" $\'t\\tt\' --k="v w" \\*\n')
    assert texts(only(script).args) == ["a b", "x $Y", 'q"q', "t\tt", "--k=v w", "*"]


def test_string_operations() -> None:
    script = run(
        "P=/data/ckpt/llama.pt N=Llama\n"
        "A=${P%/*} B=${P##*/} C=${P/llama/gpt} D=${N^^} E=${N:1:3} F=${#N} G=${P%.*}\n"
    )
    got = {k: script.variables[k].text for k in "ABCDEFG"}
    assert got == {
        "A": "/data/ckpt",
        "B": "llama.pt",
        "C": "/data/ckpt/gpt.pt",
        "D": "LLAMA",
        "E": "lam",
        "F": "5",
        "G": "/data/ckpt/llama",
    }


def test_subshell_and_function_scope() -> None:
    script = run(
        "( INNER=1; python a.py )\nrun() {\n  torchrun pretrain_gpt.py --lr $LR\n}\nLR=3e-4\nrun\n"
    )
    assert "INNER" not in script.variables
    sub, fn = script.invocations
    assert sub.script is not None and sub.script.text == "a.py"
    lr = value_of(fn.args, "--lr")
    assert (lr.text, lr.loc.line, lines(lr.via)) == ("3e-4", 3, [5])


def test_assignments_glued_by_the_grammar_stay_statements() -> None:
    # tree-sitter-bash parses these three lines as one command with two prefixes.
    script = run("TP=1 PP=2\nCP=3\ntorchrun pretrain_gpt.py --tp $TP --cp $CP\n")
    inv = only(script)
    assert texts(inv.args) == ["--tp", "1", "--cp", "3"]
    assert script.env == {}
    assert script.variables["PP"].text == "2"


def test_broken_line_continuation_is_reported() -> None:
    script = run("torchrun pretrain_gpt.py --a 1 \\ \n    --b 2\n")
    assert texts(only(script).args) == ["--a", "1"]
    assert any("line 2:" in w and "continuation" in w for w in script.warnings)


def test_exit_stops_the_script() -> None:
    script = run("torchrun pretrain_gpt.py\nexit 0\ntorchrun never.py\n")
    assert [i.script.text for i in script.invocations if i.script] == ["pretrain_gpt.py"]
    assert any(w.startswith("line 2: exit") for w in script.warnings)


def test_crlf_is_read_as_lf() -> None:
    script = run("A=1\r\ntorchrun pretrain_gpt.py --a $A\r\n")
    assert texts(only(script).args) == ["--a", "1"]
    assert any("CRLF" in w for w in script.warnings)


# -- main_invocation ----------------------------------------------------------------------


def test_main_invocation_prefers_training_scripts() -> None:
    script = run(
        "python tools/preprocess_data.py --input a --output b --workers 8 --append-eod\n"
        "torchrun pretrain_gpt.py --lr 1\n"
        "python tools/convert.py --x 1 --y 2\n"
    )
    main = main_invocation(script)
    assert main is not None and main.script is not None and main.script.text == "pretrain_gpt.py"
    other = run("python a.py --x 1\npython b.py --x 1 --y 2\n")
    main = main_invocation(other)
    assert main is not None and main.script is not None and main.script.text == "b.py"
    assert main_invocation(run("echo hi\n")) is None


# -- errors and limits --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('A=1\nB="abc\ntorchrun pretrain_gpt.py --a $A\n', 2),
        ("A=1\n\nB='abc\ntorchrun pretrain_gpt.py\n", 3),
    ],
)
def test_unterminated_quote(text: str, line: int) -> None:
    with pytest.raises(InputError) as err:
        run(text)
    assert err.value.line == line
    assert err.value.message == "unterminated quote starting here"


def test_unparsable_launch_is_an_error() -> None:
    with pytest.raises(InputError) as err:
        run("A=1\ntorchrun pretrain_gpt.py --a ) fi\n")
    assert err.value.line == 2 and err.value.message.startswith("cannot parse shell")


def test_partial_syntax_error_is_a_warning() -> None:
    script = run("A=1\nif then fi fi }\ntorchrun pretrain_gpt.py --a $A\n")
    assert texts(only(script).args) == ["--a", "1"]
    assert any(w.startswith("line 2: cannot parse shell syntax") for w in script.warnings)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"\x7fELF\x00\x00\x01", "binary"),
        (b"A=\xff\xfe\n", "not valid UTF-8"),
    ],
)
def test_unreadable_files(tmp_path: Path, content: bytes, needle: str) -> None:
    p = tmp_path / "launch.sh"
    p.write_bytes(content)
    with pytest.raises(InputError) as err:
        parse_script(str(p))
    assert needle in err.value.message


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such launch script"):
        parse_script(str(tmp_path / "nope.sh"))
    with pytest.raises(InputError, match="is a directory"):
        parse_script(str(tmp_path))


@pytest.mark.slow  # 20,000 lines (about 8 s): a size campaign, run in CI (--slow)
def test_large_generated_script() -> None:
    parts = ["N0=0"]
    for i in range(1, 5000):
        parts.append(f"N{i}=$((N{i - 1} + 1))")
        parts.append(f'ARGS{i}="--step {i} \\\n    --n ${{N{i}}}"')
        parts.append(f"torchrun pretrain_gpt.py $ARGS{i}")
    script = run("\n".join(parts) + "\n")
    assert len(script.text.splitlines()) == 19997
    assert len(script.invocations) == 4999
    last = script.invocations[-1]
    assert texts(last.args) == ["--step", "4999", "--n", "4999"]
    assert last.args[3].loc.line == 19996


def test_expansion_blow_up_is_capped() -> None:
    script = run("A=x\n" + 'A="$A $A"\n' * 60 + "torchrun pretrain_gpt.py --a $A --b 1\n")
    assert script.variables["A"].unknown == "value too large (over 64 KiB)"
    args = only(script).args
    assert texts(args) == ["--a", None, "--b", "1"]
    arrays = run("A=(x)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 60)
    assert arrays.variables["A"].unknown == "value too large (over 64 KiB)"


def test_deep_nesting_is_an_input_error() -> None:
    # at the limit the command starts with (CPython's 1000): a test earlier in a long run
    # (hypothesis raises the limit while it runs a test) may leave it higher
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        with pytest.raises(InputError, match="nesting too deep"):
            run("if true; then\n" * 3000 + "X=1\n" + "fi\n" * 3000)
    finally:
        sys.setrecursionlimit(old)


# -- eval: the second parse ---------------------------------------------------------------


def test_eval_of_a_command_string_is_the_launch() -> None:
    """``run_cmd="torchrun ..."; eval ${run_cmd}``: bash joins eval's words and parses them
    again, so the launch is found, the quotes inside the string are removed only now, and
    each flag keeps the line it was written at."""
    path = fixture("eval_run_cmd.sh")
    parsed = parse_script(path)
    inv = only(parsed)
    assert inv.launcher == "torchrun"
    assert inv.script is not None and inv.script.text == "pretrain_gpt.py"
    args = inv.args
    assert value_of(args, "--num-layers").text == "8"
    assert value_of(args, "--num-layers").loc.line == line_of(path, "--num-layers")
    # '...' inside the double-quoted string survives the first expansion; eval removes it
    assert value_of(args, "--moe-layer-freq").text == "([0]*2+[1]*6)"
    # \" inside the string becomes a quote that eval's parse uses to keep one word
    assert value_of(args, "--data-path").text == "/mnt/corpus/part 1"
    assert "--sequence-parallel" in texts(args)
    assert not any("eval" in w for w in parsed.warnings)


@pytest.mark.parametrize(
    ("line", "flag", "reason"),
    [
        # single quotes inside the value: eval expands $HOME only on its second parse
        ("X=\"--load '\\$HOME'\"; eval torchrun pretrain_gpt.py $X", None, None),
        ('X="--load \\$CKPT"; eval torchrun pretrain_gpt.py $X', "--load", "a second time"),
        ('X="--lr 1e-4 ; echo done"; eval torchrun pretrain_gpt.py $X', "--lr", None),
        ("eval torchrun pretrain_gpt.py --save $1", "--save", "positional"),
        ("X='--data-path d*'; eval torchrun pretrain_gpt.py $X", "--data-path", "glob"),
    ],
)
def test_eval_second_parse(line: str, flag: str | None, reason: str | None) -> None:
    inv = only(run(line))
    if flag is None:
        assert texts(inv.args) == ["--load", "$HOME"]
        return
    w = value_of(inv.args, flag)
    if reason is None:
        assert w.text == "1e-4"
        assert texts(inv.args) == ["--lr", "1e-4"]  # `;` ended the launch command
    else:
        assert w.text is None and reason in w.unknown


def test_eval_of_a_quoted_string_ends_the_command_at_its_newline() -> None:
    """``eval "$cmd"`` keeps the newline, which ends the command on the second parse:
    the options on the next line are a separate command that torchrun never sees."""
    inv = only(run('cmd="torchrun pretrain_gpt.py --lr 1e-4\n --seed 7"\neval "$cmd"\n'))
    assert texts(inv.args) == ["--lr", "1e-4"]


def test_eval_of_unknown_text_says_why() -> None:
    parsed = run("eval $LAUNCH_CMD\n")
    assert parsed.invocations == []
    assert any("eval $LAUNCH_CMD is not followed" in w for w in parsed.warnings)


# -- values chosen by undecided branches ----------------------------------------------------


def test_a_branch_choice_keeps_every_branch_value() -> None:
    """`if [ $SIZE = a ]; then N=2; else N=4; fi`: the last branch's value is used, the word
    says it was a choice and lists every branch's value with its line, through a one-token
    variable copy, a `--flag=$X` word and eval alike."""
    text = (
        "SIZE=$1\n"
        "if [ $SIZE = a ]; then\n"
        "  N=2\n"
        "  W=64\n"
        '  extra=""\n'
        "else\n"
        "  N=4\n"
        "  W=128\n"
        '  extra="--swiglu --ffn-hidden-size 96"\n'
        "fi\n"
        "M=$N\n"
        'cmd="torchrun pretrain_gpt.py --num-layers $M --hidden-size=$W $extra --lr 1e-4"\n'
        "eval $cmd\n"
    )
    args = only(run(text)).args
    n = value_of(args, "--num-layers")
    assert (n.text, n.choice) == ("4", True)
    assert [(t, loc.line) for t, loc in n.alternatives] == [("2", 3), ("4", 7)]
    width = next(w for w in args if (w.text or "").startswith("--hidden-size="))
    assert [t for t, _ in width.alternatives] == ["--hidden-size=64", "--hidden-size=128"]
    # the other branch leaves `extra` empty: its flags may be absent, no alternatives
    ffn = value_of(args, "--ffn-hidden-size")
    assert ffn.choice and ffn.alternatives == ()
    assert next(w for w in args if w.text == "--swiglu").choice
    assert not value_of(args, "--lr").choice


def test_one_armed_if_is_not_a_choice() -> None:
    """`if [ -z "$X" ]; then X=1; fi` sets a value in one branch only: nothing to choose from."""
    args = only(
        run('if [ -z "$L" ]; then L=8; fi\ntorchrun pretrain_gpt.py --num-layers $L\n')
    ).args
    assert value_of(args, "--num-layers").choice is False


def test_a_branch_repeating_an_earlier_value_keeps_the_choice() -> None:
    """Two sizes share a width (`elif` 14B and 32B both 5120): the later equal branch must
    not forget that the first branch chose something else."""
    text = (
        "case $1 in\n"
        "  small) W=1024 ;;\n"
        "  mid) W=5120 ;;\n"
        "  big) W=5120 ;;\n"
        "esac\n"
        "torchrun pretrain_gpt.py --hidden-size $W\n"
    )
    w = value_of(only(run(text)).args, "--hidden-size")
    assert w.choice
    assert [t for t, _ in w.alternatives] == ["1024", "5120"]


def test_extended_globs_parse_when_the_script_turns_extglob_on(tmp_path: Path) -> None:
    # MindFormers' scripts/run_distribute.sh (v1.3.2) clears each rank's folder with an
    # extended glob inside its launch loop; bash runs it, tree-sitter-bash has no grammar
    # for it. The loop's launch is still read, and the glob word keeps its real text.
    body = (
        "#!/bin/bash\nshopt -s extglob\nN=$((2*(3+4)))\n"
        "for((i=0; i<8; i++))\ndo\n"
        "    rm -rf ./mf_parallel$i/!(rank_*)\n"
        "    python run_mindformer.py --config configs/llama2/run_llama2_7b.yaml &\n"
        "done\nshopt -u extglob\n"
    )
    script = tmp_path / "run_distribute.sh"
    script.write_text(body)
    sh = parse_script(str(script))
    assert [inv.script.text for inv in sh.invocations] == ["run_mindformer.py"]
    assert sh.variables["N"].text == "14"
    without = tmp_path / "plain.sh"
    without.write_text(body.replace("shopt -s extglob\n", ""))
    with pytest.raises(InputError, match="cannot parse shell"):
        parse_script(str(without))
