"""Cold-start time of `cfglint show` and `cfglint lint` on a config pair, against a bare
`python -c pass` in the same run, plus the import floor of the libraries a lint needs.

    python bench/bench_cold_start.py [--runs N]

Each command is a fresh interpreter, as in a pre-commit hook. Bytecode caching is left on
(as for a user) and one warm-up run fills it; the parsed-data cache lives in a temporary
directory that the warm-up run fills too. Prints medians; no pass/fail.
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


def timed(cmd: list[str], env: dict[str, str], runs: int) -> float:
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        )
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


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
        base = None
        print(f"{'command':34} {'median':>9} {'x bare':>7}")
        for name, cmd in rows:
            t = timed(cmd, env, args.runs)
            base = base or t
            print(f"{name:34} {t * 1000:7.1f}ms {t / base:6.1f}x")
        print(f"heavy modules imported by a plain lint: {heavy_imports(env) or 'none'}")


if __name__ == "__main__":
    main()
