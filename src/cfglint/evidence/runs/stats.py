"""Streaming-friendly statistics on a difference curve: O(n) smoothing, envelopes and the
sign and runs tests the drift judgement rests on."""

from __future__ import annotations

import math

import numpy as np


def running_mean(x: np.ndarray, w: int) -> np.ndarray:
    """Centered mean over ``w`` samples (shorter at the ends), from one cumulative sum."""
    n = x.size
    if n == 0 or w <= 1:
        return x.astype(np.float64, copy=True)
    c = np.concatenate(([0.0], np.cumsum(x, dtype=np.float64)))
    half = w // 2
    lo = np.clip(np.arange(n) - half, 0, n)
    hi = np.clip(np.arange(n) + (w - half), 0, n)
    return (c[hi] - c[lo]) / (hi - lo)


def running_max(x: np.ndarray, w: int) -> np.ndarray:
    """An upper envelope: the max of each ``w``-sample block and its two neighbours, so
    every sample sees at least ``w`` samples either side (NaN ignored)."""
    n = x.size
    if n == 0 or w <= 1:
        return x.copy()
    nb = -(-n // w)
    pad = np.full(nb * w, -np.inf)
    pad[:n] = np.where(np.isfinite(x), x, -np.inf)
    blocks = pad.reshape(nb, w).max(axis=1)
    ext = np.concatenate(([-np.inf], blocks, [-np.inf]))
    env = np.maximum(np.maximum(ext[:-2], ext[1:-1]), ext[2:])
    out = np.repeat(env, w)[:n]
    return np.where(np.isfinite(out), out, np.nan)


def robust_sigma(x: np.ndarray) -> float:
    """Standard deviation from the median absolute deviation (outliers do not inflate it)."""
    if x.size == 0:
        return 0.0
    med = float(np.median(x))
    return 1.4826 * float(np.median(np.abs(x - med)))


def sign_test(pos: int, neg: int) -> float:
    """Two-sided binomial p-value of ``pos`` successes in ``pos + neg`` fair trials."""
    n = pos + neg
    if n == 0:
        return 1.0
    k = max(pos, neg)
    if n > 1000:  # normal approximation, continuity-corrected
        z = (k - 0.5 - n / 2) / math.sqrt(n / 4)
        return min(1.0, math.erfc(z / math.sqrt(2)))
    tail = sum(math.comb(n, i) for i in range(k, n + 1)) / 2.0**n
    return min(1.0, 2 * tail)


def runs_test(signs: np.ndarray) -> float:
    """Wald-Wolfowitz z of the number of sign runs: about 0 for noise that changes sign at
    random, strongly negative for a difference that keeps its sign for long stretches."""
    s = signs[signs != 0]
    n1, n2 = int((s > 0).sum()), int((s < 0).sum())
    n = n1 + n2
    if n1 == 0 or n2 == 0:
        return -math.inf if n > 1 else 0.0
    runs = 1 + int(np.count_nonzero(s[1:] != s[:-1]))
    mu = 2 * n1 * n2 / n + 1
    var = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1))
    return (runs - mu) / math.sqrt(var) if var > 0 else 0.0


def slope(x: np.ndarray, y: np.ndarray) -> float:
    if x.size < 2:
        return 0.0
    xm, ym = x.mean(), y.mean()
    den = float(((x - xm) ** 2).sum())
    return float(((x - xm) * (y - ym)).sum()) / den if den else 0.0


def print_resolution(x: np.ndarray) -> float:
    """The smallest step between the distinct printed values (a log that prints three
    decimals cannot show a difference below 0.0005)."""
    u = np.unique(x[np.isfinite(x)][:20000])
    if u.size < 2:
        return 0.0
    return float(np.diff(u).min())
