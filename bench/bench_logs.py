"""`cfglint logs` on a pair of million-line logs: reading, judging and drawing, with peak
memory, against reading the same bytes from the page cache in the same run.

    .venv/bin/python bench/bench_logs.py [--lines 1000000] [--runs 3] [--patterns]

Writes both logs (MindFormers and Megatron, in their real formats, one step a line) into a
temporary folder once, then times each stage in this process (medians of ``--runs``) and the
whole command in a fresh interpreter (text report, no picture). ``--patterns`` also times
the line-by-line pattern reader (the vectorized scan turned off) in the same run, for the
ratio on a shared machine. Prints a table; no pass/fail (the target is under 2 s for the
pair).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from cfglint.evidence.runs.judge import judge  # noqa: E402
from cfglint.load.losslog import read_run_logs  # noqa: E402


def write_pair(folder: Path, n: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    steps = np.arange(1, n + 1)
    base = 2 + 8 * np.exp(-steps / (n / 10)) + rng.normal(0, 0.02, n)
    mf_loss = base + rng.normal(0, 0.002, n)
    mf, mg = folder / "mf.log", folder / "mg.log"
    with open(mf, "w") as fh:
        for s, x in zip(steps.tolist(), mf_loss.tolist(), strict=True):
            fh.write(
                f"2026-01-01 00:00:00,000 - mindformers[mindformers/core/callback/callback.py:485]"
                f" - INFO - {{ Epoch:[  1/  1], step:[{s:5d}/{n:5d}], loss: {x:5.3f}, "
                f"per_step_time: 845ms, lr: 1e-05, overflow cond: False, loss_scale: 1.0, "
                f"global_norm: [{1.5 + x / 100:.7f}], train_throughput_per_npu: 155.1T\n"
            )
    with open(mg, "w") as fh:
        for s, x in zip(steps.tolist(), base.tolist(), strict=True):
            fh.write(
                f" [2026-01-01 00:00:00.000000] iteration {s:8d}/{n:8d} | consumed samples: "
                f"{s * 512:12d} | elapsed time per iteration (ms): 812.5 | throughput per GPU "
                f"(TFLOP/s/GPU): 180.2 | learning rate: 1.000000E-05 | global batch size:   512 |"
                f" lm loss: {x:.6E} | loss scale: 1.0 | grad norm: {1.5 + x / 100:.3f} | number "
                f"of skipped iterations:   0 | number of nan iterations:   0 |\n"
            )
    return mf, mg


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the parse workers)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn, runs: int) -> tuple[float, object]:
    out, samples = None, []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--patterns", action="store_true", help="also time the pattern reader")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        mf, mg = write_pair(Path(tmp), args.lines)
        size = os.path.getsize(mf) + os.path.getsize(mg)

        def raw() -> int:
            n = 0
            for p in (mf, mg):
                with open(p, "rb") as fh:
                    while chunk := fh.read(16 << 20):
                        n += chunk.count(b"\n")
            return n

        t_raw, _ = timed(raw, args.runs)
        cpu0 = _cpu()
        pair = [(str(mf), "mindformers"), (str(mg), "megatron")]
        t_read, logs = timed(lambda: read_run_logs(pair), args.runs)  # as `cfglint logs` reads
        cpu_read = (_cpu() - cpu0) / args.runs
        a, b = logs  # type: ignore[misc]
        t_pat = cpu_pat = None
        if args.patterns:
            from cfglint.load import losslog

            scan, losslog.scan = losslog.scan, lambda *_a: None
            cpu0 = _cpu()
            t_pat, _ = timed(lambda: read_run_logs(pair), args.runs)
            cpu_pat = (_cpu() - cpu0) / args.runs
            losslog.scan = scan
        t_judge, judged = timed(lambda: judge(a, b), args.runs)
        from cfglint.report import runs_plot

        t_png, _ = timed(lambda: runs_plot.write_png(judged, str(Path(tmp) / "p.png")), 1)
        t_html, _ = timed(lambda: runs_plot.write_html(judged, str(Path(tmp) / "p.html")), 1)
        html_kb = os.path.getsize(Path(tmp) / "p.html") / 1024
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        cmd = [sys.executable, "-m", "cfglint", "logs", str(mf), str(mg)]
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=False)
        t_cmd = time.perf_counter() - t0
    load = os.getloadavg()[0]
    print(
        f"pair of {args.lines:,}-line logs, {size / 2**20:.0f} MiB, {os.cpu_count()} CPUs "
        f"(load average {load0:.1f} at the start, {load:.1f} at the end: wall times stretch "
        "on a shared machine; CPU times less)"
    )
    print(f"  read bytes + count lines  {t_raw:6.2f} s   (1.00x)")
    print(f"  parse both logs           {t_read:6.2f} s   ({t_read / t_raw:.2f}x)")
    print(f"  parse CPU time (all procs) {cpu_read:6.2f} s")
    if t_pat is not None:
        print(
            f"  patterns only (no scan)   {t_pat:6.2f} s   ({t_pat / t_raw:.2f}x), "
            f"{cpu_pat:.2f} s CPU: the scan takes {cpu_read / cpu_pat:.2f} of its CPU time"
        )
    print(f"  judge                     {t_judge:6.2f} s")
    print(f"  read + judge              {t_read + t_judge:6.2f} s   (target < 2 s)")
    print(f"  whole command (text)      {t_cmd:6.2f} s   (fresh interpreter)")
    print(f"  PNG {t_png:.2f} s, HTML {t_html:.2f} s ({html_kb:.0f} KiB)")
    print(f"  peak RSS of this process  {rss:6.0f} MiB")


if __name__ == "__main__":
    main()
