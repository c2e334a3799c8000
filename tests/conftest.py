"""Shared test helpers. ``../shared`` (the real MindFormers corpus, the checklist, the SARIF
schema) exists for developers and CI, not in a user's clone: tests that need it skip."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
# the package's data tables as a checkout has them
PACKAGE_DATA = ROOT / "src" / "cfglint" / "data"
SHARED = Path(os.environ.get("CFGLINT_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus" / "mindformers"


def script_module(name: str) -> Any:
    """``scripts/NAME.py`` imported as a module: the extractors, generators and the docs hook
    are scripts, not package code, and their tests call their functions."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mindformers_wheel(release: str, tmp_path: Path) -> tuple[Any, Any]:
    """The extractor script and its ``Wheel`` reader over MindFormers ``release`` (``v2.1.0``)
    downloaded from the package index (skips where the index does not give it)."""
    version = release.removeprefix("v")
    unpacked_wheel("mindformers", version, tmp_path)
    x = script_module("extract_mindformers_releases")
    return x, x.Wheel(next(tmp_path.glob(f"mindformers-{version}-*.whl")))


def fresh_python(code: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """``code`` run by a new interpreter on this checkout's sources: what a program run imports
    and does, unaffected by what the test process has imported already (``check``: a non-zero
    exit fails the test)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        timeout=120,
        check=check,
    )


def ready_install(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tables: list[Path],
    build: Callable[[Any], bytes | None],
    name: Callable[[bytes], str],
) -> Path:
    """An install folder (``datacache.DATA_DIR``) holding the package's data and, of the ready
    files, only what ``build`` makes of each of ``tables`` (named by ``name`` from the table's
    bytes); the cache is a folder of its own. Returns the ready folder."""
    from cfglint.load import datacache
    from cfglint.load.datayaml import READY

    (tmp_path / READY).mkdir()
    for child in PACKAGE_DATA.iterdir():
        if child.name != READY:
            (tmp_path / child.name).symlink_to(child)
    for file_name, ready in _ready_files(tuple(tables), build, name):
        (tmp_path / READY / file_name).write_bytes(ready)
    monkeypatch.setattr(datacache, "DATA_DIR", tmp_path)
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / READY


@functools.cache
def _ready_files(
    tables: tuple[Path, ...],
    build: Callable[[Any], bytes | None],
    name: Callable[[bytes], str],
) -> tuple[tuple[str, bytes], ...]:
    # built once a test session (parsing every table is ~1 s): each test writes its own copy
    from cfglint.load.datayaml import parse_data_yaml

    out = []
    for table in tables:
        raw = table.read_bytes()
        ready = build(parse_data_yaml(raw, table.name))
        if ready is not None:
            out.append((f"{name(raw)}.json", ready))
    return tuple(out)


def need_shared(*parts: str) -> Path:
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} is not available (../shared is only present for developers and CI)")
    return p


def unpacked_wheel(name: str, version: str, tmp_path: Path) -> Path:
    """``pip download --no-deps NAME==VERSION`` unpacked under ``tmp_path/site`` (read, never
    imported or installed); skips the test where the index or the network does not give it."""
    got = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp_path),
         f"{name}=={version}"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    wheels = list(tmp_path.glob(f"{name.replace('-', '_')}-*.whl"))
    if got.returncode != 0 or not wheels:
        pytest.skip(f"{name} {version} not downloadable here: {got.stderr.strip()[-200:]}")
    with zipfile.ZipFile(wheels[0]) as zf:
        zf.extractall(tmp_path / "site")
    return tmp_path / "site"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow", action="store_true", help="also run the tests marked slow (the long fuzz run)"
    )


# --slow (or a CI environment): set before the test modules are imported (pytest_configure)
SLOW_RUN = False


def pytest_configure(config: pytest.Config) -> None:
    global SLOW_RUN
    SLOW_RUN = bool(config.getoption("--slow") or os.environ.get("CI"))


def examples(default_run: int, slow_run: int, env: str = "CFGLINT_FUZZ_EXAMPLES") -> int:
    """How many examples a hypothesis property draws: ``env`` when set, else a few in
    ./test and the full campaign with --slow (CI)."""
    if os.environ.get(env):
        return int(os.environ[env])
    return slow_run if SLOW_RUN else default_run


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # ./test stays quick on a laptop; .ci/run passes --slow (a CI environment runs them too)
    if SLOW_RUN:
        return
    skip = pytest.mark.skip(reason="slow: runs in .ci/run (./test --slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def campaign(values: list[Any], ids: list[str], keep: set[str]) -> list[Any]:
    """The cases of a parametrised family whose whole set is a campaign (every real pair,
    every table, every past hang): the ``keep`` ids, fast representatives of the family, run
    in ./test; the rest are marked slow and run in CI (.ci/run: --slow)."""
    unknown = keep - set(ids)
    assert not unknown, f"no such cases: {sorted(unknown)}"
    return [
        pytest.param(*(v if isinstance(v, tuple) else (v,)), id=i, marks=_slow_unless(i in keep))
        for v, i in zip(values, ids, strict=True)
    ]


def _slow_unless(kept: bool) -> list[pytest.MarkDecorator]:
    return [] if kept else [pytest.mark.slow]


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # keep the parsed-data and scan caches out of the user's home during tests
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    # unexpected exceptions re-raise instead of becoming cfglint's one-line internal error
    monkeypatch.setenv("CFGLINT_DEBUG", "1")
    # reports wrap to the terminal's width: pin it (and colour off) so output is the same
    # in a terminal, a pipe and CI; tests of the width and colour switches set their own
    monkeypatch.setenv("COLUMNS", "100")
    for name in ("FORCE_COLOR", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


def read_tables_through_the_cache(mp: pytest.MonkeyPatch) -> None:
    """Read our YAML tables through the cache's data part, as a checkout whose tables changed
    after its install does: the ready JSON an install ships (hatch_build.py) would skip it,
    and the tests of the cache need every part written."""
    from cfglint.load import datacache

    mp.setattr(datacache, "READY", "_no_ready_tables_here")


@pytest.fixture
def tables_from_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    read_tables_through_the_cache(monkeypatch)
