"""Issue 32, the output rule (load/outputs.py): every writer (``-o``, ``--plot``,
``--log-dir``, the cache) never writes over an input of the run, never through a link it did
not create, checks its target before the work, and ``cache clear`` removes only what cfglint
wrote. Each test reproduces one defect the hostile campaign measured."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cfglint.cli import main
from conftest import FIXTURES

MF = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
MG = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh"


def _run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def _logs(d: Path, n: int = 40, names: tuple[str, str] = ("mf.log", "mg.log")) -> tuple[Path, Path]:
    """A MindFormers and a Megatron training log of ``n`` steps in their own formats."""
    mf = [
        f"2026-01-01 00:00:00,000 - mindformers[mindformers/core/callback/callback.py:485] - "
        f"INFO - {{ Epoch:[  1/  1], step:[{s:5d}/{n:5d}], loss: {9 - s / n:5.3f}, "
        f"per_step_time: 845ms, lr: 1e-05, overflow cond: False, loss_scale: 1.0, "
        f"global_norm: [1.5]\n"
        for s in range(1, n + 1)
    ]
    mg = [
        f" [2026-01-01 00:00:00.000000] iteration {s:8d}/{n:8d} | consumed samples: {s * 8:12d}"
        f" | elapsed time per iteration (ms): 812.5 | learning rate: 1.000000E-05 | global batch"
        f" size:     8 | lm loss: {9 - s / n:.6E} | loss scale: 1.0 | grad norm: 1.510 | number "
        f"of skipped iterations:   0 | number of nan iterations:   0 |\n"
        for s in range(1, n + 1)
    ]
    a, b = d / names[0], d / names[1]
    a.write_text("".join(mf))
    b.write_text("".join(mg))
    return a, b


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o555)
    yield d
    d.chmod(0o755)


@pytest.mark.parametrize("slot", ["mf", "mg", "baseline"])
@pytest.mark.parametrize("kind", [".html", ".png"])
def test_logs_plot_onto_an_input_log_is_refused(
    slot: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _logs(tmp_path, names=(f"mf{kind}", f"mg{kind}"))
    base = tmp_path / f"base{kind}"
    base.write_bytes(mg.read_bytes())
    target = {"mf": mf, "mg": mg, "baseline": base}[slot]
    before = target.read_bytes()
    rc, _, err = _run(capsys, "logs", mf, mg, "--baseline", base, "--plot", target)
    assert rc == 2, err
    assert len(_lines(err)) == 1 and "is an input of this run" in err, err
    assert target.read_bytes() == before


def test_logs_report_onto_a_baseline_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _logs(tmp_path)
    base = tmp_path / "base.log"
    base.write_bytes(mg.read_bytes())
    rc, _, err = _run(capsys, "logs", mf, mg, "--baseline", base, "-o", base)
    assert rc == 2 and "is an input of this run" in err, err
    assert base.read_bytes() == mg.read_bytes()


def test_plot_never_writes_through_a_planted_temporary_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _logs(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    page = tmp_path / "p.html"
    # the fixed temporary names the writers used before
    for name in (".p.html.tmp", "p.html.tmp"):
        (tmp_path / name).symlink_to(victim)
    rc, _, err = _run(capsys, "logs", mf, mg, "--plot", page)
    assert rc == 0, err
    assert victim.read_text() == "keep me"
    assert page.read_text().startswith("<!")
    assert not [p for p in tmp_path.iterdir() if "cfglint-tmp" in p.name]


@pytest.mark.parametrize("flag", ["--plot", "-o"])
def test_an_output_that_is_a_link_is_refused_not_followed(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _logs(tmp_path)
    victim = tmp_path / "victim.html"
    victim.write_text("keep me")
    link = tmp_path / "out.html"
    link.symlink_to(victim)
    rc, _, err = _run(capsys, "logs", mf, mg, flag, link)
    assert rc == 2 and len(_lines(err)) == 1 and "symbolic link" in err, err
    assert victim.read_text() == "keep me" and link.is_symlink()


def test_plot_into_a_read_only_folder_is_one_line_before_the_work(
    tmp_path: Path, read_only: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    mf, mg = _logs(tmp_path)
    import cfglint.cli.logs as logs

    def never(*_: Any) -> None:
        raise AssertionError("the logs were read before the output was checked")

    monkeypatch.setattr(logs, "_read_sides", never)
    rc, _, err = _run(capsys, "logs", mf, mg, "--plot", read_only / "p.png")
    assert rc == 2 and _lines(err) == [
        f"{read_only / 'p.png'}: cannot write the plot: the folder {read_only} is read-only"
    ]


def test_a_read_only_report_is_not_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _logs(tmp_path)
    out = tmp_path / "r.json"
    out.write_text("old")
    out.chmod(0o444)
    rc, _, err = _run(capsys, "logs", mf, mg, "--format", "json", "-o", out)
    assert rc == 2 and "is read-only" in err, err
    assert out.read_text() == "old"


def test_a_full_disk_is_one_line_before_the_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    mf, mg = _logs(tmp_path)
    real = os.statvfs

    class Full:
        def __init__(self, st: Any) -> None:
            self.f_blocks, self.f_bavail = st.f_blocks or 1, 0

    monkeypatch.setattr(os, "statvfs", lambda p: Full(real(p)))
    rc, _, err = _run(capsys, "logs", mf, mg, "--plot", tmp_path / "p.html")
    assert rc == 2 and len(_lines(err)) == 1 and "is full" in err, err
    assert not (tmp_path / "p.html").exists()


def _probe_pair(tmp_path: Path) -> tuple[Path, Path]:
    mf, mg = tmp_path / "c.yaml", tmp_path / "launch.sh"
    mf.write_bytes(MF.read_bytes())
    mg.write_bytes(MG.read_bytes())
    return mf, mg


def test_probe_log_dir_onto_a_file_is_refused_before_the_probe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    mf, mg = _probe_pair(tmp_path)
    import cfglint.cli.probe as probe

    monkeypatch.setattr(probe, "lint", lambda *_: pytest.fail("the lint ran first"))
    target = tmp_path / "existing.txt"
    target.write_text("mine")
    rc, _, err = _run(capsys, "probe", mf, "--megatron", mg, "--log-dir", target)
    assert rc == 2 and _lines(err) == [f"{target}: is a regular file; --log-dir names a folder"]
    assert target.read_text() == "mine"
    rc, _, err = _run(capsys, "probe", mf, "--megatron", mg, "--log-dir", tmp_path / "ro" / "x")
    assert rc == 2 and "no such folder" in err


def test_probe_log_dir_in_a_read_only_folder_is_refused_before_the_probe(
    tmp_path: Path, read_only: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    mf, mg = _probe_pair(tmp_path)
    import cfglint.cli.probe as probe

    monkeypatch.setattr(probe, "lint", lambda *_: pytest.fail("the lint ran first"))
    for target in (read_only, read_only / "logs"):
        rc, _, err = _run(capsys, "probe", mf, "--megatron", mg, "--log-dir", target)
        assert rc == 2 and len(_lines(err)) == 1 and "read-only" in err, err


@pytest.mark.parametrize("plant", ["link", "read-only", "input", "folder"])
def test_probe_log_names_are_checked_before_the_probe(
    plant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """Issue 32: the four log names inside an existing --log-dir were checked only when
    written, after the whole probe had run; now each is refused before the lint (and so
    before any framework process), in one line naming it, and nothing is written."""
    mf, mg = _probe_pair(tmp_path)
    import cfglint.cli.probe as probe

    monkeypatch.setattr(probe, "lint", lambda *_: pytest.fail("the lint ran first"))
    d = tmp_path / "logs"
    d.mkdir()
    target = d / "megatron_lr0.log"
    victim = tmp_path / "victim.log"
    victim.write_text("keep me")
    if plant == "link":
        target.symlink_to(victim)
    elif plant == "read-only":
        target.write_text("keep me")
        target.chmod(0o444)
    elif plant == "input":
        mg = target
        mg.write_bytes(MG.read_bytes())
    else:
        target.mkdir()
    before = sorted(os.listdir(d))
    rc, out, err = _run(capsys, "probe", mf, "--megatron", mg, "--log-dir", d)
    expected = {
        "link": "is a symbolic link",
        "read-only": "is read-only",
        "input": "is an input of this run",
        "folder": "is a directory",
    }[plant]
    assert rc == 2 and out == "", err
    assert len(_lines(err)) == 1 and err.startswith(f"{target}: {expected}"), err
    assert sorted(os.listdir(d)) == before
    assert victim.read_text() == "keep me"
    if plant == "read-only":
        assert target.read_text() == "keep me"


def test_probe_logs_are_written_under_the_rule(tmp_path: Path) -> None:
    from cfglint.evidence.probe import textlog
    from cfglint.load.safeio import check_regular, forget_reads
    from cfglint.model.errors import InputError

    d = tmp_path / "logs"
    d.mkdir()
    victim = tmp_path / "victim.log"
    victim.write_text("keep me")
    (d / "megatron.log.tmp").symlink_to(victim)  # the old fixed temporary name
    result = _fake_result()
    written = textlog.write_logs(result, str(d))
    assert sorted(os.path.basename(p) for p in written) == ["megatron.log", "mindformers.log"]
    assert victim.read_text() == "keep me"
    # a log the run has read is never replaced
    check_regular(str(d / "megatron.log"))
    with pytest.raises(InputError, match="is an input of this run"):
        textlog.write_logs(result, str(d))
    forget_reads()


class _FakeSpec:
    batch = 8

    def lr_at(self, step: int) -> float:
        return 1e-4


def _fake_result() -> Any:
    """What write_logs reads of a probe result: each side's curves and spec."""
    from types import SimpleNamespace

    run = SimpleNamespace(curves={"cfg": SimpleNamespace(loss=[2.0, 1.9], grad_norm=[1.0, 1.0])})
    return SimpleNamespace(
        side_runs={"megatron": (run, _FakeSpec()), "mindformers": (run, _FakeSpec(), "torch")}
    )


