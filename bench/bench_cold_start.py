"""Cold-start time of `cfglint show` and `cfglint lint` on a config pair, against a bare
`python -c pass` in the same run, plus the import floor of the libraries a lint needs, and
each cfglint command with an empty cache (a fresh CI runner, a pre-commit or Action run)
against the same command with a warm one.

    python bench/bench_cold_start.py [--runs N]

Run it with the interpreter whose cfglint is measured: a checkout's `.venv/bin/python`, or
one where the wheel is installed (whose tables ship ready). Each command is a fresh
interpreter, as in a pre-commit hook. Bytecode caching is left on (as for a user) and one
warm-up run fills it; the parsed-data cache lives in a temporary directory that the warm-up
run fills too, and the "empty cache" rows give every run a new, empty one. Prints medians of
wall and CPU time (user + system: a loaded machine disturbs it far less); no pass/fail.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAIR = [
    str(ROOT / "fixtures/examples/llama2_7b/pretrain_llama2_7b.yaml"),
    "--megatron",
    str(ROOT / "fixtures/examples/llama2_7b/pretrain_llama2_7b.sh"),
]
HEAVY = ("torch", "mindspore", "libcst", "numpy", "matplotlib")


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``cmd``, its output discarded."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child: silence output, then become the command
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execve(cmd[0], cmd, env)
    _, _, usage = os.wait4(pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str], runs: int, empty: bool) -> tuple[float, float]:
    """Median wall and CPU seconds; ``empty``: each run starts from a new, empty cache."""
    run(cmd, env)
    walls, cpus = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as fresh:
            w, c = run(cmd, {**env, "CFGLINT_CACHE_DIR": fresh} if empty else env)
        walls.append(w)
        cpus.append(c)
    return statistics.median(walls), statistics.median(cpus)


def heavy_imports(env: dict[str, str]) -> list[str]:
    code = (
        "import sys, contextlib, io\nfrom cfglint.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({[*PAIR, '--format', 'json']!r})\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if not out.stdout.strip():
        return ["?"]
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as cache:
        env["CFGLINT_CACHE_DIR"] = cache
        py = sys.executable
        rows = [
            ("python -c pass", [py, "-c", "pass"]),
            (
                "import pydantic + 1 model",
                [
                    py,
                    "-c",
                    "from pydantic import BaseModel\nclass A(BaseModel):\n    x: int = 1\nA()",
                ],
            ),
            ("import ruamel.yaml", [py, "-c", "from ruamel.yaml import YAML"]),
            ("import tree_sitter_bash", [py, "-c", "import tree_sitter, tree_sitter_bash"]),
            ("cfglint show PAIR", [py, "-m", "cfglint", "show", *PAIR]),
            ("cfglint PAIR (lint, text)", [py, "-m", "cfglint", *PAIR]),
            ("cfglint PAIR --format json", [py, "-m", "cfglint", *PAIR, "--format", "json"]),
        ]
        rows += [
            (f"{name}, empty cache", cmd)
            for name, cmd in (
                ("cfglint --version", [py, "-m", "cfglint", "--version"]),
                ("cfglint PAIR (lint, text)", [py, "-m", "cfglint", *PAIR]),
            )
        ]
        rows.insert(-2, ("cfglint --version", [py, "-m", "cfglint", "--version"]))
        base: tuple[float, float] | None = None
        print(f"{'command':38} {'wall':>9} {'cpu':>9} {'cpu x bare':>10}")
        for name, cmd in rows:
            w, c = timed(cmd, env, args.runs, empty=name.endswith("empty cache"))
            base = base or (w, c)
            print(f"{name:38} {w * 1000:7.1f}ms {c * 1000:7.1f}ms {c / base[1]:9.1f}x")
        print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"heavy modules imported by a plain lint: {heavy_imports(env) or 'none'}")


if __name__ == "__main__":
    main()
