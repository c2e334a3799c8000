"""A chunk of step lines read by numba-compiled loops (the ``logs`` extra).

The numpy scan (load/losslog_scan.py) spends most of its time finding labels (a pass over
the chunk per rare byte, candidates filtered and placed on their lines) and parsing numbers
digit by digit across the rows, each step a numpy call over positions spread across the
chunk. Here one compiled loop over the chunk's bytes finds, line by line, where each label
first occurs (and where each step counter does, and how often); a second one, per field,
skips the bytes between its label and its value, parses the number and checks what must
follow it: sign, digits, dot and exponent make an integer mantissa and a power of ten; with
the mantissa at most 2**53 and the power within 10**22 (Clinger's fast path) one multiply
or divide by an exact power of ten is correctly rounded, so the value equals Python's
``float()``. Any other token is read by the field's pattern, as the scan's are. A third
reads the step counters at the positions found, deciding them as the scan's
``counter_at`` does.

A chunk this cannot read as the scan does returns ``None`` and the scan reads it: a line
with two step counters (or two epoch counters), a counter the scan would not decide, a step
beyond 2**53. The loops release the interpreter lock, so a large log's byte ranges are read
by threads. They are compiled once and cached under cfglint's cache folder
(``CFGLINT_CACHE_DIR``, else ``~/.cache/cfglint``; ``NUMBA_CACHE_DIR`` where set).
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import os
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from cfglint.load.datacache import cache_dir
from cfglint.load.losslog_scan import (
    MAX_TOKEN,
    WS,
    Chunk,
    Field,
    StepForm,
    parse_float,
    skip,
    starts_with,
)

AVAILABLE = importlib.util.find_spec("numba") is not None
_kernels: ModuleType | None = None
_unavailable = False
_lock = threading.Lock()


def kernels() -> ModuleType | None:
    """The compiled loops (load/losslog_kernels.py), compiled or loaded from the cache on
    the first large chunk (the lint and small logs never import numba), or ``None`` where
    numba finds no folder it can cache them in (it refuses ``cache=True`` then): the scan
    reads."""
    global _kernels, _unavailable
    with _lock:
        if _kernels is None and not _unavailable:
            # numba's own default writes next to the installed source, which may be
            # read-only or shared: the cache goes with cfglint's
            os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_dir() / "numba"))
            try:
                from cfglint.load import losslog_kernels
            except (RuntimeError, ImportError):
                # "cannot cache function ...: no locator available"; or a numba without
                # the trailing-zero count the loop imports (numba.cpython.unsafe; < 0.69)
                _unavailable = True
            else:
                _kernels = losslog_kernels
    return _kernels


def _loaded() -> ModuleType:
    """The loops, once :func:`read` has loaded them."""
    assert _kernels is not None
    return _kernels


_BLANK = np.zeros(256, np.bool_)
_BLANK[np.frombuffer(WS, np.uint8)] = True


def read(
    data: bytes | memoryview, form: StepForm, fields: dict[str, Field]
) -> tuple[np.ndarray, dict[str, np.ndarray], int] | None:
    """Steps (in file order), each field's values on the step lines and the chunk's
    newlines, as :func:`cfglint.load.losslog_scan.scan` gives them, or ``None``."""
    k = kernels()
    if k is None:
        return None
    c = Chunk(data, lines=False)
    # every line ends with a newline in c.a[:last] (the last one's added where missing)
    last = c.size + (c.size > 0 and not c.newline_end)
    got = _find(k.find_labels, c, last, form, fields)
    if got is None:
        return None
    c.ends, found = got
    # as many starts as ends (an empty chunk has neither): the loops do not check bounds
    lo = np.concatenate(([0], c.ends[:-1] + 1))[: c.ends.size]
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

    return _fields(c, steps, rows, lo, found, fields)


def _fields(
    c: Chunk,
    steps: np.ndarray,
    rows: np.ndarray,
    lo: np.ndarray,
    found: dict[str, np.ndarray],
    fields: dict[str, Field],
) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Each field's values on the step lines ``rows`` (NaN where it is not printed), as
    :func:`cfglint.load.losslog_scan.fields_from` gives them: a step line without a
    required field is no step line."""
    keep = np.ones(steps.size, bool)
    out: dict[str, np.ndarray] = {}
    numeric = []
    for name, f in fields.items():
        pos = found[f.label.decode("ascii")][rows]
        if f.required:
            keep &= pos >= 0
        if not (pos >= 0).any():
            continue
        at = np.where(pos >= 0, lo[rows] + pos, -1)
        if f.words:
            out[name] = _words(c, f, at)
        else:
            numeric.append((name, f, at))
            out[name] = np.empty(0)  # filled below, in the fields' order
    if numeric:
        for name, values in _numbers(c, numeric).items():
            out[name] = values
    newlines = c.ends.size - (c.size > 0 and not c.newline_end)
    if not keep.all():
        steps, out = steps[keep], {k: v[keep] for k, v in out.items()}
    return steps.astype(np.int64), out, newlines


