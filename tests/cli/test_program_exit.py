"""Issue 29: a program run (``cfglint.cli.run``) ends without the interpreter's teardown once
its output is flushed and nothing is left to run at exit: the same output and exit code,
~30 M fewer instructions (bench/results/fresh_env.md). Whatever still has work at exit (an
exit function, a profiler, a live thread) gets the usual exit."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

from cfglint.cli import main
from conftest import FIXTURES, ROOT, fresh_python

EX = FIXTURES / "examples" / "llama2_7b"
PAIR = [str(EX / "pretrain_llama2_7b.yaml"), "--megatron", str(EX / "pretrain_llama2_7b.sh")]

# An object that says so on stderr when the interpreter's teardown frees it, planted right
# after the program run's gc.freeze() in a module of its own (frozen objects in cycles are
# never freed); `extra` runs before the command line does.
PROGRAM = """
import gc, os, sys, types
class Witness:
    def __del__(self, write=os.write):  # bound now: the teardown clears module globals
        write(2, b"torn down\\n")
real_freeze = gc.freeze
def freeze():
    real_freeze()
    planted = types.ModuleType("witness")
    planted.it = Witness()
    sys.modules["witness"] = planted
gc.freeze = freeze
{extra}
sys.argv = ["cfglint", *sys.argv[1:]]
from cfglint.cli import run
run()
"""


def _program(extra: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return fresh_python(PROGRAM.format(extra=extra), *argv, check=False)


def _in_process(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        rc = main(argv)
    return rc, out.getvalue()


def test_a_program_run_skips_the_teardown_and_delivers_all_of_its_output() -> None:
    argv = [*PAIR, "--format", "sarif"]  # tens of kilobytes: many writes and a last flush
    rc, expected = _in_process(argv)
    proc = _program("", *argv)
    assert (proc.returncode, proc.stdout) == (rc, expected) == (1, expected)
    assert len(expected) > 64 * 1024
    json.loads(proc.stdout)
    assert "torn down" not in proc.stderr


def test_an_exit_function_gets_the_usual_exit() -> None:
    extra = "import atexit\natexit.register(lambda: os.write(2, b'exit function ran\\n'))"
    proc = _program(extra, *PAIR, "-q")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-2:] == ["exit function ran", "torn down"]


def test_a_live_thread_gets_the_usual_exit() -> None:
    # a thread that outlives the command line: it waits for the main thread to finish
    extra = (
        "import threading\n"
        "def wait():\n"
        "    threading.main_thread().join()\n"
        "    os.write(2, b'thread done\\n')\n"
        "threading.Thread(target=wait).start()"
    )
    proc = _program(extra, *PAIR, "-q")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-2:] == ["thread done", "torn down"]


def test_a_profiled_run_still_prints_its_profile() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "cProfile", "-m", "cfglint", *PAIR, "-q"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
    )
    assert "function calls" in proc.stdout, proc.stderr[-2000:]


def test_an_input_error_is_one_line_and_exit_2_without_the_teardown(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    proc = _program("", str(missing))
    assert (proc.returncode, proc.stderr) == (2, f"{missing}: no such YAML file\n")
