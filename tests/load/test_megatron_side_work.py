"""What reading a Megatron launch asks of the argument tables (issue 29: a pair lint within
2x yamllint's cost): only the tables and the argument specs the launch needs. Each test
counts what is read or built, never how long it takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.load import dialects
from cfglint.load.dialects import detect_dialect

# flags of Megatron-LM's own table (core_v0.19.0), as the README's llama2_7b launch passes them
MEGATRON_FLAGS = ["--num-layers", "--hidden-size", "--bf16", "--swiglu", "--lr", "--train-iters"]


def _asked_tables(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables detection asks the flags of, each time it asks (the run's cache aside)."""
    asked: list[str] = []
    real = dialects.table_flags

    def counting(name: str) -> frozenset[str]:
        asked.append(name)
        return real(name)

    monkeypatch.setattr(dialects, "table_flags", counting)
    return asked


def test_a_megatron_lm_launch_reads_no_mindspeed_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its flags are all Megatron-LM's: no MindSpeed release can claim one of them, so
    neither MindSpeed-LLM table is read to tell (they were, ~60 KB of JSON a run)."""
    asked = _asked_tables(monkeypatch)
    found = detect_dialect(MEGATRON_FLAGS, "pretrain_gpt.py", str(tmp_path / "train.sh"))
    assert found.dialect.name == "megatron-lm"
    assert set(asked) == {"megatron-lm"}


def test_a_mindspeed_flag_still_reads_the_mindspeed_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _asked_tables(monkeypatch)
    flags = [*MEGATRON_FLAGS, "--use-mcore-models", "--use-fused-rmsnorm"]
    found = detect_dialect(flags, "pretrain_gpt.py", str(tmp_path / "train.sh"))
    assert found.dialect.name == "mindspeed-llm"
    assert "mindspeed-llm" in asked
