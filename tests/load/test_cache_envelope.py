"""A cache entry's envelope (load/datacache.py) is checked in plain code as strictly as the
Envelope model would: a planted or stale entry is a miss, and reading one builds no
pydantic validator (that build cost more than the settings table it guarded, see
bench/results/fresh_env.md, "module-level work at import")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cfglint import __version__
from cfglint.load.datacache import read_entry, use_cache, write_entry


def _good(key: str) -> dict[str, Any]:
    return {"format": 1, "part": "data", "tool": __version__, "key": key, "payload": {"a": [1]}}


@pytest.fixture(autouse=True)
def _on() -> None:
    use_cache(True)


def test_an_entry_reads_back_without_building_a_validator(tmp_path: Path) -> None:
    entry = tmp_path / "data" / f"t-{'0' * 32}.json"
    assert write_entry(entry, "data", "k1", json.dumps({"a": [1]}))
    assert read_entry(entry, "data", "k1", lambda p: p) == {"a": [1]}
    # a fresh process, as a lint that only reads: the Envelope class is not even created
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from cfglint.load.datacache import read_entry\n"
        f"got = read_entry(Path({str(entry)!r}), 'data', 'k1', lambda p: p)\n"
        "from pydantic import BaseModel\n"
        "print(got, any(c.__name__ == 'Envelope' for c in BaseModel.__subclasses__()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.split() == ["{'a':", "[1]}", "False"]


def test_the_plain_check_reads_the_models_fields() -> None:
    from cfglint.load.cache_envelope import Envelope
    from cfglint.load.datacache import ENVELOPE_FIELDS

    assert set(Envelope.model_fields) == ENVELOPE_FIELDS


@pytest.mark.parametrize(
    "change",
    [
        {"format": True},
        {"format": 2},
        {"format": "1"},
        {"part": "rules"},
        {"tool": "0.0.0"},
        {"key": "other"},
        {"extra": 1},
        {"payload": None, "drop": "payload"},
        {"drop": "format"},
    ],
)
def test_a_planted_or_stale_envelope_is_a_miss(change: dict[str, Any], tmp_path: Path) -> None:
    doc = _good("k1")
    drop = change.pop("drop", None)
    doc.update(change)
    if drop:
        del doc[drop]
    entry = tmp_path / f"t-{'0' * 32}.json"
    entry.write_text(json.dumps(doc))
    assert read_entry(entry, "data", "k1", lambda p: p) is None
    # the same document, whole, is a hit: only the change made it a miss
    entry.write_text(json.dumps(_good("k1")))
    assert read_entry(entry, "data", "k1", lambda p: p) == {"a": [1]}


def test_not_json_not_a_table_or_a_link_is_a_miss(tmp_path: Path) -> None:
    entry = tmp_path / f"t-{'0' * 32}.json"
    for text in ("{", "[1, 2]", "1" * 5000 + "[" * 100000):
        entry.write_text(text)
        assert read_entry(entry, "data", "k1", lambda p: p) is None
    real = tmp_path / "real.json"
    real.write_text(json.dumps(_good("k1")))
    entry.unlink()
    os.symlink(real, entry)
    assert read_entry(entry, "data", "k1", lambda p: p) is None
