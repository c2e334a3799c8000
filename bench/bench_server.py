"""Warm re-lint after an edit in `cfglint server` (issue 23: at most 30 ms for a pair).

    python bench/bench_server.py [--runs N]

Two measurements on each real pair of fixtures/realpairs, in one run:

- library: ``cfglint.cli.server.diagnostics`` after a one-character edit of the MindFormers YAML
  (then of the launch script), the other side kept in memory, against a cold lint of the
  same pair from disk (the ``lint()`` a CLI call runs, imports already warm);
- protocol: a real server process over stdio, the time from sending ``didChange`` to
  receiving its ``publishDiagnostics`` (JSON-RPC, framing and pygls included).

The machine may be shared: medians and minima are printed, with the load average; the
ratio to the cold lint is the figure that carries across machines. No pass/fail.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "cli"))
PAIRS = sorted(p for p in (ROOT / "fixtures" / "realpairs").iterdir() if p.is_dir())


def _ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:6.1f} ms, min {min(samples) * 1000:6.1f} ms"


def library(runs: int) -> None:
    from cfglint.check.pipeline import Options, lint
    from cfglint.check.workspace import Workspace
    from cfglint.cli.server import diagnostics

    print("library (server diagnostics after an edit; cold = lint() of the pair from disk)")
    for pair in PAIRS:
        mf, mg = str(pair / "mindformers.yaml"), str(pair / "megatron.sh")
        ws = Workspace([{"mindformers": mf, "megatron": mg}])
        texts = {mf: Path(mf).read_text(), mg: Path(mg).read_text()}
        for p, t in texts.items():
            ws.open(p, t)
        diagnostics(ws, mf)  # warm: rules parsed, both sides in memory
        gc.freeze()
        rows = {}
        for edited in (mf, mg):
            samples = []
            for i in range(runs):
                ws.open(edited, texts[edited] + ("\n" if i % 2 else "\n\n"))
                start = time.perf_counter()
                diagnostics(ws, edited)
                samples.append(time.perf_counter() - start)
            rows["yaml edit" if edited == mf else "script edit"] = samples
        cold = []
        for _ in range(runs):
            start = time.perf_counter()
            lint(Options(mindformers=[mf], megatron=mg))
            cold.append(time.perf_counter() - start)
        print(f"  {pair.name}")
        for what, samples in rows.items():
            ratio = statistics.median(samples) / statistics.median(cold)
            print(f"    {what:12s} {_ms(samples)}  ({ratio:.2f} x cold)")
        print(f"    {'cold lint':12s} {_ms(cold)}")


def protocol(runs: int) -> None:
    from lsp_client import LspClient

    pair = ROOT / "fixtures" / "realpairs" / "qwen3_30b_a3b_pretrain_msl"
    tmp = Path(tempfile.mkdtemp(prefix="cfglint-bench-server-"))
    try:
        for f in ("mindformers.yaml", "megatron.sh"):
            shutil.copy(pair / f, tmp / f)
        pair_line = '{mindformers = "mindformers.yaml", megatron = "megatron.sh"}'
        (tmp / "pyproject.toml").write_text(f"[tool.cfglint]\npairs = [{pair_line}]\n")
        env = {"PYTHONPATH": str(ROOT / "src")}
        client = LspClient(tmp, env=env)
        client.request(
            "initialize", {"processId": None, "rootUri": tmp.as_uri(), "capabilities": {}}
        )
        client.notify("initialized", {})
        uri = (tmp / "mindformers.yaml").as_uri()
        text = (tmp / "mindformers.yaml").read_text()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
        )
        client.diagnostics(uri)
        samples = []
        for i in range(runs):
            start = time.perf_counter()
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": i + 2},
                    "contentChanges": [{"text": text + ("\n" if i % 2 else "\n\n")}],
                },
            )
            client.diagnostics(uri)
            samples.append(time.perf_counter() - start)
        client.close()
        print(f"protocol (didChange -> publishDiagnostics, {pair.name}): {_ms(samples)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    library(args.runs)
    protocol(args.runs)


if __name__ == "__main__":
    main()
