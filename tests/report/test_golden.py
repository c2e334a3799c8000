"""Golden snapshots of the outputs users and CI rely on: text, JSON and SARIF of the bundled
example and the fixture pairs, concise and GitHub annotations of some of them (one line per
finding: what editors, CI logs and pull-request annotations read), `show` as text and JSON
and `rules --format json`.

Regenerate after an intended change with
``CFGLINT_UPDATE_GOLDEN=1 ./test tests/report/test_golden.py`` and say in the commit what
changed and why."""

from __future__ import annotations

import os

import pytest

from cfglint.cli import main
from conftest import ROOT

GOLDEN = ROOT / "tests" / "golden"
EX = "fixtures/examples/llama2_7b"
DENSE = "fixtures/pairs/llama2_dense"
MOE = "fixtures/pairs/qwen3_moe"

PAIRS = {
    "example": [f"{EX}/pretrain_llama2_7b.yaml", "--megatron", f"{EX}/pretrain_llama2_7b.sh"],
    "example_align": [
        f"{EX}/pretrain_llama2_7b.yaml",
        "--megatron",
        f"{EX}/pretrain_llama2_7b.sh",
        "--profile",
        "align",
    ],
    "dense": [
        f"{DENSE}/llama2_7b_align.yaml",
        "--megatron",
        f"{DENSE}/pretrain_llama2_align.sh",
        "--launch",
        f"{DENSE}/msrun_align.sh",
    ],
    "dense_align": [
        f"{DENSE}/llama2_7b_align.yaml",
        "--megatron",
        f"{DENSE}/pretrain_llama2_align.sh",
        "--launch",
        f"{DENSE}/msrun_align.sh",
        "--profile",
        "align",
    ],
    "moe": [
        f"{MOE}/qwen3_moe_align.yaml",
        "--megatron",
        f"{MOE}/pretrain_qwen3_moe_align.sh",
        "--launch",
        f"{MOE}/msrun_align.sh",
    ],
    "moe_align": [
        f"{MOE}/qwen3_moe_align.yaml",
        "--megatron",
        f"{MOE}/pretrain_qwen3_moe_align.sh",
        "--launch",
        f"{MOE}/msrun_align.sh",
        "--profile",
        "align",
    ],
    "example_mf_only": [f"{EX}/pretrain_llama2_7b.yaml"],
    "example_mg_only": ["--megatron", f"{EX}/pretrain_llama2_7b.sh"],
}

CASES = [(name, fmt) for name in PAIRS for fmt in ("text", "json", "sarif")]
CASES += [
    (name, fmt)
    for name in ("example", "example_align", "moe", "example_mg_only")
    for fmt in ("concise", "github")
]
CASES += [("show_example", "text"), ("show_example", "json"), ("rules", "json")]
# snapshot file suffix per format
SUFFIX = {"text": "txt", "concise": "concise.txt", "github": "github.txt"}


def _argv(name: str, fmt: str) -> list[str]:
    if name == "show_example":
        return ["show", *PAIRS["example"], "--format", fmt]
    if name == "rules":
        return ["rules", "--format", fmt]
    return [*PAIRS[name], "--format", fmt]


@pytest.mark.parametrize(("name", "fmt"), CASES)
def test_output_matches_snapshot(
    name: str, fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # paths in the output are as given: relative to the checkout
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    main(_argv(name, fmt))
    # the SARIF base URI is the checkout's absolute path, which differs between clones
    out = capsys.readouterr().out.replace(ROOT.as_uri() + "/", "file:///CHECKOUT/")
    snap = GOLDEN / f"{name}.{SUFFIX.get(fmt, fmt)}"
    if os.environ.get("CFGLINT_UPDATE_GOLDEN"):
        snap.write_text(out, encoding="utf-8")
    assert snap.exists(), f"no snapshot {snap.name}: run with CFGLINT_UPDATE_GOLDEN=1"
    assert out == snap.read_text(encoding="utf-8"), f"{snap.name} changed"
