"""Issue 32: a launch script open in the editor but never saved is linted from its text,
as a saved one is, not reported as "no such file"."""

from __future__ import annotations

from pathlib import Path

from cfglint.check.workspace import Workspace
from cfglint.cli.server import diagnostics
from conftest import FIXTURES

MG = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh"
MF = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"


def _codes(diags: dict[str, list[object]]) -> dict[str, list[tuple[str, str]]]:
    return {
        Path(f).name: sorted(
            (d.code, d.message.replace("new.sh", "saved.sh"))  # type: ignore[attr-defined]
            for d in ds
        )
        for f, ds in diags.items()
    }


def test_an_unsaved_launch_script_is_linted_from_its_text(tmp_path: Path) -> None:
    saved, new = tmp_path / "saved.sh", tmp_path / "new.sh"
    saved.write_text(MG.read_text())
    mf = tmp_path / "c.yaml"
    mf.write_text(MF.read_text())
    pairs = [{"mindformers": str(mf), "megatron": str(p)} for p in (saved, new)]
    ws = Workspace(pairs)
    ws.open(str(new), MG.read_text())
    got = _codes(diagnostics(ws, str(new)))
    assert ("input", "no such file") not in got["new.sh"]
    want = _codes(diagnostics(ws, str(saved)))
    assert got["c.yaml"] == want["c.yaml"] and got["c.yaml"]
    assert got["new.sh"] == want["saved.sh"]
