"""The vectorized chunk scan (load/losslog_scan.py) and the numba reader
(load/losslog_numba.py, the logs extra) read what the line-by-line patterns read:
hypothesis writes chunks of both frameworks' step lines with odd numbers, missing fields,
padding and other lines between them, and the readers must agree on every step and every
value (NaN where a line prints none). ``CFGLINT_FUZZ_EXAMPLES`` sets how many chunks (80
in CI)."""

from __future__ import annotations

import re

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cfglint.load import losslog, losslog_numba  # noqa: E402
from cfglint.load.losslog import SERIES  # noqa: E402
from cfglint.load.losslog_scan import Chunk, Field, numbers, scan  # noqa: E402
from conftest import ROOT, examples  # noqa: E402

ODD = ["nan", "NAN", "inf", "-inf", "1.2.3", "-", "1e", "1e400", ".5", "5.", "+3",
       "12345678901234567", "0.30000000000000004", "1E-05", "9.999999E+22", "abc", ""]  # fmt: skip


@st.composite
def number(draw) -> str:
    kind = draw(st.integers(0, 5))
    x = draw(st.floats(-1e6, 1e6, allow_nan=False))
    if kind == 0:
        return f"{x:.6E}"
    if kind == 1:
        return f"{x:.3f}"
    if kind == 2:
        return repr(x)
    if kind == 3:
        return str(draw(st.integers(0, 10**6)))
    if kind == 4:
        return f"{abs(x):g}"
    return draw(st.sampled_from(ODD))


def _mg_line(draw, step: int) -> str:
    parts = [f" [2026-01-01 00:00:00.000000] iteration {step:{draw(st.sampled_from(['', '8']))}}"
             f"/{draw(st.sampled_from(['  100', '100']))} |"]  # fmt: skip
    for label in (
        "consumed samples:",
        "elapsed time per iteration (ms):",
        "learning rate:",
        "lm loss:",
        "loss scale:",
        "grad norm:",
        "number of skipped iterations:",
        "number of nan iterations:",
    ):
        if draw(st.integers(0, 9)):  # most lines print every field
            pad = "   " if "number" in label and draw(st.booleans()) else " "
            parts.append(f" {label}{pad}{draw(number())} |")
    return "".join(parts) + "\n"


def _mf_line(draw, step: int, epoch: bool) -> str:
    e = draw(st.sampled_from([1, 1, 1, 2]))  # mostly the first epoch, as most logs
    head = f"{{ Epoch:[{e:3d}/  2], step:[{step:5d}/ 9999], " if epoch else f"step:[{step}/9999], "
    loss = draw(number())
    loss_text = f"loss: {loss}" if draw(st.booleans()) else f"loss:[{loss}/{draw(number())}]"
    if not epoch:
        loss_text = "x], " + loss_text
    fields = [
        f"per_step_time: {draw(number())}ms",
        f"lr: {draw(st.sampled_from(['', '[']))}{draw(number())}{draw(st.sampled_from(['', ']']))}",
        f"overflow cond: {draw(st.sampled_from(['True', 'False', 'Maybe']))}",
        f"loss_scale: {draw(number())}",
        f"global_norm: [{draw(number())}]",
        f"train_throughput_per_npu: {draw(number())}T",
    ]
    kept = [f for f in fields if draw(st.integers(0, 9))]
    return f"2026 - INFO - {head}{loss_text}, " + ", ".join(kept) + "\n"


OTHER = [
    " validation loss at iteration 7000 | lm loss value: 7.174200E+00 |\n",
    "note | grad norm: 99.0 | from something else\n",
    "- INFO -    0.0% |        | 0.00600 samples/s/p  25 days, 2:07:47 }\n",
    "Current global norm [44.313248] of step 1 has been 1 consecutive times\n",
    "\n",
]


@st.composite
def chunk(draw) -> tuple[bytes, str]:
    framework = draw(st.sampled_from(["megatron", "mindformers"]))
    epoch = draw(st.booleans())
    out = []
    for i in range(draw(st.integers(1, 12))):
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(st.sampled_from(OTHER)))
        step = draw(st.integers(0, 10**6)) if draw(st.integers(0, 7)) == 0 else i + 1
        out.append(_mg_line(draw, step) if framework == "megatron" else _mf_line(draw, step, epoch))
    text = "".join(out)
    if draw(st.booleans()):
        text = text.rstrip("\n")
    return text.encode(), framework


