"""The probe on each device torch offers here, pair by pair, in one run: does a confirmation
say the same on the GPU as on the CPU, how far apart are the floors, and what does it cost.

    python bench/bench_probe_devices.py [--devices cpu,cuda] [--steps 10] [--out DIR]
                                        [--long-steps 300] [--only NAME]

Each pair of bench/bench_probe.py runs once per device in a fresh interpreter with
``--format json``; the summary (``probe_devices.json`` and ``probe_devices.md`` under
``--out``) gives, per pair and device, the wall time, the probe's own seconds, the floor,
each confirmation's verdict and floor multiple, and the residual's verdict, then whether the
verdicts agree across devices. ``--long-steps`` adds one ``--log-dir`` run of the bundled
example per device (the long run issue 33 needs to finish inside the probe's timeout).
Without MindSpore (the GPU machine has none) both specs run in torch: the question here is
the GPU path of the torch side, not the cross-framework part.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _bench_probe():
    """bench/bench_probe.py as a module: its pairs and its one fresh-interpreter probe run."""
    spec = importlib.util.spec_from_file_location("bench_probe", ROOT / "bench" / "bench_probe.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BENCH = _bench_probe()


def _pairs() -> dict[str, tuple[str, ...]]:
    return BENCH.PAIRS


def _probe(args: tuple[str, ...], device: str, steps: int, extra: list[str]) -> dict:
    """One probe run in a fresh interpreter (bench_probe.one_run): its JSON's probe block
    plus the wall time."""
    yaml, script, *more = args
    t0 = time.perf_counter()
    try:
        wall, _cpu, probe = BENCH.one_run(yaml, script, [*more, "--device", device, *extra], steps)
    except RuntimeError as e:
        return {"error": str(e).splitlines()[-3:], "wall": time.perf_counter() - t0}
    return {
        "wall": round(wall, 2),
        "seconds": probe.get("seconds"),
        "device": probe["device"],
        "floor": probe["floor"],
        "confirmations": {
            c["rule"]: [c["verdict"], c.get("floor_multiple")] for c in probe["confirmations"]
        },
        "residual": (probe.get("residual") or {}).get("verdict"),
        "standard": probe.get("standard"),
        "notes": probe.get("notes"),
    }


def _markdown(results: dict, devices: list[str]) -> str:
    lines = [
        "| pair | device | wall s | probe s | floor mean loss | confirmations | residual |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, per in results.items():
        for dev in devices:
            r = per.get(dev, {})
            if "error" in r:
                lines.append(f"| {name} | {dev} | {r['wall']:.1f} | | | error: {r['error']} | |")
                continue
            conf = ", ".join(f"{k} {v[0]} {v[1]}" for k, v in r["confirmations"].items())
            lines.append(
                f"| {name} | {r['device']} | {r['wall']} | {r['seconds']} | "
                f"{r['floor'].get('mean_loss_abs')} | {conf} | {r['residual']} |"
            )
        verdicts = {
            dev: {k: v[0] for k, v in per.get(dev, {}).get("confirmations", {}).items()}
            for dev in devices
        }
        same = all(v == verdicts[devices[0]] for v in verdicts.values())
        # the residual's verdict kind: "near the floor ..." or "Nx the floor ...: a cause ..."
        kinds = {str(per.get(dev, {}).get("residual", "")).split(":")[0] for dev in devices}
        near = {k.startswith("near") for k in kinds}
        lines.append(
            f"| {name} | confirmations agree across devices | {same} | | | | "
            f"residuals agree: {len(near) == 1} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="cpu,cuda")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--long-steps", type=int, default=0)
    ap.add_argument("--out", default=".")
    ap.add_argument("--only", default="", help="run the pairs whose name contains this")
    a = ap.parse_args()
    devices = a.devices.split(",")
    results: dict[str, dict] = {}
    for name, args in _pairs().items():
        if a.only not in name:
            continue
        results[name] = {}
        for dev in devices:
            results[name][dev] = _probe(args, dev, a.steps, [])
            print(name, dev, json.dumps(results[name][dev])[:400], flush=True)
    if a.long_steps:
        example = _pairs()["example (bf16)"]
        for dev in devices:
            with tempfile.TemporaryDirectory() as logs:
                key = f"example, {a.long_steps} steps with --log-dir"
                results.setdefault(key, {})[dev] = _probe(
                    example, dev, a.long_steps, ["--log-dir", str(Path(logs) / "runs")]
                )
                print(key, dev, json.dumps(results[key][dev])[:400], flush=True)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "probe_devices.json").write_text(json.dumps(results, indent=1))
    (out / "probe_devices.md").write_text(_markdown(results, devices))
    print(_markdown(results, devices))
    print("cpu count", os.cpu_count())


if __name__ == "__main__":
    main()