def _numbers(c: Chunk, numeric: list[tuple[str, Field, np.ndarray]]) -> dict[str, np.ndarray]:
    """The fields' numbers after their labels at ``at`` (-1: not printed), the cells the
    loop leaves undecided read by the field's pattern (as the scan's are)."""
    nf = len(numeric)
    rules = max(len(f.skip) for _n, f, _a in numeric)
    sets = np.zeros((nf, rules, 256), np.bool_)
    most = np.full((nf, rules), -1, np.int64)
    for j, (_n, f, _a) in enumerate(numeric):
        for k, (chars, at_most) in enumerate(f.skip):
            sets[j, k, np.frombuffer(chars, np.uint8)] = True
            most[j, k] = 1 if at_most == 1 else 0
    suffix = np.frombuffer(b"".join(f.suffix for _n, f, _a in numeric) + b"\0", np.uint8)
    suffix_at = np.cumsum([0] + [len(f.suffix) for _n, f, _a in numeric]).astype(np.int64)
    at = np.stack([a for _n, _f, a in numeric], axis=1)
    start = np.where(at >= 0, at + np.array([len(f.label) for _n, f, _a in numeric]), -1)
    value, bad = _loaded().field_values(c.a, start, sets, most, suffix, suffix_at, MAX_TOKEN)
    for r, j in zip(*np.nonzero(bad), strict=True):
        m = numeric[j][1].pattern.match(c.data, int(at[r, j]))
        value[r, j] = parse_float(m.group(1)) if m else np.nan
    return {name: value[:, j].copy() for j, (name, _f, _a) in enumerate(numeric)}


def _words(c: Chunk, f: Field, at: np.ndarray) -> np.ndarray:
    """A field that prints words (``True``/``False``: 1.0, 0.0), as the scan reads it
    (NaN where ``at`` is -1: not printed)."""
    p = skip(c, np.where(at >= 0, at + len(f.label), -1), f.skip)
    val = np.full(at.size, np.nan)
    for k, word in enumerate(f.words):
        val[starts_with(c, p, word)] = 1.0 - k
    return val