def _same(a: np.ndarray | None, b: np.ndarray | None, n: int) -> bool:
    a = np.full(n, np.nan) if a is None else a
    b = np.full(n, np.nan) if b is None else b
    return np.array_equal(a, b, equal_nan=True)


EXAMPLES = examples(20, 80)


def _forms(framework: str) -> tuple:
    if framework == "megatron":
        return losslog._MG_FORM, losslog._MG_SCAN
    return losslog._MF_FORM, losslog._MF_SCAN


def _agree(fast: tuple, slow: tuple, data: bytes) -> None:
    assert fast[0].tolist() == slow[0].tolist()
    assert fast[2] == data.count(b"\n")
    for name in SERIES:
        assert _same(fast[1].get(name), slow[1].get(name), fast[0].size), name


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(chunk())
def test_scan_reads_what_the_patterns_read(case: tuple[bytes, str]) -> None:
    data, framework = case
    fast = scan(data, *_forms(framework))
    if fast is None:
        return  # a counter the scan cannot decide: the caller reads line by line
    _agree(fast, losslog._parse_lines(data, framework), data)


needs_numba = pytest.mark.skipif(not losslog_numba.AVAILABLE, reason="the logs extra")


@needs_numba
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(chunk())
def test_numba_reads_what_the_scan_and_the_patterns_read(case: tuple[bytes, str]) -> None:
    data, framework = case
    fast = losslog_numba.read(data, *_forms(framework))
    if fast is None:
        return  # a chunk it cannot read as the scan does: the scan reads it
    _agree(fast, losslog._parse_lines(data, framework), data)
    scanned = scan(data, *_forms(framework))
    if scanned is not None:
        _agree(fast, scanned, data)


