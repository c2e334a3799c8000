"""Per-step series from TensorBoard event files, read with tensorboard's own event reader.

Scalar tags each framework writes: Megatron-LM (megatron/training/training.py:3380-3428
@d98e8a64) ``lm loss``, ``learning-rate``, ``loss-scale``, ``grad-norm``, ``iteration-time``
(seconds), ``throughput``; MindFormers through tensorboardX (mindformers/core/callback/
callback.py:495-535@fd4deebc) ``loss``, ``learning-rate``, ``loss-scale``, ``grad-norm``,
``iteration-time`` (milliseconds), ``model-flops-throughput-per-npu``. The ``... vs samples``
copies are skipped. tensorboard is an optional extra, imported only here.

The records are read here, not by tensorboard's loader (issue 32: it trusted a record's
length, 3.1 GB resident for a record claiming 1 GiB, and checked CRCs in pure Python,
85 us an event). The TFRecord framing (tensorflow/core/lib/io/record_writer.cc) is
``uint64 length | uint32 masked crc32c(length) | data | uint32 masked crc32c(data)``:

* a length is checked against its own CRC and against the bytes left in the file before
  anything is read, and a record is read only up to MAX_RECORD bytes;
* CRCs are computed by the compiled ``crc32c`` package (hardware CRC32C where the CPU has
  it); the Event protos are parsed by protobuf's compiled parser;
* a record with a bad checksum or an unreadable Event is skipped, and a bad length makes
  the reader look for the next record that checks; either way the run's notes say how
  many records were skipped and how many bytes could not be read, instead of the run
  ending early in silence (a corrupt record in the middle once dropped 96 of 100 steps).
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from cfglint import install_hint
from cfglint.load.losslog import MAX_STEP, SERIES, RunLog, bounded
from cfglint.load.safeio import open_regular
from cfglint.model.errors import InputError

INSTALL = install_hint("logs")
MAX_EVENTS = 20_000_000
# An event with a few scalars is ~100 bytes; images and histograms reach a few MiB. A longer
# record is skipped without being read.
MAX_RECORD = 64 * 1024 * 1024
_HEAD = struct.Struct("<QI")
_CRC = struct.Struct("<I")
# an Event's first field on the wire is wall_time (field 1, a double): tag byte 0x09
_EVENT_START = b"\x09"
TAGS: dict[str, dict[str, str]] = {
    "megatron": {
        "lm loss": "loss",
        "learning-rate": "lr",
        "loss-scale": "loss_scale",
        "grad-norm": "grad_norm",
        "throughput": "throughput",
    },
    "mindformers": {
        "loss": "loss",
        "learning-rate": "lr",
        "loss-scale": "loss_scale",
        "grad-norm": "grad_norm",
        "model-flops-throughput-per-npu": "throughput",
    },
}
# iteration-time: Megatron writes seconds, MindFormers milliseconds
TIME_SCALE = {"megatron": 1000.0, "mindformers": 1.0}


def is_event_path(path: str) -> bool:
    """An event file, or a folder holding some (TensorBoard's run folder)."""
    if os.path.isdir(path):
        return bool(_event_files(path))
    return "tfevents" in os.path.basename(path)


def _event_files(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if "tfevents" in n]


def masked_crc(crc: int) -> int:
    """TFRecord's masked CRC (tensorflow/core/lib/hash/crc32c.h Mask)."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


@dataclass
class _Damage:
    """What could not be read in one event file."""

    skipped: int = 0  # records whose data failed its checksum or did not parse
    lost_bytes: int = 0  # bytes between a bad length and the next record that checks
    too_large: int = 0  # records over MAX_RECORD, skipped unread


def _head_ok(buf: mmap.mmap | bytes, at: int, size: int, crc: object) -> int | None:
    """The data length of a record header at ``at`` if its CRC checks and the record fits
    in the file, else None."""
    if at + _HEAD.size > size:
        return None
    length, want = _HEAD.unpack_from(buf, at)
    if masked_crc(crc(buf[at : at + 8])) != want:  # type: ignore[operator]
        return None
    if length > size - at - _HEAD.size - _CRC.size:
        return None
    return int(length)


def _resync(buf: mmap.mmap, at: int, size: int, crc: object) -> int:
    """The offset of the next record that checks after a bad header at ``at`` (an Event
    record's data starts with the wall-time tag), or ``size``."""
    pos = at + 1
    while pos < size:
        hit = buf.find(_EVENT_START, pos + _HEAD.size)
        if hit < 0:
            return size
        start = hit - _HEAD.size
        if _head_ok(buf, start, size, crc) is not None:
            return start
        pos = start + 1
    return size


def _records(buf: mmap.mmap, size: int, damage: _Damage) -> Iterator[bytes]:
    """The data of every record whose framing and checksums hold, in file order."""
    import crc32c

    crc = crc32c.crc32c
    at = 0
    while at < size:
        length = _head_ok(buf, at, size, crc)
        if length is None:
            if size - at < _HEAD.size + _CRC.size:
                damage.lost_bytes += size - at  # a torn last record (a run still writing)
                return
            nxt = _resync(buf, at, size, crc)
            damage.lost_bytes += nxt - at
            at = nxt
            continue
        start = at + _HEAD.size
        at = start + length + _CRC.size
        if length > MAX_RECORD:
            damage.too_large += 1
            continue
        data = buf[start : start + length]
        (want,) = _CRC.unpack_from(buf, start + length)
        if masked_crc(crc(data)) != want:
            damage.skipped += 1
            continue
        yield data


def _notes(f: str, damage: _Damage) -> list[str]:
    out = []
    name = os.path.basename(f)
    if damage.skipped:
        out.append(
            f"{name}: {damage.skipped} corrupt TensorBoard records skipped (bad checksum or "
            "unreadable event)"
        )
    if damage.lost_bytes:
        out.append(
            f"{name}: {damage.lost_bytes} bytes of TensorBoard records could not be framed "
            "(a bad record length) and were dropped; reading went on at the next record"
        )
    if damage.too_large:
        out.append(
            f"{name}: {damage.too_large} records over {MAX_RECORD // 2**20} MiB skipped unread"
        )
    return out


def _scalar(v: object, tensor_util: object) -> float | None:
    if v.HasField("simple_value"):  # type: ignore[attr-defined]
        return float(v.simple_value)  # type: ignore[attr-defined]
    try:
        arr = np.asarray(tensor_util.make_ndarray(v.tensor))  # type: ignore[attr-defined]
        return float(arr.reshape(-1)[0])
    except (ValueError, TypeError, IndexError, OverflowError):
        return None


def _read_file(
    f: str, framework: str, rows: dict[str, dict[int, float]], seen: int
) -> tuple[int, list[str]]:
    """Every scalar of one event file into ``rows``; (events seen so far, notes)."""
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto import event_pb2
    from tensorboard.util import tensor_util

    tags = TAGS[framework]
    damage = _Damage()
    out_of_range = 0
    with open_regular(f, what="TensorBoard event file") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            return seen, []
        try:
            buf = mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise InputError(f, f"cannot read TensorBoard event file: {exc}") from None
    with buf:
        for data in _records(buf, size, damage):
            seen += 1
            if seen > MAX_EVENTS:
                break
            try:
                event = event_pb2.Event.FromString(data)
            except (DecodeError, RuntimeError, ValueError):
                damage.skipped += 1
                continue
            step = int(event.step)
            for v in event.summary.value:
                name = tags.get(v.tag) or ("step_time_ms" if v.tag == "iteration-time" else "")
                if not name:
                    continue
                if not 0 <= step <= MAX_STEP:
                    out_of_range += 1
                    continue
                x = _scalar(v, tensor_util)
                if x is None:
                    damage.skipped += 1
                    continue
                if name == "step_time_ms":
                    x *= TIME_SCALE[framework]
                rows[name][step] = x
    notes = _notes(f, damage)
    if out_of_range:
        notes.append(
            f"{os.path.basename(f)}: {out_of_range} values at steps below 0 or beyond "
            f"{MAX_STEP:.0e} left out"
        )
    return seen, notes


def read_events(path: str, framework: str) -> RunLog:
    try:
        import crc32c  # noqa: F401 - the records' checksums, in compiled code
        from tensorboard.compat.proto import event_pb2  # noqa: F401
    except ImportError:
        raise InputError(
            path, f"reading TensorBoard event files needs tensorboard and crc32c: {INSTALL}"
        ) from None
    files = _event_files(path) if os.path.isdir(path) else [path]
    if not files:
        raise InputError(path, "no TensorBoard event file (events.out.tfevents.*) in this folder")
    rows: dict[str, dict[int, float]] = {k: {} for k in SERIES}
    seen = 0
    notes: list[str] = []
    for f in files:  # in name order: a resumed run's later file wins
        seen, more = _read_file(f, framework, rows, seen)
        notes += more
    if not rows["loss"]:
        want = " or ".join(k for k, v in TAGS[framework].items() if v == "loss")
        raise InputError(path, f"no '{want}' scalars in the TensorBoard events")
    steps = np.array(sorted(rows["loss"]), dtype=np.int64)
    series = {}
    wild = 0
    for k, d in rows.items():
        if d:
            col, n = bounded(np.array([d.get(int(s), np.nan) for s in steps], dtype=np.float64))
            series[k], wild = col, wild + n
    return RunLog(
        path,
        framework,
        source="TensorBoard events",
        steps=steps,
        series=series,
        out_of_range=wild,
        read_notes=notes,
    )
