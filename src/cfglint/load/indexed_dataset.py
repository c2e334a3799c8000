"""Megatron's indexed dataset (``prefix.idx`` + ``prefix.bin``), read without numpy.

The ``.idx`` file starts with the magic ``MMIDIDX\\0\\0``, a little-endian u64 version, a u8
dtype code, a u64 sequence count and a u64 document count, followed by the sequence
lengths (int32), the sequence byte offsets into ``.bin`` (int64) and the document
boundaries (int64). Both MindSpeed-LLM and MindFormers' BlendedMegatronDatasetDataLoader
read this format.
"""

from __future__ import annotations

import array
import os
import struct
import sys
from dataclasses import dataclass

MAGIC = b"MMIDIDX\x00\x00"
DTYPES = {
    1: ("B", 1),
    2: ("b", 1),
    3: ("h", 2),
    4: ("i", 4),
    5: ("q", 8),
    6: ("d", 8),
    7: ("f", 4),
    8: ("H", 2),
}
MAX_SCAN_TOKENS = 64 * 1024 * 1024


class DatasetError(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class IndexedDataset:
    prefix: str
    typecode: str
    itemsize: int
    sequences: int
    documents: int
    tokens: int

    def describe(self) -> str:
        return (
            f"{self.sequences} sequences, {self.documents - 1} documents, {self.tokens} "
            f"tokens of {self.itemsize}-byte ids"
        )

    def max_token(self, limit: int = MAX_SCAN_TOKENS) -> tuple[int, int]:
        """Largest token id in the first ``limit`` tokens, and how many were scanned."""
        top, seen = 0, 0
        chunk_items = 4 * 1024 * 1024
        with open(self.prefix + ".bin", "rb") as fh:
            while seen < min(limit, self.tokens):
                n = min(chunk_items, min(limit, self.tokens) - seen)
                try:
                    data = fh.read(n * self.itemsize)
                except OSError as exc:
                    raise DatasetError(
                        self.prefix + ".bin", f"cannot read: {exc.strerror}"
                    ) from None
                if not data:
                    break
                arr = array.array(self.typecode)
                arr.frombytes(data[: len(data) - len(data) % self.itemsize])
                if sys.byteorder != "little":
                    arr.byteswap()
                if arr:
                    top = max(top, max(arr))
                seen += len(arr)
        return int(top), seen


def open_indexed(prefix: str) -> IndexedDataset:
    """The dataset ``prefix.idx`` + ``prefix.bin``, its index checked against itself and
    against the data file; a broken pair raises ``DatasetError`` naming the file."""
    idx, bin_ = prefix + ".idx", prefix + ".bin"
    for p in (idx, bin_):
        _check_file(p)
    index = _read_index(idx)
    typecode, itemsize = DTYPES[index.code]
    tokens = sum(index.lengths)
    bin_size = os.path.getsize(bin_)
    if bin_size != tokens * itemsize:
        raise DatasetError(
            bin_,
            f"{bin_size} bytes, but the index describes {tokens} tokens of "
            f"{itemsize} bytes ({tokens * itemsize} bytes)",
        )
    _check_layout(idx, index, itemsize)
    return IndexedDataset(prefix, typecode, itemsize, index.nseq, index.ndoc, tokens)


def _check_file(path: str) -> None:
    """One file of the pair is there and is a regular file (a FIFO or a device would block
    or never end)."""
    from cfglint.load.safeio import check_regular
    from cfglint.model.errors import InputError

    if not os.path.lexists(path):
        raise DatasetError(path, "missing (a Megatron dataset is a .bin/.idx pair)")
    try:
        check_regular(path, what="dataset file")
    except InputError as exc:
        raise DatasetError(path, exc.message) from None


@dataclass
class _Index:
    """What a ``.idx`` file holds (see the module's docstring)."""

    code: int  # the token dtype (DTYPES)
    nseq: int
    ndoc: int
    lengths: array.array[int]
    pointers: array.array[int]
    docs: array.array[int]


def _read_index(idx: str) -> _Index:
    """The index file read, its header checked, and its size checked against the counts
    the header gives before the arrays are read (a corrupt count asks for no memory)."""
    from cfglint.load.safeio import open_regular
    from cfglint.model.errors import InputError

    try:
        fh = open_regular(idx, what="dataset index")
    except InputError as exc:
        raise DatasetError(idx, exc.message) from None
    with fh:
        head = fh.read(len(MAGIC) + 8 + 1 + 8 + 8)
        if len(head) < len(MAGIC) + 25 or not head.startswith(MAGIC):
            raise DatasetError(idx, "not a Megatron index file (bad magic)")
        version, code, nseq, ndoc = struct.unpack_from("<QBQQ", head, len(MAGIC))
        if version != 1:
            raise DatasetError(idx, f"index version {version}, expected 1")
        if code not in DTYPES:
            raise DatasetError(idx, f"unknown token dtype code {code}")
        size = os.path.getsize(idx)
        need = len(head) + nseq * 4 + nseq * 8 + ndoc * 8
        if size < need:
            raise DatasetError(idx, f"truncated: {size} bytes, the header promises {need}")
        arrays = [array.array(t) for t in "iqq"]
        for a, n in zip(arrays, (nseq * 4, nseq * 8, ndoc * 8), strict=True):
            a.frombytes(fh.read(n))
            if sys.byteorder != "little":
                a.byteswap()
    return _Index(code, nseq, ndoc, *arrays)


def _check_layout(idx: str, index: _Index, itemsize: int) -> None:
    """The sequences lie one after the other in the data file, and the document boundaries
    run from 0 to the sequence count without going back."""
    offset = 0
    for i, (ln, ptr) in enumerate(zip(index.lengths, index.pointers, strict=True)):
        if ptr != offset or ln < 0:
            raise DatasetError(idx, f"sequence {i} starts at byte {ptr}, expected {offset}")
        offset += ln * itemsize
    docs, ndoc = index.docs, index.ndoc
    if ndoc and (
        docs[0] != 0
        or docs[-1] != index.nseq
        or any(docs[i] > docs[i + 1] for i in range(ndoc - 1))
    ):
        raise DatasetError(
            idx, "document boundaries are not increasing from 0 to the sequence count"
        )


def write_indexed(prefix: str, docs: list[list[int]], code: int = 8) -> None:
    """Write a small dataset in the same format (used by tests and fixtures)."""
    typecode, _ = DTYPES[code]
    with open(prefix + ".bin", "wb") as fh:
        for d in docs:
            fh.write(array.array(typecode, d).tobytes())
    lengths = array.array("i", [len(d) for d in docs])
    pointers, off = array.array("q"), 0
    for d in docs:
        pointers.append(off)
        off += len(d) * DTYPES[code][1]
    bounds = array.array("q", range(len(docs) + 1))
    with open(prefix + ".idx", "wb") as fh:
        fh.write(MAGIC + struct.pack("<QBQQ", 1, code, len(docs), len(bounds)))
        fh.write(lengths.tobytes() + pointers.tobytes() + bounds.tobytes())