def test_cache_clear_removes_only_what_cfglint_wrote(
    tmp_path: Path, monkeypatch: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import cfglint.check.rulebook as rulebook

    project = tmp_path / "project"
    own = {
        "data/mindformers.yaml": "a: 1\n",
        "rules/R001.yaml": "id: R001\n",
        "scan/ab/x.py": "print(1)\n",
        "data/table-0123456789abcdef0123456789abcdef.json": '{"not": "an envelope"}',
        "scan/cd/" + "e" * 64 + ".json": "[]",
        "README.md": "hello\n",
    }
    for rel, text in own.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(project))
    rulebook.load_rules.cache_clear()
    mf, mg = _probe_pair(tmp_path)
    src = tmp_path / "train.py"
    src.write_text("import random\nrandom.seed(1)\n")
    _run(capsys, mf, "--megatron", mg, "--source", src)
    written = [p for p in project.rglob("*.json") if p.relative_to(project).as_posix() not in own]
    assert written  # the run wrote entries beside the project's files
    rc, out, _ = _run(capsys, "cache", "clear")
    assert rc == 0 and f"removed {len(written)} cache files" in out, out
    for rel, text in own.items():
        assert (project / rel).read_text() == text, rel
    assert not [p for p in written if p.exists()]
    rulebook.load_rules.cache_clear()


