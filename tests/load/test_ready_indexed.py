"""An argument table's ready index (hatch_build.py, load/datayaml.py indexed_table): a lint
decodes only the entries it asks for, and the index says exactly what the table says; one
that is stale or damaged is not used (issue 29: a pair lint decoded and indexed the whole
~130 KB Megatron-LM table to build ~120 of its ~800 arguments)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cfglint.load import dialects
from cfglint.load.datayaml import (
    READY,
    ArgList,
    accepted_flags,
    indexed_table,
    indexed_table_name,
    parse_data_yaml,
    read_indexed_table,
    ready_name,
)
from cfglint.normalize.megatron import args
from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron
from conftest import PACKAGE_DATA, ROOT, ready_install

DATA = PACKAGE_DATA
TABLES = sorted([*DATA.glob("*.yaml"), *(DATA / "dialects").glob("*.yaml")])
EXAMPLE = ROOT / "fixtures" / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh"
NAMES = ["megatron-lm", "core_v0.12.1", "mindspeed-llm", "megatron-llama"]


def _clear() -> None:
    for fn in (
        dialects._raw_name,
        dialects._indexed,
        dialects._flags_of,
        dialects._data,
        dialects.table_flags,
        dialects.get_dialect,
        args.load_table,
    ):
        fn.cache_clear()


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An install folder holding the package's data and the ready index of every argument
    table, and no other ready file."""
    ready = ready_install(tmp_path, monkeypatch, TABLES, indexed_table, indexed_table_name)
    _clear()
    yield ready
    _clear()


def _indexed(table: args.ArgTable) -> bool:
    return any(type(row) is tuple and type(row[0]) is ArgList for row in table.rows)


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.name)
def test_an_index_says_what_the_table_says(table: Path) -> None:
    data = parse_data_yaml(table.read_bytes(), table.name)
    ready = indexed_table(data)
    if ready is None:
        assert not any(k.endswith("args") and isinstance(v, list) for k, v in data.items())
        return
    meta, lists = read_indexed_table(ready)
    assert meta == {k: v for k, v in data.items() if k not in lists}
    assert sorted(lists) == sorted(
        k for k, v in data.items() if isinstance(v, list) and k.endswith("args")
    )
    for key, arg_list in lists.items():
        entries = data[key]
        assert [arg_list.entry(i) for i in range(len(arg_list))] == entries
        assert arg_list.dests == [e["dest"] for e in entries]
        assert arg_list.flags == [f for e in entries for f in accepted_flags(e)]
        by_flag: dict[str, int] = {}
        for i, e in enumerate(entries):  # as ArgTable.add_row indexes them one by one
            by_flag.update(dict.fromkeys(accepted_flags(e), 10 + i))
        assert list(arg_list.by_flag(10).items()) == list(by_flag.items())
        assert arg_list.by_dest(10) == {e["dest"]: 10 + i for i, e in enumerate(entries)}


def test_a_pair_lint_decodes_only_the_entries_it_uses(install: Path) -> None:
    table = args.load_table("megatron-lm")
    assert _indexed(table) and not any(type(row) is args.ArgSpec for row in table.rows)
    cfg = normalize_megatron(load_megatron(str(EXAMPLE)))
    assert cfg.structure.num_layers.value == 32
    built = [row for row in table.rows if type(row) is args.ArgSpec]
    assert 0 < len(built) < len(table.rows) // 4
    assert all(type(row[0]) is ArgList for row in table.rows if type(row) is tuple)


def _specs(table: args.ArgTable) -> dict[str, tuple[Any, ...]]:
    return {
        f: tuple(getattr(table.by_flag[f], k) for k in args.ArgSpec.__slots__)
        for f in table.by_flag
    }


