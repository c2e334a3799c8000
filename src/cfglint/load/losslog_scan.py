"""Vectorized reading of a chunk of step lines: every label found and every number parsed
by numpy over the chunk's bytes at once, with no Python work per line.

A label is found from its rarest byte (one pass over the chunk per distinct byte, shared
by the labels that use it), then checked byte by byte on the few candidates left. A number
is parsed column by column across all rows at once: the digits make an exact integer
mantissa and the value is that integer times or divided by an exact power of ten, one
correctly rounded operation, so it equals Python's ``float()`` of the same text. Rows this
cannot decide (``nan``, more than 15 digits, a far exponent, a malformed token) are read
by the caller's regular expression, one row at a time; they are rare.

Each field is placed on the step line it occurs on (the first occurrence when a line has
two); a step line without it reads NaN, a field on another line is ignored.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# whitespace as ``\\s`` in a bytes pattern reads it, except the newline that ends a line
WS = b" \t\x0b\x0c\r"
# a token longer than this is read by the caller's pattern
MAX_TOKEN = 40
_P10 = 10.0 ** np.arange(23)
_INT_LIMIT = 15  # digits: below 2**53, exact as a float64


NUM = rb"([-+]?(?:[0-9.]+(?:[eE][-+]?\d+)?|nan|NAN|NaN|inf|INF|Inf))"
Skip = tuple[tuple[bytes, int | None], ...]


@dataclass(frozen=True)
class Field:
    """One printed field: its literal label, the optional bytes between the label and the
    value (each ``(bytes, at most)``; ``None`` for any number), what must follow the
    number, or the words it prints instead of a number (read as 1.0, 0.0: True, False)."""

    label: bytes
    skip: Skip = ()
    suffix: bytes = b""
    words: tuple[bytes, ...] = ()
    varying: bool = False  # changes every step: never tested for a constant first
    # a line with the step counter but without this field is not a step line (MindFormers'
    # TrainingStateMonitor prints "step:[N/M] local_norm/<param>: v" lines between them)
    required: bool = False

    @property
    def pattern(self) -> re.Pattern[bytes]:
        """The same field as a regular expression (group 1 the value): the line-by-line
        reader's, and the scan's for a row it cannot decide (matched at the label)."""
        return _pattern(self)


def _pattern(f: Field) -> re.Pattern[bytes]:
    rx = re.escape(f.label)
    for chars, most in f.skip:
        rx += b"[" + re.escape(chars) + b"]" + (b"?" if most == 1 else b"*")
    value = b"(" + b"|".join(f.words) + b")" if f.words else NUM
    return re.compile(rx + value + re.escape(f.suffix))


@dataclass(frozen=True)
class StepForm:
    """A step line's counter: ``label N / M close`` (MindFormers' ``step:[N/M]``,
    Megatron's ``iteration N/ M |``; ``gap``: at least one blank after the label), and
    optionally an epoch counter ``label E / NE close`` on the same line; the global step is
    ``N + (E - 1) * M``."""

    label: bytes
    close: bytes
    gap: bool = False
    epoch_label: bytes = b""
    epoch_close: bytes = b""
    # the counter as a pattern (group 1: N; with the epoch counter before it, when the form
    # has one): its matches are the steps when there is one a line (in the first epoch)
    pattern: re.Pattern[bytes] | None = None

    @property
    def epoch_pattern(self) -> re.Pattern[bytes]:
        """The epoch counter (group 1 the epoch) as a regular expression."""
        ws = b"[" + re.escape(WS) + b"]*"
        return re.compile(
            re.escape(self.epoch_label)
            + ws
            + rb"(\d{1,18})"
            + ws
            + b"/"
            + ws
            + rb"\d{1,18}"
            + ws
            + re.escape(self.epoch_close)
        )


# one buffer per thread: chunks are read by several threads at once where numba is
# installed (load/losslog_numba.py)
_SCRATCH = threading.local()


def _equal(a: np.ndarray, byte: int) -> np.ndarray:
    """``a == byte`` into one reused buffer: a fresh array the chunk's size costs a page
    fault every few kilobytes, each time."""
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.size < a.size:
        buf = _SCRATCH.buf = np.zeros(a.size, bool)
    out = buf[: a.size]
    np.equal(a, byte, out=out)
    return out


class Chunk:
    """The chunk's bytes as an array, with its line ends and the positions of each byte
    already searched for."""

    def __init__(self, data: bytes | memoryview, lines: bool = True) -> None:
        self.data = data  # bytes, or (the compiled reader's) a view of a reused buffer
        self.size = len(data)
        raw = np.frombuffer(data, np.uint8)
        self.newline_end = bool(self.size and raw[-1] == 10)
        # reads past the end are clipped to the last byte, a newline, which ends every
        # token (a chunk without one, a file's last line, gets one in a copy)
        self.a = raw if self.newline_end else np.append(raw, np.uint8(10))
        # read-only whatever the buffer (bytes, or a reused bytearray's view): numba
        # compiles its loops once per array type, writable and read-only apart (about 7
        # CPU seconds each, the first time)
        self.a.flags.writeable = False
        # every line's end, the last one's too when the chunk does not end with a newline
        # (``lines=False``: the caller finds them, in its own pass over the bytes)
        last = self.size + (not self.newline_end and self.size > 0)
        self.ends = np.flatnonzero(_equal(self.a[:last], 10)) if lines else np.zeros(0, np.int64)
        self._hits: dict[int, np.ndarray] = {}

    @functools.cached_property
    def sample(self) -> int:
        return min(self.size, 1 << 18)

    @functools.cached_property
    def freq(self) -> np.ndarray:
        return np.bincount(self.a[: self.sample], minlength=256)

    def at(self, pos: np.ndarray) -> np.ndarray:
        """The byte at each position (past the end: the final newline)."""
        return np.take(self.a, pos, mode="clip")

    def hits(self, byte: int) -> np.ndarray:
        if byte not in self._hits:
            self._hits[byte] = np.flatnonzero(_equal(self.a[: self.size], byte))
        return self._hits[byte]

    def find(self, label: bytes) -> np.ndarray:
        """Start positions of every occurrence of ``label``, ascending: from one of its
        bytes (a rare one, or one already searched for: a pass over the chunk costs about
        as much as filtering half its length), filtered by the two bytes that
        rule out most candidates in the chunk's first part, then checked whole."""
        arr = np.frombuffer(label, np.uint8)
        est = self.freq[arr] * (self.size / max(1, self.sample))
        searched = np.array([int(b) in self._hits for b in arr])
        anchor = int(np.argmin(est + np.where(searched, 0, self.size / 2)))
        cand = self.hits(int(arr[anchor])) - anchor
        cand = cand[(cand >= 0) & (cand + len(label) <= self.size)]
        if len(label) == 1 or not cand.size:
            return cand
        early = cand[: np.searchsorted(cand, self.sample)]
        rate = np.array(
            [(self.at(early + j) == b).mean() if early.size else 0.0 for j, b in enumerate(arr)]
        )
        rate[anchor] = 2.0
        for j in np.argsort(rate)[:2]:
            if j != anchor:
                cand = cand[self.at(cand + j) == arr[j]]
        if len(label) <= 3 or not cand.size:
            return cand
        view = np.lib.stride_tricks.sliding_window_view(self.a, len(label))
        return cand[(view[cand] == arr).all(axis=1)]

    def line(self, pos: np.ndarray) -> np.ndarray:
        """The index of the line each position is on."""
        return np.searchsorted(self.ends, pos)