def _bench_pair(tmp_path, n: int) -> tuple[bytes, bytes]:
    """A few lines of bench/bench_logs.py's realistic pair (every field varying,
    MindFormers' progress line after each step line)."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_logs import write_pair
    finally:
        sys.path.remove(str(ROOT / "bench"))
    mf, mg = write_pair(tmp_path, n)
    return mf.read_bytes(), mg.read_bytes()


@needs_numba
def test_numba_reads_the_realistic_pair_itself(tmp_path) -> None:
    """The fast path takes the benchmark's lines (it does not hand them all to the scan)
    and reads them as the scan does."""
    for data, framework in zip(
        _bench_pair(tmp_path, 300), ("mindformers", "megatron"), strict=True
    ):
        fast = losslog_numba.read(data, *_forms(framework))
        assert fast is not None and fast[0].tolist() == list(range(1, 301))
        _agree(fast, scan(data, *_forms(framework)), data)
        assert set(fast[1]) >= {"loss", "grad_norm", "lr", "step_time_ms", "throughput"}


@needs_numba
@pytest.mark.parametrize(
    ("data", "step"),
    [
        # two counters on a line: the scan takes the first that is one
        (b" iteration 1/ 10 | iteration 2/ 10 | lm loss: 1.5 |\n", 1),
        # a counter the scan cannot decide (16 digits): the patterns read it
        (b" iteration 1234567890123456/ 10 | lm loss: 1.5 |\n", 1234567890123456),
    ],
)
def test_numba_leaves_to_the_scan_what_it_cannot_read_as_the_scan(data: bytes, step: int) -> None:
    assert losslog_numba.read(data, *_forms("megatron")) is None
    steps, cols, _n = losslog._parse_chunk(data, "megatron")  # read all the same
    assert steps.tolist() == [step] and cols["loss"].tolist() == [1.5]


@needs_numba
@pytest.mark.parametrize("data", [b"", b"\n", b" iteration 1/ 10 | lm loss: 1.5 |"])
def test_numba_reads_empty_and_unterminated_chunks_as_the_scan(data: bytes) -> None:
    """An empty chunk has no line: the loops, which do not check bounds, read none (it
    read past its arrays before, and the process died of a bus error)."""
    fast = losslog_numba.read(data, *_forms("megatron"))
    slow = scan(data, *_forms("megatron"))
    assert fast is not None and slow is not None
    _agree(fast, slow, data)


@needs_numba
def test_numba_reads_bytes_that_are_not_utf8() -> None:
    """The loops read bytes (polars, before, read text only and left such chunks to the
    scan)."""
    data = b" iteration 1/ 10 | lm loss: 1.5 | note \xff |\n"
    fast = losslog_numba.read(data, *_forms("megatron"))
    assert fast is not None and fast[0].tolist() == [1] and fast[1]["loss"].tolist() == [1.5]


def _mg_padded(step: int, pad: int) -> str:
    return (
        f"{' ' * pad}[x] iteration {step:8d}/    1000 | consumed samples: {step * 8:12d} | "
        f"learning rate: 1.0E-05 | lm loss: {5 + step / 1000:.6E} | loss scale: 1.0 | grad "
        f"norm: 1.250 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
    )


@needs_numba
def test_numba_finds_labels_across_the_loops_block_edges() -> None:
    """The loop marks its anchor bytes 4 KiB at a time: labels (and counters) that start
    in one block and hold their anchor in the next, or end past it, are found as the scan
    finds them, as are lines that hold a block edge."""
    kernels = losslog_numba.kernels()
    assert kernels is not None
    data = "".join(_mg_padded(s, s % 41) for s in range(1, 3000)).encode()
    edges = range(kernels._BLOCK, len(data), kernels._BLOCK)
    starts = [m.start() for m in re.finditer(rb"\| lm loss: |iteration", data)]
    assert sum(any(a < e < a + 9 for a in starts) for e in edges) >= 10  # labels cut
    fast = losslog_numba.read(data, *_forms("megatron"))
    assert fast is not None and fast[0].tolist() == list(range(1, 3000))
    _agree(fast, scan(data, *_forms("megatron")), data)
    _agree(fast, losslog._parse_lines(data, "megatron"), data)


@needs_numba
@pytest.mark.parametrize(
    "data",
    [
        # lines shorter than any label, anchors at the chunk's first byte and alone
        b":\no\n|\n\n" + _mg_padded(1, 0).encode() + b"g:\n" + _mg_padded(2, 3).encode(),
        # a label cut by the line's end, the rest on the next line
        b" iteration 1/ 9 | lm lo\nss: 2.5 |\n" + _mg_padded(3, 1).encode(),
        # bytes that are not UTF-8 around and inside the labels' neighbourhood
        b"\xff\xfe:o\n" + _mg_padded(4, 0).encode().replace(b"[x]", b"[\xc3\x28]"),
    ],
)
def test_numba_reads_short_lines_cut_labels_and_odd_bytes_as_the_scan(data: bytes) -> None:
    fast = losslog_numba.read(data, *_forms("megatron"))
    assert fast is not None
    _agree(fast, scan(data, *_forms("megatron")), data)
    _agree(fast, losslog._parse_lines(data, "megatron"), data)


@needs_numba
def test_numba_reads_a_label_that_ends_another_as_the_scan() -> None:
    """Two fields whose labels end alike (``loss: `` is the end of ``| loss: ``) share
    their anchor and the byte before it: each is found where it first occurs."""
    fields = {
        "loss": Field(b"| loss: ", varying=True),
        "lm_loss": Field(b"loss: ", varying=True),
        "grad_norm": Field(b"xloss: ", varying=True),
    }
    lines = [
        b" iteration 1/ 9 | loss: 1.5 | xloss: 2.5 |\n",
        b" iteration 2/ 9 | loss: 1.25 |\n",
        b" iteration 3/ 9 | xloss: 3.5 | loss: 4.5 |\n",
        b" iteration 4/ 9 |loss: 5.5 | loss: 6.5 |\n",
    ]
    data = b"".join(lines)
    fast = losslog_numba.read(data, losslog._MG_FORM, fields)
    slow = scan(data, losslog._MG_FORM, fields)
    assert fast is not None and slow is not None
    _agree(fast, slow, data)
    assert fast[1]["lm_loss"].tolist() == [1.5, 1.25, 3.5, 5.5]
    assert np.array_equal(fast[1]["loss"], [1.5, 1.25, 4.5, 6.5])


@needs_numba
def test_numba_leaves_a_one_byte_label_to_the_scan() -> None:
    """A label is found from a byte after its first: one of a single byte has none."""
    data = b" iteration 1/ 9 | x 1.5 |\n"
    assert losslog_numba.read(data, losslog._MG_FORM, {"loss": Field(b"x")}) is None


@needs_numba
def test_numba_reads_the_same_whichever_anchor_bytes_it_takes(monkeypatch) -> None:
    """The anchors are chosen from the chunk's byte counts; every set of one or two bytes
    that covers the labels reads the same steps and values."""
    form, fields = _forms("megatron")
    data = "".join(_mg_padded(s, s % 7) for s in range(1, 60)).encode()
    want = losslog_numba.read(data, form, fields)
    assert want is not None
    labels = [form.label, *(f.label for f in fields.values())]
    single = sorted({b for lab in labels for b in lab[1:]})
    covers = [
        (b, c)
        for i, b in enumerate(single)
        for c in single[i:]
        if all(b in lab[1:] or c in lab[1:] for lab in labels)
    ]
    assert len(covers) > 10
    for cover in covers:
        monkeypatch.setattr(losslog_numba, "_anchor_bytes", lambda *_a, c=cover: c)
        got = losslog_numba.read(data, form, fields)
        assert got is not None, cover
        _agree(got, want, data)


# Clinger's fast path at its edges: 2**53 and 2**53 + 1 as mantissas, 10**22 and 10**23,
# ties that a double rounding would get wrong, and tokens float() refuses
HARD = ["9007199254740992", "9007199254740993", "9007199254740992e22", "1e22", "1e23",
        "1e-22", "1e-23", "0.1", "0.3", "2.675", "1.0000000000000002", "4.35",
        "8.98846567431158e307", "5e-324", "123456.789e-17", "-0", "-0.0", "+7", "1..2", ".",
        "1e", "1e+", "12e1234", "00000000000000000000001.5", "1" * 39, "1" * 40]  # fmt: skip


def _compiled_numbers(data: bytes, starts: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The compiled fields' pass over one field (no bytes to skip) that must end in " |":
    values, and the cells left to the field's pattern."""
    suffix = b" |"
    kernels = losslog_numba.kernels()
    assert kernels is not None
    return kernels.field_values(
        np.frombuffer(data, np.uint8),
        np.array(starts, np.int64)[:, None],
        np.zeros((1, 0, 256), np.bool_),
        np.zeros((1, 0), np.int64),
        np.frombuffer(suffix, np.uint8),
        np.array([0, len(suffix)], np.int64),
        40,
    )


