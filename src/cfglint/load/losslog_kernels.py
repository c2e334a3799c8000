"""The compiled loops of load/losslog_numba.py (importing this module imports numba).

Both run without the interpreter lock and are cached on disk after their first compile.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# exact powers of ten as float64 (10**22 is the largest one exact)
_P10 = 10.0 ** np.arange(23)
_MANTISSA = 2**53


_SLOTS = 64  # a power of two, several times the number of labels


@njit(cache=True, nogil=True)
def _hash(w):
    return np.int64((w * np.uint32(2654435761)) >> np.uint32(26)) & (_SLOTS - 1)


@njit(cache=True, nogil=True)
def _word(a, i):
    return (
        np.uint32(a[i])
        | (np.uint32(a[i + 1]) << 8)
        | (np.uint32(a[i + 2]) << 16)
        | (np.uint32(a[i + 3]) << 24)
    )


@njit(cache=True, nogil=True)
def _matches(a, i, text, start, size):
    # a loop, not all() over a generator: numba compiles loops
    for j in range(4, size):  # noqa: SIM110
        if a[i + j] != text[start + j]:
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


@njit(cache=True, nogil=True)
def find_labels(a, lo, hi, text, offsets, kinds, blank, max_token):
    """Per line (``lo``..``hi``), where each label first occurs, counted from the line's
    start (-1: nowhere), and for a counter (kind 1, 2: a blank after its label) where it
    first looks like one and how often. One pass over the bytes: a byte that starts no
    label costs one table look-up, one that does one more."""
    nl, nk = min(lo.size, hi.size), kinds.size
    first = np.full((nl, nk), -1, np.int64)
    count = np.zeros((nl, nk), np.int64)
    starts = np.zeros(256, np.bool_)  # the labels' first bytes: most bytes start none
    head = np.zeros(nk, np.uint32)  # each label's first four bytes (labels are longer)
    # the labels by their first four bytes: an open-addressing table (linear probing) of
    # label index + 1, so that a candidate is compared with the labels it may be only
    slots = np.zeros(_SLOTS, np.int64)
    for k in range(nk):
        o = offsets[k]
        starts[text[o]] = True
        head[k] = _word(text, o)
        h = _hash(head[k])
        while slots[h]:
            h = (h + 1) & (_SLOTS - 1)
        slots[h] = k + 1
    for line in range(nl):
        s, e = lo[line], hi[line]
        for i in range(s, e - 3):
            if not starts[a[i]]:
                continue
            w = _word(a, i)
            h = _hash(w)
            while slots[h]:
                k = slots[h] - 1
                h = (h + 1) & (_SLOTS - 1)
                if head[k] != w or (kinds[k] == 0 and first[line, k] >= 0):
                    continue
                o = offsets[k]
                size = offsets[k + 1] - o
                if i + size > e or not _matches(a, i, text, o, size):
                    continue
                if kinds[k] == 0:
                    first[line, k] = i - s
                elif _is_counter(a, i, e, size, kinds[k] == 2, blank, max_token - 1):
                    if first[line, k] < 0:
                        first[line, k] = i - s
                    count[line, k] += 1
    return first, count


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