def skip(c: Chunk, pos: np.ndarray, rules: Skip) -> np.ndarray:
    """``pos`` moved past each rule's bytes (at most its count; ``None``: any number below
    MAX_TOKEN, at which the row reads as undecided, -1)."""
    pos = pos.copy()
    for chars, most in rules:
        allowed = np.zeros(256, bool)
        allowed[np.frombuffer(chars, np.uint8)] = True
        move = allowed[c.at(pos)] & (pos >= 0)
        if most == 1 or not move.any():
            pos += move
            continue
        rows = np.flatnonzero(move)
        start = pos[rows]
        at = start + 1
        while rows.size:
            more = allowed[c.at(at)]
            done = ~more
            pos[rows[done]] = at[done]
            rows, start, at = rows[more], start[more], at[more] + 1
            long = at - start > MAX_TOKEN
            pos[rows[long]] = -1
            rows, start, at = rows[~long], start[~long], at[~long]
    return pos


@dataclass
class Numbers:
    """Parsed tokens: value, the position after the token, and which rows the scan could
    not decide (to be read by the caller's pattern)."""

    value: np.ndarray
    end: np.ndarray
    undecided: np.ndarray
    integral: np.ndarray  # no dot and no exponent


_TOKEN = re.compile(rb"[0-9.]*(?:[eE][-+]?[0-9]+)?")


