"""Issue 32: TensorBoard event files are read by our own framing reader (load/tbevents.py):
a record's length is checked before it is read, checksums are computed in compiled code,
and a corrupt record in the middle is skipped and said, never the silent end of the run."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

pytest.importorskip("tensorboard")
pytest.importorskip("crc32c")

from cfglint.load.tbevents import masked_crc, read_events


def _record(data: bytes) -> bytes:
    import crc32c

    head = struct.pack("<Q", len(data))
    return (
        head
        + struct.pack("<I", masked_crc(crc32c.crc32c(head)))
        + data
        + struct.pack("<I", masked_crc(crc32c.crc32c(data)))
    )


def _event(step: int, loss: float) -> bytes:
    from tensorboard.compat.proto import event_pb2, summary_pb2

    value = summary_pb2.Summary.Value(tag="lm loss", simple_value=loss)
    return event_pb2.Event(
        wall_time=1.0, step=step, summary=summary_pb2.Summary(value=[value])
    ).SerializeToString()


def _file(tmp_path: Path, records: list[bytes]) -> str:
    from tensorboard.compat.proto import event_pb2

    first = event_pb2.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString()
    path = tmp_path / "events.out.tfevents.1.host"
    path.write_bytes(_record(first) + b"".join(records))
    return str(path)


def _good(steps: range) -> list[bytes]:
    return [_record(_event(s, 3.0 - s / 1000)) for s in steps]


def test_a_record_written_by_tensorboard_reads_the_same(tmp_path: Path) -> None:
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(tmp_path))
    for step in range(1, 6):
        v = summary_pb2.Summary.Value(tag="lm loss", simple_value=float(step))
        w.add_event(event_pb2.Event(step=step, summary=summary_pb2.Summary(value=[v])))
    w.close()
    log = read_events(str(tmp_path), "megatron")
    assert log.steps.tolist() == [1, 2, 3, 4, 5] and log.read_notes == []


def test_a_record_claiming_a_gibibyte_is_not_read(tmp_path: Path) -> None:
    import crc32c

    head = struct.pack("<Q", 2**30)
    liar = head + struct.pack("<I", masked_crc(crc32c.crc32c(head))) + b"\x09" * 64
    path = _file(tmp_path, [*_good(range(1, 51)), liar, *_good(range(51, 101))])
    log = read_events(path, "megatron")
    assert log.steps.tolist() == list(range(1, 101))
    assert any("could not be framed" in n for n in log.read_notes), log.read_notes


def test_a_corrupt_record_in_the_middle_is_skipped_and_said(tmp_path: Path) -> None:
    records = _good(range(1, 101))
    bad = bytearray(records[4])
    bad[20] ^= 0xFF  # inside the data: its checksum fails
    records[4] = bytes(bad)
    cut = bytearray(records[50])
    cut[3] ^= 0x01  # inside the length: the header's checksum fails
    records[50] = bytes(cut)
    log = read_events(_file(tmp_path, records), "megatron")
    assert log.steps.size == 98, log.steps.size
    assert 5 not in log.steps and 51 not in log.steps and log.steps[-1] == 100
    notes = " ".join(log.read_notes)
    assert "1 corrupt TensorBoard records skipped" in notes
    assert "could not be framed" in notes


def test_garbage_and_a_torn_end_are_reported(tmp_path: Path) -> None:
    records = [*_good(range(1, 21)), b"\x00garbage" * 100, *_good(range(21, 41))]
    path = _file(tmp_path, records)
    with open(path, "ab") as fh:
        fh.write(_record(_event(41, 1.0))[:-7])  # a writer killed mid-record
    log = read_events(path, "megatron")
    assert log.steps.tolist() == list(range(1, 41))
    assert any("could not be framed" in n for n in log.read_notes)


def test_values_out_of_range_are_bounded(tmp_path: Path) -> None:
    import numpy as np

    records = [*_good(range(1, 10)), _record(_event(10, 3.0e38)), _record(_event(-5, 1.0))]
    log = read_events(_file(tmp_path, records), "megatron")
    assert log.steps.tolist() == list(range(1, 11))
    assert np.isinf(log.series["loss"][-1]) and log.out_of_range == 1
    assert any("below 0" in n for n in log.read_notes)
