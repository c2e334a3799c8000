"""``[tool.cfglint]`` read back from the data cache (cli/settings.py): a lint in a folder
with a pyproject.toml imports tomllib only when the file's bytes are new, the table it
gets back is checked exactly as a parsed one, and whatever is not valid TOML is reported
on every run (bench/results/fresh_env.md, "module-level work at import")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import cfglint.cli.settings as settings
from cfglint.load.datacache import cache_dir, use_cache
from cfglint.model.errors import InputError

TABLE = '[project]\nname = "x"\n\n[tool.cfglint]\nselect = ["OPT"]\nfail-on = "error"\n'


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path / "cache"))
    use_cache(True)
    return tmp_path / "cache"


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = settings._parsed_section

    def counting(path: Path, text: str) -> dict[str, Any]:
        calls.append(text)
        return real(path, text)

    monkeypatch.setattr(settings, "_parsed_section", counting)
    return calls


def test_the_second_read_comes_from_the_cache(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _parses(monkeypatch)
    py = tmp_path / "pyproject.toml"
    py.write_text(TABLE)
    first = settings.load_settings(py)
    again = settings.load_settings(py)
    assert first == again and first["select"] == ["OPT"] and first["fail_on"] == "error"
    assert len(calls) == 1
    assert [p.name.startswith("pyproject-") for p in (cache_dir() / "data").iterdir()] == [True]
    py.write_text(TABLE.replace('"error"', '"warning"'))  # new bytes: parsed again
    assert settings.load_settings(py)["fail_on"] == "warning" and len(calls) == 2


def test_a_cached_table_is_checked_like_a_parsed_one(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    py = tmp_path / "pyproject.toml"
    py.write_text(TABLE)
    settings.load_settings(py)
    (entry,) = (cache_dir() / "data").iterdir()
    doc = json.loads(entry.read_text())
    doc["payload"] = {"select": "OPT", "fail-on": "sometimes"}  # planted
    entry.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"fail-on = 'sometimes': expected one of"):
        settings.load_settings(py)
    doc["payload"] = ["not", "a", "table"]  # not a table: a miss, parsed again
    entry.write_text(json.dumps(doc))
    assert settings.load_settings(py)["fail_on"] == "error"


def test_invalid_toml_is_reported_every_time_and_never_cached(cache: Path, tmp_path: Path) -> None:
    py = tmp_path / "pyproject.toml"
    py.write_text("[tool.cfglint\nselect = 1\n")
    for _ in range(2):
        with pytest.raises(InputError, match="invalid TOML"):
            settings.load_settings(py)
    py.write_text("[tool]\ncfglint = 3\n")
    for _ in range(2):
        with pytest.raises(InputError, match=r"\[tool.cfglint\] must be a table"):
            settings.load_settings(py)
    assert not (cache_dir() / "data").exists()


def test_no_cache_reads_and_writes_none(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _parses(monkeypatch)
    py = tmp_path / "pyproject.toml"
    py.write_text(TABLE)
    use_cache(False)
    try:
        settings.load_settings(py)
        settings.load_settings(py)
    finally:
        use_cache(True)
    assert len(calls) == 2 and not cache.exists()


def test_a_date_is_not_cached(cache: Path, tmp_path: Path) -> None:
    py = tmp_path / "pyproject.toml"
    py.write_text('[tool.cfglint]\nselect = ["OPT"]\nwhen = 1979-05-27\n')
    with pytest.raises(InputError, match="unknown setting 'when'"):
        settings.load_settings(py)
    assert not (cache_dir() / "data").exists()
