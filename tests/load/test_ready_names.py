"""How a ready file (hatch_build.py's JSON of a table, shipped in the wheel) is named: by a
checksum of the bytes it was built from, so that a table edited after the build is not
matched with it (load/datayaml.py). A pair lint names ~1.5 MB of tables; a cryptographic
hash of them cost ~5% of its instructions (issue 29), a checksum does the same job."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from cfglint.load import datayaml
from conftest import PACKAGE_DATA, ROOT

DATA = PACKAGE_DATA
TABLES = sorted([*DATA.rglob("*.yaml"), *(ROOT / "rules").glob("*.yaml")])


def _names(raw: bytes) -> list[str]:
    return [
        datayaml.ready_name(raw),
        datayaml.flag_table_name(raw),
        datayaml.dialect_index_name([("t", raw)]),
        datayaml.rules_ready_name([("t", raw)]),
    ]


def test_naming_a_ready_file_computes_no_cryptographic_hash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("a ready name computed a sha256")

    monkeypatch.setattr(hashlib, "sha256", refused)
    raw = (DATA / "launches.yaml").read_bytes()
    assert len(set(_names(raw))) == 4


@pytest.mark.parametrize("table", TABLES[:3] + TABLES[-3:], ids=lambda p: p.name)
def test_any_edit_of_a_table_renames_its_ready_files(table: Path) -> None:
    raw = table.read_bytes()
    before = _names(raw)
    middle = len(raw) // 2
    edits = [
        raw[:middle] + bytes([raw[middle] ^ 1]) + raw[middle + 1 :],  # one bit
        raw + b"\n",  # one byte more
        raw[:-1],  # one byte less
        raw[:middle] + raw[middle + 1 : middle + 2] + raw[middle : middle + 1] + raw[middle + 2 :],
    ]
    for edited in edits:
        if edited != raw:
            assert all(a != b for a, b in zip(before, _names(edited), strict=True))


def test_every_shipped_table_has_a_name_of_its_own() -> None:
    names = [datayaml.ready_name(p.read_bytes()) for p in TABLES]
    assert len(set(names)) == len(names)


def test_a_list_of_tables_is_named_by_each_table_and_its_place() -> None:
    a, b = (DATA / "launches.yaml").read_bytes(), (DATA / "versions.yaml").read_bytes()
    names = {
        datayaml.dialect_index_name(files)
        for files in (
            [("a", a), ("b", b)],
            [("b", b), ("a", a)],  # another order
            [("a", b), ("b", a)],  # the contents swapped
            [("a", a + b[:1]), ("b", b[1:])],  # a byte moved across the boundary
            [("a", a)],
        )
    }
    assert len(names) == 5
