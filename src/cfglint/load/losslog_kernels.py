"""The compiled loops of load/losslog_numba.py (importing this module imports numba).

Both run without the interpreter lock and are cached on disk after their first compile.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

# exact powers of ten as float64 (10**22 is the largest one exact)
_P10 = 10.0 ** np.arange(23)
_MANTISSA = 2**53


@njit(cache=True, nogil=True)
def _word(a, i):
    """Eight bytes from ``i`` as one little-endian word. Unsigned indices: numba then adds
    no wrap-around test to each, and the compiler makes the eight loads one."""
    u = np.uint64(i)
    return (
        np.uint64(a[u])
        | (np.uint64(a[u + np.uint64(1)]) << np.uint64(8))
        | (np.uint64(a[u + np.uint64(2)]) << np.uint64(16))
        | (np.uint64(a[u + np.uint64(3)]) << np.uint64(24))
        | (np.uint64(a[u + np.uint64(4)]) << np.uint64(32))
        | (np.uint64(a[u + np.uint64(5)]) << np.uint64(40))
        | (np.uint64(a[u + np.uint64(6)]) << np.uint64(48))
        | (np.uint64(a[u + np.uint64(7)]) << np.uint64(56))
    )


@njit(cache=True, nogil=True)
def _matches(a, i, words, first, size):
    """Whether ``a[i:i + size]`` is the label whose little-endian words are
    ``words[first:]`` (its last word zero-padded), eight bytes at a time; byte by byte
    where the last word would read past ``a``. A byte compared at a time costs about 1.5
    ns: the long labels that do match (two thirds of the candidates) made it most of
    the label pass."""
    nw = (size + 7) >> 3
    if i + 8 * nw <= a.size:
        for j in range(nw - 1):
            if _word(a, i + 8 * j) != words[first + j]:
                return False
        rest = size - 8 * (nw - 1)  # 1..8 bytes in the last word
        mask = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - 8 * rest)
        return (_word(a, i + 8 * (nw - 1)) & mask) == words[first + nw - 1]
    for j in range(size):
        if i + j >= a.size or a[i + j] != (
            words[first + (j >> 3)] >> np.uint64(8 * (j & 7))
        ) & np.uint64(255):
            return False
    return True


@njit(cache=True, nogil=True)
def _is_counter(a, i, hi, size, gap, blank, run):
    """The counter search (as the scan decides it) at ``i``: the label, a blank if ``gap``, then
    blanks and a digit, or ``run`` blanks (which the scan reads as undecided)."""
    p = i + size
    if gap:
        if p >= hi or not blank[a[p]]:
            return False
        p += 1
    r = 0
    while p < hi and blank[a[p]]:
        p += 1
        r += 1
        if r >= run:
            return True
    return p < hi and 48 <= a[p] <= 57


# bytes compared at once, vectorised, before any position is looked at: a block of this
# many is in the first-level cache while its few marked positions are handled
_BLOCK = 4096
ANCHORS = 8  # the newline and up to seven anchor bytes (load/losslog_numba.py chooses them)


@njit(cache=True, nogil=True)
def _mark(blk, m, x):
    """``m[j]`` = whether ``blk[j]`` is one of the bytes ``x`` (eight of them), zero up to
    the next multiple of eight: a loop the compiler vectorises (about 0.13 ns a byte here,
    against 0.5 for a table look-up a byte; indexing ``a[s + j]`` instead of a slice keeps
    it from vectorising, 0.8 ns a byte)."""
    x0, x1, x2, x3, x4, x5, x6, x7 = x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
    for j in range(blk.size):
        b = blk[j]
        m[j] = (
            np.uint8(b == x0)
            | np.uint8(b == x1)
            | np.uint8(b == x2)
            | np.uint8(b == x3)
            | np.uint8(b == x4)
            | np.uint8(b == x5)
            | np.uint8(b == x6)
            | np.uint8(b == x7)
        )
    for j in range(blk.size, (blk.size + 7) & ~7):
        m[j] = 0


@njit(cache=True, nogil=True)
def _clear(first, count, line):
    # a loop: numba's row assignment ``first[line] = -1`` costs about 50 ns a line more
    for k in range(first.shape[1]):
        first[line, k] = -1
        count[line, k] = 0


@njit(cache=True, nogil=True)
def _grow(ends, first, count):
    """The per-line arrays, twice as long (the line count is not known before the pass)."""
    cap = max(1024, ends.size * 2)
    e2 = np.empty(cap, np.int64)
    f2 = np.empty((cap, first.shape[1]), np.int64)
    c2 = np.empty((cap, first.shape[1]), np.int64)
    e2[: ends.size] = ends
    f2[: ends.size] = first
    c2[: ends.size] = count
    return e2, f2, c2


@njit(cache=True, nogil=True)
def find_labels(
    a,
    last,
    words,
    word_at,
    sizes,
    at,
    x,
    slot,
    slot_start,
    slot_labels,
    kinds,
    blank,
    max_token,
    ends,
    first,
    count,
):
    """The line ends of ``a[:last]`` (each line ends with a newline there) and, per line,
    where each label first occurs, counted from the line's start (-1: nowhere), and for a
    counter (kind 1, 2: a blank after its label) where it first looks like one and how
    often.

    Each label holds an anchor byte ``at[k]`` bytes after its start, one of ``x`` (the
    newline first), never its first byte: the bytes of a block are compared with ``x`` at
    once (vectorised), and only the positions that hold one are looked at: a newline ends
    the line; an anchor, with the byte before it, names the labels that may hold it there
    (``slot[anchor] * 256 + byte before``: ``slot_labels[slot_start[key]:slot_start[key +
    1]]``), each compared whole. A label's occurrences come in order of their starts (its
    anchor is at a fixed offset), so the first one met is the first on the line."""
    if ends.size == 0:
        ends, first, count = _grow(ends, first, count)
    _clear(first, count, 0)
    m = np.zeros(_BLOCK, np.uint8)
    marks = m.view(np.uint64)
    line = 0
    start = 0
    for s in range(0, last, _BLOCK):
        n = min(last - s, _BLOCK)
        _mark(a[s : s + n], m, x)
        for w in range((n + 7) >> 3):  # past n: the last block's, zeroed to a word's end
            v = marks[w]
            while v:  # each marked byte of the word (a 1 byte: its lowest bit)
                p = s + w * 8 + (trailing_zeros(v) >> 3)
                v &= v - np.uint64(1)
                b = a[p]
                if b == 10:
                    ends[line] = p
                    line += 1
                    start = p + 1
                    if line == ends.size:
                        ends, first, count = _grow(ends, first, count)
                    _clear(first, count, line)
                    continue
                key = slot[b] * 256 + a[p - 1]  # an anchor is never a label's first byte
                for t in range(slot_start[key], slot_start[key + 1]):
                    k = slot_labels[t]
                    i = p - at[k]
                    if i < start or (kinds[k] == 0 and first[line, k] >= 0):
                        continue
                    size = sizes[k]
                    if i + size > last or not _matches(a, i, words, word_at[k], size):
                        continue
                    if kinds[k] == 0:
                        first[line, k] = i - start
                    elif _is_counter(a, i, last, size, kinds[k] == 2, blank, max_token - 1):
                        if first[line, k] < 0:
                            first[line, k] = i - start
                        count[line, k] += 1
    return line, ends, first, count


@njit(cache=True, nogil=True)
def _digits(a, p, max_token):
    """The digits and dots from ``p``: mantissa (exact while it stays within 2**53), whether
    it grew past that, digit, dot and fraction-digit counts, and the run's length."""
    size = a.size
    mant = 0
    big = False
    digits = dots = frac = length = 0
    while p + length < size and length < max_token:
        b = a[p + length]
        if 48 <= b <= 57:
            if mant <= _MANTISSA:
                mant = mant * 10 + (b - 48)
            else:
                big = True
            digits += 1
            if dots:
                frac += 1
        elif b == 46:
            dots += 1
        else:
            break
        length += 1
    return mant, big, digits, dots, frac, length


