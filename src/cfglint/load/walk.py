"""Walking the folders a user names: which files are candidates, bounded, with git's
ignore rules and the configured ``exclude`` patterns."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from cfglint.load.extensions import SHELL_EXT, YAML_EXT
from cfglint.load.safeio import TooLarge, is_regular, read_text
from cfglint.model.errors import InputError
from cfglint.model.lazy_re import compile_on_use

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


# A config repository has a few thousand files at most, a training repository (Megatron-LM,
# MindSpeed-LLM) a few thousand folders; `cfglint /` must not walk the disk. Every walk of a
# user's folder (folder lint, --source, lr --data) shares these bounds.
MAX_WALK_DIRS = 20_000
MAX_WALK_FILES = 10_000
# Real trees nest a dozen levels; a 1000-deep folder is a trap (os.walk recursed into it).
MAX_WALK_DEPTH = 40
# A .gitignore is a few KiB; one of 1 GiB was a MemoryError.
MAX_GITIGNORE_BYTES = 1024 * 1024
# Python's re backtracks: each `*` of a pattern multiplies the work of a failed match by the
# length of the name (4 stars: 1.4 s for one 250-character name, 5: 100 s). Patterns with
# more are not applied, with a note.
MAX_PATTERN_STARS = 3

Skip = Callable[[str, str], None]


def _no_skip(path: str, why: str) -> None:
    pass


def bounded_walk(
    top: str,
    *,
    on_skip: Skip = _no_skip,
    on_error: Callable[[OSError], None] | None = None,
    max_depth: int = MAX_WALK_DEPTH,
    max_dirs: int = MAX_WALK_DIRS,
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``os.walk(top)`` top-down and sorted, without recursion (on Python 3.11 os.walk
    recurses: a 1000-deep folder was a RecursionError), never entering symbolic links to
    folders. The caller may prune the yielded folder list in place. Folders more than
    ``max_depth`` levels below ``top`` are not entered and ``on_skip`` names each; after
    ``max_dirs`` folders the walk stops and ``on_skip`` names ``top``."""
    stack: list[tuple[str, int]] = [(top, 0)]
    seen = 0
    while stack:
        path, depth = stack.pop()
        seen += 1
        if seen > max_dirs:
            on_skip(top, f"walk stopped after {max_dirs} folders; the rest is not read")
            return
        try:
            with os.scandir(path) as it:
                entries = list(it)
        except OSError as exc:
            if on_error is not None:
                on_error(exc)
            continue
        dirs: list[str] = []
        files: list[str] = []
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    dirs.append(e.name)
                elif not e.is_dir():  # a link to a folder is neither walked nor a file
                    files.append(e.name)
            except OSError:
                files.append(e.name)
        dirs.sort()
        files.sort()
        yield path, dirs, files
        if dirs and depth >= max_depth:
            on_skip(path, f"holds folders more than {max_depth} levels deep; they are not read")
            continue
        stack.extend((os.path.join(path, d), depth + 1) for d in reversed(dirs))


_STARS = compile_on_use(r"(?<!\\)\*{2,}")


def _collapse_stars(line: str) -> str:
    """git's meaning with fewer stars: a run of stars that is a whole path component is
    ``**``, any other run matches what one ``*`` matches (gitignore(5))."""

    def one(m: re.Match[str]) -> str:
        s, e = m.start(), m.end()
        whole = (s == 0 or line[s - 1] == "/") and (e == len(line) or line[e] == "/")
        return "**" if whole else "*"

    out = _STARS.sub(one, line)
    while "**/**/" in out:  # `**/**/` matches what `**/` matches
        out = out.replace("**/**/", "**/")
    return out


