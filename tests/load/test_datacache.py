"""Our own data tables (src/cfglint/data/, rules/): read fast from an empty cache, the same
as a YAML 1.2 parser reads them, and ``--no-cache`` touches no cache file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cfglint.load.datacache import DATA_DIR, parse_data_yaml
from conftest import FIXTURES, ROOT

TABLES = sorted([*DATA_DIR.rglob("*.yaml"), *(ROOT / "rules").glob("*.yaml")])


@pytest.mark.parametrize("path", TABLES, ids=[p.name for p in TABLES])
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
