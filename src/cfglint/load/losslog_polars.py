"""A chunk of step lines read with polars and pyarrow (the ``logs`` extra).

The scan (load/losslog_scan.py) spends most of its time finding labels (a pass over the
chunk per rare byte, then candidates filtered and placed on their lines) and parsing
numbers digit by digit across the rows. Here pyarrow lays the chunk's lines over its own
bytes, polars finds the first occurrence of every label on each line in compiled code
(``str.find``: a SIMD substring search, the labels spread over polars' threads), the step
counters and the bytes between a label and its value are read by the scan's own code, and
the numbers are measured by numpy and converted by Arrow (correctly rounded, as
``float()``), so that every value is the scan's.

A chunk this cannot read as the scan does returns ``None`` and the scan reads it: bytes
that are not UTF-8, a line with two step counters (or two epoch counters), a counter the
scan would not decide, a step beyond 2**53.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

from cfglint.load.losslog_scan import (
    MAX_TOKEN,
    WS,
    Chunk,
    Field,
    Numbers,
    StepForm,
    counter_at,
    fields_from,
)

# imported on the first chunk read (about half a second): the lint and small logs never
# import them
AVAILABLE = all(importlib.util.find_spec(m) is not None for m in ("polars", "pyarrow"))
pl: Any = None
pa: Any = None
pc: Any = None


def _load() -> None:
    global pl, pa, pc
    if pl is None:
        import polars
        import pyarrow
        import pyarrow.compute

        pl, pa, pc = polars, pyarrow, pyarrow.compute


_BLANK = "[" + "".join(f"\\x{b:02x}" for b in WS) + "]"


def _search(label: bytes, gap: bool) -> str:
    """A counter's label where the scan may take it for a counter or fail to decide it:
    followed by blanks and a digit, or by a long run of blanks (Megatron's ``iteration``
    also ends ``iterations:`` and ``per iteration (ms)`` on every step line)."""
    head = pl.escape_regex(label.decode("ascii")) + (_BLANK if gap else "")
    return f"{head}(?:{_BLANK}*[0-9]|{_BLANK}{{{MAX_TOKEN - 1}}})"


def read(
    data: bytes, form: StepForm, fields: dict[str, Field]
) -> tuple[np.ndarray, dict[str, np.ndarray], int] | None:
    """Steps (in file order), each field's values on the step lines and the chunk's
    newlines, as :func:`cfglint.load.losslog_scan.scan` gives them, or ``None``."""
    _load()
    c = Chunk(data)
    lo = np.concatenate(([0], c.ends[:-1] + 1))
    lines = _lines(c, lo)
    if lines is None:
        return None
    found = _find(lines, form, fields)
    counted = _counter(c, lo, found["step"], found["step#"], form.label, form.close, form.gap)
    if counted is None:
        return None
    rows, steps, per = counted
    if form.epoch_label:
        epochs = _counter(
            c, lo, found["epoch"], found["epoch#"], form.epoch_label, form.epoch_close, False
        )
        if epochs is None:
            return None
        e_rows, epoch, _total = epochs
        on = np.searchsorted(rows, e_rows)  # the step line of each epoch counter, if any
        mine = on < rows.size
        mine[mine] = rows[on[mine]] == e_rows[mine]
        steps = steps.copy()
        steps[on[mine]] += (epoch[mine] - 1) * per[on[mine]]
    if steps.size and not float(steps.max()) < 2.0**53:
        return None  # not exact as a float: the scan declines it too

    def locate(f: Field) -> tuple[np.ndarray, np.ndarray] | None:
        pos = found[f.label.decode("ascii")][rows]
        idx = np.flatnonzero(pos >= 0)
        if not idx.size:
            return None
        return lo[rows[idx]] + pos[idx], idx

    return fields_from(c, steps, fields, locate, table=lambda pos: _numbers(c, pos))


# the longest run of digits and dots, and of exponent digits, measured here (a longer one
# is read by the field's pattern, as the scan does past MAX_TOKEN)
_RUN, _EXP = 64, 4


def _numbers(c: Chunk, pos: np.ndarray) -> Numbers:
    """:func:`cfglint.load.losslog_scan.numbers_table` with Arrow converting the text:
    numpy only measures each token ``[-+]?[0-9.]+([eE][-+]?[0-9]+)?``, and Arrow reads the
    tokens, cut from the chunk without a copy, in compiled code, correctly rounded as
    Python's ``float()``. A token that ``float()`` refuses (no digit, two dots: "1.2.3")
    reads NaN; one that starts with neither digit nor dot (``nan``, a word) is undecided:
    the field's pattern reads it, as it reads the scan's."""
    shape = pos.shape
    pos = pos.ravel()
    undecided = pos < 0
    p = np.where(undecided, 0, pos)
    first = c.at(p)
    q = p + ((first == 45) | (first == 43))
    run, dots = _run(c, q, _RUN)
    undecided |= (run == 0) | (run == _RUN)
    end = q + run
    ch = c.at(end)
    sign = c.at(end + 1)
    digits = end + 1 + ((sign == 45) | (sign == 43))
    exp = np.where((ch == 101) | (ch == 69), _run(c, digits, _EXP + 1, digit_only=True)[0], 0)
    undecided |= exp > _EXP
    end = np.where(exp > 0, digits + exp, end)
    value = np.full(p.size, np.nan)
    ok = np.flatnonzero(~undecided & (dots <= 1) & (run > dots))
    if ok.size:
        value[ok] = _to_float(c.data, p[ok], end[ok])
    integral = np.zeros(p.size, bool)  # counters are read by the scan's parser
    return Numbers(*(a.reshape(shape) for a in (value, end, undecided, integral)))


def _to_float(data: bytes, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``float(data[start:end])`` of each token, read by Arrow: a string array over the
    chunk's own bytes whose every other string is a token (tokens in order, apart)."""
    order = None if bool((start[1:] >= end[:-1]).all()) else np.argsort(start, kind="stable")
    a, b = (start, end) if order is None else (start[order], end[order])
    if not bool((a[1:] >= b[:-1]).all()):  # two fields read from one place: one by one
        return np.array([_float(data[i:j]) for i, j in zip(start, end, strict=True)])
    bounds = np.empty(2 * a.size + 1, np.int32)
    bounds[0:-1:2], bounds[1:-1:2], bounds[-1] = a, b, len(data)
    text = pa.StringArray.from_buffers(2 * a.size, pa.py_buffer(bounds), pa.py_buffer(data))
    tokens = text.take(pa.array(np.arange(0, 2 * a.size, 2)))
    try:
        got = pc.cast(tokens, pa.float64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:  # a token Arrow refuses: Python reads them all
        got = np.array([_float(t.as_py().encode()) for t in tokens])
    if order is None:
        return got
    out = np.empty(a.size)
    out[order] = got
    return out


def _float(text: bytes) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _run(
    c: Chunk, at: np.ndarray, most: int, digit_only: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """How many digits (and dots) follow each position, up to ``most``, and how many of
    them are dots."""
    size = np.zeros(at.size, np.int64)
    dots = np.zeros(at.size, np.int64)
    going = np.ones(at.size, bool)
    for j in range(most):
        d = c.at(at + j) - np.uint8(48)
        dot = (d == 254) & going  # "." - "0"
        going &= (d < 10) | (dot if not digit_only else False)
        if not going.any():
            break
        size += going
        dots += dot
    return size, dots


def _lines(c: Chunk, lo: np.ndarray) -> pl.Series | None:
    """The chunk's lines (each with its line end) over the chunk's own bytes, or ``None``
    where they are not UTF-8 (polars reads text only)."""
    bounds = np.append(lo, c.size).astype(np.int32)
    text = pa.StringArray.from_buffers(lo.size, pa.py_buffer(bounds), pa.py_buffer(c.data))
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return None
    return pl.Series("l", text)


def _find(lines: pl.Series, form: StepForm, fields: dict[str, Field]) -> dict[str, np.ndarray]:
    """Per line, where each label first occurs (-1: nowhere), and how often each counter's
    label occurs, all in one polars pass (the expressions run on its threads)."""
    col = pl.col("l").str
    exprs = []
    for key, label, gap in (("step", form.label, form.gap), ("epoch", form.epoch_label, False)):
        if label:
            pattern = _search(label, gap)
            exprs.append(col.find(pattern).alias(key))
            exprs.append(col.count_matches(pattern).alias(key + "#"))
    labels = {f.label.decode("ascii") for f in fields.values()}
    exprs += [col.find(label, literal=True).alias(label) for label in labels]
    frame = lines.to_frame().select(e.cast(pl.Int64).fill_null(-1) for e in exprs)
    return {name: frame[name].to_numpy() for name in frame.columns}


def _counter(
    c: Chunk,
    lo: np.ndarray,
    first: np.ndarray,
    count: np.ndarray,
    label: bytes,
    close: bytes,
    gap: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The lines that hold a ``label N / M close`` counter, N and M on them, or ``None``
    where the scan could read it otherwise (a line with the label twice: the scan takes the
    first that is a counter; a counter it cannot decide)."""
    if (count > 1).any():
        return None
    rows = np.flatnonzero(first >= 0)
    at = lo[rows] + first[rows]
    kept, n, total, undecided = counter_at(c, at, len(label), close, gap)
    if undecided:
        return None
    return rows[np.searchsorted(at, kept)], n, total