@needs_numba
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(st.sampled_from(HARD), st.floats(allow_nan=False).map(repr),
                          number()), min_size=1, max_size=20))  # fmt: skip
def test_numba_numbers_equal_python_float(texts: list[str]) -> None:
    """Every number the compiled parse decides equals ``float()`` of the same token, which
    ends where the text does (the suffix after it is checked); the rest is left to the
    field's pattern."""
    data = "".join(f" {t} |" for t in texts).encode() + b"\n"
    starts, at = [], 0
    for t in texts:
        starts.append(at + 1)
        at += len(t) + 3
    value, bad = _compiled_numbers(data, starts)
    for i, t in enumerate(texts):
        if bad[i, 0]:
            continue
        assert re.fullmatch(r"[-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?", t), t
        got, want = value[i, 0], float(t)
        assert got == want and np.signbit(got) == np.signbit(want), (t, got, want)


@needs_numba
def test_numba_decides_inside_the_fast_path_only() -> None:
    """Mantissas up to 2**53 and powers of ten up to 10**22 are decided; one past either
    is left to ``float()`` (through the field's pattern)."""
    texts = ["9007199254740992", "9007199254740993", "1e22", "1e23", "1e-22", "0.1e-22"]
    data = "".join(f" {t} |" for t in texts).encode() + b"\n"
    starts = np.cumsum([1] + [len(t) + 3 for t in texts[:-1]]).tolist()
    value, bad = _compiled_numbers(data, starts)
    assert bad[:, 0].tolist() == [False, True, False, True, False, True]
    assert value[0, 0] == 2.0**53 and value[2, 0] == 1e22 and value[4, 0] == 1e-22


@pytest.mark.parametrize(
    "text",
    ["1.000243E+01", "0.1", "44.313248", "6.000E-05", "95313.572", "1e-05", "0", "7.", ".25",
     "123456789012345", "2.2250738585072014E-10", "9.999999E+22", "5E+22", "3e-22"],
)  # fmt: skip
def test_numbers_equal_python_float(text: str) -> None:
    for data, at in (
        (f" {text} |\n" * 3, [1, len(text) + 5, 2 * len(text) + 9]),  # one text: parsed once
        (f" {text} |\n 1.5 |\n", [1, len(text) + 5]),  # varying: every row parsed
    ):
        num = numbers(Chunk(data.encode()), np.array(at))
        assert not num.undecided[0] or len(text.replace(".", "")) > 15
        if not num.undecided[0]:
            assert num.value[0] == float(text)
            assert num.end[0] == 1 + len(text)


