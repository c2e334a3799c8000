"""The paths git tracks in a repository, read from its index file (never by running git).

git never ignores a tracked file: a ``.gitignore`` pattern only hides untracked ones
(gitignore(5): "files already tracked by Git are not affected"). A folder walk that honours
``.gitignore`` therefore needs the index to keep tracked files a pattern matches
(Megatron-LM's ``.gitignore`` has ``slurm*``, and its examples/post_training/modelopt/slurm/
scripts are tracked). The index format is git's Documentation/gitformat-index.txt:
versions 2-4, SHA-1 object names.
"""

from __future__ import annotations

import os
import struct
from functools import lru_cache

from cfglint.load.safeio import read_bytes, read_text
from cfglint.model.errors import InputError

# an index lists every tracked path; 64 MiB holds ~500,000 entries (the Linux kernel has 90,000)
MAX_INDEX_BYTES = 64 * 1024 * 1024
_ENTRY_FIXED = 62  # ctime, mtime, dev, ino, mode, uid, gid, size (40) + SHA-1 (20) + flags (2)
_EXTENDED = 0x4000


def git_root(folder: str) -> str | None:
    """The working tree holding ``folder``: the nearest folder at or above it with ``.git``."""
    here = os.path.abspath(folder)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def tracked(root: str) -> frozenset[str]:
    """Every path the index of the working tree ``root`` tracks (relative, ``/``-separated),
    with each folder that holds one; empty when there is no readable index."""
    index = _index_path(root)
    try:
        st = os.stat(index) if index else None
    except OSError:
        st = None
    if index is None or st is None:
        return frozenset()
    return _tracked(index, st.st_mtime_ns, st.st_size)


def _index_path(root: str) -> str | None:
    """``.git/index``, or the index of the git folder a ``.git`` file names (a worktree,
    a submodule: ``gitdir: ../.git/worktrees/x``)."""
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return os.path.join(dot, "index")
    try:
        text = read_text(dot, max_bytes=4096, what=".git file")
    except InputError:
        return None
    line = text.strip()
    if not line.startswith("gitdir:"):
        return None
    gitdir = line.partition(":")[2].strip()
    return os.path.join(os.path.normpath(os.path.join(root, gitdir)), "index")


@lru_cache(maxsize=4)
def _tracked(index: str, _mtime: int, _size: int) -> frozenset[str]:
    try:
        data = read_bytes(index, max_bytes=MAX_INDEX_BYTES, what="git index")
        paths = parse_index(data)
    except (InputError, ValueError, struct.error, IndexError):
        return frozenset()  # not an index we can read: nothing is known to be tracked
    out = set(paths)
    for p in paths:
        parts = p.split("/")[:-1]
        out.update("/".join(parts[: k + 1]) for k in range(len(parts)))
    return frozenset(out)


def parse_index(data: bytes) -> list[str]:
    """The entry paths of a git index (``DIRC``, version 2, 3 or 4); ValueError otherwise."""
    if data[:4] != b"DIRC":
        raise ValueError("not a git index")
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4):
        raise ValueError(f"git index version {version}")
    pos, prev, out = 12, b"", []
    for _ in range(count):
        (flags,) = struct.unpack(">H", data[pos + 60 : pos + 62])
        p = pos + _ENTRY_FIXED + (2 if version >= 3 and flags & _EXTENDED else 0)
        if version == 4:
            strip, p = _varint(data, p)
            end = data.index(b"\0", p)
            name = prev[: len(prev) - strip] + data[p:end]
            pos = end + 1
        else:
            end = data.index(b"\0", p)
            name = data[p:end]
            pos += (p - pos + len(name) + 8) & ~7  # NUL-padded to a multiple of 8
        prev = name
        out.append(name.decode("utf-8", "surrogateescape"))
    return out


def _varint(data: bytes, p: int) -> tuple[int, int]:
    """git's offset varint (varint.c): each continuation adds one before shifting."""
    c = data[p]
    p += 1
    value = c & 0x7F
    while c & 0x80:
        c = data[p]
        p += 1
        value = ((value + 1) << 7) | (c & 0x7F)
    return value, p
