"""`cfglint logs` on a pair of million-line logs: reading, judging and drawing, with peak
memory, against reading the same bytes from the page cache in the same run.

    .venv/bin/python bench/bench_logs.py [--lines 1000000] [--runs 3] [--patterns] [--dir D]

Writes both logs (MindFormers and Megatron, in their real formats, every varying field
varying, MindFormers' progress line after each step line) into a temporary folder once (or
into ``--dir``, kept and reused when it holds a pair of that size), then times in this one
process, on the same bytes: reading them (the read floor), a minimal regular expression
taking the step and the loss (the regex floor), the reader `cfglint logs` uses (numba-compiled
loops finding the labels and reading the numbers where the logs extra is installed; its
one-time compile is timed apart, before), the
numpy scan alone (the reader without the extra), then judging and drawing (medians of
``--runs``), and the whole command in a fresh interpreter (text report, no picture).
``--patterns`` also times the line-by-line pattern reader. Each row gives wall and CPU
seconds (this process's threads and its finished worker processes) and the load average
when it ended: on a shared machine wall times stretch with the load, CPU times less.
Prints a table; no pass/fail (the target is under 2 s for the pair).
"""

from __future__ import annotations

import argparse
import os
import re
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
    """Both logs as real runs print them: every field that changes in a real run changes
    here (timestamps, learning rate under warmup and cosine decay, step times, throughput,
    gradient norms), and MindFormers' progress line follows each step line
    (callback.py:544-561@d4ef84c2; Megatron training.py:2229-2266@9539a12e)."""
    rng = np.random.default_rng(0)
    steps = np.arange(1, n + 1)
    base = 2 + 8 * np.exp(-steps / (n / 10)) + rng.normal(0, 0.02, n)
    mf_loss = base + rng.normal(0, 0.002, n)
    warm = max(1, n // 100)
    lr = np.where(
        steps < warm, 3e-4 * steps / warm, 3e-5 + 0.5 * 2.7e-4 * (1 + np.cos(np.pi * steps / n))
    )
    ms = rng.normal(845, 30, n).clip(500, 2000)
    gn = 1.5 + 0.3 * np.exp(-steps / (n / 20)) + np.abs(rng.normal(0, 0.05, n))
    t0 = 1767225600.0  # 2026-01-01
    stamps = t0 + np.cumsum(ms) / 1000
    mf, mg = folder / "mf.log", folder / "mg.log"
    cols = [a.tolist() for a in (steps, mf_loss, base, lr, ms, gn, stamps)]
    with open(mf, "w") as fa, open(mg, "w") as fb:
        for s, x, y, r, t, g, at in zip(*cols, strict=True):
            clock = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at))
            milli = int(at * 1000) % 1000
            fa.write(
                f"{clock},{milli:03d} - mindformers[mindformers/core/callback/callback.py:544] - "
                f"INFO - {{ Epoch:[  1/  1], step:[{s:5d}/{n:5d}], loss: {x:5.6f}, per_step_time:"
                f" {int(t)}ms, lr: {r:.6e}, overflow cond: False, loss_scale: 1.0, global_norm: "
                f"[{g:.6f}], train_throughput_per_npu: {155.1 * 845 / t:.3f}T\n"
                f"{clock},{milli:03d} - mindformers[mindformers/core/callback/callback.py:560] - "
                f"INFO -   {100 * s / n:4.1f}% |{'█' * int(50 * s / n):<50}| "
                f"{8 / t * 1000:.5f} samples/s/p  {int((n - s) * t / 1000)} }}\n"
            )
            fb.write(
                f" [{clock}.{milli:03d}000] iteration {s:8d}/{n:8d} | consumed samples: "
                f"{s * 512:12d} | elapsed time per iteration (ms): {t * 0.97:.1f} | throughput "
                f"per GPU (TFLOP/s/GPU): {180.2 * 845 / t:.1f} | learning rate: {r:.6E} | global "
                f"batch size:   512 | lm loss: {y:.6E} | loss scale: 1.0 | grad norm: "
                f"{g * 1.01:.3f} | number of skipped iterations:   0 | number of nan "
                f"iterations:   0 |\n"
            )
    return mf, mg


# The floor: one minimal regular expression per format, over the same bytes, taking the
# step and the loss only (what any reader must at least do)
_FLOOR = {
    "mindformers": re.compile(rb"step:\[\s*(\d+)/\s*\d+\], loss: ([0-9.]+)"),
    "megatron": re.compile(rb"iteration\s+(\d+)/\s*\d+ \|.*?lm loss: ([0-9.E+-]+)"),
}


def floor(pair: list[tuple[str, str]]) -> int:
    n = 0
    for path, fw in pair:
        with open(path, "rb") as fh:
            hits = _FLOOR[fw].findall(fh.read())
        steps = np.array([int(h[0]) for h in hits])
        loss = np.array([float(h[1]) for h in hits])
        n += steps.size + int(loss.size)
    return n


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the parse workers)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn, runs: int) -> tuple[float, float, float, object]:
    """Median wall seconds, mean CPU seconds, the load average after, and the result."""
    out, samples = None, []
    cpu0 = _cpu()
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), (_cpu() - cpu0) / runs, os.getloadavg()[0], out


def _pair(folder: Path, n: int) -> tuple[Path, Path]:
    mf, mg = folder / "mf.log", folder / "mg.log"
    stamp = folder / "lines.txt"
    if not (stamp.exists() and stamp.read_text() == str(n) and mf.exists() and mg.exists()):
        write_pair(folder, n)
        stamp.write_text(str(n))
    return mf, mg


