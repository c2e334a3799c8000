"""The sample count of a MindRecord dataset, read without MindSpore.

A MindRecord shard ``name.mindrecord[N]`` starts with a little-endian u64 header size and
a JSON header whose ``shard_addresses`` name every file of the dataset (mindspore
ccsrc/minddata/mindrecord/meta/shard_header.cc, ValidateHeader / BuildSingleHeader). Each
shard has a SQLite index beside it, ``name.mindrecord[N].db``, with one row per sample in
its ``INDEXES`` table (ccsrc/minddata/mindrecord/io/shard_index_generator.cc,
CreateDatabase). MindSpore's MindDataset given one file reads every shard its header
names; MindFormers given a folder reads every file whose name ends in ``mindrecord`` and
digits, walking sub-folders (mindformers dataset/causal_language_model_dataset.py
``_process_mindrecord_data``).
"""

from __future__ import annotations

import json
import os
import re
import struct
import time
from dataclasses import dataclass
from pathlib import Path

SHARD_NAME = re.compile(r"mindrecord\d*$")
MAX_HEADER = 64 * 1024 * 1024  # MindSpore refuses larger headers too (kMaxHeaderSize)
MAX_FILES = 4096
MAX_SECONDS = 10.0


class MindRecordError(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class MindRecordCount:
    files: list[str]
    samples: int
    how: str  # which files were counted and why, for the user


def is_mindrecord(path: str) -> bool:
    return os.path.isdir(path) or bool(SHARD_NAME.search(os.path.basename(path)))


def count_samples(path: str) -> MindRecordCount:
    if os.path.isdir(path):
        files, skipped = _walk(path)
        if not files:
            raise MindRecordError(path, "no MindRecord file (name ending in 'mindrecord') inside")
        how = f"{len(files)} MindRecord file(s) under the folder, as MindFormers reads a folder"
        how += "".join(f"; {p}: {why}" for p, why in skipped)
    elif os.path.isfile(path):
        files = _group(path)
        how = (
            f"the {len(files)} shard(s) its header names, as MindSpore's MindDataset reads one file"
            if len(files) > 1
            else "one MindRecord file"
        )
    else:
        raise MindRecordError(path, "no such file or folder")
    if len(files) > MAX_FILES:
        raise MindRecordError(path, f"{len(files)} MindRecord files; at most {MAX_FILES} are read")
    deadline = time.monotonic() + MAX_SECONDS
    return MindRecordCount(files, sum(_rows(f, deadline) for f in files), how)


def _walk(path: str) -> tuple[list[str], list[tuple[str, str]]]:
    """The shard files under a folder, walked within the bounds every walk keeps
    (load/walk.py), and the folders too deep to read. The filesystem root, or a folder with
    more than MAX_FILES shards or MAX_WALK_DIRS folders, is refused: `lr --data /` walked the
    whole disk and read other jobs' files."""
    from cfglint.load.walk import MAX_WALK_DIRS, bounded_walk

    if os.path.realpath(path) == os.path.realpath(os.sep):
        raise MindRecordError(path, "is the filesystem root; give the dataset's folder")
    skipped: list[tuple[str, str]] = []

    def on_skip(where: str, why: str) -> None:
        if where == path and why.startswith("walk stopped"):
            raise MindRecordError(
                path, f"holds more than {MAX_WALK_DIRS} folders; give the dataset's folder"
            )
        skipped.append((where, why))

    files: list[str] = []
    for root, _, names in bounded_walk(path, on_skip=on_skip):
        files.extend(os.path.join(root, f) for f in names if SHARD_NAME.search(f))
        if len(files) > MAX_FILES:
            raise MindRecordError(path, f"more than {MAX_FILES} MindRecord files; give one dataset")
    return sorted(files), skipped


def _group(path: str) -> list[str]:
    from cfglint.load.safeio import open_regular
    from cfglint.model.errors import InputError

    try:
        with open_regular(path, what="MindRecord file") as fh:
            head = fh.read(8)
            if len(head) < 8:
                raise MindRecordError(path, "too short to be a MindRecord file")
            (size,) = struct.unpack("<Q", head)
            if size > MAX_HEADER:
                raise MindRecordError(path, f"header of {size} bytes: not a MindRecord file")
            header = json.loads(fh.read(size))
    except InputError as exc:
        raise MindRecordError(path, exc.message) from None
    except OSError as exc:
        raise MindRecordError(path, f"cannot read: {exc.strerror}") from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise MindRecordError(path, "not a MindRecord file (its header is not JSON)") from None
    names = header.get("shard_addresses") if isinstance(header, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or not names:
        raise MindRecordError(path, "the MindRecord header names no shard files")
    folder = Path(path).parent
    # the header stores bare file names; the shards live beside the one given
    return [str(folder / os.path.basename(n)) for n in names]


def _rows(shard: str, deadline: float) -> int:
    import sqlite3
    from urllib.request import pathname2url

    from cfglint.load.safeio import check_regular
    from cfglint.model.errors import InputError

    db = shard + ".db"
    if not os.path.isfile(db):
        raise MindRecordError(db, "missing: every MindRecord shard has a .db index beside it")
    try:
        check_regular(db, what="MindRecord index")  # a FIFO named *.db would block sqlite
    except InputError as exc:
        raise MindRecordError(db, exc.message) from None
    try:
        # read-only and immutable: nothing is written, no journal is looked for
        conn = sqlite3.connect(
            f"file:{pathname2url(os.path.abspath(db))}?mode=ro&immutable=1", uri=True
        )
    except sqlite3.Error as exc:
        raise MindRecordError(db, f"cannot open the index: {exc}") from None
    try:
        conn.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
        (n,) = conn.execute("SELECT COUNT(*) FROM INDEXES").fetchone()
    except sqlite3.Error as exc:
        why = "took too long" if time.monotonic() > deadline else str(exc)
        raise MindRecordError(db, f"not a MindRecord index ({why})") from None
    finally:
        conn.close()
    return int(n)


def write_mindrecord(path: str, rows: int, shards: int = 1) -> list[str]:
    """A minimal dataset in this layout (header + index only; used by tests)."""
    import sqlite3

    names = [
        f"{os.path.basename(path)}{i}" if shards > 1 else os.path.basename(path)
        for i in range(shards)
    ]
    files = [str(Path(path).parent / n) for n in names]
    per = [rows // shards + (1 if i < rows % shards else 0) for i in range(shards)]
    for f, n in zip(files, per, strict=True):
        body = json.dumps(
            {"shard_addresses": names, "header_size": 0, "page": [], "version": "3.0"}
        ).encode()
        Path(f).write_bytes(struct.pack("<Q", len(body)) + body)
        conn = sqlite3.connect(f + ".db")
        conn.execute(
            "CREATE TABLE INDEXES(ROW_ID INT NOT NULL, PAGE_ID_RAW INT NOT NULL, "
            "PRIMARY KEY(ROW_ID))"
        )
        conn.executemany("INSERT INTO INDEXES VALUES (?, 0)", [(i,) for i in range(n)])
        conn.commit()
        conn.close()
    return files
