"""Issue 29: a program run (console script, ``python -m``) freezes what it imported and
collects young objects every GC_THRESHOLD allocations instead of Python's 700; a call from
Python leaves the caller's collector as it was."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from cfglint.cli import main
from cfglint.cli.app import GC_THRESHOLD
from conftest import FIXTURES

EX = FIXTURES / "examples" / "llama2_7b"

PROGRAM = """
import gc, sys
from cfglint.cli import main
sys.argv = ["cfglint", sys.argv[1], "--megatron", sys.argv[2], "-q"]
rc = main()
print(rc, gc.isenabled(), gc.get_threshold()[0], gc.get_freeze_count() > 0, file=sys.stderr)
"""


def test_a_program_run_collects_young_objects_less_often() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PROGRAM,
            str(EX / "pretrain_llama2_7b.yaml"),
            str(EX / "pretrain_llama2_7b.sh"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    rc, enabled, threshold, frozen = proc.stderr.split()[-4:]
    assert (rc, enabled, frozen) == ("1", "True", "True")
    assert int(threshold) == GC_THRESHOLD > 700


def test_a_call_from_python_leaves_the_collector_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = gc.get_threshold()
    assert main([str(EX / "pretrain_llama2_7b.yaml"), "-q"]) == 1
    assert "\n" in capsys.readouterr().out
    assert gc.get_threshold() == before
