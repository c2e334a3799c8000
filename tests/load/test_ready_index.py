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
from cfglint.load.datayaml import dialect_index, dialect_index_name, flag_table, flag_table_name


def _clear() -> None:
    for fn in (
        dialects._dialect_index,
        dialects._by_name,
        dialects.dialect_names,
        dialects._meta,
        dialects._flags_of,
        dialects._raw_name,
        dialects._indexed,
        dialects.table_flags,
    ):
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


# -- flag tables: detection asks several tables their flag names, and reads one whole ------
def _whole_flags(name: str) -> frozenset[str]:
    """Table ``name``'s flags from its whole tables (the reference)."""
    out: set[str] = set()
    for e, _ in dialects.table_entries(name)[1]:
        out.update(e["flags"])
        if e.get("action", "store") == "boolean_optional":
            out.update("--no-" + f[2:] for f in e["flags"])
    return frozenset(out)


def _argument_files(folder: Path) -> list[Path]:
    return [*sorted(dialects.DATA.glob("*.yaml")), *sorted(folder.glob("*.yaml"))]


def _ready_flag_tables(folder: Path) -> None:
    """What the build hook writes: each argument table's flag table, named by its hash."""
    (datacache.DATA_DIR / datacache.READY).mkdir(exist_ok=True)
    for path in _argument_files(folder):
        flags = flag_table(datacache.load_data(path))
        if flags is not None:
            name = f"{flag_table_name(path.read_bytes())}.json"
            (datacache.DATA_DIR / datacache.READY / name).write_text(json.dumps(flags))


def test_flag_tables_give_every_tables_flags(fresh_dialects: Path) -> None:
    for with_ready in (False, True):
        if with_ready:
            _ready_flag_tables(fresh_dialects)
        for name in dialects.known_versions():
            _clear()
            assert dialects.table_flags(name) == _whole_flags(name), (name, with_ready)


def test_ready_flag_tables_are_read_without_reading_the_tables(
    fresh_dialects: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = {n: _whole_flags(n) for n in dialects.known_versions()}
    _ready_flag_tables(fresh_dialects)
    _clear()
    dialects._dialect_index()  # the dialect index reads the tables where none is ready

    def no_table(path: Path) -> None:
        raise AssertionError(f"read the whole table {path.name}")

    monkeypatch.setattr(dialects, "_whole", no_table)
    assert {n: dialects.table_flags(n) for n in expected} == expected


def _planted(folder: Path, damage: Any = None) -> tuple[str, Path]:
    """A ready flag table for the first dialect that plants a flag its table lacks (or
    ``damage`` instead); the dialect's name and the table's path."""
    table = sorted(folder.glob("*.yaml"))[0]
    flags = flag_table(datacache.load_data(table))
    flags["args"] = [*flags["args"], {"flags": ["--planted-by-the-test"]}]
    ready = datacache.DATA_DIR / datacache.READY
    ready.mkdir(exist_ok=True)
    text = json.dumps(flags) if damage is None else damage
    (ready / f"{flag_table_name(table.read_bytes())}.json").write_text(text)
    return str(datacache.load_data(table)["name"]), table


def test_a_ready_flag_table_is_what_detection_reads(fresh_dialects: Path) -> None:
    name, _ = _planted(fresh_dialects)
    assert "--planted-by-the-test" in dialects.table_flags(name)


def test_a_stale_flag_table_is_not_read(fresh_dialects: Path) -> None:
    name, table = _planted(fresh_dialects)
    table.write_bytes(table.read_bytes() + b"\n# edited after the install\n")
    _clear()
    assert "--planted-by-the-test" not in dialects.table_flags(name)
    assert dialects.table_flags(name) == _whole_flags(name)


@pytest.mark.parametrize(
    "damage",
    [
        "{not json",
        "[]",
        json.dumps({"name": "x"}),  # no argument list
        json.dumps({"args": [{"flags": "--x"}]}),
        json.dumps({"args": [{"dest": "x"}]}),
        json.dumps({"args": {"flags": ["--x"]}}),
    ],
)
def test_a_damaged_flag_table_is_not_read(fresh_dialects: Path, damage: str) -> None:
    name, _ = _planted(fresh_dialects, damage)
    assert dialects.table_flags(name) == _whole_flags(name)


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
