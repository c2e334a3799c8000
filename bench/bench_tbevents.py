"""TensorBoard event reading (issue 32): our framing reader (crc32c in compiled code,
lengths checked first) against tensorboard's own loader, on one event file of N scalar
events (about 100 bytes each), and on a record that claims 1 GiB.

    PYTHONPATH=src python bench/bench_tbevents.py [N]
"""

from __future__ import annotations

import resource
import struct
import sys
import tempfile
import time
from pathlib import Path

import crc32c
from tensorboard.compat.proto import event_pb2, summary_pb2

from cfglint.load.tbevents import masked_crc, read_events


def _record(data: bytes) -> bytes:
    head = struct.pack("<Q", len(data))
    return (
        head
        + struct.pack("<I", masked_crc(crc32c.crc32c(head)))
        + data
        + struct.pack("<I", masked_crc(crc32c.crc32c(data)))
    )


def _file(path: Path, n: int) -> None:
    with open(path, "wb") as fh:
        for s in range(1, n + 1):
            values = [
                summary_pb2.Summary.Value(tag=t, simple_value=3.0 - s / n)
                for t in ("lm loss", "grad-norm", "learning-rate")
            ]
            ev = event_pb2.Event(wall_time=1.0, step=s, summary=summary_pb2.Summary(value=values))
            fh.write(_record(ev.SerializeToString()))


def _theirs(path: Path) -> int:
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader

    return sum(1 for _ in LegacyEventFileLoader(str(path)).Load())


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "events.out.tfevents.1.bench"
        _file(path, n)
        size = path.stat().st_size
        t = time.perf_counter()
        log = read_events(str(path), "megatron")
        ours = time.perf_counter() - t
        print(
            f"{n} events, {size / 2**20:.1f} MiB: cfglint {ours:.2f} s "
            f"({ours / n * 1e6:.1f} us/event), {log.steps.size} steps"
        )
        t = time.perf_counter()
        m = _theirs(path)
        theirs = time.perf_counter() - t
        print(
            f"tensorboard LegacyEventFileLoader: {theirs:.2f} s ({theirs / n * 1e6:.1f} us/event,"
            f" {m} events)"
        )
        head = struct.pack("<Q", 2**30)
        with open(path, "ab") as fh:
            fh.write(head + struct.pack("<I", masked_crc(crc32c.crc32c(head))) + b"\x09" * 64)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        log = read_events(str(path), "megatron")
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(
            f"a record claiming 1 GiB at the end: peak RSS +{(after - before) / 1024:.0f} MiB; "
            f"notes: {log.read_notes}"
        )


if __name__ == "__main__":
    main()
