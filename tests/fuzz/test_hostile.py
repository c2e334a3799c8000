"""Property-based fuzz of the surfaces issue 32 attacked: the language server's framing,
TensorBoard records, the numbers of training logs, and every writer against links.

The default runs a few dozen examples per property (seconds for the pure ones); the CLI
properties run more in the ``slow`` campaign, and ``CFGLINT_FUZZ_EXAMPLES`` scales all of
them, as in test_properties.py."""

from __future__ import annotations

import io
import json
import os
import struct
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cfglint.cli.lsp_transport import MAX_BODY, GuardedInput  # noqa: E402
from conftest import examples  # noqa: E402

EXAMPLES = examples(10, 30)


def _settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
        derandomize=n <= 100,
        database=None,
    )


# -- server frames ------------------------------------------------------------------------
class _Out:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        json.dumps(message)  # every answer is JSON
        self.sent.append(message)


def _frame(body: bytes, length: int | None = None, extra: bytes = b"") -> bytes:
    n = len(body) if length is None else length
    return extra + b"Content-Length: %d\r\n\r\n" % n + body


SENTINEL = json.dumps({"jsonrpc": "2.0", "id": "sentinel", "method": "shutdown"}).encode()
BODIES = st.one_of(
    st.sampled_from(
        [b"[1, 2]", b"42", b'"x"', b"null", b"{", b'{"id": []}', b'{"jsonrpc": "1.0"}', b""]
    ),
    st.binary(max_size=64),
    st.builds(
        lambda m, i: json.dumps({"jsonrpc": "2.0", "id": i, "method": m}).encode(),
        st.one_of(st.text(max_size=8), st.integers(), st.none()),
        st.one_of(st.integers(), st.text(max_size=4), st.floats(), st.lists(st.integers())),
    ),
)
BAD_FRAMES = st.one_of(
    st.builds(_frame, BODIES),
    st.builds(lambda b, d: _frame(b, max(0, len(b) + d)), BODIES, st.integers(-20, 20)),
    st.builds(
        lambda b, h: h + b"\r\n\r\n" + b,
        BODIES,
        st.sampled_from(
            [
                b"Content-Length: -3",
                b"Content-Length: 1000000000000",
                b"Content-Length: 0x10",
                b"X-Other: 1",
                b"Content-Length",
                b"A" * 5000,
                b"Content-Length: " + b"9" * 40,
            ]
        ),
    ),
    st.binary(max_size=200).filter(lambda b: b"Content-Length" not in b),
)


@given(st.lists(BAD_FRAMES, max_size=6))
@_settings(EXAMPLES * 4)
def test_server_frames_never_stop_the_reader(bad: list[bytes]) -> None:
    good = _frame(SENTINEL)
    # a wrong length may eat into the first copy: the guard must find the second
    stream = io.BufferedReader(io.BytesIO(b"".join(bad) + good + good))  # type: ignore[arg-type]
    out = _Out()
    guard = GuardedInput(stream, out)  # type: ignore[arg-type]
    bodies = []
    for _ in range(100):
        body = guard.next_body()
        assert guard.buffered <= MAX_BODY + 65536
        if body is None:
            break
        msg = json.loads(body)
        assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0"
        bodies.append(msg)
    assert bodies and bodies[-1]["id"] == "sentinel", (bodies, out.sent)
    assert all(m["error"]["code"] in (-32700, -32600, -32602) for m in out.sent)


# -- TensorBoard records ------------------------------------------------------------------
def _record(data: bytes) -> bytes:
    import crc32c

    from cfglint.load.tbevents import masked_crc

    head = struct.pack("<Q", len(data))
    return (
        head
        + struct.pack("<I", masked_crc(crc32c.crc32c(head)))
        + data
        + struct.pack("<I", masked_crc(crc32c.crc32c(data)))
    )


def _events(n: int) -> bytes:
    from tensorboard.compat.proto import event_pb2, summary_pb2

    out = []
    for s in range(1, n + 1):
        v = summary_pb2.Summary.Value(tag="lm loss", simple_value=3.0 - s / 100)
        ev = event_pb2.Event(wall_time=1.0, step=s, summary=summary_pb2.Summary(value=[v]))
        out.append(_record(ev.SerializeToString()))
    return b"".join(out)


MUTATIONS = st.lists(
    st.tuples(st.sampled_from(["flip", "cut", "insert", "truncate"]), st.integers(0, 10**6)),
    min_size=1,
    max_size=5,
)


def _mutate(data: bytes, ops: list[tuple[str, int]], junk: bytes) -> bytes:
    buf = bytearray(data)
    for op, at in ops:
        if not buf:
            break
        i = at % len(buf)
        if op == "flip":
            buf[i] ^= 1 << (at % 8)
        elif op == "cut":
            del buf[i : i + 1 + at % 40]
        elif op == "insert":
            buf[i:i] = junk
        else:
            del buf[i:]
    return bytes(buf)


