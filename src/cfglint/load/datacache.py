"""The on-disk cache (our parsed YAML data, the validated rules, source-scan summaries).

Parsing a few hundred KiB of YAML costs ~100 ms, more than the whole lint budget, so parsed
forms are cached as JSON under the user's cache directory. The cache folder is writable by
whoever runs cfglint, so its files are input like any other (issue 20: a planted ``[]``
silenced every rule, a FIFO hung, a link to /dev/zero ran out of memory):

* every entry is an envelope naming its part, the cfglint version and the key (a hash of
  the content it was derived from); an entry whose envelope does not match what the reader
  derives now is a miss;
* entries are opened as regular files only and size-capped (load/safeio.py), and parsed by
  pydantic (its JSON parser bounds nesting), so a malformed entry is a miss, never an error
  and never a result;
* writes are atomic, and temporary files a killed or failed run left behind are pruned;
* ``use_cache(False)`` (``--no-cache``) makes every part read and write nothing.
"""

# Annotations are evaluated here, not kept as strings (no `from __future__ import
# annotations`): pydantic and typing.NamedTuple turn each string field annotation into a
# typing.ForwardRef, which Python 3.11 compiles one by one at import
# (tests/model/test_model_schemas.py).
import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from cfglint import __version__
from cfglint.load.datayaml import (
    KEYED,
    READY,
    parse_data_yaml,
    read_keyed_table,
    ready_name,
)
from cfglint.load.outputs import TMP_SUFFIX, replace_file
from cfglint.load.safeio import open_regular, read_bytes
from cfglint.model.errors import InputError
from cfglint.model.lazy_re import compile_on_use

# the default tables and reference data shipped inside the package (src/cfglint/data/)
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
# the cache's parts, one folder each under cache_dir()
PARTS = ("data", "rules", "scan")
FORMAT = 1
# One entry is a parsed data table, the rule set or one file's scan summary: a few KiB to a
# few MiB. Anything larger is not ours.
MAX_ENTRY_BYTES = 64 * 1024 * 1024
# a temporary file older than this belongs to a run that died (a live write takes
# milliseconds)
STALE_TMP_SECONDS = 3600.0

# The names cfglint gives entries: ``<table>-<32 hex>.json`` (data), ``rules-<32 hex>.json``,
# ``<2 hex>/<64 hex>.json`` (scan), and its temporary files ``.<entry>.<random>.cfglint-tmp``.
_ENTRY_NAME = compile_on_use(r"[A-Za-z0-9_.-]{0,128}[0-9a-f]{32,64}\.json")
_TMP_NAME = compile_on_use(r"\..{1,200}" + re.escape(TMP_SUFFIX))
# how an entry cfglint wrote begins (write_entry): a file that does not is not ours
_HEAD = '{{"format":{format},"part":"{part}",'

_enabled = True

T = TypeVar("T")


def use_cache(on: bool) -> None:
    """Turn every part of the cache on or off for this run (``--no-cache``)."""
    global _enabled
    _enabled = on


def cache_enabled() -> bool:
    return _enabled


