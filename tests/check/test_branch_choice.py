"""A setting that sibling branches of an undecided ``if`` set differently (vendor launch
scripts pick the model size or the precision from a positional argument) is one of several
values: a comparison is a finding only when no branch can match the other side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfglint.cli import main
from conftest import FIXTURES

DENSE = FIXTURES / "pairs" / "llama2_dense"
MF = str(DENSE / "llama2_7b_align.yaml")
SCRIPT = DENSE / "pretrain_llama2_align.sh"


def branched(tmp_path: Path, layers: tuple[int, int], hidden: tuple[int, int]) -> Path:
    """The aligned script with its depth and width chosen by `if [ "$SIZE" = ... ]`."""
    text = SCRIPT.read_text()
    head = (
        "SIZE=$1\n"
        'if [ "$SIZE" = tiny ]; then\n'
        f"    N_LAYERS={layers[0]}\n"
        f"    HIDDEN={hidden[0]}\n"
        "else\n"
        f"    N_LAYERS={layers[1]}\n"
        f"    HIDDEN={hidden[1]}\n"
        "fi\n"
    )
    text = text.replace("GPUS_PER_NODE=1\n", head + "GPUS_PER_NODE=1\n", 1)
    text = text.replace("    --num-layers 2\n", "    --num-layers ${N_LAYERS}\n", 1)
    text = text.replace("    --hidden-size 4096\n", "    --hidden-size=$HIDDEN\n", 1)
    out = tmp_path / "pretrain_branches.sh"
    out.write_text(text)
    return out


def lint(capsys: pytest.CaptureFixture[str], script: Path) -> dict:
    main([MF, "--megatron", str(script), "--format", "json", "--verbose"])
    return json.loads(capsys.readouterr().out)


def test_a_branch_that_matches_is_not_a_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the first branch is the aligned 2 x 4096 model; the last one, which a reader of the
    # script would take, is 4 x 8192
    data = lint(capsys, branched(tmp_path, (2, 4), (4096, 8192)))
    rules = {f["rule"] for f in data["findings"]}
    assert not rules & {"STR001", "STR003"}
    notes = " ".join(str(x) for x in data["not_checked"])
    assert "STR001" in notes and "gives 2, equal to the other side" in notes
    assert "STR003" in notes and "gives 4096, equal to the other side" in notes


def test_no_branch_matches_is_still_a_difference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = branched(tmp_path, (4, 6), (4096, 8192))
    data = lint(capsys, script)
    found = {f["rule"]: f for f in data["findings"]}
    assert "STR001" in found and "STR003" not in found
    lines = script.read_text().splitlines()
    first, second = (lines.index(f"    N_LAYERS={n}") + 1 for n in (4, 6))
    msg = found["STR001"]["message"]
    assert f"one of the branch values 4 (line {first}), 6 (line {second})" in msg


def test_a_condition_on_a_branch_choice_is_not_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The script adds its MoE options in one branch only: whether the run is MoE at all is
    not known, so the MoE-only rules (MOE008's float32 router advice) are not decided."""
    text = SCRIPT.read_text()
    head = (
        "KIND=$1\n"
        'if [ "$KIND" = moe ]; then\n'
        '    MOE_OPTS="--num-experts 8 --moe-router-topk 2"\n'
        "else\n"
        '    MOE_OPTS=""\n'
        "fi\n"
    )
    text = text.replace("GPUS_PER_NODE=1\n", head + "GPUS_PER_NODE=1\n", 1)
    text = text.replace("    --num-layers 2\n", "    --num-layers 2\n    ${MOE_OPTS}\n", 1)
    script = tmp_path / "pretrain_maybe_moe.sh"
    script.write_text(text)
    data = lint(capsys, script)
    assert not {f["rule"] for f in data["findings"]} & {"MOE001", "MOE008"}
    notes = " ".join(str(x) for x in data["not_checked"])
    assert "MOE008: not decided on Megatron: it depends on moe.num_experts" in notes


def test_show_names_every_branch_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = branched(tmp_path, (2, 4), (4096, 8192))
    main(["show", "--megatron", str(script), "--no-color"])
    # the table wraps cells: drop its borders and join the wrapped lines
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    lines = script.read_text().splitlines()
    first, second = (lines.index(f"    N_LAYERS={n}") + 1 for n in (2, 4))
    assert f"one of the branch values 2 (line {first}), 4 (line {second})" in out
