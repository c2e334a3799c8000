"""A keyed table (hatch_build.py, load/datayaml.py keyed_table): its mappings of records are
decoded a record at a time, when a reader asks one by key, and say exactly what the table
says; one that is stale or damaged is not used (issue 29: a pair lint decoded all 69
classes of data/mindformers_releases.yaml to ask about 15)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cfglint.load import datacache
from cfglint.load.datayaml import (
    Records,
    keyed_table,
    keyed_table_name,
    parse_data_yaml,
    read_keyed_table,
)
from cfglint.normalize.mindformers import build, defaults, release
from conftest import PACKAGE_DATA, ROOT, ready_install

DATA = PACKAGE_DATA
TABLES = sorted([*DATA.rglob("*.yaml"), *(ROOT / "rules").glob("*.yaml")])
RELEASES = DATA / "mindformers_releases.yaml"
EXAMPLE = ROOT / "fixtures" / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"


def _clear() -> None:
    for module in (defaults, release, build):
        for fn in vars(module).values():
            if callable(getattr(fn, "cache_clear", None)):
                fn.cache_clear()


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An install folder holding the package's data and the keyed form of every table that
    has one, and no other ready file."""
    ready = ready_install(tmp_path, monkeypatch, TABLES, keyed_table, keyed_table_name)
    _clear()
    yield ready
    _clear()


def _plain(table: dict[str, Any]) -> dict[str, Any]:
    return {k: dict(v) if isinstance(v, Records) else v for k, v in table.items()}


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.name)
def test_a_keyed_table_says_what_the_table_says(table: Path) -> None:
    data = parse_data_yaml(table.read_bytes(), table.name)
    ready = keyed_table(data)
    if ready is None:
        return
    got = read_keyed_table(ready)
    assert list(got) == list(data) and _plain(got) == data
    for key, value in got.items():
        if isinstance(value, Records):
            assert list(value) == list(data[key])
            first = next(iter(value))
            assert value[first] is value[first] and value.get("no such record") is None


def test_the_releases_table_is_keyed() -> None:
    assert keyed_table(parse_data_yaml(RELEASES.read_bytes(), RELEASES.name)) is not None


def _config() -> str:
    return build.load_mindformers(str(EXAMPLE)).model_dump_json()


def test_a_pair_lint_decodes_only_the_records_it_asks_for(install: Path) -> None:
    cfg = _config()
    classes = defaults.mf_table(RELEASES.name)["components"]
    assert isinstance(classes, Records)
    assert 0 < len(classes._done) < len(classes) // 2
    shutil.rmtree(install)  # no ready file: the table is read whole
    _clear()
    assert type(defaults.mf_table(RELEASES.name)["components"]) is dict
    assert _config() == cfg


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw.replace(b'"present": true', b'"present": false', 1),  # checksum kept
        lambda raw: raw[:-10],
        lambda raw: raw.partition(b"\n")[2],  # no checksum
        lambda raw: b"",
    ],
)
def test_a_damaged_keyed_table_is_not_used(install: Path, damage: Any) -> None:
    (path,) = install.glob(f"{keyed_table_name(RELEASES.read_bytes())}.json")
    path.write_bytes(damage(path.read_bytes()))
    table = defaults.mf_table(RELEASES.name)
    assert type(table["components"]) is dict
    assert table == parse_data_yaml(RELEASES.read_bytes(), RELEASES.name)


def test_a_stale_keyed_table_is_not_used(install: Path, tmp_path: Path) -> None:
    """A table edited after the build has another checksum: its keyed form is not found and
    the edit is what the lint reads."""
    data = tmp_path / "data"
    data.mkdir()
    edited = data / RELEASES.name
    edited.write_bytes(RELEASES.read_bytes() + b"\n# edited after the build\n")
    assert type(datacache.load_data(edited, keyed=True)["components"]) is dict
    shutil.copy(RELEASES, edited)
    assert type(datacache.load_data(edited, keyed=True)["components"]) is Records
