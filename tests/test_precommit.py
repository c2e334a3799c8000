"""The hooks work from a consuming repository with a plain `pre-commit run`: a real
pre-commit (from PyPI) installs cfglint from a git repository holding this project and
fails on a bad config, passes on a good one, and only looks at the files it is given."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT

pytest.importorskip("pre_commit")
GOOD = FIXTURES / "pairs" / "llama2_dense" / "llama2_7b_align.yaml"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This project as a git repository, the way a consumer's pre-commit fetches it."""
    repo = tmp_path_factory.mktemp("cfglint-hooks")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, repo / name)
    for name in ("src", "rules"):
        shutil.copytree(
            ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "cfglint")
    return repo, git(repo, "rev-parse", "HEAD")


def consumer(tmp: Path, hook_repo: tuple[Path, str], hooks: str) -> Path:
    repo, rev = hook_repo
    (tmp / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n{hooks}"
    )
    git(tmp, "init", "-q")
    return tmp


def pre_commit(cwd: Path, *files: str) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "PRE_COMMIT_HOME": str(cwd.parent / "pre-commit-home")}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--files", *files],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_mindformers_hook_fails_on_bad_and_passes_on_good(
    tmp_path: Path, hook_repo: tuple[Path, str]
) -> None:
    (tmp_path / "consumer").mkdir()
    repo = consumer(tmp_path / "consumer", hook_repo, "      - id: cfglint-mindformers\n")
    configs = repo / "configs"
    configs.mkdir()
    good = GOOD.read_text()
    (configs / "good.yaml").write_text(good)
    (configs / "bad.yaml").write_text(
        good.replace('param_init_type: "float32"', 'param_init_type: "float16"')
    )
    (repo / "ci.yaml").write_text("steps:\n  - run: echo hi\n")  # not a MindFormers config
    git(repo, "add", "-A")

    ok = pre_commit(repo, "configs/good.yaml", "ci.yaml")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout

    bad = pre_commit(repo, "configs/bad.yaml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout and "WGT002" in bad.stdout
    assert "configs/bad.yaml" in bad.stdout


def test_sources_hook_reports_python_findings(tmp_path: Path, hook_repo: tuple[Path, str]) -> None:
    (tmp_path / "consumer").mkdir()
    repo = consumer(tmp_path / "consumer", hook_repo, "      - id: cfglint-sources\n")
    src = FIXTURES / "sources" / "plain_decay"
    for f in src.iterdir():
        shutil.copy(f, repo / f.name)
    git(repo, "add", "-A")
    run = pre_commit(repo, "train_plain.py", "utils.py")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "train_plain.py:9" in run.stdout  # AdamW over model.parameters(): decays everything
