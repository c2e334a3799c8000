"""Bash as bash runs it: branches whose condition is known to be false contribute nothing;
undecided ones stay possible and say which value decides them (patterns from real launch
scripts, e.g. Megatron-DeepSpeed's activation_checkpoint / LOG_TO_WANDB switches)."""

from __future__ import annotations

from cfglint.load.shell import main_invocation, parse_script_text


def _args(body: str) -> tuple[dict[str, bool], list[str]]:
    sh = parse_script_text(body, "run.sh")
    inv = main_invocation(sh)
    assert inv is not None
    return {w.text or "?": w.conditional for w in inv.args}, sh.warnings


def test_false_string_test_drops_the_branch() -> None:
    args, warnings = _args(
        'activation_checkpoint="false"\nds=""\n'
        'if [ "${activation_checkpoint}" = "true" ]; then\n'
        '  ds="--recompute-granularity full ${ds}"\nfi\n'
        "torchrun pretrain_gpt.py --num-layers 2 $ds\n"
    )
    assert "--recompute-granularity" not in args
    assert any("not taken" in w and "'false'" in w for w in warnings)


def test_numeric_test_and_else() -> None:
    args, _ = _args(
        "LOG_TO_WANDB=0\nW=\nif [ $LOG_TO_WANDB -eq 1 ]\nthen\nW='--wandb-project p'\n"
        "else\nW='--log-interval 5'\nfi\ntorchrun pretrain_gpt.py $W\n"
    )
    assert "--wandb-project" not in args
    assert args["--log-interval"] is False  # the else branch certainly runs


def test_positional_parameter_stays_undecided() -> None:
    args, warnings = _args(
        'if [ "$4" = "bf16" ]; then P="--bf16"; else P="--fp16"; fi\ntorchrun pretrain_gpt.py $P\n'
    )
    assert any(args.values())  # a branch's choice: conditional
    assert any("not decided" in w and "$4" in w for w in warnings)


def test_double_brackets_patterns_and_chains() -> None:
    args, _ = _args(
        "SIZE=7B\nMODE=\n"
        '[[ -z "$MODE" && $SIZE == 7* ]] && X="--num-layers 32"\n'
        '[ -n "$MODE" ] && Y="--seq-length 9"\n'
        "torchrun pretrain_gpt.py $X $Y\n"
    )
    assert args.get("--num-layers") is False
    assert "--seq-length" not in args


def test_arithmetic_test_elif_and_case() -> None:
    args, _ = _args(
        "L=48\nif (( L < 10 )); then A='--tiny'; elif (( L > 40 )); then A='--big'; fi\n"
        "M=big\ncase $M in\n small) B='--b1';;\n big|huge) B='--b2';;\n *) B='--b3';;\nesac\n"
        "torchrun pretrain_gpt.py $A $B\n"
    )
    assert "--tiny" not in args and args["--big"] is False
    assert "--b1" not in args and "--b3" not in args and args["--b2"] is False


def test_value_set_in_an_undecided_branch_keeps_later_tests_undecided() -> None:
    args, _ = _args(
        'if [ "$1" = x ]; then F=1; else F=0; fi\n'
        "if [ $F -eq 1 ]; then E='--bf16'; fi\n"
        "torchrun pretrain_gpt.py --num-layers 2 $E\n"
    )
    assert args.get("--bf16") is True  # possible, marked conditional


def test_bash_c_string_is_parsed_as_a_script() -> None:
    # bigcode-project/Megatron-LM examples/*.slurm: srun ... bash -c "$LAUNCHER ... $CMD"
    args, _ = _args(
        'CMD="pretrain_gpt.py --num-layers 2 --hidden-size 64"\n'
        'LAUNCHER="python -u -m torch.distributed.run --nproc_per_node 8"\n'
        'srun --jobid 1 bash -c "$LAUNCHER --node_rank \\$SLURM_PROCID $CMD"\n'
    )
    assert args.get("--num-layers") is False and "--hidden-size" in args


def test_arithmetic_on_a_branch_value_is_undecided() -> None:
    args, _ = _args(
        'if [ "$2" = big ]; then L=48; else L=2; fi\n'
        "if (( L > 10 )); then S='--sequence-parallel'; fi\n"
        "torchrun pretrain_gpt.py --num-layers $L $S\n"
    )
    assert args.get("--sequence-parallel") is True
