"""What the language server shows, without the protocol (cfglint.check.workspace lints,
cfglint.report.editor renders, cfglint.cli.server joins them): an edit
re-normalizes only the side that changed, unsaved text is what gets linted, training
sources get their diagnostics, hover names both sides."""

from __future__ import annotations

import shutil
from pathlib import Path

from cfglint.check import pipeline
from cfglint.check.workspace import Workspace
from cfglint.cli.server import code_actions, diagnostics, hover
from conftest import FIXTURES

PAIR = FIXTURES / "realpairs" / "glm4_9b_sft_msl"


def _pair(tmp_path: Path) -> tuple[str, str]:
    for f in ("mindformers.yaml", "megatron.sh"):
        shutil.copy(PAIR / f, tmp_path / f)
    return str(tmp_path / "mindformers.yaml"), str(tmp_path / "megatron.sh")


def test_an_edit_renormalizes_only_the_edited_side(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    mf, mg = _pair(tmp_path)
    loaded: list[str] = []
    real = pipeline.load_megatron_side, pipeline.load_mindformers_side
    monkeypatch.setattr(
        pipeline, "load_megatron_side", lambda p, *a: loaded.append(p) or real[0](p, *a)
    )
    monkeypatch.setattr(
        pipeline, "load_mindformers_side", lambda p, *a: loaded.append(p) or real[1](p, *a)
    )
    ws = Workspace([{"mindformers": mf, "megatron": mg}])
    text = Path(mf).read_text()
    ws.open(mf, text)
    first = diagnostics(ws, mf)
    assert sorted(loaded) == sorted([mf, mg])
    assert "OPT006" in {d.code for d in first[mf]} and "OPT006" in {d.code for d in first[mg]}
    loaded.clear()
    ws.open(mf, text.replace("betas: [0.9, 0.999]", "betas: [0.9, 0.95]"))
    after = diagnostics(ws, mf)
    assert loaded == [mf]  # the script stayed in memory
    assert "OPT006" not in {d.code for d in after[mf]} | {d.code for d in after[mg]}
    loaded.clear()
    diagnostics(ws, mg)  # nothing changed: nothing re-read
    assert loaded == []
    # a change on disk of the unopened side is seen
    Path(mg).write_text(Path(mg).read_text().replace("--seed", "--seed 7 --xseed"))
    diagnostics(ws, mf)
    assert loaded == [mg]


def test_hover_names_both_sides_and_their_origins(tmp_path: Path) -> None:
    mf, mg = _pair(tmp_path)
    ws = Workspace([{"mindformers": mf, "megatron": mg}])
    diagnostics(ws, mf)
    lines = Path(mg).read_text().split("\n")
    row = next(i for i, ln in enumerate(lines) if "--adam-beta2" in ln)
    text = hover(ws, mg, row)
    assert text is not None
    assert "optimizer.beta2" in text and "MindSpeed-LLM: `0.95`" in text
    assert "MindFormers: `0.999` (optimizer.betas[1] at" in text
    assert hover(ws, mg, 0) is None  # the shebang sets nothing


def test_a_training_source_alone_gets_its_diagnostics() -> None:
    ws = Workspace()
    src = str(FIXTURES / "sources" / "broken" / "good.py")
    codes = {d.code for d in diagnostics(ws, src)[src]}
    assert "DET010" in codes  # Python's random module is not seeded
    broken = str(FIXTURES / "sources" / "broken" / "bad_syntax.py")
    diags = diagnostics(ws, broken)[broken]
    assert [d.code for d in diags] == ["input"]


def test_code_actions_are_checked_like_fix(tmp_path: Path) -> None:
    """The editor offers the fixes --fix would keep (issue 35): an anchored value's fix
    keeps the anchor for its alias, computed from the unsaved buffer."""
    mf, mg = _pair(tmp_path)
    text = (
        Path(mf)
        .read_text()
        .replace(
            "    hidden_dropout: 0.0\n    attention_dropout: 0.0\n",
            "    hidden_dropout: &drop 0.1\n    attention_dropout: *drop\n",
        )
    )
    ws = Workspace([{"mindformers": mf, "megatron": mg}])
    ws.open(mf, text)  # unsaved: the file on disk has no anchor
    diagnostics(ws, mf)
    line = text.split("\n").index("    hidden_dropout: &drop 0.1")
    action = next(a for a in code_actions(ws, mf, line, line) if a.rule == "STR009")
    edits = sorted(action.edits[mf])
    assert [e[4] for e in edits] == ["0.0", "&drop 0.1"]  # the anchor moves to its alias
    assert edits[1][0] == line + 1
