"""The hooks work from a consuming repository with a plain `pre-commit run`: a real
pre-commit (from PyPI) installs cfglint from a git repository holding this project, runs
each hook with and without ``args:``, fails on a bad config, passes on a good one, skips
files that are not training inputs, and runs a configured pair when either file changes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT

pytest.importorskip("pre_commit")
# each module run builds a pre-commit environment from the package index (about a minute and
# a half on a 2-core machine): CI runs it (--slow); the hooks' output, what blocks a commit,
# is asserted in the default run (tests/cli/test_surface.py)
pytestmark = pytest.mark.slow
GOOD = FIXTURES / "pairs" / "llama2_dense" / "llama2_7b_align.yaml"
GOOD_MG = FIXTURES / "pairs" / "llama2_dense" / "pretrain_llama2_align.sh"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
ENV.pop("CFGLINT_DEBUG", None)


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """This project as a git repository, the way a consumer's pre-commit fetches it, and
    one PRE_COMMIT_HOME for the module so the hook environment is built once."""
    repo = tmp_path_factory.mktemp("cfglint-hooks")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml", "hatch_build.py"):
        shutil.copy(ROOT / name, repo / name)
    for name in ("src", "rules"):
        shutil.copytree(  # a checkout's ready tables are git-ignored: not in the repository
            ROOT / name,
            repo / name,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "_ready"),
        )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "cfglint")
    return repo, git(repo, "rev-parse", "HEAD"), tmp_path_factory.mktemp("pre-commit-home")


def consumer(tmp: Path, hook_repo: tuple[Path, str, Path], hooks: str) -> Path:
    repo, rev, _ = hook_repo
    tmp.mkdir(exist_ok=True)
    (tmp / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n{hooks}"
    )
    git(tmp, "init", "-q")
    return tmp


def pre_commit(
    cwd: Path, hook_repo: tuple[Path, str, Path], *files: str
) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "PRE_COMMIT_HOME": str(hook_repo[2])}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--files", *files],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _configs(repo: Path) -> None:
    configs = repo / "configs"
    configs.mkdir()
    good = GOOD.read_text()
    (configs / "good.yaml").write_text(good)
    # eps 1e-8 is the string '1e-8' to MindFormers' YAML 1.1 reader, on which its optimizer
    # refuses to start (OPT018): wrong in any run
    (configs / "bad.yaml").write_text(good.replace("eps: 1.e-8", "eps: 1e-8"))
    (repo / "ci.yaml").write_text("on: [push]\njobs:\n  a:\n    steps:\n      - run: echo hi\n")
    (repo / "compose.yaml").write_text("services:\n  web:\n    image: nginx\n")


def test_mindformers_hook_fails_on_bad_and_passes_on_good(
    tmp_path: Path, hook_repo: tuple[Path, str, Path]
) -> None:
    repo = consumer(tmp_path / "consumer", hook_repo, "      - id: cfglint-mindformers\n")
    _configs(repo)
    git(repo, "add", "-A")

    ok = pre_commit(repo, hook_repo, "configs/good.yaml", "ci.yaml", "compose.yaml")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout

    bad = pre_commit(repo, hook_repo, "configs/bad.yaml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout and "OPT018" in bad.stdout
    assert "configs/bad.yaml" in bad.stdout


def test_mindformers_hook_with_args(tmp_path: Path, hook_repo: tuple[Path, str, Path]) -> None:
    """``args:`` are placed before the file names; both a flag with a value and a
    selection reach the lint."""
    hooks = (
        "      - id: cfglint-mindformers\n"
        "        args: [--ignore, OPT018, --output-format, concise]\n"
    )
    repo = consumer(tmp_path / "consumer", hook_repo, hooks)
    _configs(repo)
    git(repo, "add", "-A")
    run = pre_commit(repo, hook_repo, "configs/bad.yaml")
    assert run.returncode == 0, run.stdout + run.stderr  # the only problem is ignored
    assert "Passed" in run.stdout


def test_hook_with_the_ruff_style_surface(
    tmp_path: Path, hook_repo: tuple[Path, str, Path]
) -> None:
    """Issue 22 in a consuming repository: options before the file names in any order,
    GitHub annotations, --quiet, a selector in any case, and a suppression comment with a
    reason (in any case) that the hook honours."""
    hooks = (
        "      - id: cfglint-mindformers\n"
        "        args: [--quiet, --output-format, github, --select, opt018]\n"
    )
    repo = consumer(tmp_path / "consumer", hook_repo, hooks)
    _configs(repo)
    git(repo, "add", "-A")
    bad = pre_commit(repo, hook_repo, "configs/bad.yaml")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "::error file=configs/bad.yaml,line=" in bad.stdout and "title=OPT018" in bad.stdout
    assert "Found " not in bad.stdout  # --quiet: no summary
    text = (repo / "configs" / "bad.yaml").read_text()
    (repo / "configs" / "bad.yaml").write_text(
        text.replace(
            "eps: 1e-8", "eps: 1e-8  # CFGLINT: disable=Opt018 -- read as a string on purpose"
        )
    )
    git(repo, "add", "-A")
    ok = pre_commit(repo, hook_repo, "configs/bad.yaml")
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_megatron_hook_lints_training_launches_and_skips_converters(
    tmp_path: Path, hook_repo: tuple[Path, str, Path]
) -> None:
    hooks = "      - id: cfglint-megatron\n        args: [--select, OPT]\n"
    repo = consumer(tmp_path / "consumer", hook_repo, hooks)
    tools = FIXTURES / "inputs" / "config_repo" / "tools"
    shutil.copy(tools / "convert_ckpt.sh", repo / "convert_ckpt.sh")
    shutil.copy(tools / "env_setup.sh", repo / "env_setup.sh")
    git(repo, "add", "-A")
    ok = pre_commit(repo, hook_repo, "convert_ckpt.sh", "env_setup.sh")
    assert ok.returncode == 0, ok.stdout + ok.stderr

    # global batch 6 is not a multiple of micro batch 4 x data parallel 1: wrong in any run
    script = GOOD_MG.read_text().replace("--global-batch-size 4", "--global-batch-size 6")
    (repo / "pretrain.sh").write_text(script)
    git(repo, "add", "-A")
    bad = pre_commit(repo, hook_repo, "pretrain.sh", "convert_ckpt.sh")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "OPT015" in bad.stdout and "pretrain.sh" in bad.stdout


def test_sources_hook_with_args(tmp_path: Path, hook_repo: tuple[Path, str, Path]) -> None:
    hooks = "      - id: cfglint-sources\n        args: [--fail-on, warning]\n"
    repo = consumer(tmp_path / "consumer", hook_repo, hooks)
    src = FIXTURES / "sources" / "plain_decay"
    for f in src.iterdir():
        shutil.copy(f, repo / f.name)
    git(repo, "add", "-A")
    run = pre_commit(repo, hook_repo, "train_plain.py", "utils.py")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "train_plain.py:9" in run.stdout  # AdamW over model.parameters(): decays everything


def test_sources_hook_passes_files_that_do_not_train(
    tmp_path: Path, hook_repo: tuple[Path, str, Path]
) -> None:
    # pre-commit names every changed .py file: a file named so is a folder member (an entry
    # point only when it trains), not an entry point that must seed (issue 17)
    repo = consumer(tmp_path / "consumer", hook_repo, "      - id: cfglint-sources\n")
    (repo / "json_helper.py").write_text(
        "import json\n\n\ndef load(path):\n    with open(path) as fh:\n"
        "        return json.load(fh)\n"
    )
    (repo / "test_small.py").write_text(
        "from json_helper import load\n\n\ndef test_load(tmp_path):\n"
        "    (tmp_path / 'a.json').write_text('1')\n    assert load(tmp_path / 'a.json') == 1\n"
    )
    git(repo, "add", "-A")
    run = pre_commit(repo, hook_repo, "json_helper.py", "test_small.py")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "DET013" not in run.stdout and "SRC002" not in run.stdout


def _pair_repo(tmp: Path, hook_repo: tuple[Path, str, Path]) -> Path:
    repo = consumer(tmp / "consumer", hook_repo, "      - id: cfglint-pairs\n")
    (repo / "configs").mkdir()
    (repo / "scripts").mkdir()
    shutil.copy(GOOD, repo / "configs" / "llama2.yaml")
    shutil.copy(GOOD_MG, repo / "scripts" / "pretrain.sh")
    (repo / "pyproject.toml").write_text(
        "[tool.cfglint]\n"
        'pairs = [{mindformers = "configs/llama2.yaml", megatron = "scripts/pretrain.sh"}]\n'
    )
    (repo / "other.yaml").write_text("services:\n  web:\n    image: nginx\n")
    git(repo, "add", "-A")
    return repo


def test_pair_hook_runs_when_either_file_changes(
    tmp_path: Path, hook_repo: tuple[Path, str, Path]
) -> None:
    repo = _pair_repo(tmp_path, hook_repo)
    ok = pre_commit(repo, hook_repo, "configs/llama2.yaml")
    assert ok.returncode == 0, ok.stdout + ok.stderr

    # only the launch script changes: the pair still runs, and finds the new mismatch
    script = (repo / "scripts" / "pretrain.sh").read_text()
    (repo / "scripts" / "pretrain.sh").write_text(
        script.replace("--adam-beta2 0.95", "--adam-beta2 0.999")
    )
    git(repo, "add", "-A")
    bad = pre_commit(repo, hook_repo, "scripts/pretrain.sh")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "beta2" in bad.stdout

    # a change to a file outside every pair does not run (or fail) the pair
    other = pre_commit(repo, hook_repo, "other.yaml")
    assert other.returncode == 0, other.stdout + other.stderr

    # and the config side alone triggers it too
    bad_cfg = pre_commit(repo, hook_repo, "configs/llama2.yaml")
    assert bad_cfg.returncode == 1, bad_cfg.stdout + bad_cfg.stderr
