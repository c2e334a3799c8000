"""Issue 29: a program run (``cfglint.cli.run``: the console script, ``python -m cfglint``)
imports the command line with the cyclic collector off, freezes what it imported before the
collector runs again, and then collects young objects every GC_THRESHOLD allocations instead
of Python's 700; a call from Python leaves the caller's collector as it was."""

from __future__ import annotations

import gc

import pytest

from cfglint.cli import GC_THRESHOLD, main
from conftest import FIXTURES, fresh_python

EX = FIXTURES / "examples" / "llama2_7b"

# The collections a program run starts before its lint begins (the collector's callback finds
# cfglint.cli.run on the stack, and not yet the command line's main), then its schedule and
# frozen objects at exit (an exit function: the process also takes the usual way out).
PROGRAM = """
import atexit, gc, sys
before = []
def seen(phase, info):
    names, f = set(), sys._getframe(1)
    while f is not None:
        names.add((f.f_code.co_name, f.f_code.co_filename.rsplit("/", 2)[-2:][-2]))
        f = f.f_back
    if phase == "start" and ("run", "cli") in names and ("main", "cli") not in names:
        before.append(info["generation"])
gc.callbacks.append(seen)
def report():
    print(before, gc.isenabled(), gc.get_threshold()[0], gc.get_freeze_count() > 0)
atexit.register(report)
sys.argv = ["cfglint", sys.argv[1], "--megatron", sys.argv[2], "-q"]
from cfglint.cli import run
run()
"""


def test_a_program_run_collects_nothing_before_the_lint_and_young_objects_less_often() -> None:
    proc = fresh_python(
        PROGRAM,
        str(EX / "pretrain_llama2_7b.yaml"),
        str(EX / "pretrain_llama2_7b.sh"),
        check=False,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    before, enabled, threshold, frozen = proc.stdout.splitlines()[-1].rsplit(" ", 3)
    # re-enabling the collector after the imports used to start a pass over all of them
    assert (before, enabled, frozen) == ("[]", "True", "True")
    assert int(threshold) == GC_THRESHOLD > 700


def test_a_call_from_python_leaves_the_collector_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = gc.get_threshold()
    frozen, enabled = gc.get_freeze_count(), gc.isenabled()
    assert main([str(EX / "pretrain_llama2_7b.yaml"), "-q"]) == 1
    assert "\n" in capsys.readouterr().out
    assert gc.get_threshold() == before
    assert (gc.get_freeze_count(), gc.isenabled()) == (frozen, enabled)