@njit(cache=True, nogil=True)
def _exponent(a, q):
    """An exponent at ``q`` (``e``/``E``, a sign, up to four digits): its signed value, its
    digit count (0: none) and the end of the token."""
    size = a.size
    expo = elen = 0
    esign = 1
    if q < size and (a[q] == 101 or a[q] == 69):
        d = q + 1
        if d < size and (a[d] == 45 or a[d] == 43):
            esign = -1 if a[d] == 45 else 1
            d += 1
        while d + elen < size and 48 <= a[d + elen] <= 57 and elen < 4:
            expo = expo * 10 + (a[d + elen] - 48)
            elen += 1
        if elen:
            q = d + elen
    return esign * expo, elen, q


@njit(cache=True, nogil=True)
def _parse_one(a, p, max_token):
    """One token at ``p``: value (NaN where undecided), end, undecided, integral. Exact to
    ``float()`` where Clinger's fast path holds (mantissa within 2**53, a power of ten
    within 1e22: one correctly rounded multiply or divide); undecided otherwise."""
    neg = False
    if p < a.size and (a[p] == 45 or a[p] == 43):
        neg = a[p] == 45
        p += 1
    mant, big, digits, dots, frac, length = _digits(a, p, max_token)
    expo, elen, q = _exponent(a, p + length)
    integral = dots == 0 and elen == 0
    scale = expo - frac
    undecided = length >= max_token or elen > 3 or digits == 0 or dots > 1 or big
    if undecided or mant > _MANTISSA or abs(scale) > 22:
        return np.nan, q, True, integral
    v = mant * _P10[scale] if scale >= 0 else mant / _P10[-scale]
    return (-v if neg else v), q, False, integral


@njit(cache=True, nogil=True)
def _byte(a, p):
    # past the end: the newline that ends every token (as the scan's Chunk.at reads it)
    return a[p] if p < a.size else 10


