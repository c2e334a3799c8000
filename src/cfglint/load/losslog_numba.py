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

import importlib.util
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
            except RuntimeError:  # "cannot cache function ...: no locator available"
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
    data: bytes, form: StepForm, fields: dict[str, Field]
) -> tuple[np.ndarray, dict[str, np.ndarray], int] | None:
    """Steps (in file order), each field's values on the step lines and the chunk's
    newlines, as :func:`cfglint.load.losslog_scan.scan` gives them, or ``None``."""
    k = kernels()
    if k is None:
        return None
    c = Chunk(data)
    hi = c.ends.astype(np.int64)
    # as many starts as ends (an empty chunk has neither): the loops do not check bounds
    lo = np.concatenate(([0], hi[:-1] + 1))[: hi.size]
    found = _find(k.find_labels, c, lo, hi, form, fields)
    if found is None:
        return None
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
    newlines = c.ends.size - (c.size > 0 and not c.data.endswith(b"\n"))
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
    find: Callable[..., Any],
    c: Chunk,
    lo: np.ndarray,
    hi: np.ndarray,
    form: StepForm,
    fields: dict[str, Field],
) -> dict[str, np.ndarray] | None:
    """Per line, where each label first occurs (-1: nowhere, counted from the line's
    start), and for each counter, where it first looks like one and how often; ``None``
    for a label under four bytes (the loop compares four at once: none is)."""
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
    if min(len(b) for b in labels) < 4:
        return None
    text = np.frombuffer(b"".join(labels), np.uint8)
    offsets = np.cumsum([0] + [len(b) for b in labels]).astype(np.int64)
    first, count = find(c.a, lo, hi, text, offsets, np.array(kinds, np.int64), _BLANK, MAX_TOKEN)
    out = {name: first[:, k] for k, name in enumerate(names)}
    out.update({name + "#": count[:, k] for k, name in enumerate(names) if kinds[k]})
    return out


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
