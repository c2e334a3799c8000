"""Wall time of `cfglint probe` on CPU, end to end (fresh interpreter, framework imports,
MindSpore graph compiles and every confirmation included).

    python bench/bench_probe.py [--steps N]

Two pairs: the bundled example (bfloat16 compute: MindSpore has no bfloat16 matmul on CPU,
so both specs run in torch and the probe says so) and the float32 alignment pair of
fixtures/probe (torch against MindSpore). Prints wall time, the measured floor, and each
confirmation as a multiple of the floor; no pass/fail. The issue's goal: both frameworks
with the confirmations under 60 s on 2 cores. CPU time (user + system of every process) is
printed beside the wall time: on a shared machine the wall time follows the load, the CPU
time much less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args()
    print(f"cpu cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    for name, (mf, mg, *extra) in PAIRS.items():
        load0 = os.getloadavg()[0]
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
                str(args.steps),
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
                print(f"{name}: failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
                continue
            p = json.loads(out.read_text())["probe"]
        print(
            f"\n{name}: {wall:.1f} s wall, {cpu:.1f} s CPU (all processes), load "
            f"{load0:.1f} before / {os.getloadavg()[0]:.1f} after (1-min average), "
            f"devices {p['device']}, {p['steps']} steps"
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


if __name__ == "__main__":
    main()