_WARM = (
    "import time; t = time.process_time(); "
    "from cfglint.load import losslog as L, losslog_numba as N; "
    "d = open({path!r}, 'rb').read(1 << 20); "
    "N.read(d[: d.rfind(b'\\n') + 1], L._MG_FORM, L._MG_SCAN); "
    "print(time.process_time() - t)"
)


def compile_times(mg: Path, folder: Path) -> tuple[float, float]:
    """CPU seconds of a fresh interpreter's first compiled read: with an empty numba cache
    (the one-time compile) and again with the cache it wrote (every later run)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NUMBA_CACHE_DIR": str(folder / "nb")}
    cmd = [sys.executable, "-c", _WARM.format(path=str(mg))]
    got = [
        float(subprocess.run(cmd, env=env, capture_output=True, check=True).stdout) for _ in "ab"
    ]
    return got[0], got[1]


def _readers(pair: list[tuple[str, str]], args: argparse.Namespace) -> dict[str, tuple]:
    """Each reader timed on the same bytes in this process, the floors first."""
    from cfglint.load import losslog

    def raw() -> int:
        n = 0
        for p, _fw in pair:
            with open(p, "rb") as fh:
                while chunk := fh.read(16 << 20):
                    n += chunk.count(b"\n")
        return n

    rows = {"read bytes + count lines (read floor)": timed(raw, args.runs)}
    rows["minimal regex, step + loss (regex floor)"] = timed(lambda: floor(pair), args.runs)
    fast = losslog.compiled_read
    if fast is not None:
        rows["reader with the logs extra (numba)"] = timed(lambda: read_run_logs(pair), args.runs)
    losslog.compiled_read = None  # the reader without the extra: the numpy scan, forked
    rows["numpy scan alone (without the extra)"] = timed(lambda: read_run_logs(pair), args.runs)
    if args.patterns:
        scan, losslog.scan = losslog.scan, lambda *_a: None
        rows["line-by-line patterns"] = timed(lambda: read_run_logs(pair), args.runs)
        losslog.scan = scan
    losslog.compiled_read = fast
    if fast is not None:  # the two readers must read the same values
        new, old = (rows[k][3] for k in list(rows)[2:4])
        same = all(
            np.array_equal(a.steps, b.steps)
            and a.series.keys() == b.series.keys()
            and all(np.array_equal(a.series[k], b.series[k], equal_nan=True) for k in a.series)
            for a, b in zip(new, old, strict=True)
        )
        print(f"  the two readers read the same steps and values: {same}")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--patterns", action="store_true", help="also time the pattern reader")
    ap.add_argument("--dir", help="write the pair here and keep it (reused when it fits)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.dir or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        mf, mg = _pair(folder, args.lines)
        size = os.path.getsize(mf) + os.path.getsize(mg)
        pair = [(str(mf), "mindformers"), (str(mg), "megatron")]
        load0 = os.getloadavg()[0]
        from cfglint.load import losslog

        if losslog.compiled_read is not None:
            first, cached = compile_times(mg, Path(tmp))
            print(
                f"  numba: first read in a fresh interpreter {first:.2f} CPU-s with an empty "
                f"cache (the one-time compile), {cached:.2f} CPU-s from the cache"
            )
            line = mg.open("rb").readline()
            losslog.compiled_read(line, losslog._MG_FORM, losslog._MG_SCAN)  # loaded here
        rows = _readers(pair, args)
        a, b = read_run_logs(pair)
        t_judge, _c, load_judge, judged = timed(lambda: judge(a, b), args.runs)
        from cfglint.report import runs_plot

        t_png = timed(lambda: runs_plot.write_png(judged, str(Path(tmp) / "p.png")), 1)[0]
        t_html = timed(lambda: runs_plot.write_html(judged, str(Path(tmp) / "p.html")), 1)[0]
        html_kb = os.path.getsize(Path(tmp) / "p.html") / 1024
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        cmd = [sys.executable, "-m", "cfglint", "logs", str(mf), str(mg)]
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, check=False)
        t_cmd = time.perf_counter() - t0
    print(
        f"pair of {args.lines:,}-line logs, {size / 2**20:.0f} MiB, {os.cpu_count()} CPUs, "
        f"load average {load0:.1f} at the start (wall times stretch on a shared machine; "
        "CPU times less)"
    )
    t_raw = rows["read bytes + count lines (read floor)"][0]
    cpu_floor = rows["minimal regex, step + loss (regex floor)"][1]
    print(f"  {'':46s} {'wall':>7s} {'x read':>7s} {'CPU':>7s} {'x regex':>8s} {'load':>5s}")
    for name, (wall, cpu, load, _out) in rows.items():
        print(
            f"  {name:46s} {wall:6.2f}s {wall / t_raw:6.2f}x {cpu:6.2f}s "
            f"{cpu / cpu_floor:7.2f}x {load:5.1f}"
        )
    used = next(v for k, v in rows.items() if "reader" in k or "alone" in k)  # as cfglint logs
    read_judge = used[0] + t_judge
    print(f"  judge {t_judge:.2f} s (load {load_judge:.1f}); read + judge {read_judge:.2f} s")
    print(f"  whole command (text, fresh interpreter) {t_cmd:.2f} s")
    print(f"  PNG {t_png:.2f} s, HTML {t_html:.2f} s ({html_kb:.0f} KiB)")
    print(f"  peak RSS of this process  {rss:6.0f} MiB")


if __name__ == "__main__":
    main()
