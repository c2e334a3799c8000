"""A 200-edit storm against `cfglint server` (issue 35): the time from sending the last of
200 ``didChange`` notifications (sent back to back, as a tool or a paste-heavy editor does)
to receiving the ``publishDiagnostics`` that carries the last version, and how many lints
the storm cost. The issue's bar: settled within 0.5 s of the last edit.

    python bench/bench_server_storm.py [--runs N]

The machine may be shared: each run is printed with the load average. No pass/fail.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "cli"))
PAIR = ROOT / "fixtures" / "realpairs" / "glm4_9b_sft_msl"


def storm(edits: int) -> tuple[float, int]:
    from lsp_client import LspClient

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for f in ("mindformers.yaml", "megatron.sh"):
            shutil.copy(PAIR / f, root / f)
        (root / "pyproject.toml").write_text(
            '[tool.cfglint]\npairs = [{mindformers = "mindformers.yaml", '
            'megatron = "megatron.sh"}]\n'
        )
        env = {"PYTHONPATH": str(ROOT / "src")}
        client = LspClient(root, env=env)
        client.request(
            "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}
        )
        client.notify("initialized", {})
        yaml = root / "mindformers.yaml"
        uri, text = yaml.as_uri(), yaml.read_text()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}},
        )
        client.diagnostics(uri)
        for v in range(2, edits + 2):
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": v},
                    "contentChanges": [{"text": text + f"# edit {v}\n"}],
                },
            )
        sent = time.monotonic()
        last = edits + 1
        client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and m["params"].get("version") == last
            )
        )
        settled = time.monotonic() - sent
        lints = sum(
            1
            for m in client.log
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        )
        client.close()
        return settled, lints - 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--edits", type=int, default=200)
    args = ap.parse_args()
    for i in range(args.runs):
        settled, lints = storm(args.edits)
        print(
            f"run {i + 1}: settled {settled * 1000:6.0f} ms after the last of {args.edits} edits; "
            f"{lints} lint(s) published; load {os.getloadavg()[0]:.2f}"
        )


if __name__ == "__main__":
    main()
