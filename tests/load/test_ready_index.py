"""The dialect index and the entry-role expression: faster forms of what the full tables
and the fnmatch table say, which must say exactly the same (issue 29)."""

from __future__ import annotations

import fnmatch
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cfglint.load import datacache, detect, dialects
from cfglint.load.datayaml import dialect_index, dialect_index_name


def _clear() -> None:
    for fn in (dialects._dialect_index, dialects._by_name, dialects.dialect_names, dialects._meta):
        getattr(fn, "cache_clear", lambda: None)()


@pytest.fixture
def fresh_dialects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of data/dialects/ and an install folder holding only a ready index."""
    folder = tmp_path / "dialects"
    shutil.copytree(dialects.DIALECT_DIR, folder)
    monkeypatch.setattr(dialects, "DIALECT_DIR", folder)
    monkeypatch.setattr(datacache, "DATA_DIR", tmp_path)
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path / "cache"))
    _clear()
    yield folder
    _clear()


def _ready_index(folder: Path, data_dir: Path, index: dict) -> Path:
    raws = [(p.stem, p.read_bytes()) for p in sorted(folder.glob("*.yaml"))]
    (data_dir / datacache.READY).mkdir(exist_ok=True)
    out = data_dir / datacache.READY / f"{dialect_index_name(raws)}.json"
    out.write_text(json.dumps(index))
    return out


def test_the_index_is_the_tables_without_their_arguments(fresh_dialects: Path) -> None:
    index = dialects._dialect_index()  # no ready index here: read from the tables
    assert sorted(index) == sorted(p.stem for p in fresh_dialects.glob("*.yaml"))
    for stem, summary in index.items():
        full = dialects._meta(stem)
        assert summary == {k: v for k, v in full.items() if not k.endswith("args")}
        assert full.get("args") and "args" not in summary
    assert dialects.dialect_names() == tuple(sorted(d["name"] for d in index.values()))


def test_a_ready_index_is_read_without_reading_the_tables(
    fresh_dialects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = dialect_index({p.stem: dialects._meta(p.stem) for p in fresh_dialects.glob("*.yaml")})
    _clear()
    _ready_index(fresh_dialects, datacache.DATA_DIR, index)

    def no_table(stem: str) -> None:
        raise AssertionError(f"read the whole table {stem}")

    monkeypatch.setattr(dialects, "_meta", no_table)
    assert dialects._dialect_index() == index


def test_a_stale_ready_index_is_not_read(fresh_dialects: Path) -> None:
    index = dialect_index({p.stem: dialects._meta(p.stem) for p in fresh_dialects.glob("*.yaml")})
    _clear()
    stem = sorted(index)[0]
    _ready_index(fresh_dialects, datacache.DATA_DIR, index)
    # a dialect renamed after the install was built: its index has another name now
    table = fresh_dialects / f"{stem}.yaml"
    text = table.read_text()
    old = index[stem]["name"]
    table.write_text(text.replace(f"name: {old}", "name: renamed-after-build", 1))
    assert "renamed-after-build" in dialects.dialect_names()
    assert old not in dialects.dialect_names()


@pytest.mark.parametrize(
    "damage",
    [
        lambda index: "{not json",
        lambda index: json.dumps([]),
        lambda index: json.dumps(dict(list(index.items())[1:])),  # a table missing
        lambda index: json.dumps({k: {**v, "name": 7} for k, v in index.items()}),
        lambda index: json.dumps({k: {"project": "x"} for k in index}),  # no name
    ],
)
def test_a_damaged_ready_index_is_not_read(fresh_dialects: Path, damage: Any) -> None:
    index = dialect_index({p.stem: dialects._meta(p.stem) for p in fresh_dialects.glob("*.yaml")})
    _clear()
    out = _ready_index(fresh_dialects, datacache.DATA_DIR, index)
    out.write_text(damage(index))
    assert dialects._dialect_index() == index
    assert dialects.dialect_names() == tuple(sorted(d["name"] for d in index.values()))


def _fnmatch_role(entry: str) -> str | None:
    """The role as the table's rows say it, one fnmatch per row in order (the reference)."""
    base = entry.rsplit("/", 1)[-1]
    if not base.endswith(".py") and "." in base and "/" not in entry:
        base = base.rsplit(".", 1)[-1] + ".py"
    for row in detect._launch_data()["entry_roles"]:
        if fnmatch.fnmatchcase(entry if "/" in row["pattern"] else base, row["pattern"]):
            return str(row["role"])
    return None


def _names() -> list[str]:
    rows = detect._launch_data()["entry_roles"]
    out = ["train.py", "x.py", "Train.py", "tools/retro/main.py", "retro/main.py", "main.py"]
    out += ["pkg.tools.run_text_generation", "a/b/pretrain_gpt.py", "pretrain_gpt.sh"]
    for row in rows:  # each pattern with its wildcards filled, and near misses
        p = str(row["pattern"])
        out += [p.replace("*", ""), p.replace("*", "ab_"), "x" + p.replace("*", "_y_"), p + "x"]
        out.append("dir/" + p.replace("*", "convert"))
    return out


def test_the_role_expression_says_what_each_row_says() -> None:
    roles = {str(r["role"]) for r in detect._launch_data()["entry_roles"]}
    got = {name: detect.script_role(name) for name in _names()}
    assert got == {name: _fnmatch_role(name) for name in _names()}
    assert set(got.values()) - {None} == roles  # every role is reached by some name