@needs_numba
@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("cannot cache function 'find_labels': no locator available"),
        ImportError("cannot import name 'trailing_zeros'"),
    ],
    ids=["no-cache-folder", "numba-without-the-intrinsic"],
)
def test_numba_without_a_cache_folder_leaves_the_chunk_to_the_scan(
    monkeypatch, error: Exception
) -> None:
    """numba refuses ``cache=True`` where it finds no folder to write (a RuntimeError at
    import), and a numba release without the trailing-zero count the label loop imports
    fails its import: the chunk is read by the scan, not a traceback."""
    import builtins

    real = builtins.__import__

    def refuse(name, globals=None, locals=None, fromlist=(), level=0):
        if "losslog_kernels" in (fromlist or ()):
            raise error
        return real(name, globals, locals, fromlist, level)

    monkeypatch.setattr(losslog_numba, "_kernels", None)
    monkeypatch.setattr(losslog_numba, "_unavailable", False)
    monkeypatch.setattr(builtins, "__import__", refuse)
    data = b" iteration 1/ 10 | lm loss: 1.5 |\n"
    assert losslog_numba.read(data, *_forms("megatron")) is None
    monkeypatch.setattr(losslog, "COMPILED_MIN", 0)
    steps, cols, _n = losslog._parse_chunk(data, "megatron")
    assert steps.tolist() == [1] and cols["loss"].tolist() == [1.5]


@st.composite
def digit_token(draw) -> str:
    """Digit runs of 1-40 bytes, with or without one dot (or two), a sign, an exponent."""
    digits = draw(st.text("0123456789", min_size=1, max_size=40))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(digits)))
        digits = digits[:at] + "." + digits[at:]
        if draw(st.integers(0, 9)) == 0:
            digits += "."
    sign = draw(st.sampled_from(["", "", "-", "+"]))
    expo = draw(st.one_of(st.just(""), st.from_regex(r"[eE][-+]?[0-9]{1,4}", fullmatch=True)))
    return sign + digits + expo


def _decided(t: str) -> bool:
    """Whether the compiled parse must decide ``t`` (Clinger's fast path, as _parse_one)."""
    m = re.fullmatch(r"[-+]?([0-9]*)\.?([0-9]*)(?:[eE]([-+]?[0-9]{1,3}))?", t)
    body = t.lstrip("+-").split("e")[0].split("E")[0]
    if m is None or len(body) >= 40 or not (m[1] or m[2]):
        return False
    scale = int(m[3] or 0) - len(m[2])
    return int(m[1] + m[2]) <= 2**53 and abs(scale) <= 22


@needs_numba
@settings(max_examples=EXAMPLES * 5, deadline=None, suppress_health_check=list(HealthCheck))
@given(digit_token(), st.sampled_from(["", "\n", "\n12345678", " |", "12345678"[:0] + "x"]))
def test_numba_digit_runs_equal_python_float(token: str, after: str) -> None:
    """The eight-digits-at-once parse: a token ending at the array's end (a chunk cut after
    it, no eight bytes left), at a line end with digits after it, or before other bytes
    equals ``float()`` where the fast path holds, and is undecided where it does not."""
    kernels = losslog_numba.kernels()
    assert kernels is not None
    for pad in range(9):  # the token at each offset of an eight-byte word
        a = np.frombuffer(("x" * pad + token + after).encode(), np.uint8)
        v, end, undecided, integral = kernels._parse_one(a, pad, 40)
        assert undecided == (not _decided(token)), (token, after)
        if not undecided:
            want = float(token)
            assert v == want and np.signbit(v) == np.signbit(want), (token, v, want)
            assert end == pad + len(token)
            assert integral == ("." not in token and "e" not in token.lower())


@needs_numba
@settings(max_examples=EXAMPLES * 5, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.text("0123456789", min_size=1, max_size=40), st.sampled_from(["", "\n9", "/ 7", "."]))
def test_numba_step_counters_equal_python_int(digits: str, after: str) -> None:
    """The counters' integer parse, eight digits at once: ``int()`` for up to 15 digits
    (undecided past that), ending where the digits do, at a chunk's end or before a line's."""
    kernels = losslog_numba.kernels()
    assert kernels is not None
    for pad in range(9):
        a = np.frombuffer(("x" * pad + digits + after).encode(), np.uint8)
        value, end, undecided, integral = kernels._integer(a, pad, 40)
        assert undecided == (len(digits) > 15 or (after == "." and len(digits) >= 39)), digits
        if not undecided:
            assert value == int(digits)
            assert integral == (after != ".")
            assert end == pad + len(digits) + (after == ".")