@njit(cache=True, nogil=True)
def field_values(a, pos, skip_sets, skip_most, suffix, suffix_at, max_token):
    """The fields' values from the byte after each label (a row per step line, a column per
    field; -1: none), a step line at a time (its bytes are read once, while in cache): the
    bytes between the label and the value skipped as the scan skips them (field ``f``'s
    rule ``k`` takes bytes ``skip_sets[f, k]`` at most once where ``skip_most[f, k]`` is 1,
    a run of at most ``max_token`` where it is 0; -1: no rule), the number parsed as
    :func:`_parse_one` does, and the field's suffix after it; ``bad`` where the cell is
    to be read by the field's pattern (undecided, a run too long, no suffix)."""
    rows, nf = pos.shape
    value = np.full((rows, nf), np.nan)
    bad = np.zeros((rows, nf), np.bool_)
    for r in range(rows):
        for f in range(nf):
            p = _skip(a, pos[r, f], skip_sets[f], skip_most[f], max_token)
            if p < 0:
                bad[r, f] = pos[r, f] >= 0
                continue
            v, e, undecided, _integral = _parse_one(a, p, max_token)
            if undecided:
                bad[r, f] = True
                continue
            for j in range(suffix_at[f], suffix_at[f + 1]):
                if _byte(a, e + j - suffix_at[f]) != suffix[j]:
                    bad[r, f] = True
                    break
            value[r, f] = v
    return value, bad


@njit(cache=True, nogil=True)
def _skip(a, p, sets, most, max_token):
    """``p`` moved past each rule's bytes (-1: a run longer than ``max_token``)."""
    if p < 0:
        return p
    for k in range(most.size):
        if most[k] < 0 or not sets[k, _byte(a, p)]:
            continue
        if most[k] == 1:
            p += 1
            continue
        q = p + 1
        while sets[k, _byte(a, q)] and q - p <= max_token:
            q += 1
        if q - p > max_token:
            return -1
        p = q
    return p


@njit(cache=True, nogil=True)
def _run(a, p, blank, max_token):
    """``p`` moved past a run of blanks (-1: a run longer than ``max_token``), as the
    scan's ``skip`` with one ``(WS, None)`` rule."""
    if p < 0 or not blank[_byte(a, p)]:
        return p
    q = p + 1
    while blank[_byte(a, q)] and q - p <= max_token:
        q += 1
    return -1 if q - p > max_token else q


@njit(cache=True, nogil=True)
def _integer(a, p, max_token):
    """The scan's unsigned token at ``p`` (``_parse``): value, end, undecided (more than
    15 digits, ...), integral (no dot, no exponent)."""
    mant = digits = dots = frac = length = 0
    while length < max_token:
        b = _byte(a, p + length)
        if 48 <= b <= 57:
            if digits < 18:
                mant = mant * 10 + (b - 48)
            digits += 1
            frac += dots > 0
        elif b == 46:
            dots += 1
        else:
            break
        length += 1
    q = p + length
    elen = expo = 0
    esign = 1
    if _byte(a, q) == 101 or _byte(a, q) == 69:
        sign = _byte(a, q + 1)
        esign = -1 if sign == 45 else 1
        d = q + 1 + (sign == 45 or sign == 43)
        while elen < 4 and 48 <= _byte(a, d + elen) <= 57:
            expo = expo * 10 + (_byte(a, d + elen) - 48)
            elen += 1
        if elen:
            q = d + elen
    scale = esign * expo - frac
    undecided = (
        length == max_token or elen > 3 or digits == 0 or dots > 1 or digits > 15 or abs(scale) > 22
    )
    return mant, q, undecided, dots == 0 and elen == 0


@njit(cache=True, nogil=True)
def counters(a, at, size, close, gap, blank, max_token):
    """``label N / M close`` at each label position ``at`` (``size``: the label's length),
    as the scan's ``counter_at`` reads it: which are counters, N, M, and whether a row
    could not be decided (then the scan reads the chunk)."""
    n = at.size
    keep = np.zeros(n, np.bool_)
    first = np.zeros(n, np.float64)
    total = np.zeros(n, np.float64)
    undecided = False
    for r in range(n):
        p0 = at[r] + size
        p = _run(a, p0, blank, max_token)
        if p < 0:
            undecided = True
            continue
        if not 48 <= _byte(a, p) <= 57 or (gap and p == p0):
            continue
        v, q, und, integral = _integer(a, p, max_token)
        undecided |= und
        if und or not integral:
            continue
        q = _run(a, q, blank, max_token)
        if q < 0 or _byte(a, q) != 47:
            continue
        q = _run(a, q + 1, blank, max_token)
        if q < 0 or not 48 <= _byte(a, q) <= 57:
            continue
        m, e, und, integral = _integer(a, q, max_token)
        undecided |= und
        if und or not integral:
            continue
        e = _run(a, e, blank, max_token)
        if e < 0:
            continue
        ok = True
        for j in range(close.size):
            if _byte(a, e + j) != close[j]:
                ok = False
                break
        if ok:
            keep[r] = True
            first[r] = v
            total[r] = m
    return keep, first, total, undecided
