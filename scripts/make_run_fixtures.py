"""Regenerate the probe-written training runs of fixtures/runs (the end-to-end fixtures of
``cfglint logs``, tests/cli/test_logs.py).

    PYTHONPATH=src .venv/bin/python scripts/make_run_fixtures.py [CASE ...] [--out DIR]

Each case is one ``cfglint probe MF.yaml --megatron ARGS --steps N --log-dir DIR`` in a
fresh interpreter (the probe extra: torch and mindspore); with no CASE all of them, into
fixtures/runs/<case>/ (or ``--out``/<case>/). The probe is deterministic
(seeded weights and tokens, deterministic kernels), so a rerun at the same commit writes the
same files; tests/cli/test_logs.py has a slow test that regenerates one case and compares.
Minutes per case on two CPU cores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "fixtures" / "runs"

# case -> (MindFormers config, Megatron arguments, steps)
CASES: dict[str, tuple[str, str, int]] = {
    "same": ("base.yaml", "base.sh", 300),
    "lr": ("lr.yaml", "base.sh", 150),
    "wd": ("wd.yaml", "base.sh", 300),
    "prec": ("prec.yaml", "low.sh", 600),
}


def command(case: str, out: Path) -> list[str]:
    cfg, args, steps = CASES[case]
    return [
        sys.executable,
        "-m",
        "cfglint",
        "probe",
        str(RUNS / cfg),
        "--megatron",
        str(RUNS / args),
        "--steps",
        str(steps),
        "--log-dir",
        str(out / case),
        "--format",
        "json",
    ]


def generate(case: str, out: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    t0 = time.perf_counter()
    proc = subprocess.run(command(case, out), env=env, capture_output=True, text=True, check=False)
    if proc.returncode not in (0, 1):  # 1: the lint found differences, as it should
        raise SystemExit(f"{case}: probe failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", metavar="CASE", help=", ".join(CASES))
    ap.add_argument("--out", type=Path, default=RUNS)
    args = ap.parse_args()
    unknown = set(args.cases) - set(CASES)
    if unknown:
        ap.error(f"unknown case {sorted(unknown)[0]} (one of {', '.join(CASES)})")
    for case in args.cases or list(CASES):
        took = generate(case, args.out)
        print(f"{case}: {took:.0f} s -> {args.out / case}")


if __name__ == "__main__":
    main()