def numbers(c: Chunk, pos: np.ndarray) -> Numbers:
    """The tokens ``[-+]?[0-9.]+([eE][-+]?[0-9]+)?`` starting at ``pos`` (-1: undecided)."""
    undecided, p, neg = _sign(c, pos)
    one = _uniform(c, p)
    if one is not None:
        return Numbers(
            np.where(neg, -one.value[0], one.value[0]),
            p - p[0] + one.end[0],
            undecided | one.undecided[0],
            np.full(p.size, one.integral[0]),
        )
    out = _parse(c, p)
    value = np.where(neg, -out.value, out.value)
    return Numbers(value, out.end, undecided | out.undecided, out.integral)


def numbers_table(c: Chunk, pos: np.ndarray) -> Numbers:
    """:func:`numbers` of a table of positions (a row per line, a column per field),
    parsed in one pass row by row: the positions of a pass then lie close together, and a
    pass over the chunk costs a cache miss a line, however many fields it reads."""
    undecided, p, neg = _sign(c, pos.ravel())
    out = _parse(c, p)
    value = np.where(neg, -out.value, out.value)
    return Numbers(
        *(a.reshape(pos.shape) for a in (value, out.end, undecided | out.undecided, out.integral))
    )


def _sign(c: Chunk, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(undecided, the position after a sign, negative)."""
    undecided = pos < 0
    p = np.where(undecided, 0, pos)
    first = c.at(p)
    neg = first == 45
    return undecided, p + (neg | (first == 43)), neg


def _uniform(c: Chunk, p: np.ndarray) -> Numbers | None:
    """The first row's token parsed, when every row prints the same text there (loss scale,
    a constant rate, the skipped counts): its text and the byte after it, compared."""
    if p.size < 2:
        return None
    p0 = int(p[0])
    text = c.a[p0 : p0 + len(_TOKEN.match(c.data, p0).group(0)) + 1]
    for j, b in enumerate(text):
        if not (c.at(p + j) == b).all():
            return None
    return _parse(c, p[:1])


def _parse(c: Chunk, p: np.ndarray) -> Numbers:
    """Each row's unsigned token at ``p``: value, end position, undecided, integral."""
    n = p.size
    mant = np.zeros(n, np.int64)
    digits = np.zeros(n, np.int64)
    frac = np.zeros(n, np.int64)
    dots = np.zeros(n, np.int64)
    length = np.zeros(n, np.int64)
    going = np.ones(n, bool)
    for j in range(MAX_TOKEN):
        d = c.at(p + j) - np.uint8(48)
        isd = (d < 10) & going
        isdot = (d == 254) & going  # "." - "0", wrapped
        going = isd | isdot
        if not going.any():
            break
        mant = np.where(isd, mant * 10 + d, mant)
        frac += isd & (dots > 0)
        digits += isd
        dots += isdot
        length += going
    end = p + length
    # an exponent counts only with a digit after it (as the pattern reads it)
    ch = c.at(end)
    has_e = (ch == 101) | (ch == 69)
    sch = c.at(end + 1)
    esign = np.where(sch == 45, -1, 1)
    dstart = end + 1 + ((sch == 45) | (sch == 43))
    expo = np.zeros(n, np.int64)
    elen = np.zeros(n, np.int64)
    more = has_e
    for j in range(4):
        e = c.at(dstart + j) - np.uint8(48)
        more = more & (e < 10)
        if not more.any():
            break
        expo = np.where(more, expo * 10 + e, expo)
        elen += more
    has_e &= elen > 0
    end = np.where(has_e, dstart + elen, end)
    scale = np.where(has_e, esign * expo, 0) - frac
    undecided = (
        (length == MAX_TOKEN)
        | (elen > 3)
        | (digits == 0)
        | (dots > 1)
        | (digits > _INT_LIMIT)
        | (np.abs(scale) > 22)
    )
    s = np.clip(scale, -22, 22)
    m = mant.astype(np.float64)
    value = np.where(s >= 0, m * _P10[np.maximum(s, 0)], m / _P10[np.maximum(-s, 0)])
    return Numbers(value, end, undecided, (dots == 0) & ~has_e)


