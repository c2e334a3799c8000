"""Peak memory and wall time of the worst case of each issue-12 class.

Each case of tests/fuzz/cases.py runs at its bench size (``BENCH_SCALE``) as a child process
under the campaign's limits (2 GiB address space, 30 s), and the table records exit, time and
peak RSS. ``--save NAME`` writes bench/results/worst_NAME.json; ``--compare A B`` prints the
two saved runs side by side (the before/after table of the closing note).

    .venv/bin/python bench/bench_worst.py --save after
    .venv/bin/python bench/bench_worst.py --compare before after
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "fuzz"))

from cases import CASES, CLASS, restore  # noqa: E402
from harness import run_cli  # noqa: E402

# the sizes the issue reports as worst (1 = the regression-test size)
BENCH_SCALE = {
    "suppress_reads_bin": 4,  # 1 GiB .bin
    "lr_long_schedule": 10,  # 20M steps
    "big_python_source": 3,  # ~1.8 MB of Python (under the old 2 MiB cap)
    "huge_pyproject": 10,  # 200 MB
    "huge_loss_log": 7,  # ~200 MB
    "broken_bash_array": 2,  # ~140 KB line
    "long_python_expression": 4,  # 80 KB expression
    "long_python_expression_broken": 4,  # 12 000 terms in a file CPython rejects
    "python_as_launch_script": 2,  # ~200 KB of Python given as a launch script
    "yaml_open_brackets": 3,  # 9 KB of [
    "yaml_deep_block": 4,  # 20 000 levels
}


# extra sizes measured under their own name: "case@scale"
EXTRA = {"lr_long_schedule@5": "10M steps, the largest simulated since the fix"}


def run(names: list[str], timeout: float) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for name in names:
        base, _, at = name.partition("@")
        scale = int(at) if at else BENCH_SCALE.get(name, 1)
        d = Path(tempfile.mkdtemp(prefix=f"worst-{base}-"))
        try:
            c = CASES[base](d, scale)
            cache = str(c.cache) if c.cache is not None else None
            o = run_cli(c.argv, cwd=d, timeout=timeout, cache=cache)
        finally:
            restore(d)
            shutil.rmtree(d, ignore_errors=True)
        first = (o.stderr.strip().splitlines() or [""])[-1][:160]
        out[name] = {
            "class": CLASS[base],
            "scale": scale,
            "outcome": o.kind,
            "seconds": round(o.seconds, 2),
            "peak_rss_mib": round(o.max_rss_mib, 1),
            "stderr": first,
        }
        print(
            f"{CLASS[base]:18} {name:34} {o.kind:6} {o.seconds:7.2f} s {o.max_rss_mib:8.1f} MiB"
            f"  {first[:90]}",
            flush=True,
        )
    return out


def compare(a: str, b: str) -> None:
    ra = json.loads((HERE / "results" / f"worst_{a}.json").read_text())["cases"]
    rb = json.loads((HERE / "results" / f"worst_{b}.json").read_text())["cases"]
    print(f"| class | case | {a}: outcome, s, MiB | {b}: outcome, s, MiB |")
    print("|---|---|---|---|")
    for name in sorted(set(ra) | set(rb), key=lambda n: (CLASS.get(n.split("@")[0], ""), n)):
        cells = []
        for r in (ra, rb):
            x = r.get(name)
            cells.append(
                f"{x['outcome']}, {x['seconds']}, {x['peak_rss_mib']}" if x else "not measured"
            )
        print(f"| {CLASS.get(name.split('@')[0], '?')} | {name} | {cells[0]} | {cells[1]} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*", help="cases to run (default: all)")
    ap.add_argument("--save", metavar="NAME")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    names = args.names or [*sorted(CASES, key=lambda n: (CLASS[n], n)), *EXTRA]
    res = run(names, args.timeout)
    if args.save:
        path = HERE / "results" / f"worst_{args.save}.json"
        old = json.loads(path.read_text())["cases"] if path.exists() else {}
        old.update(res)
        meta = {"python": platform.python_version(), "machine": platform.machine()}
        path.write_text(json.dumps({"meta": meta, "cases": old}, indent=2) + "\n")
        print(f"saved {path}")


if __name__ == "__main__":
    main()