class Ignore:
    """``exclude`` patterns from ``[tool.cfglint]`` and every ``.gitignore`` on the way
    down, both with git's wildmatch semantics (pathspec). A .gitignore is read like any
    input (regular file, size cap); a pattern pathspec refuses or one that could backtrack
    for minutes is left out with a note (``on_skip``)."""

    def __init__(self, patterns: Iterable[str], base: Path, on_skip: Skip = _no_skip) -> None:
        self.base = base
        self.on_skip = on_skip
        self.specs: list[tuple[Path, object]] = []
        spec = self._compile(list(patterns), "[tool.cfglint] exclude")
        if spec is not None:
            self.specs.append((base, spec))

    def _compile(self, lines: list[str], where: str) -> object | None:
        import pathspec

        patterns = []
        for n, raw in enumerate(lines, start=1):
            line = _collapse_stars(raw)
            if line.count("*") > MAX_PATTERN_STARS:
                self.on_skip(
                    where, f"pattern {n} has more than {MAX_PATTERN_STARS} wildcards; not applied"
                )
                continue
            try:
                patterns.extend(pathspec.GitIgnoreSpec.from_lines([line]).patterns)
            except ValueError:  # a lone `\`, a lone `!`: git ignores such lines too
                continue
        return pathspec.GitIgnoreSpec(patterns) if patterns else None

    def add_gitignore(self, folder: Path) -> None:
        gi = folder / ".gitignore"
        if not os.path.lexists(gi):
            return
        try:
            text = read_text(str(gi), max_bytes=MAX_GITIGNORE_BYTES, what=".gitignore")
        except TooLarge:
            self.on_skip(
                str(gi), f"larger than {MAX_GITIGNORE_BYTES} bytes; its patterns are not applied"
            )
            return
        except InputError:
            return  # not a readable text file: git would not apply it either
        spec = self._compile(text.splitlines(), str(gi))
        if spec is not None:
            self.specs.append((folder, spec))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for root, spec in self.specs:
            try:
                rel = path.resolve().relative_to(root.resolve()).as_posix()
            except (ValueError, OSError, RuntimeError):
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


def _tracked_by_git(folder: str) -> Callable[[Path], bool]:
    """Whether a path under ``folder`` is one git tracks (or a folder holding one): git
    never ignores those, whatever a .gitignore says (load/gitindex.py)."""
    from cfglint.load.gitindex import git_root, tracked

    top = git_root(folder)
    paths = tracked(top) if top is not None else frozenset()
    if not paths or top is None:
        return lambda _p: False
    real = Path(top).resolve()

    def kept(path: Path) -> bool:
        try:
            return path.resolve().relative_to(real).as_posix() in paths
        except (ValueError, OSError, RuntimeError):
            return False

    return kept


def walk(folder: str, exclude: list[str], base: Path, on_skip: Skip = _no_skip) -> Iterator[str]:
    """Candidate files under ``folder`` in a stable order. Bounded: the filesystem root is
    refused, a walk past MAX_WALK_DIRS folders or MAX_WALK_FILES candidates stops with one
    error naming the folder, and what is too deep or cannot be applied is named through
    ``on_skip(path, why)``."""
    ignore = Ignore(exclude, base, on_skip)  # the user's own: applies to every file
    gitignore = Ignore([], base, on_skip)  # git's: never to a file git tracks
    root = Path(folder)
    if root.resolve() == Path(os.sep).resolve():
        raise InputError(folder, "is the filesystem root; give the folder of the configs")
    too_many = InputError(
        folder,
        f"holds more than {MAX_WALK_DIRS} folders or {MAX_WALK_FILES} candidate files; "
        "give the folder of the configs",
    )

    def skipped(path: str, why: str) -> None:
        if path == folder and why.startswith("walk stopped"):
            raise too_many
        on_skip(path, why)

    files = 0
    # .gitignore files above the folder (up to the repository root) apply as well
    for parent in reversed(list(root.resolve().parents)):
        if base.resolve() in (parent, *parent.parents):
            gitignore.add_gitignore(parent)
    kept = _tracked_by_git(folder)

    def dropped(path: Path, is_dir: bool) -> bool:
        if ignore.ignored(path, is_dir):
            return True
        return gitignore.ignored(path, is_dir) and not kept(path)

    for dirpath, dirnames, filenames in bounded_walk(folder, on_skip=skipped):
        here = Path(dirpath)
        gitignore.add_gitignore(here)
        dirnames[:] = [
            d for d in dirnames if d not in DEFAULT_EXCLUDE and not dropped(here / d, True)
        ]
        for name in filenames:
            p = here / name
            # regular files only: a FIFO or device named *.yaml would block or never end
            if name.lower().endswith(WALK_EXT) and is_regular(str(p)) and not dropped(p, False):
                files += 1
                if files > MAX_WALK_FILES:
                    raise too_many
                yield os.path.normpath(str(p))