def _find(
    find: Callable[..., Any], c: Chunk, last: int, form: StepForm, fields: dict[str, Field]
) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The chunk's line ends and, per line, where each label first occurs (-1: nowhere,
    counted from the line's start), and for each counter, where it first looks like one
    and how often; ``None`` for a one-byte label or where the labels need more anchor bytes
    than the loop compares (none does)."""
    names: list[str] = []
    labels: list[bytes] = []
    kinds: list[int] = []  # 0: a label; 1: a counter; 2: a counter with a blank after it
    for key, label, gap in (("step", form.label, form.gap), ("epoch", form.epoch_label, False)):
        if label:
            names.append(key)
            labels.append(label)
            kinds.append(2 if gap else 1)
    for label in sorted({f.label for f in fields.values()}):
        names.append(label.decode("ascii"))
        labels.append(label)
        kinds.append(0)
    if min(len(b) for b in labels) < 2:
        return None  # no byte after the first to anchor it (none is this short)
    freq = np.bincount(c.a[: min(last, _SAMPLE)], minlength=256)
    table = _anchor_table(tuple(labels), _anchor_bytes(labels, freq))
    if table is None:
        return None
    scratch = _scratch(len(labels))
    lines, *grown = find(
        c.a,
        last,
        *_label_words(tuple(labels)),
        *table,
        np.array(kinds, np.int64),
        _BLANK,
        MAX_TOKEN,
        *scratch,
    )
    _SCRATCH.arrays = grown  # the loop makes them longer where a chunk has more lines
    ends, first, count = (x[:lines] for x in grown)
    out = {name: first[:, k] for k, name in enumerate(names)}
    out.update({name + "#": count[:, k] for k, name in enumerate(names) if kinds[k]})
    return ends, out


# the per-line arrays of the label loop, one set per thread, reused from chunk to chunk:
# fresh ones would cost a page fault every 4 KiB of a 10-30 MB table, each chunk
_SCRATCH = threading.local()


def _scratch(labels: int) -> list[np.ndarray]:
    arrays = getattr(_SCRATCH, "arrays", None)
    if arrays is None or arrays[1].shape[1] != labels:
        arrays = [
            np.zeros(0, np.int64),
            np.zeros((0, labels), np.int64),
            np.zeros((0, labels), np.int64),
        ]
    return arrays


# the bytes whose frequency in a chunk's first part chooses its anchors
_SAMPLE = 1 << 16


def _anchor_bytes(labels: list[bytes], freq: np.ndarray) -> tuple[int, ...]:
    """Bytes that every label holds after its first (the loop looks at the byte before an
    anchor), as rare in the chunk as can be: every position holding one is looked at. The
    rarest single byte or pair of bytes that covers them all; else greedily the byte that
    costs the fewest positions for the labels it adds."""
    full = (1 << len(labels)) - 1
    covers: dict[int, int] = {}
    for k, label in enumerate(labels):
        for b in set(label[1:]) - {10}:
            covers[b] = covers.get(b, 0) | 1 << k
    cost = {b: int(freq[b]) + 1 for b in covers}
    ones = [(cost[b], (b,)) for b in covers if covers[b] == full]
    pairs = [
        (cost[b] + cost[c], (b, c))
        for b, c in itertools.combinations(sorted(covers), 2)
        if covers[b] | covers[c] == full
    ]
    if ones or pairs:
        return min(ones + pairs)[1]
    chosen: list[int] = []
    left = full
    while left:
        best = min(
            covers,
            key=lambda b: (
                (cost[b] / (covers[b] & left).bit_count(), b)
                if covers[b] & left
                else (float("inf"), b)
            ),
        )
        chosen.append(best)
        left &= ~covers[best]
    return tuple(chosen)


@functools.lru_cache(maxsize=64)
def _label_words(labels: tuple[bytes, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The labels as little-endian 64-bit words (each one's last word zero-padded), where
    each label's words start, and each label's length: the loop compares eight bytes at
    a time."""
    padded = [label + bytes(-len(label) % 8) for label in labels]
    words = np.frombuffer(b"".join(padded), "<u8").astype(np.uint64)
    word_at = np.cumsum([0] + [len(p) // 8 for p in padded[:-1]]).astype(np.int64)
    return words, word_at, np.array([len(label) for label in labels], np.int64)


@functools.lru_cache(maxsize=64)
def _anchor_table(
    labels: tuple[bytes, ...], anchors: tuple[int, ...]
) -> tuple[np.ndarray, ...] | None:
    """What the loop needs to find ``labels`` from ``anchors``: each label's anchor offset
    (its rarest anchor's first place after its first byte), the eight bytes compared (the
    newline, the anchors, the newline again as padding), each anchor's slot, and per slot
    and byte before the anchor the labels that hold it there (``slot_start`` indexes
    ``slot_labels``)."""
    width = int(_loaded().ANCHORS)
    if len(anchors) > width - 1:
        return None
    rank = {b: i for i, b in enumerate(anchors)}
    at = np.zeros(len(labels), np.int64)
    keys: list[int] = []
    for k, label in enumerate(labels):
        j = min((i for i in range(1, len(label)) if label[i] in rank), key=lambda i: rank[label[i]])
        at[k] = j
        keys.append(rank[label[j]] * 256 + label[j - 1])
    x = np.full(width, 10, np.uint8)
    x[1 : len(anchors) + 1] = anchors
    slot = np.zeros(256, np.int64)
    slot[list(anchors)] = np.arange(len(anchors))
    order = np.argsort(keys, kind="stable")
    slot_start = np.searchsorted(np.array(keys)[order], np.arange(len(anchors) * 256 + 1))
    return at, x, slot, slot_start.astype(np.int64), order.astype(np.int64)


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
    keep, n, total, undecided = _loaded().counters(
        c.a, at, len(label), np.frombuffer(close, np.uint8), gap, _BLANK, MAX_TOKEN
    )
    if undecided:
        return None
    return rows[keep], n[keep], total[keep]