def cache_dir() -> Path:
    env = os.environ.get("CFGLINT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cfglint"


# the fields of a cache file's envelope (load/cache_envelope.py's Envelope), for reading one
# without creating that model's class
ENVELOPE_FIELDS = frozenset({"format", "part", "tool", "key", "payload"})


def content_key(*chunks: bytes) -> str:
    """The hash an entry is tied to: cfglint's version and the bytes it was derived from."""
    h = hashlib.sha256(f"cfglint/{__version__}\0".encode())
    for c in chunks:
        h.update(len(c).to_bytes(8, "little"))
        h.update(c)
    return h.hexdigest()


def read_entry(path: Path, part: str, key: str, parse: Callable[[Any], T]) -> T | None:
    """The payload of the entry at ``path`` if it is a regular file of at most
    MAX_ENTRY_BYTES holding an envelope for ``part`` and ``key`` written by this cfglint
    version, and ``parse`` (a pydantic validation) accepts it; else None (a miss)."""
    if not _enabled:
        return None
    try:
        # cfglint writes regular files only: a link in the cache was planted
        raw = read_bytes(str(path), max_bytes=MAX_ENTRY_BYTES, what="cache entry", follow=False)
        env = json.loads(raw)
    except (InputError, ValueError, RecursionError):
        return None
    if not _is_envelope(env, part, key):
        return None
    try:
        return parse(env["payload"])
    except (ValidationError, ValueError, TypeError, KeyError, RecursionError):
        return None


def _is_envelope(env: Any, part: str, key: str) -> bool:
    """Whether ``env`` is what Envelope's strict validation accepts, written by this cfglint
    for ``part`` and ``key``. Checked in plain code: building Envelope's validator costs
    more than a lint's whole cache reading (a settings table, see bench/)."""
    return (
        isinstance(env, dict)
        and env.keys() == ENVELOPE_FIELDS
        and type(env["format"]) is int
        and env["format"] == FORMAT
        and all(type(env[k]) is str for k in ("part", "tool", "key"))
        and (env["part"], env["tool"], env["key"]) == (part, __version__, key)
    )


def write_entry(path: Path, part: str, key: str, payload_json: str, *, prune: bool = True) -> bool:
    """Write an entry atomically; False when the cache cannot be written (that only costs
    speed on the next run). ``prune``: also remove stale temporary files from the entry's
    folder (writes are rare, on a miss; the scan part prunes once per scan instead)."""
    if not _enabled:
        return False
    from cfglint.load.cache_envelope import Envelope

    if prune:
        prune_temp(path.parent, depth=0)
    head = Envelope.model_construct(format=FORMAT, part=part, tool=__version__, key=key)
    text = head.model_dump_json(exclude={"payload"})[:-1] + f',"payload":{payload_json}}}'
    if os.path.lexists(path) and not is_entry(path, part):
        return False  # not ours (a project folder given as the cache): never replaced
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(str(path), text.encode("utf-8"))
    except (OSError, ValueError):
        return False
    return True


def load_data(path: str | Path, *, keyed: bool = False) -> Any:
    """Plain data of one of *our* YAML files (trusted, but still parsed safely). ``keyed``:
    its mappings of records may be :class:`~cfglint.load.datayaml.Records` (decoded a
    record at a time), for a reader that asks them by key only."""
    import json

    raw = Path(path).read_bytes()
    name = ready_name(raw)  # summed once: ~3.5 instructions a byte
    if keyed:
        found = _keyed(name)
        if found is not None:
            return found
    ready = DATA_DIR / READY / f"{name}.json"
    if ready.is_file():
        # built with the package (hatch_build.py): part of the installation, like the YAML;
        # no cache is read or written for it
        return json.loads(ready.read_bytes())
    key = content_key(raw)
    cached = cache_dir() / "data" / f"{Path(path).stem}-{key[:32]}.json"
    hit = read_entry(cached, "data", key, lambda payload: payload)
    if hit is not None:
        return hit
    data = parse_data_yaml(raw, str(path))
    write_entry(cached, "data", key, json.dumps(data))
    return data


def _keyed(name: str) -> Any:
    """The keyed table an install ships for the bytes of ready name ``name``
    (hatch_build.py), or None: there is none, or it was damaged after the build (the table
    is then read as before)."""
    ready = DATA_DIR / READY / f"{KEYED}{name}.json"
    try:
        return read_keyed_table(ready.read_bytes()) if ready.is_file() else None
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


def prune_temp(folder: Path, *, older_than: float = STALE_TMP_SECONDS, depth: int = 1) -> int:
    """Remove the temporary files a killed or failed writer left in ``folder`` (and its
    sub-folders with ``depth`` 1, as the scan part shards); returns how many went."""
    now = time.time()
    removed = 0
    for d in (folder, *(_subfolders(folder) if depth else ())):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            if not _TMP_NAME.fullmatch(name):
                continue
            p = d / name
            try:
                if now - p.lstat().st_mtime >= older_than:
                    p.unlink()
                    removed += 1
            except OSError:
                continue
    return removed


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []


def is_entry(path: Path, part: str) -> bool:
    """Whether cfglint can prove it wrote ``path`` for ``part``: a regular file (not a link)
    with an entry's name whose first bytes are an envelope for ``part``, or a temporary file
    of its writer. Only such files are counted, pruned or removed: ``CFGLINT_CACHE_DIR``
    may point at a folder holding anything (issue 32: ``cache clear`` with it set to a
    project deleted the project's ``data/``, ``rules/`` and ``scan/``)."""
    name = path.name
    if _TMP_NAME.fullmatch(name):
        return path.is_file() and not path.is_symlink()
    if not _ENTRY_NAME.fullmatch(name):
        return False
    head = _HEAD.format(format=FORMAT, part=part).encode()
    try:
        with open_regular(str(path), what="cache entry", follow=False) as fh:
            return fh.read(len(head)) == head
    except (InputError, OSError):
        return False


def _part_files(folder: Path, part: str) -> list[tuple[str, int]]:
    """(path, bytes) of every file cfglint wrote in one part of the cache, links not
    followed and nothing else counted."""
    out = []
    for d in (folder, *_subfolders(folder)):
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_file(follow_symlinks=False) and is_entry(Path(e.path), part):
                    out.append((e.path, e.stat(follow_symlinks=False).st_size))
            except OSError:
                continue
    return out


def clear_part(folder: Path) -> tuple[int, int]:
    """Remove every file cfglint wrote in one part (entries and temporary files):
    (files, bytes). Anything else in the folder stays."""
    n = freed = 0
    for path, size in _part_files(folder, folder.name):
        try:
            os.unlink(path)
        except OSError:
            continue
        n, freed = n + 1, freed + size
    return n, freed


def part_usage(folder: Path) -> tuple[int, int]:
    """(files, bytes) of one part of the cache."""
    files = _part_files(folder, folder.name)
    return len(files), sum(size for _, size in files)
