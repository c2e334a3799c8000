"""Issue 29: the release facts ship one file per project (data/release_files/), and a lint
reads only its own project's, as it ships: no other project's facts, no hash of them to
find a ready part (one file for both projects, split at install and found by the sha256 of
all 328 KB, cost ~9 M instructions of a 1,000 M pair lint)."""

from __future__ import annotations

import builtins
import io
from pathlib import Path
from typing import Any

import pytest

from cfglint.load.datacache import DATA_DIR
from cfglint.normalize import release_fit
from cfglint.normalize.release_fit import PROJECTS, RELEASE_FILES, fit_file, project_data
from conftest import FIXTURES

README_YAML = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
REPOS = {"mindformers": "mindspore-lab/mindformers", "mindspeed_llm": "Ascend/MindSpeed-LLM"}


def test_each_file_holds_its_projects_facts() -> None:
    files = sorted(p.stem for p in (DATA_DIR / RELEASE_FILES).glob("*.json"))
    assert files == sorted(PROJECTS)
    for project in PROJECTS:
        data = project_data(project)
        assert data["repo"] == REPOS[project]
        assert data["releases"] and data["paths"] and data["blobs"]


def test_a_mindformers_lint_reads_only_mindformers_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    text = README_YAML.read_text()
    project_data.cache_clear()
    opened: list[Path] = []
    real = io.open

    def recording(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | Path):
            opened.append(Path(file).resolve())
        return real(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", recording)
    monkeypatch.setattr(builtins, "open", recording)
    try:
        fit = fit_file("mindformers", str(README_YAML), text)
    finally:
        project_data.cache_clear()
    assert fit is not None and fit.project == "MindFormers"
    data = DATA_DIR.resolve()
    read = [p.relative_to(data).as_posix() for p in opened if p.is_relative_to(data)]
    assert read == [f"{RELEASE_FILES}/mindformers.json"]


class _Passes(dict):  # type: ignore[type-arg]
    """Recorded paths that count the passes over them."""

    passes = 0

    def __iter__(self) -> Any:
        self.passes += 1
        return super().__iter__()


@pytest.mark.parametrize(
    "where",
    ["configs/llama2/pretrain_llama2_7b.yaml", "a/b/c/d/e/pretrain_llama2_7b.yaml", "x.yaml"],
)
def test_a_files_path_is_matched_in_one_pass_over_the_recorded_paths(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, where: str
) -> None:
    """Every tail of the path ends in its name: the recorded paths of that name are found
    in one pass, and the tails compared among them give the fit a pass per tail gave."""
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    text = README_YAML.read_text() + "# edited: no release holds these bytes\n"
    want = fit_file("mindformers", str(path), text)
    counted = {**project_data("mindformers")}
    counted["paths"] = paths = _Passes(counted["paths"])
    monkeypatch.setattr(release_fit, "project_data", lambda _key: counted)
    assert fit_file("mindformers", str(path), text) == want
    assert paths.passes == 1
