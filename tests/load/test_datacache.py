"""Our own data tables (src/cfglint/data/, rules/): read fast from an empty cache, the same
as a YAML 1.2 parser reads them, and ``--no-cache`` touches no cache file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cfglint.load.datacache import DATA_DIR, parse_data_yaml
from conftest import FIXTURES, ROOT, campaign

TABLES = sorted([*DATA_DIR.rglob("*.yaml"), *(ROOT / "rules").glob("*.yaml")])


@pytest.mark.parametrize(
    # ./test: one small table (ruamel's pure-Python parse of all of them is about 20 s);
    # every table in CI (--slow)
    "path",
    campaign(TABLES, [p.name for p in TABLES], keep={"versions.yaml"}),
)
def test_each_table_reads_as_yaml_1_2(path: Path) -> None:
    # libyaml with the core schema's implicit types must agree with ruamel (YAML 1.2) on
    # every table we ship: a `1e-5` stays a float, a `yes` a string
    from ruamel.yaml import YAML

    raw = path.read_bytes()
    assert parse_data_yaml(raw, str(path)) == YAML(typ="safe", pure=True).load(raw)


def test_core_schema_scalars() -> None:
    got = parse_data_yaml(b"[1e-5, 010, yes, on, true, ~, null, .inf, -.5, '1', 1.0]", "x")
    assert got == [1e-5, 10, "yes", "on", True, None, None, float("inf"), -0.5, "1", 1.0]


def test_no_cache_reads_and_writes_no_cache_file(tmp_path: Path) -> None:
    ex = FIXTURES / "examples" / "llama2_7b"
    cache = tmp_path / "cache"
    for argv in (
        ["--version"],
        [str(ex / "pretrain_llama2_7b.yaml"), "--megatron", str(ex / "pretrain_llama2_7b.sh")],
        [str(ex / "pretrain_llama2_7b.yaml"), "--megatron-version", "megatron-lm"],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "cfglint", *argv, "--no-cache"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "CFGLINT_CACHE_DIR": str(cache)},
            check=False,
        )
        assert proc.returncode in (0, 1), proc.stderr[-500:]
        assert not cache.exists() or not any(cache.rglob("*")), sorted(cache.rglob("*"))


def test_a_ready_table_is_read_without_parsing_or_caching(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what hatch_build.py puts in the wheel: the JSON of a table, named by its YAML's hash
    from cfglint.load import datacache
    from cfglint.load.datayaml import READY, ready_name

    table = tmp_path / "t.yaml"
    table.write_bytes(b"a: 1\n")
    (tmp_path / READY).mkdir()
    (tmp_path / READY / f"{ready_name(table.read_bytes())}.json").write_text('{"a": "ready"}')
    monkeypatch.setattr(datacache, "DATA_DIR", tmp_path)
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path / "cache"))
    assert datacache.load_data(table) == {"a": "ready"}
    assert not (tmp_path / "cache").exists()
    table.write_bytes(b"a: 2\n")  # edited after the build: parsed (and cached) as before
    assert datacache.load_data(table) == {"a": 2}
    assert any((tmp_path / "cache").rglob("*.json"))


@pytest.mark.slow
def test_the_wheel_ships_every_table_ready(tmp_path: Path) -> None:
    import json
    import zipfile

    from cfglint.load.datayaml import (
        READY,
        dialect_index,
        dialect_index_name,
        flag_table,
        flag_table_name,
        indexed_table,
        indexed_table_name,
        keyed_table,
        keyed_table_name,
        read_ready_rule_set,
        ready_name,
        rules_ready_name,
    )

    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        for table in TABLES:
            raw = table.read_bytes()
            name = f"cfglint/data/{READY}/{ready_name(raw)}.json"
            assert json.loads(z.read(name)) == parse_data_yaml(raw, str(table)), table.name
            # its mappings of records decoded a record at a time (load/datacache.py keyed)
            keyed = keyed_table(parse_data_yaml(raw, str(table)))
            if keyed is not None:
                assert z.read(f"cfglint/data/{READY}/{keyed_table_name(raw)}.json") == keyed
            # an argument table's flag names alone (load/dialects.py's detection reads them)
            flags = flag_table(parse_data_yaml(raw, str(table)))
            if flags is not None:
                name = f"cfglint/data/{READY}/{flag_table_name(raw)}.json"
                assert json.loads(z.read(name)) == flags, table.name
                # and indexed (normalize/megatron/args.py decodes the entries a lint uses)
                name = f"cfglint/data/{READY}/{indexed_table_name(raw)}.json"
                assert z.read(name) == indexed_table(parse_data_yaml(raw, str(table)))
        # the dialect index (load/dialects.py reads it instead of every dialect's arguments)
        folder = ROOT / "src" / "cfglint" / "data" / "dialects"
        raws = [(p.stem, p.read_bytes()) for p in sorted(folder.glob("*.yaml"))]
        index = json.loads(z.read(f"cfglint/data/{READY}/{dialect_index_name(raws)}.json"))
        assert index == dialect_index({s: parse_data_yaml(r, s) for s, r in raws})
        # the rule set, with its content's hash (check/rulebook.py builds the rules from it)
        rules = sorted((ROOT / "rules").glob("*.yaml"))
        raws = [(p.name, p.read_bytes()) for p in rules]
        doc = read_ready_rule_set(z.read(f"cfglint/data/{READY}/{rules_ready_name(raws)}.json"))
        assert doc["files"] == [[n, parse_data_yaml(r, n)] for n, r in raws]
        # the release facts, one file per project, as they are (normalize/release_fit.py)
        for path in sorted((ROOT / "src" / "cfglint" / "data" / "release_files").glob("*")):
            assert z.read(f"cfglint/data/release_files/{path.name}") == path.read_bytes()
