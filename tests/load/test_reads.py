"""Issue 29: a pair lint reads, parses and classifies each input once. Planning classifies
the launch script and the YAML by content; the loaders of the same run take those parses
(load/reads.py) instead of parsing the files again. The hand-over is one-shot: a later lint
of the same inputs, or the editor server's lint of changed text, reads them as they are."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import cfglint.load.shell.parse as shell_parse
import cfglint.load.yamltree as yamltree
from cfglint.check.pipeline import Options, lint, load_side, planned_loader
from cfglint.check.workspace import Workspace
from cfglint.cli import main
from cfglint.cli.server import diagnostics
from cfglint.load.classify import plan
from cfglint.load.reads import Reads
from cfglint.normalize.megatron.input import load_megatron
from conftest import FIXTURES

EX = FIXTURES / "examples" / "llama2_7b"
MF, MG = EX / "pretrain_llama2_7b.yaml", EX / "pretrain_llama2_7b.sh"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often each file is parsed (bash and YAML), by the name it was read under."""
    seen: Counter[str] = Counter()
    real_sh, real_yaml = shell_parse.parse_script_text, yamltree.parse_yaml_text

    def sh(text: str, path: str) -> Any:
        seen[Path(path).name] += 1
        return real_sh(text, path)

    def yml(text: str, path: str, *args: Any, **kw: Any) -> Any:
        seen[Path(path).name] += 1
        return real_yaml(text, path, *args, **kw)

    monkeypatch.setattr(shell_parse, "parse_script_text", sh)
    monkeypatch.setattr(yamltree, "parse_yaml_text", yml)
    return seen


def test_a_pair_lint_parses_each_file_once(
    parses: Counter[str], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main([str(MF), "--megatron", str(MG), "--format", "json"])
    assert rc == 1 and '"findings"' in capsys.readouterr().out
    assert parses[MG.name] == 1
    assert parses[MF.name] == 1


def test_a_library_load_of_a_script_without_its_form_parses_it_once(
    parses: Counter[str],
) -> None:
    m = load_megatron(str(MG))  # classified here, then read: one parse
    assert m.values["num_layers"].value == 32
    assert parses[MG.name] == 1


def _mg_layers(opts: Options, load: Any) -> Any:
    report, ctx = lint(opts, load=load)
    assert not report.errors
    return ctx.mg.get("structure.num_layers").value


def test_the_hand_over_is_used_once_and_a_later_lint_reads_the_file_again(
    tmp_path: Path,
) -> None:
    mg = tmp_path / "run.sh"
    mg.write_text(MG.read_text())
    reads = Reads()
    job = plan([str(MF)], megatron=str(mg), reads=reads).jobs[0]
    opts = Options(mindformers=[job.mindformers], megatron=job.megatron)
    load = planned_loader(reads)
    assert _mg_layers(opts, load) == 32
    # the file changes after the first lint (as --fix writes it): the same loader reads it
    mg.write_text(MG.read_text().replace("--num-layers 32", "--num-layers 30"))
    assert _mg_layers(opts, load) == 30 == _mg_layers(opts, load_side)


def test_planning_keeps_only_the_parses_of_files_a_job_loads(tmp_path: Path) -> None:
    (tmp_path / "notes.yaml").write_text("services:\n  web: {}\n")  # a compose file: skipped
    (tmp_path / "c.yaml").write_text(MF.read_text())
    reads = Reads()
    p = plan([str(tmp_path)], reads=reads)
    assert [Path(j.mindformers or "").name for j in p.jobs] == ["c.yaml"]
    assert reads.take_yaml(str(tmp_path / "notes.yaml")) is None
    assert reads.take_yaml(str(tmp_path / "c.yaml")) is not None
    assert reads.take_yaml(str(tmp_path / "c.yaml")) is None  # handed over once


def test_the_editor_server_lints_changed_text_anew(tmp_path: Path) -> None:
    mg, mf = tmp_path / "run.sh", tmp_path / "c.yaml"
    mg.write_text(MG.read_text())
    mf.write_text(MF.read_text())
    ws = Workspace([{"mindformers": str(mf), "megatron": str(mg)}])
    ws.open(str(mg), MG.read_text())
    before = {d.message for d in diagnostics(ws, str(mg))[str(mg)]}  # type: ignore[attr-defined]
    changed = MG.read_text().replace("--num-layers 32", "--num-layers 30")
    ws.open(str(mg), changed)
    after = {d.message for d in diagnostics(ws, str(mg))[str(mg)]}  # type: ignore[attr-defined]
    fresh = Workspace([{"mindformers": str(mf), "megatron": str(mg)}])
    fresh.open(str(mg), changed)
    assert after != before
    assert after == {d.message for d in diagnostics(fresh, str(mg))[str(mg)]}  # type: ignore[attr-defined]
