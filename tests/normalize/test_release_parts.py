"""Issue 29: a lint reads one project's part of data/release_files.json (the part an install
ships ready, split by hatch_build.py), and a part that is stale or damaged is not used: the
whole file is read instead, so every label is the one the whole file gives."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cfglint.load.datacache import DATA_DIR
from cfglint.load.datayaml import READY, release_part_name, release_parts
from cfglint.normalize import release_fit
from cfglint.normalize.release_fit import fit_file, project_data, release_data
from conftest import FIXTURES

PROJECTS = ("mindformers", "mindspeed_llm")
README_YAML = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data folder holding only release_files.json (no ready part yet)."""
    shutil.copy(DATA_DIR / "release_files.json", tmp_path / "release_files.json")
    (tmp_path / READY).mkdir()
    monkeypatch.setattr(release_fit, "DATA_DIR", tmp_path)
    project_data.cache_clear()
    yield tmp_path
    project_data.cache_clear()


def _write_part(folder: Path, project: str, part: Any, raw: bytes | None = None) -> Path:
    raw = (folder / "release_files.json").read_bytes() if raw is None else raw
    path = folder / READY / f"{release_part_name(raw, project)}.json"
    path.write_text(part if isinstance(part, str) else json.dumps(part))
    return path


def test_the_parts_are_the_whole_files_projects() -> None:
    whole = release_data()
    parts = release_parts(whole)
    assert list(parts) == list(PROJECTS)
    assert all(parts[p] == whole[p] for p in PROJECTS)


def test_without_a_part_the_whole_file_is_read(data_dir: Path) -> None:
    for project in PROJECTS:
        assert project_data(project) == release_data()[project]


def test_a_ready_part_is_read_and_gives_the_same_labels(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = README_YAML.read_text()
    whole_fit = fit_file("mindformers", str(README_YAML), text)
    project_data.cache_clear()
    marked = {**release_data()["mindformers"], "marker": "the ready part"}
    _write_part(data_dir, "mindformers", marked)

    def no_whole(*_: object, **__: object) -> None:
        raise AssertionError("the whole file was parsed")

    monkeypatch.setattr(release_fit.json, "loads", _only_parts(no_whole))
    assert project_data("mindformers")["marker"] == "the ready part"
    assert fit_file("mindformers", str(README_YAML), text) == whole_fit


def _only_parts(fail: Any) -> Any:
    """json.loads that parses a ready part (bytes of ~40 KB) but not the whole file."""
    real = json.loads
    whole_size = (DATA_DIR / "release_files.json").stat().st_size

    def loads(s: str | bytes, **kw: Any) -> Any:
        if len(s) >= whole_size:
            fail()
        return real(s, **kw)

    return loads


def test_a_stale_part_is_not_read(data_dir: Path) -> None:
    old = (data_dir / "release_files.json").read_bytes()
    _write_part(data_dir, "mindformers", {**release_data()["mindformers"], "marker": 1}, old)
    (data_dir / "release_files.json").write_bytes(old + b"\n")  # the file changed since
    assert "marker" not in project_data("mindformers")
    assert project_data("mindformers") == release_data()["mindformers"]


@pytest.mark.parametrize(
    "damage",
    ["{", "", "[]", "null", {"releases": []}, {"releases": {}, "paths": {}, "blobs": {}}],
)
def test_a_damaged_part_is_not_read(data_dir: Path, damage: Any) -> None:
    _write_part(data_dir, "mindspeed_llm", damage)
    assert project_data("mindspeed_llm") == release_data()["mindspeed_llm"]