def test_a_cache_write_never_replaces_a_file_it_did_not_write(tmp_path: Path) -> None:
    from cfglint.load.datacache import write_entry

    path = tmp_path / "data" / ("f" * 32 + ".json")
    path.parent.mkdir()
    path.write_text("project file")
    assert not write_entry(path, "data", "k", "{}")
    assert path.read_text() == "project file"
    fresh = tmp_path / "data" / ("a" * 32 + ".json")
    assert write_entry(fresh, "data", "k", "{}")
    assert write_entry(fresh, "data", "k", "[]")  # its own entry is replaced


def test_rewrite_file_keeps_the_rule_for_a_deliberate_edit(tmp_path: Path) -> None:
    from cfglint.load.outputs import rewrite_file
    from cfglint.load.safeio import check_regular, forget_reads
    from cfglint.model.errors import InputError

    f = tmp_path / "c.yaml"
    f.write_text("a: 1\n")
    f.chmod(0o640)
    check_regular(str(f))  # read by the run: --fix edits it all the same
    rewrite_file(str(f), "a: 2\n")
    assert f.read_text() == "a: 2\n" and f.stat().st_mode & 0o777 == 0o640
    link = tmp_path / "link.yaml"
    link.symlink_to(f)
    with pytest.raises(InputError, match="symbolic link"):
        rewrite_file(str(link), "a: 3\n")
    f.chmod(0o444)
    with pytest.raises(InputError, match="read-only"):
        rewrite_file(str(f), "a: 3\n")
    assert f.read_text() == "a: 2\n"
    assert [p.name for p in tmp_path.iterdir() if "cfglint" in p.name] == []
    forget_reads()
