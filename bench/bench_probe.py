"""Wall time of `cfglint probe` on CPU, end to end (fresh interpreter, framework imports,
MindSpore graph compiles and every confirmation included).

    python bench/bench_probe.py [--steps N] [--repeat R] [--only NAME]

The bundled example (bfloat16 compute: MindSpore has no bfloat16 matmul on CPU, so both
specs run in torch and the cross-framework part runs in float32), the float32 alignment
pairs of fixtures/probe (torch against MindSpore) and the MoE pairs. Prints each pair's
median wall time over R runs, the CPU time of every process, the load during the runs, the
floor and each confirmation as a multiple of the floor; then the slowest dense and MoE
medians against issue 21's bars (20 s dense, 30 s MoE on two cores). On a shared machine
the wall time follows the load; the per-process CPU seconds in the timings line (torch,
and MindSpore's two workers) much less: with two idle cores the wall time is about the
runner's start plus the larger of torch's and the MindSpore workers' shares.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAIRS = {
    "example (bf16)": (
        "fixtures/examples/llama2_7b/pretrain_llama2_7b.yaml",
        "fixtures/examples/llama2_7b/pretrain_llama2_7b.sh",
    ),
    "probe fp32 pair": ("fixtures/probe/llama_fp32.yaml", "fixtures/probe/llama_fp32.sh"),
    "probe fp32 pair, one difference per knob": (
        "fixtures/probe/llama_fp32_knobs.yaml",
        "fixtures/probe/llama_fp32_knobs.sh",
    ),
    # the same with the source scan: a seventh confirmation (decaying every parameter)
    "knob pair + --source plain_decay": (
        "fixtures/probe/llama_fp32_knobs.yaml",
        "fixtures/probe/llama_fp32_knobs.sh",
        "--source",
        "fixtures/sources/plain_decay",
    ),
    "probe fp32 MoE pair (4 experts, top-2)": (
        "fixtures/probe/moe_fp32.yaml",
        "fixtures/probe/moe_fp32.sh",
    ),
    "probe fp32 MoE pair, routing differences": (
        "fixtures/probe/moe_fp32_knobs.yaml",
        "fixtures/probe/moe_fp32_knobs.sh",
    ),
}


# the bar (21): median probe time on two cores
BAR = {"dense": 20.0, "moe": 30.0}


def one_run(mf: str, mg: str, extra: list[str], steps: int) -> tuple[float, float, dict]:
    """(wall s, CPU s of every process, the probe's JSON) of one fresh `cfglint probe`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "probe.json"
        cmd = [
            sys.executable,
            "-m",
            "cfglint",
            "probe",
            str(ROOT / mf),
            "--megatron",
            str(ROOT / mg),
            "--steps",
            str(steps),
            "--format",
            "json",
            "-o",
            str(out),
            *(str(ROOT / x) if x.startswith("fixtures/") else x for x in extra),
        ]
        t0 = time.perf_counter()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        if not out.exists():
            raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
        return wall, cpu, json.loads(out.read_text())["probe"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3, help="runs per pair (the median counts)")
    ap.add_argument("--only", default="", help="run the pairs whose name contains this")
    args = ap.parse_args()
    print(f"cpu cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    medians: dict[str, list[float]] = {"dense": [], "moe": []}
    for name, (mf, mg, *extra) in PAIRS.items():
        if args.only not in name:
            continue
        walls, cpus, loads = [], [], []
        try:
            for _ in range(args.repeat):
                load0 = os.getloadavg()[0]
                wall, cpu, p = one_run(mf, mg, extra, args.steps)
                walls.append(wall)
                cpus.append(cpu)
                loads.append((load0 + os.getloadavg()[0]) / 2)
        except RuntimeError as exc:
            print(f"{name}: failed ({exc})")
            continue
        kind = "moe" if "MoE" in name else "dense"
        med = statistics.median(walls)
        medians[kind].append(med)
        print(
            f"\n{name} [{kind}]: median {med:.1f} s wall over {len(walls)} "
            f"({', '.join(f'{w:.1f}' for w in walls)}), median CPU "
            f"{statistics.median(cpus):.1f} s (all processes), mean load during the runs "
            f"{statistics.mean(loads):.1f} (1-min average; 2 cores), devices {p['device']}, "
            f"{p['steps']} steps"
        )
        print("  " + "; ".join(p.get("timings", [])))
        print("  floor: " + ", ".join(f"{k} {v:.3g}" for k, v in p["floor"].items()))
        for c in p["confirmations"]:
            if c["verdict"] != "not probed":
                print(
                    f"  {c['rule']:7s} {c['row']:32s} {c['verdict']:22s} "
                    f"{c['floor_multiple']:.3g}x floor ({c['reason']})"
                )
        r = p["residual"]
        print(f"  residual: mean loss {r['mean_loss_abs']:.3g} ({r['floor_multiple']}x floor)")
        if p.get("cross_float32"):
            print(f"  cross-framework in float32: {p['cross_float32']['verdict']}")
    for kind, meds in medians.items():
        if meds:
            worst = max(meds)
            print(
                f"\n{kind}: slowest pair's median {worst:.1f} s (bar {BAR[kind]:.0f} s): "
                f"{'within' if worst <= BAR[kind] else 'over'}"
            )


if __name__ == "__main__":
    main()