def starts_with(c: Chunk, pos: np.ndarray, text: bytes) -> np.ndarray:
    ok = pos >= 0
    for j, b in enumerate(text):
        ok &= c.at(pos + j) == b
    return ok


def counter(
    c: Chunk, label: bytes, close: bytes, gap: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """``label N / M close`` everywhere in the chunk (N and M plain integers, blanks
    around the slash): the label positions where it is one, N, M, and whether a row could
    not be decided. Other text that holds the label is left out."""
    return counter_at(c, c.find(label), len(label), close, gap)


def counter_at(
    c: Chunk, at: np.ndarray, size: int, close: bytes, gap: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """:func:`counter` at given label positions (``size``: the label's length)."""
    p0 = at + size
    p = skip(c, p0, ((WS, None),))
    keep = _digit_at(c, p) & ((p > p0) if gap else True)
    undecided = bool((p < 0).any())
    at, p = at[keep], p[keep]
    first = numbers(c, p)
    undecided |= bool(first.undecided.any())
    keep = first.integral & ~first.undecided
    at, n_in, q = at[keep], first.value[keep], first.end[keep]
    q = skip(c, q, ((WS, None),))
    keep = starts_with(c, q, b"/")
    at, n_in, q = at[keep], n_in[keep], skip(c, q[keep] + 1, ((WS, None),))
    keep = _digit_at(c, q)
    at, n_in, q = at[keep], n_in[keep], q[keep]
    second = numbers(c, q)
    undecided |= bool(second.undecided.any())
    keep = second.integral & ~second.undecided
    at, n_in, total, r = at[keep], n_in[keep], second.value[keep], second.end[keep]
    keep = starts_with(c, skip(c, r, ((WS, None),)), close)
    return at[keep], n_in[keep], total[keep], undecided


def _digit_at(c: Chunk, pos: np.ndarray) -> np.ndarray:
    return (pos >= 0) & (c.at(pos) - np.uint8(48) < 10)


class _Lines:
    """The step lines of a chunk: where each begins and ends, to place a field on its
    line."""

    def __init__(self, c: Chunk, at: np.ndarray | None) -> None:
        """``at``: the counters' positions (``None``: one on every line, in order)."""
        self.c = c
        if at is None:
            self.index = self.first = np.arange(c.ends.size)
        else:  # one step per line: the first counter on it
            self.index, self.first = np.unique(c.line(at), return_index=True)
        self.hi = c.ends[self.index]
        self.lo = np.where(self.index > 0, c.ends[np.maximum(self.index - 1, 0)] + 1, 0)
        # every line of the chunk is a step line (nothing else can hold a field's text)
        self.only = self.index.size == c.ends.size

    def place(self, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(which occurrences to keep, the step each is on): the first on each step
        line, none elsewhere."""
        n = self.index.size
        if at.size == n and (at >= self.lo).all() and (at < self.hi).all():
            return np.arange(n), np.arange(n)  # one on every step line, in order
        lines = self.c.line(at)
        idx = np.searchsorted(self.index, lines)
        sel = np.flatnonzero(idx < n)
        sel = sel[self.index[idx[sel]] == lines[sel]]
        idx, first = np.unique(idx[sel], return_index=True)
        return sel[first], idx


def scan(
    data: bytes, form: StepForm, fields: dict[str, Field]
) -> tuple[np.ndarray, dict[str, np.ndarray], int] | None:
    """Steps (in file order), each field's values on the step lines and the chunk's
    newlines, or ``None`` when a step counter cannot be decided here (the caller reads the
    chunk line by line)."""
    c = Chunk(data)
    # a label count that is not one a line (MindFormers' progress lines between the step
    # lines) rules the pattern's reading out without a pass of the pattern
    if form.pattern is not None and data.count(form.label) == c.ends.size:
        # the step pattern's own reading, when it finds one counter a line: the line-by-line
        # reader takes the steps from the same pattern
        found = form.pattern.findall(data)
        if len(found) == c.ends.size:
            lines = _Lines(c, None)
            # with an epoch counter: only when every line is in the first epoch (N is the
            # global step)
            first = not form.epoch_label or _constants(c, {"epoch": form.epoch_pattern}, lines) == {
                "epoch": 1.0
            }
            if first:
                return _fields(c, np.array(found, dtype=np.int64), lines, fields)
    at, n_in, per, undecided = counter(c, form.label, form.close, form.gap)
    if undecided:
        return None
    lines = _Lines(c, at)
    steps, per = n_in[lines.first], per[lines.first]
    if form.epoch_label:
        same = _constants(c, {"epoch": form.epoch_pattern}, lines)
        if "epoch" in same:  # one epoch throughout the chunk
            steps = steps + (same["epoch"] - 1) * per
        else:
            e_at, epoch, _total, e_undecided = counter(c, form.epoch_label, form.epoch_close)
            if e_undecided:
                return None
            sel, idx = lines.place(e_at)
            steps = steps.copy()
            steps[idx] += (epoch[sel] - 1) * per[idx]
    if steps.size and not float(steps.max()) < 2.0**53:
        return None  # not exact as a float: the line reader checks it in integers
    return _fields(c, steps, lines, fields)


def _fields(
    c: Chunk, steps: np.ndarray, lines: _Lines, fields: dict[str, Field]
) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    same = _constants(c, {k: f.pattern for k, f in fields.items() if not f.varying}, lines)
    return fields_from(c, steps, fields, lambda f: _field(c, f, lines), same)


# where a field's label is on the step lines (its positions, and the step lines), or None
Locate = Callable[[Field], tuple[np.ndarray, np.ndarray] | None]


def fields_from(
    c: Chunk,
    steps: np.ndarray,
    fields: dict[str, Field],
    locate: Locate,
    same: dict[str, float] | None = None,
    table: Callable[[np.ndarray], Numbers] | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Steps, each field's values (``locate`` finds their labels; ``same``: the fields
    known to print one value throughout; ``table`` parses a table of positions, else
    :func:`numbers_table`) and the chunk's newlines; a step line without a required field
    is no step line."""
    same = same or {}
    cols = {name: np.full(steps.size, v) for name, v in same.items()}
    keep: np.ndarray | None = None
    placed = {}
    for name, f in fields.items():
        if name in same:
            continue
        found = locate(f)
        if found is None:
            if f.required:
                keep = np.zeros(steps.size, bool)
            continue
        placed[name] = (f, *found)
        if f.required and found[1].size != steps.size:
            keep = np.zeros(steps.size, bool)
            keep[found[1]] = True
    cols.update(_values(c, placed, steps.size, table or (lambda pos: numbers_table(c, pos))))
    newlines = c.ends.size - (c.size > 0 and not c.newline_end)
    out = {k: cols[k] for k in fields if k in cols}
    if keep is not None:
        steps, out = steps[keep], {k: v[keep] for k, v in out.items()}
    return steps.astype(np.int64), out, newlines


def _constants(c: Chunk, patterns: dict[str, re.Pattern[bytes]], lines: _Lines) -> dict[str, float]:
    """The fields whose text is the same on every step line (loss scale, skipped counts, a
    constant rate), when every line of the chunk is a step line: the first line's text of
    each, with the byte after it, counted in the chunk instead of searched field by field.
    Fields printed next to each other are counted as one stretch of text first."""
    if not lines.only or not lines.index.size:
        return {}
    lo, hi = int(lines.lo[0]), int(lines.hi[0])
    spans = []
    for name, pattern in patterns.items():
        m = pattern.search(c.data, lo, hi)
        if m is not None:
            spans.append((m.start(), m.end() + 1, name, parse_float(m.group(1))))
    spans.sort()
    groups: list[list[tuple[int, int, str, float]]] = []
    for sp in spans:
        prev = groups[-1][-1] if groups else None
        # the next field's text starts at the byte after the previous value, or a few
        # bytes (no digits) later
        near = prev is not None and prev[1] - 1 <= sp[0] <= prev[1] + 16
        if near and not _DIGIT.search(c.data, prev[1], sp[0]):
            groups[-1].append(sp)
        else:
            groups.append([sp])
    n = lines.index.size
    out: dict[str, float] = {}
    for g in groups:
        if len(g) > 1 and c.data.count(c.data[g[0][0] : g[-1][1]]) == n:
            out.update((name, v) for _a, _b, name, v in g)
            continue
        for a, b, name, v in g:
            if c.data.count(c.data[a:b]) == n:
                out[name] = v
    return out


_DIGIT = re.compile(rb"[0-9]")


def _column(c: Chunk, f: Field, lines: _Lines) -> np.ndarray | None:
    """The label's positions when every step line prints it where the first one does
    (counted from the line's start: logs that pad their numbers keep their columns), else
    ``None``."""
    if not lines.index.size:
        return None
    lo = int(lines.lo[0])
    m = f.pattern.search(c.data, lo, int(lines.hi[0]))
    if m is None:
        return None
    at = lines.lo + (m.start() - lo)
    inside = at + len(f.label) <= lines.hi
    if not inside.all() or not starts_with(c, at, f.label).all():
        return None
    return at


def _field(c: Chunk, f: Field, lines: _Lines) -> tuple[np.ndarray, np.ndarray] | None:
    """Where the field's label is on the step lines, and those step lines."""
    if f.label not in c.data:  # a field this log does not print: no pass over the chunk
        return None
    at = _column(c, f, lines)
    if at is not None:
        return at, np.arange(at.size)
    at = c.find(f.label)
    if not at.size:
        return None
    sel, idx = lines.place(at)
    if not sel.size:
        return None
    return at[sel], idx


def _values(
    c: Chunk,
    placed: dict[str, tuple[Field, np.ndarray, np.ndarray]],
    rows: int,
    table: Callable[[np.ndarray], Numbers],
) -> dict[str, np.ndarray]:
    """Each field's values on the ``rows`` step lines (NaN where it is not printed), from
    its label positions ``at`` on step lines ``idx``. The fields whose text varies are
    parsed together, a step line at a time."""
    out: dict[str, np.ndarray] = {}
    varying = []
    for name, (f, at, idx) in placed.items():
        p = skip(c, at + len(f.label), f.skip)
        if f.words:
            val = np.full(at.size, np.nan)
            for k, word in enumerate(f.words):
                val[starts_with(c, p, word)] = 1.0 - k
            out[name] = _spread(val, idx, rows)
            continue
        undecided, q, neg = _sign(c, p)
        one = _uniform(c, q)
        if one is None:
            varying.append((name, f, at, idx, p))
            continue
        num = Numbers(
            np.where(neg, -one.value[0], one.value[0]),
            q - q[0] + one.end[0],
            undecided | one.undecided[0],
            np.full(q.size, one.integral[0]),
        )
        out[name] = _spread(_checked(c, f, at, num), idx, rows)
    if varying:
        # in the order the first step line prints them: the table is then read in the
        # order of the chunk's bytes
        varying.sort(key=lambda v: int(v[4][0]))
        pos = np.full((rows, len(varying)), -1, np.int64)
        for j, (_n, _f, _at, idx, p) in enumerate(varying):
            pos[idx, j] = p
        num = table(pos)
        for j, (name, f, at, idx, _p) in enumerate(varying):
            part = Numbers(*(a[idx, j] for a in (num.value, num.end, num.undecided, num.integral)))
            out[name] = _spread(_checked(c, f, at, part), idx, rows)
    return out


def _spread(val: np.ndarray, idx: np.ndarray, rows: int) -> np.ndarray:
    out = np.full(rows, np.nan)
    out[idx] = val
    return out


def _checked(c: Chunk, f: Field, at: np.ndarray, num: Numbers) -> np.ndarray:
    """The parsed values, with the rows the parse could not decide (or without the
    field's suffix) read by the field's pattern at its label."""
    val = num.value
    bad = num.undecided
    if f.suffix:
        bad = bad | ~starts_with(c, np.where(bad, -1, num.end), f.suffix)
    if bad.any():
        val = val.copy()
        for i in np.flatnonzero(bad):
            m = f.pattern.match(c.data, int(at[i]))
            val[i] = parse_float(m.group(1)) if m else np.nan
    return val


_WORDS = {b"True": 1.0, b"False": 0.0}


def parse_float(v: bytes) -> float:
    """A matched value as a float: ``True``/``False`` as 1.0/0.0, a text ``float()``
    refuses as NaN."""
    if v in _WORDS:
        return _WORDS[v]
    try:
        return float(v)
    except ValueError:
        return float("nan")
