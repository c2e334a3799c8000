"""git never ignores a tracked file: the folder walk keeps those a .gitignore matches."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cfglint.load.gitindex import parse_index, tracked
from cfglint.load.walk import walk

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _launch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/bash\ntorchrun pretrain_gpt.py --num-layers 2\n", encoding="utf-8")


@needs_git
@pytest.mark.parametrize("version", ["2", "4"])
def test_tracked_file_under_an_ignored_pattern_is_walked(tmp_path: Path, version: str) -> None:
    # flagos-ai/Megatron-LM-FL @ 175ae90e (as Megatron-LM): .gitignore:7 is `slurm*`, and
    # examples/post_training/modelopt/slurm/sbatch.sh is tracked; issue 28 saw such files
    # dropped silently. An untracked file there stays ignored, as git ignores it.
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "config", "index.version", version)
    (root / ".gitignore").write_text("slurm*\n", encoding="utf-8")
    slurm = root / "examples" / "post_training" / "modelopt" / "slurm"
    _launch(slurm / "sbatch.sh")
    _git(root, "add", "-f", ".gitignore", "examples/post_training/modelopt/slurm/sbatch.sh")
    _launch(slurm / "local_copy.sh")  # untracked
    _launch(root / "examples" / "run.sh")
    got = sorted(Path(p).name for p in walk(str(root), [], root))
    assert got == ["run.sh", "sbatch.sh"]
    # the user's own exclude still applies to tracked files
    got = sorted(Path(p).name for p in walk(str(root), ["examples/post_training/"], root))
    assert got == ["run.sh"]
    assert "examples/post_training/modelopt/slurm" in tracked(str(root))


def test_unreadable_index_tracks_nothing(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "index").write_bytes(b"DIRC\x00\x00\x00\x09garbage")
    assert tracked(str(tmp_path)) == frozenset()
    with pytest.raises(ValueError):
        parse_index(b"NOPE")