@pytest.mark.skipif(
    not all(__import__("importlib").util.find_spec(m) for m in ("tensorboard", "crc32c")),
    reason="tensorboard and crc32c (logs extra)",
)
@given(MUTATIONS, st.binary(max_size=40))
@_settings(EXAMPLES * 2)
def test_tensorboard_records_read_or_one_error(ops: list[tuple[str, int]], junk: bytes) -> None:
    from cfglint.load.tbevents import read_events
    from cfglint.model.errors import InputError

    data = _mutate(_events(60), ops, junk)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "events.out.tfevents.1.x"
        path.write_bytes(data)
        try:
            log = read_events(str(path), "megatron")
        except InputError as exc:
            assert "\n" not in exc.one_line()
            return
    steps = set(log.steps.tolist())
    assert steps <= set(range(1, 61))
    # a step missing before the last one read was in a damaged record: that is said (a file
    # cut at a record boundary is a shorter run, nothing to say)
    if set(range(1, max(steps) + 1)) - steps:
        assert log.read_notes, ops


# -- numbers of training logs -------------------------------------------------------------
LOSSES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e308", "-1e308", "inf", "nan", "1e400", "9" * 30, "0", "-0.0"]),
    st.floats(1.0, 10.0).map(lambda x: f"{x:.4f}"),
)
STEPS = st.one_of(
    st.integers(1, 10**18 - 1),
    st.sampled_from([2**62, 2**63 - 1, 10**18 - 1, 300_000_000]),
)


def _logs(d: Path, steps: list[int], losses: list[str]) -> tuple[Path, Path]:
    n = max(steps)
    mf = "".join(
        f"2026-01-01 00:00:00,000 - mindformers[mindformers/core/callback/callback.py:485] - "
        f"INFO - {{ Epoch:[  1/  1], step:[{s:5d}/{n:5d}], loss: {x}, per_step_time: 845ms, "
        f"lr: 1e-05, overflow cond: False, loss_scale: 1.0, global_norm: [1.5]\n"
        for s, x in zip(steps, losses, strict=True)
    )
    mg = "".join(
        f" [2026-01-01 00:00:00.000000] iteration {s:8d}/{n:8d} | consumed samples: 8 | "
        f"learning rate: 1.000000E-05 | global batch size:     8 | lm loss: 3.000000E+00 | "
        f"loss scale: 1.0 | grad norm: 1.510 | number of skipped iterations:   0 | number "
        f"of nan iterations:   0 |\n"
        for s in steps
    )
    a, b = d / "mf.log", d / "mg.log"
    a.write_text(mf)
    b.write_text(mg)
    return a, b


def _run(argv: list[str]) -> tuple[int, str, str]:
    from contextlib import redirect_stderr, redirect_stdout

    from cfglint.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def _strict(text: str) -> object:
    def bad(name: str) -> object:
        raise ValueError(f"bare {name} is not JSON")

    return json.loads(text, parse_constant=bad)


@pytest.mark.slow
@given(
    st.lists(st.tuples(STEPS, LOSSES), min_size=2, max_size=40),
    st.integers(0, 3),
)
@_settings(EXAMPLES)
def test_log_numbers_keep_the_contract(rows: list[tuple[int, str]], start: int) -> None:
    steps = sorted({s for s, _ in rows})
    losses = [x for _, x in rows][: len(steps)]
    with tempfile.TemporaryDirectory() as d:
        a, b = _logs(Path(d), steps, losses)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            rc, out, err = _run(["logs", str(a), str(b), "--format", "json"])
    assert rc in (0, 1, 2), err
    if rc == 2:
        assert len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    else:
        _strict(out)


# -- writers and links --------------------------------------------------------------------
TARGETS = st.sampled_from(
    [
        "missing",
        "regular",
        "link_to_input",
        "link_to_victim",
        "hard_link_to_input",
        "folder",
        "fifo",
        "read_only",
        "dangling_link",
        "the_input",
    ]
)


def _target(d: Path, kind: str, name: str, inp: Path, victim: Path) -> Path:
    t = d / name
    if kind == "regular":
        t.write_text("old")
    elif kind == "link_to_input":
        t.symlink_to(inp)
    elif kind == "link_to_victim":
        t.symlink_to(victim)
    elif kind == "hard_link_to_input":
        os.link(inp, t)
    elif kind == "folder":
        t.mkdir()
    elif kind == "fifo":
        os.mkfifo(t)
    elif kind == "read_only":
        t.write_text("old")
        t.chmod(0o444)
    elif kind == "dangling_link":
        t.symlink_to(d / "nowhere")
    elif kind == "the_input":
        return inp
    return t


@pytest.mark.slow
@given(TARGETS, st.sampled_from(["-o", "--plot"]), st.booleans())
@_settings(EXAMPLES)
def test_writers_never_touch_an_input_or_follow_a_link(kind: str, flag: str, tmp: bool) -> None:
    with tempfile.TemporaryDirectory() as work:
        d = Path(work)
        a, b = _logs(d, list(range(1, 30)), ["3.0"] * 29)
        victim = d / "victim.txt"
        victim.write_text("keep me")
        if tmp:  # a link planted at a temporary name a writer might pick
            (d / ".out.html.tmp").symlink_to(victim)
        target = _target(d, kind, "out.html", a, victim)
        before = {p: p.read_bytes() for p in (a, b, victim)}
        rc, _, err = _run(["logs", str(a), str(b), flag, str(target)])
        assert rc in (0, 2), err
        if rc == 2:
            assert len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
        for p, data in before.items():
            assert p.read_bytes() == data, (kind, flag, p)
        assert not [p for p in d.iterdir() if "cfglint-tmp" in p.name]
        if rc == 0:
            assert not target.is_symlink() and target.is_file()