@pytest.mark.parametrize("name", NAMES)
def test_a_tables_specs_from_its_index_are_its_specs(install: Path, name: str) -> None:
    ready = args.load_table(name)
    indexed = _indexed(ready)
    ready_specs, ready_dests = _specs(ready), list(ready.by_dest)
    flags = dialects.table_flags(name)
    label = dialects.get_dialect(name).label
    shutil.rmtree(install)  # no ready file: the tables are read whole
    _clear()
    whole = args.load_table(name)
    assert not _indexed(whole)
    assert indexed == (name in ("megatron-lm", "core_v0.12.1"))
    assert ready_specs == _specs(whole) and list(ready_specs) == list(_specs(whole))
    assert ready_dests == list(whole.by_dest) and ready.label == whole.label
    assert flags == dialects.table_flags(name) == frozenset(whole.by_flag)
    assert label == dialects.get_dialect(name).label


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw.replace(b'"--num-layers"', b'"--num-layerz"'),  # checksum kept
        lambda raw: raw.replace(b"--num-layers", b"--num-layerz"),
        lambda raw: raw[:-10],
        lambda raw: raw.partition(b"\n")[2],  # no checksum
        lambda raw: b"{}",
        lambda raw: b"",
    ],
)
def test_a_damaged_index_is_not_used(install: Path, damage: Any) -> None:
    (path,) = install.glob(f"{indexed_table_name(_megatron().read_bytes())}.json")
    path.write_bytes(damage(path.read_bytes()))
    table = args.load_table("megatron-lm")
    assert not _indexed(table)
    assert table.by_flag["--num-layers"].dest == "num_layers"


@pytest.mark.parametrize(
    "lines",
    [
        [{"meta": [], "lists": {"args": 1}}, "--a", "0", "a", "0000001f"],
        [{"meta": {}, "lists": {"args": 2}}, "--a", "0", "a", "0000001f"],  # 2 entries, 1 given
        [{"meta": {}, "lists": {"args": "1"}}, "--a", "0", "a", "0000001f"],
        [{"meta": {}, "lists": {"args": 1}}, "--a", "0", "a", "0000001e"],  # it ends early
        [{"meta": {}, "lists": {"args": 1}}, "--a", "1", "a", "0000001f"],  # no entry 1
        [{"meta": {}, "lists": {"args": 1}}, "--a --b", "0", "a", "0000001f"],
        [{"meta": {}, "lists": {"args": 1}}, "--a", "a", "0000001f"],
        [{"meta": {}}, "--a", "0", "a", "0000001f"],
    ],
)
def test_an_index_not_as_written_is_refused(lines: list[Any]) -> None:
    entry = '{"flags": ["--a"], "dest": "a"}'
    payload = "\n".join([json.dumps(lines[0]), *lines[1:], entry]).encode()
    raw = ready_name(payload).encode() + b"\n" + payload
    with pytest.raises((ValueError, TypeError, KeyError)):
        read_indexed_table(raw)
    good = [json.dumps({"meta": {}, "lists": {"args": 1}}), "--a", "0", "a", "0000001f", entry]
    payload = "\n".join(good).encode()
    (got,) = read_indexed_table(ready_name(payload).encode() + b"\n" + payload)[1].values()
    assert got.entry(0) == json.loads(entry) and got.by_flag(3) == {"--a": 3}


def test_a_stale_index_is_not_used(
    install: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table edited after the build has another checksum: its index is not found and the
    edit is what the lint reads."""
    data = tmp_path / "data"
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns(READY, "dialects"))
    table = data / _megatron().name
    table.write_bytes(table.read_bytes().replace(b"dest: num_layers\n", b"dest: num_layerz\n", 1))
    monkeypatch.setattr(dialects, "DATA", data)
    _clear()
    got = args.load_table("megatron-lm")
    assert not _indexed(got)
    assert got.by_flag["--num-layers"].dest == "num_layerz"
    assert "--num-layers" in dialects.table_flags("megatron-lm")


def _megatron() -> Path:
    return DATA / f"megatron_lm_{dialects.megatron_versions()[0]}.yaml"
