"""Launch commands whose arguments are partly unreadable.

A real pattern (NPU model zoos, in-house launchers): the script sources a shared file cfglint
cannot read (``source ./common.sh``) and passes what it set (``${COMMON_ARGS}``) next to a few
written flags. A flag the script does not write may be in those words, so its value is not
Megatron's default: it is not decided. The caller's inputs, a variable that nothing in the
script sets and nothing unread could set (``$EXTRA_ARGS``) and forwarded arguments (``"$@"``,
as in Megatron-DeepSpeed's universal_checkpointing/llama/run_llama_bf16.sh and bigcode's
examples/pretrain_gpt3_175B.sh), are read as the empty hooks they are for a script run as
written.
"""

from __future__ import annotations

from pathlib import Path

from cfglint.check.pipeline import Options, lint
from cfglint.load.shell import parse_script
from cfglint.model.findings import Report
from conftest import FIXTURES

EXAMPLE = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
WRITTEN = "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --bf16"


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "launch.sh"
    path.write_text("#!/bin/bash\n" + body)
    return path


def _lint(tmp_path: Path, body: str) -> Report:
    report, _ = lint(Options(mindformers=[str(EXAMPLE)], megatron=str(_script(tmp_path, body))))
    return report


def _rules(report: Report) -> set[str]:
    return {f.rule for f in report.findings}


def _why(report: Report, rule: str) -> str:
    return " ".join(r for _, r in report.not_checked if r.startswith(rule))


def test_unread_source_makes_its_variables_unknown_not_unset(tmp_path: Path) -> None:
    sh = parse_script(
        str(_script(tmp_path, "source ./common.sh\ntorchrun pretrain_gpt.py ${COMMON_ARGS}\n"))
    )
    word = sh.invocations[0].args[0]
    assert word.text is None
    assert "source ./common.sh" in word.unknown and "may set it" in word.unknown, word.unknown
    assert sh.unfollowed and "line 2" in sh.unfollowed[0]


def test_flags_an_unread_source_may_set_are_not_megatron_defaults(tmp_path: Path) -> None:
    """Before: MLP activation, dropout, biases, normalization, positions, tying and beta2 were
    reported as errors against Megatron's defaults, though common.sh may set every one."""
    r = _lint(
        tmp_path, f"source ./common.sh\ntorchrun pretrain_gpt.py ${{COMMON_ARGS}} {WRITTEN}\n"
    )
    assert not {
        "STR026",
        "STR009",
        "STR024",
        "STR007",
        "STR020",
        "STR023",
        "OPT006",
        "STR004",
    } & _rules(r)
    assert "may set it" in _why(r, "STR026"), r.not_checked


def test_written_flags_are_still_compared(tmp_path: Path) -> None:
    r = _lint(
        tmp_path, "source ./common.sh\ntorchrun pretrain_gpt.py ${COMMON_ARGS} --num-layers 30\n"
    )
    assert "STR001" in _rules(r)


def test_forwarded_caller_arguments_are_read_as_empty(tmp_path: Path) -> None:
    r = _lint(tmp_path, f'run_cmd="python pretrain_gpt.py $@ {WRITTEN}"\neval ${{run_cmd}}\n')
    assert "STR026" in _rules(r)


def test_a_command_substitution_may_hold_any_flag(tmp_path: Path) -> None:
    r = _lint(tmp_path, f"torchrun pretrain_gpt.py {WRITTEN} $(cat extra_args.txt)\n")
    assert "STR026" not in _rules(r)
    assert "may set it" in _why(r, "STR026"), r.not_checked


def test_an_environment_hook_nothing_sets_is_read_as_empty(tmp_path: Path) -> None:
    """No unread source: ${EXTRA_ARGS} can only come from the caller's environment, and the
    comparison goes on with the script's own flags and Megatron's defaults."""
    r = _lint(tmp_path, f"torchrun pretrain_gpt.py {WRITTEN} ${{EXTRA_ARGS}}\n")
    assert "STR026" in _rules(r)


def test_an_unread_source_may_export_the_environment(tmp_path: Path) -> None:
    """CUBLAS_WORKSPACE_CONFIG not exported by the script, but common.sh may export it."""
    r = _lint(tmp_path, f"source ./common.sh\ntorchrun pretrain_gpt.py {WRITTEN}\n")
    assert "DET006" not in _rules(r)
    assert "common.sh" in _why(r, "DET006"), r.not_checked
    plain = _lint(tmp_path, f"torchrun pretrain_gpt.py {WRITTEN}\n")
    assert "DET006" in _rules(plain)
