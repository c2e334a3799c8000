"""Walking the folders a user names: which files are candidates, bounded, with git's
ignore rules and the configured ``exclude`` patterns."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from cfglint.load.extensions import SHELL_EXT, YAML_EXT
from cfglint.model.errors import InputError

# Folders a walk never enters (ruff's default excludes, plus cfglint's own cache).
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)
# Files a directory walk considers; Python sources are scanned only through --source.
WALK_EXT = (*YAML_EXT, *SHELL_EXT)


class Ignore:
    """``exclude`` patterns from ``[tool.cfglint]`` and every ``.gitignore`` on the way
    down, both with git's wildmatch semantics (pathspec)."""

    def __init__(self, patterns: Iterable[str], base: Path) -> None:
        import pathspec

        self._pathspec = pathspec
        self.base = base
        self.specs: list[tuple[Path, object]] = []
        pats = list(patterns)
        if pats:
            self.specs.append((base, pathspec.GitIgnoreSpec.from_lines(pats)))

    def add_gitignore(self, folder: Path) -> None:
        gi = folder / ".gitignore"
        if gi.is_file():
            try:
                lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                return
            self.specs.append((folder, self._pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for root, spec in self.specs:
            try:
                rel = path.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                continue
            if spec.match_file(rel + "/" if is_dir else rel):  # type: ignore[attr-defined]
                return True
        return False


def excluded(path: str, patterns: list[str], base: Path) -> bool:
    """An explicitly named file dropped by ``exclude`` (for pre-commit's file lists)."""
    if not patterns:
        return False
    ig = Ignore(patterns, base)
    p = Path(path)
    return ig.ignored(p, False) or any(ig.ignored(parent, True) for parent in p.parents)


# A config repository has a few thousand files at most; `cfglint /` must not walk the disk.
MAX_WALK_DIRS = 20_000
MAX_WALK_FILES = 10_000


def walk(folder: str, exclude: list[str], base: Path) -> Iterator[str]:
    """Candidate files under ``folder`` in a stable order (bounded: the filesystem root is
    refused, and a walk past MAX_WALK_DIRS folders or MAX_WALK_FILES candidates stops with
    one error naming the folder)."""
    ignore = Ignore(exclude, base)
    root = Path(folder)
    if root.resolve() == Path(os.sep).resolve():
        raise InputError(folder, "is the filesystem root; give the folder of the configs")
    files = 0
    # .gitignore files above the folder (up to the repository root) apply as well
    for parent in reversed(list(root.resolve().parents)):
        if base.resolve() in (parent, *parent.parents):
            ignore.add_gitignore(parent)
    for folders, (dirpath, dirnames, filenames) in enumerate(os.walk(root), start=1):
        if folders > MAX_WALK_DIRS or files > MAX_WALK_FILES:
            raise InputError(
                folder,
                f"holds more than {MAX_WALK_DIRS} folders or {MAX_WALK_FILES} candidate files; "
                "give the folder of the configs",
            )
        here = Path(dirpath)
        ignore.add_gitignore(here)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in DEFAULT_EXCLUDE
            and not ignore.ignored(here / d, True)
            and not (here / d).is_symlink()
        )
        for name in sorted(filenames):
            p = here / name
            # regular files only: a FIFO or device named *.yaml would block or never end
            if (
                name.lower().endswith(WALK_EXT)
                and p.is_file()
                and stat.S_ISREG(p.stat().st_mode)
                and not ignore.ignored(p, False)
            ):
                files += 1
                yield os.path.normpath(str(p))
