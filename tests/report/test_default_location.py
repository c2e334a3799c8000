"""Issue 29: a finding on a default (a value the file leaves out, taken from a default)
points at the line where its section begins in the file that leaves it out (the
``optimizer:`` key for an optimizer default, the launch command for a flag a script leaves
out), or at line 1 when the file has no such section: in text, JSON, SARIF and GitHub
annotations alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfglint.cli import main
from conftest import FIXTURES

EX = FIXTURES / "examples" / "llama2_7b"
EX_MF, EX_MG = str(EX / "pretrain_llama2_7b.yaml"), str(EX / "pretrain_llama2_7b.sh")


def line_of(path: str, start: str) -> int:
    """The 1-based line of ``path`` that begins with ``start``."""
    lines = Path(path).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.startswith(start))


OPTIMIZER = line_of(EX_MF, "optimizer:")
MODEL_CONFIG = line_of(EX_MF, "  model_config:")
LAUNCH = line_of(EX_MG, "torchrun ")


def lint(capsys: pytest.CaptureFixture[str], fmt: str, *files: str) -> str:
    args = list(files) or [EX_MF, "--megatron", EX_MG]
    main([*args, "--format", fmt])
    return capsys.readouterr().out


def by_rule(capsys: pytest.CaptureFixture[str], *files: str) -> dict[str, dict]:
    return {f["rule"]: f for f in json.loads(lint(capsys, "json", *files))["findings"]}


def test_json_points_a_default_at_its_section(capsys: pytest.CaptureFixture[str]) -> None:
    found = by_rule(capsys)
    # MindFormers leaves weight_decay to its optimizer class: the `optimizer:` key
    wd = found["OPT008"]
    assert [(u["side"], u["line"]) for u in wd["unset_locations"]] == [("mindformers", OPTIMIZER)]
    assert {loc["side"] for loc in wd["locations"]} == {"megatron"}  # --weight-decay 0.1
    # both sides leave init_method_std: the model_config key and the launch command
    std = found["WGT003"]
    assert std["locations"] == []
    assert [(u["side"], u["line"], u["column"]) for u in std["unset_locations"]] == [
        ("mindformers", MODEL_CONFIG, 3),
        ("megatron", LAUNCH, 1),
    ]
    # the MindFormers knob (train_precision_sync) is a top-level key: no section, line 1
    det = found["DET003"]
    assert [(u["side"], u["line"]) for u in det["unset_locations"]] == [
        ("mindformers", 1),
        ("megatron", LAUNCH),
    ]


def test_sarif_start_line_is_the_section(capsys: pytest.CaptureFixture[str]) -> None:
    results = json.loads(lint(capsys, "sarif"))["runs"][0]["results"]
    std = next(r for r in results if r["ruleId"] == "WGT003")
    region = std["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": MODEL_CONFIG}  # nothing underlined: it is not written
    related = [r["physicalLocation"]["region"]["startLine"] for r in std["relatedLocations"]]
    assert related == [LAUNCH]


def test_text_and_github_name_the_section(capsys: pytest.CaptureFixture[str]) -> None:
    text = " ".join(lint(capsys, "text").split())
    assert f"at: {EX_MF}:{MODEL_CONFIG} (not set), {EX_MG}:{LAUNCH} (not set)" in text
    assert f"{EX_MG}:41, {EX_MG}:62, {EX_MF}:{OPTIMIZER} (not set)" in text  # OPT008
    lines = lint(capsys, "github").splitlines()
    std = next(line for line in lines if "title=WGT003" in line)
    assert std.startswith(f"::error file={EX_MF},line={MODEL_CONFIG},col=3,title=WGT003")
    # an environment variable the script does not export: before its launch command
    env = next(line for line in lines if "title=DET006" in line)
    assert f"file={EX_MG},line={LAUNCH}," in env


def test_a_section_only_a_base_config_writes_is_line_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the child leaves the optimizer section to its base: that key is in another file, so
    # the child (the file that leaves the setting out) is pointed at its first line
    base = tmp_path / "base.yaml"
    base.write_text(Path(EX_MF).read_text())
    child = tmp_path / "child.yaml"
    child.write_text("base_config: ['base.yaml']\nseed: 0\n")
    wd = by_rule(capsys, str(child), "--megatron", EX_MG)["OPT008"]
    assert [(u["path"], u["line"]) for u in wd["unset_locations"]] == [(str(child), 1)]
