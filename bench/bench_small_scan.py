"""Cold source scan of a small repository against its ast.parse floor (issue 19).

The goal: a repository of 15-40 files costs at most 2x the floor (reading and ast.parse-ing
every file) plus 0.3 s. Each measurement runs in a fresh interpreter (the scanner's and
linker's lazy imports are part of its cost; importing cfglint itself is not), with the scan
cache off, and the two are interleaved so that load on a shared machine hits both alike.
CPU seconds of the child (user + sys; the floor's parse loop only) are reported next to
wall time; the median of --runs is kept. ``--src`` points at another checkout's src/ to compare.

    python bench/bench_small_scan.py DIR [DIR ...] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_FLOOR = """
import ast, os, sys, time, warnings
warnings.simplefilter("ignore")
t = time.perf_counter()
c0 = time.process_time()
n = 0
for root, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
    for f in sorted(files):
        if f.endswith(".py"):
            try:
                ast.parse(open(os.path.join(root, f), encoding="utf-8").read())
                n += 1
            except (SyntaxError, ValueError, UnicodeDecodeError):
                pass
wall = time.perf_counter() - t
print(wall, time.process_time() - c0, n)
"""

_SCAN = """
import resource, sys, time
from cfglint.evidence.scan import scan_paths
r0 = resource.getrusage(resource.RUSAGE_SELF)
t = time.perf_counter()
res = scan_paths([sys.argv[1]], use_cache=False)
wall = time.perf_counter() - t
r = resource.getrusage(resource.RUSAGE_SELF)
c = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (r.ru_utime + r.ru_stime - r0.ru_utime - r0.ru_stime) + c.ru_utime + c.ru_stime
print(wall, cpu, res.stats.files, res.stats.workers, len(res.entries))
"""


def _run(code: str, target: str, src: str) -> list[float]:
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run(
        [sys.executable, "-c", code, target], capture_output=True, text=True, env=env, check=True
    )
    return [float(x) for x in out.stdout.split()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="write the medians here")
    ap.add_argument("--src", default=str(ROOT / "src"), help="the cfglint src/ to measure")
    args = ap.parse_args()
    rows = []
    for d in args.dirs:
        floors, scans = [], []
        for _ in range(args.runs):
            floors.append(_run(_FLOOR, d, args.src))
            scans.append(_run(_SCAN, d, args.src))
        fw = statistics.median(x[0] for x in floors)
        fc = statistics.median(x[1] for x in floors)
        sw = statistics.median(x[0] for x in scans)
        sc = statistics.median(x[1] for x in scans)
        files, workers, entries = (int(v) for v in scans[-1][2:5])
        budget = 2 * fw + 0.3
        cpu_budget = 2 * fc + 0.3  # the fair one on a loaded machine: CPU against CPU
        row = {
            "repo": d,
            "files": files,
            "workers": workers,
            "entries": entries,
            "floor_wall_s": round(fw, 3),
            "floor_cpu_s": round(fc, 3),
            "scan_wall_s": round(sw, 3),
            "scan_cpu_s": round(sc, 3),
            "budget_wall_s": round(budget, 3),
            "within_budget": sw <= budget,
            "cpu_budget_s": round(cpu_budget, 3),
            "cpu_within_budget": sc <= cpu_budget,
        }
        rows.append(row)
        print(
            f"{d}: {files} files, {workers} process(es): floor {fw:.3f} s, scan {sw:.3f} s "
            f"wall ({sc:.3f} s CPU, floor {fc:.3f} s CPU); budget 2x floor + 0.3 s: "
            f"wall {budget:.3f} s -> {'ok' if sw <= budget else 'OVER'}, "
            f"CPU {cpu_budget:.3f} s -> {'ok' if sc <= cpu_budget else 'OVER'}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
