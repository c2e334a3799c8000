"""Issue 20: never lose a user's file, never trust what is on disk (the cache is input too),
bounded on every walk, every number checked where it is read, and exit 2 is one line.

Each test reproduces one defect the campaign found on the CLI; conftest sets CFGLINT_DEBUG,
so an internal error fails here as the exception it was."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import cfglint
from cfglint.cli import main
from conftest import FIXTURES, campaign

# the cfglint this test process imports (the child processes run the same one)
SRC = Path(cfglint.__file__).resolve().parents[1]

MF = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
MG = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh"
LOG = FIXTURES / "logs" / "megatron_train.log"
YARN = FIXTURES / "yarn" / "qwen25_7b_yarn_sft_msl"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def _pair(d: Path) -> tuple[Path, Path]:
    mf, mg = d / "c.yaml", d / "launch.sh"
    mf.write_bytes(MF.read_bytes())
    mg.write_bytes(MG.read_bytes())
    return mf, mg


def _child(
    argv: list[str],
    cwd: Path,
    *,
    cache: Path,
    timeout: float = 60,
    stdout: object = subprocess.PIPE,
    preexec_fn: object = None,
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CFGLINT_DEBUG"}
    env |= {"PYTHONPATH": str(SRC), "CFGLINT_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "cfglint", *map(str, argv)],
        cwd=cwd,
        env=env,
        text=True,
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.PIPE,
        preexec_fn=preexec_fn,  # type: ignore[arg-type]
        timeout=timeout,
        check=False,
    )


# -- the report never replaces an input, and is written whole or not at all ------------------


def _inputs(d: Path) -> dict[str, tuple[list[str], Path]]:
    mf, mg = _pair(d)
    log = d / "train.log"
    log.write_bytes(LOG.read_bytes())
    pyproject = d / "pyproject.toml"
    pyproject.write_text("[tool.cfglint]\nprofile = 'default'\n")
    (d / "link.yaml").symlink_to(mf.name)
    os.link(mg, d / "hard.sh")
    base = d / "base.yaml"
    base.write_text("seed: 1\n")
    top = d / "top.yaml"
    top.write_text("base_config: base.yaml\n" + MF.read_text())
    pair = [mf, "--megatron", mg]
    return {
        "config": (pair, mf),
        "launch": (pair, mg),
        "symlink to the config": (pair, d / "link.yaml"),
        "hard link to the launch": (pair, d / "hard.sh"),
        "loss log": ([*pair, "--loss-log", log], log),
        "pyproject": ([*pair, "--config", pyproject], pyproject),
        "a base_config the config includes": ([top, "--megatron", mg], base),
        "a file found in a folder": ([d], mf),
    }


@pytest.mark.parametrize(
    "which",
    [
        "config",
        "launch",
        "symlink to the config",
        "hard link to the launch",
        "loss log",
        "pyproject",
        "a base_config the config includes",
        "a file found in a folder",
    ],
)
def test_output_onto_an_input_is_refused(
    which: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    argv, target = _inputs(tmp_path)[which]
    before = target.read_bytes()
    rc, _, err = _run([*argv, "-o", target], capsys)
    assert rc == 2, err
    assert len(_lines(err)) == 1 and "is an input of this run" in err, err
    assert target.read_bytes() == before


def test_lr_plot_onto_an_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _pair(tmp_path)
    before = mf.read_bytes()
    rc, _, err = _run(["lr", mf, "--megatron", mg, "--plot", mf], capsys)
    assert rc == 2 and "is an input of this run" in err
    assert mf.read_bytes() == before


def test_output_is_written_atomically_and_keeps_its_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _pair(tmp_path)
    out = tmp_path / "report.json"
    out.write_text("old")
    out.chmod(0o640)
    rc, _, _ = _run([mf, "--megatron", mg, "--format", "json", "-o", out], capsys)
    assert rc == 1
    assert json.loads(out.read_text())["findings"]
    assert out.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml", "launch.sh", "report.json"]


def _no_big_files() -> None:
    # a disk that fills after 4 KiB: writes past it fail with EFBIG instead of a signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_a_full_disk_keeps_the_previous_report(tmp_path: Path) -> None:
    mf, mg = _pair(tmp_path)
    out = tmp_path / "report.json"
    out.write_text('{"previous": true}')
    r = _child(
        [mf, "--megatron", mg, "--format", "json", "-o", out],
        tmp_path,
        cache=tmp_path / "cache",
        preexec_fn=_no_big_files,
    )
    assert r.returncode == 2, r.stderr
    assert len(_lines(r.stderr)) == 1 and "cannot write the report" in r.stderr, r.stderr
    assert out.read_text() == '{"previous": true}'
    left = [p.name for p in tmp_path.iterdir() if p.name not in ("c.yaml", "launch.sh", "cache")]
    assert left == ["report.json"], left  # no partial temporary file either
    # nor in the cache folders, whose writes failed the same way
    assert not [p for p in (tmp_path / "cache").rglob("*") if "tmp" in p.name]


def test_output_to_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    mf, mg = _pair(tmp_path)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    r = _child([mf, "--megatron", mg, "-o", fifo], tmp_path, cache=tmp_path / "c", timeout=30)
    assert r.returncode == 2
    assert _lines(r.stderr) == [
        f"{fifo}: is a named pipe (FIFO); the report is written to a regular file only"
    ]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize(
    "command", campaign(["lint", "show", "rules"], ["lint", "show", "rules"], keep={"lint"})
)
def test_a_full_stdout_is_one_line(command: str, tmp_path: Path) -> None:
    mf, mg = _pair(tmp_path)
    argv = [] if command == "rules" else [mf, "--megatron", mg]
    with open("/dev/full", "w") as full:
        r = _child([command, *argv], tmp_path, cache=tmp_path / "c", stdout=full)
    assert r.returncode == 2
    assert _lines(r.stderr) == [
        "cfglint: cannot write to standard output: No space left on device"
    ], r.stderr


# -- the cache is input too ------------------------------------------------------------------


def _cache_files(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*.json") if p.is_file())


def _plant(p: Path, how: str, victim: Path) -> None:
    p.unlink()
    if how == "fifo":
        os.mkfifo(p)
    elif how == "link to /dev/zero":
        p.symlink_to("/dev/zero")
    elif how == "link to a file elsewhere":
        p.symlink_to(victim)
    elif how == "deep nesting":
        p.write_text("[" * 100_000 + "]" * 100_000)
    elif how == "forged envelope":
        # right part and version, key of another content, an empty payload
        part = p.parent.name if p.parent.name in ("data", "rules") else "scan"
        p.write_text(
            json.dumps({"format": 1, "part": part, "tool": "0.1.0", "key": "0" * 64, "payload": []})
        )
    else:
        p.write_text(how)


PLANTED = [
    "[]",
    "{}",
    '{"format": 1, "part": 3}',
    "null",
    "not json",
    "deep nesting",
    "forged envelope",
    "fifo",
    "link to /dev/zero",
    "link to a file elsewhere",
]


@pytest.mark.parametrize(
    # ./test: the entry that once silenced every rule, one that blocked, one that ate memory
    "how",
    campaign(PLANTED, PLANTED, keep={"[]", "fifo", "link to /dev/zero"}),
)
@pytest.mark.usefixtures("tables_from_cache")
def test_a_planted_cache_entry_is_a_miss(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import cfglint.check.rulebook as rulebook

    cache = tmp_path / "cache"
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(cache))
    mf, mg = _pair(tmp_path)
    src = tmp_path / "train.py"
    src.write_text("import torch\ntorch.manual_seed(1)\n")
    argv = [mf, "--megatron", mg, "--source", src, "--format", "json"]
    rulebook.load_rules.cache_clear()  # the rules are read from the disk cache, not memory
    clean = _run(argv, capsys)
    files = _cache_files(cache)
    assert {p.parent.name for p in files} >= {"data", "rules"} and len(files) > 10
    victim = tmp_path / "victim.txt"
    victim.write_text("not a cache entry")
    for p in files:
        _plant(p, how, victim)
    rulebook.load_rules.cache_clear()
    again = _run(argv, capsys)
    assert again == clean
    # a rewritten entry replaces the planted link, never what it points at
    assert victim.read_text() == "not a cache entry"
    assert os.path.exists("/dev/zero") and not os.path.isfile("/dev/zero")
    assert len(json.loads(clean[1])["findings"]) > 10


def test_no_cache_reads_and_writes_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import cfglint.check.rulebook as rulebook
    import cfglint.load.safeio as safeio

    cache = tmp_path / "cache"
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(cache))
    mf, mg = _pair(tmp_path)
    src = tmp_path / "train.py"
    src.write_text("import random\nrandom.seed(1)\n")
    opened: list[str] = []
    real = safeio.open_regular

    def spy(path: str, **kw: object) -> object:
        opened.append(os.path.abspath(path))
        return real(path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(safeio, "open_regular", spy)
    rulebook.load_rules.cache_clear()
    rc, _, _ = _run([mf, "--megatron", mg, "--source", src, "--no-cache"], capsys)
    assert rc == 1
    assert not [p for p in opened if p.startswith(str(cache))]
    assert not cache.exists() or not list(cache.rglob("*.json"))


@pytest.mark.usefixtures("tables_from_cache")
def test_cache_clear_clears_every_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import cfglint.check.rulebook as rulebook

    cache = tmp_path / "cache"
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(cache))
    mf, mg = _pair(tmp_path)
    src = tmp_path / "train.py"
    src.write_text("import random\nrandom.seed(1)\n")
    rulebook.load_rules.cache_clear()
    _run([mf, "--megatron", mg, "--source", src], capsys)
    (cache / "rules" / ".x.json.123.cfglint-tmp").write_text("partial")
    assert {p.parent.name for p in _cache_files(cache)} >= {"data", "rules"}
    rc, out, _ = _run(["cache", "clear"], capsys)
    assert rc == 0 and "removed" in out
    assert not [p for p in cache.rglob("*") if p.is_file()]


@pytest.mark.parametrize("value", ["inf", "1e400", "-1", "nan", "lots"])
def test_scan_cache_bound_is_checked(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CFGLINT_SCAN_CACHE_MB", value)
    src = tmp_path / "train.py"
    src.write_text("import random\nrandom.seed(1)\n")
    rc, _, err = _run(["--source", src], capsys)
    assert rc == 2
    assert _lines(err) == [
        f"cfglint: CFGLINT_SCAN_CACHE_MB={value!r}: expected a size in MiB from 0 to 1048576"
    ]


@pytest.mark.usefixtures("tables_from_cache")
def test_stale_temporary_files_are_pruned_in_every_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import cfglint.check.rulebook as rulebook

    cache = tmp_path / "cache"
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(cache))
    old = time.time() - 2 * 3600
    stale, fresh = [], cache / "data" / ".y.json.9.cfglint-tmp"
    for folder in ("data", "rules", "scan/ab"):
        p = cache / folder / ".x.json.1.cfglint-tmp"
        p.parent.mkdir(parents=True)
        p.write_text("left by a run that died")
        os.utime(p, (old, old))
        stale.append(p)
    fresh.write_text("a run writing now")
    mf, mg = _pair(tmp_path)
    src = tmp_path / "train.py"
    src.write_text("import random\nrandom.seed(1)\n")
    rulebook.load_rules.cache_clear()
    _run([mf, "--megatron", mg, "--source", src], capsys)
    assert not [p for p in stale if p.exists()]
    assert fresh.exists()


# -- walking ---------------------------------------------------------------------------------


def _remove(top: Path) -> None:
    """Remove a folder tree without recursion: shutil.rmtree (and so pytest's clean-up of
    old temporary folders) recurses once per level and fails on a 1000-deep one."""
    stack: list[tuple[str, bool]] = [(str(top), False)]
    while stack:
        path, emptied = stack.pop()
        if emptied:
            os.rmdir(path)
            continue
        stack.append((path, True))
        with os.scandir(path) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append((e.path, False))
                else:
                    os.unlink(e.path)


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """Makes ``tmp_path/NAME/d/d/...`` 1000 levels deep, removed again after the test."""
    made: list[Path] = []

    def make(name: str) -> Path:
        d = tmp_path / name
        d.mkdir()
        made.append(d)
        for _ in range(1000):  # Path.mkdir(parents=True) recurses once per level
            d = d / "d"
            d.mkdir()
        return d

    yield make
    for d in made:
        _remove(d)


def test_a_1000_deep_folder_lint_notes_what_it_skipped(
    deep: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (deep("repo") / "c.yaml").write_bytes(MF.read_bytes())
    (tmp_path / "repo" / "c.yaml").write_bytes(MF.read_bytes())
    rc, _, err = _run([tmp_path / "repo", "--fail-on", "never"], capsys)
    assert rc == 0
    assert "more than 40 levels deep" in err


def test_a_1000_deep_source_folder_is_scanned_to_its_bound(
    deep: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (deep("src") / "x.py").write_text("import random\n")
    (tmp_path / "src" / "train.py").write_text("import random\nrandom.seed(1)\n")
    argv = ["--source", tmp_path / "src", "--format", "json", "-v", "--fail-on", "never"]
    rc, out, _ = _run(argv, capsys)
    assert rc == 0
    warnings = json.loads(out)["warnings"]
    assert any("levels deep" in w["message"] for w in warnings), warnings


def test_lr_data_walk_is_bounded(
    deep: Callable[[str], Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep("data")
    rc, _, err = _run(["lr", MF, "--data", tmp_path / "data"], capsys)
    assert rc == 2 and "no MindRecord file" in err and len(_lines(err)) == 1
    rc, _, err = _run(["lr", MF, "--data", "/"], capsys)
    assert rc == 2
    assert _lines(err) == ["/: is the filesystem root; give the dataset's folder"]


@pytest.mark.parametrize(
    "gitignore",
    campaign(
        ["\\\n", "!\n", "*" * 60 + "a\n", "*a*a*a*a*a*b\n", "**/" * 50 + "x\n", "[\n"],
        ["backslash", "bang", "60 stars", "many stars", "many double stars", "bracket"],
        keep={"many double stars"},
    ),
)
def test_hostile_gitignore_is_bounded(gitignore: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".gitignore").write_text(gitignore)
    (repo / "c.yaml").write_bytes(MF.read_bytes())
    # long names: a backtracking pattern costs (length ** stars)
    for i in range(5):
        (repo / (f"{i}" + "a" * 200 + ".yaml")).write_text("seed: 1\n")
    t0 = time.monotonic()
    r = _child([repo, "--fail-on", "never"], tmp_path, cache=tmp_path / "c", timeout=60)
    assert time.monotonic() - t0 < 30
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr


def test_a_huge_gitignore_is_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with open(repo / ".gitignore", "wb") as fh:
        fh.truncate(1 << 30)  # sparse: 1 GiB on paper, nothing on disk
    (repo / "c.yaml").write_bytes(MF.read_bytes())
    rc, _, err = _run([repo, "--fail-on", "never"], capsys)
    assert rc == 0
    assert ".gitignore: skipped" in err and "its patterns are not applied" in err


# -- numbers and contracts --------------------------------------------------------------------


@pytest.mark.parametrize("value", [".inf", "-.inf", "1.0e+400", ".nan"])
@pytest.mark.parametrize("command", ["lint", "lr"])
def test_warmup_ratio_out_of_range(
    value: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _pair(tmp_path)
    mf.write_text(mf.read_text().replace("warmup_ratio: 0.03", f"warmup_ratio: {value}"))
    rc, _, err = _run([command, mf, "--megatron", mg], capsys)
    assert rc in (1, 2)
    if rc == 2:
        assert len(_lines(err)) == 1 and "warmup_ratio" in err


def test_an_unknown_yarn_mscale_is_unknown_not_a_type_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = (YARN / "megatron.sh").read_text()
    script = script.replace(
        "--rope-scaling-type yarn", '--rope-scaling-type yarn --rope-scaling-mscale "$(cat m)"'
    ).replace("original-max-position-embeddings 32768", "original-max-position-embeddings 8192")
    mg = tmp_path / "megatron.sh"
    mg.write_text(script)
    rc, out, _ = _run(
        ["show", YARN / "mindformers.yaml", "--megatron", mg, "--format", "json"], capsys
    )
    assert rc == 0
    cell = json.loads(out)["settings"]["structure.yarn_mscale"]["megatron"]
    assert cell["value"] is None and "substitution" in cell["where"] + json.dumps(cell)


def test_exit_2_prints_one_line_and_v_lists_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(3):
        (tmp_path / f"b{i}.py").write_text("def f(:\n")
    rc, _, err = _run(["--source", tmp_path], capsys)
    assert rc == 2
    assert _lines(err) == [
        f"{tmp_path}/b0.py:1: invalid Python syntax (column 7) (and 2 more input errors; "
        "-v lists all)"
    ]
    rc, _, err = _run(["--source", tmp_path, "-v"], capsys)
    assert rc == 2 and len(_lines(err)) == 3
    rc, out, _ = _run(["--source", tmp_path, "--format", "json"], capsys)
    assert rc == 2 and len(json.loads(out)["errors"]) == 3


def test_a_skipped_source_is_not_a_checked_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.py"
    with open(big, "wb") as fh:
        fh.truncate(1 << 30)
    rc, out, _ = _run(["--source", big], capsys)
    assert rc == 0
    assert "No findings in" not in out
    assert f"Nothing checked: {big}: Python file is 1073741824 bytes" in out
