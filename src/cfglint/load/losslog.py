"""Per-step loss and gradient norm from training logs of either framework.

Megatron prints ``iteration  N/ M | ... | lm loss: 1.0E+01 | ... | grad norm: 1.2 |``;
MindFormers prints ``{ Epoch:[ 1/ 1], step:[ N/ M], loss: 10.1, ..., global_norm: [1.2] ...``.
The file is streamed; only those lines are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cfglint.load.safeio import iter_lines, open_regular
from cfglint.model.errors import InputError

# Lines are matched as bytes (no decoding) and each number is found by a plain substring
# search for its key, then matched in place: a leading \b kept the regex engine from its
# literal-prefix search, which made a 200 MB log cost half a minute.
# Step numbers are bounded to 18 digits: int() of a 5,000-digit run would raise.
_MG_ITER = re.compile(rb"iteration\s+(\d{1,18})\s*/\s*\d+\s*\|")
_MF_STEP = re.compile(rb"step:\s*\[\s*(\d{1,18})\s*/\s*\d+\s*\]")
_NUMBER = re.compile(rb"\s*([-+0-9.eE]+)")
_LISTED_NUMBER = re.compile(rb"\s*\[?\s*([-+0-9.eE]+)")
# (key, must follow a non-word character, pattern of the number after it)
_MG_KEYS = ((b"lm loss:", True, _NUMBER), (b"grad norm:", True, _NUMBER))
_MF_KEYS = ((b"loss:", True, _NUMBER), (b"global_norm:", False, _LISTED_NUMBER))
MAX_LINES = 5_000_000
# Reading stops after this many bytes: the steps that decide a comparison come first, and a
# multi-GB log must not cost minutes or unbounded memory.
MAX_BYTES = 256 * 1024 * 1024
MAX_LINE = 64 * 1024


@dataclass
class LossLog:
    path: str
    framework: str  # "megatron" or "mindformers"
    loss: dict[int, float] = field(default_factory=dict)
    grad_norm: dict[int, float] = field(default_factory=dict)
    first_line: dict[int, int] = field(default_factory=dict)


def read_loss_log(path: str) -> LossLog:
    mg, mf = LossLog(path, "megatron"), LossLog(path, "mindformers")
    seen = 0
    with open_regular(path, what="training log") as fh:
        for n, raw, too_long in iter_lines(fh, path, what="training log", max_line=MAX_LINE):
            seen += len(raw)
            if n > MAX_LINES or seen > MAX_BYTES:
                break
            # most lines of a real log are neither kind
            if too_long or (b"iteration" not in raw and b"step:" not in raw):
                continue
            m = _MG_ITER.search(raw)
            if m:
                _take(mg, int(m.group(1)), raw, _MG_KEYS, n)
                continue
            m = _MF_STEP.search(raw)
            if m:
                _take(mf, int(m.group(1)), raw, _MF_KEYS, n)
    best = mg if len(mg.loss) >= len(mf.loss) else mf
    if not best.loss:
        raise InputError(
            path,
            "no per-step loss lines found (Megatron 'iteration ... lm loss:' "
            "or MindFormers 'step:[...] loss:')",
        )
    return best


def _number_after(
    line: bytes, key: bytes, boundary: bool, pat: re.Pattern[bytes]
) -> tuple[bool, float | None]:
    """(found, value) of the number after the first ``key`` (at a word boundary if
    ``boundary``), as ``re.search(rb"\\b" + key + ...)`` finds it; value None when the
    number does not parse."""
    i = line.find(key)
    while i >= 0:
        prev = line[i - 1 : i]
        if not boundary or not prev or not (prev.isalnum() or prev == b"_"):
            m = pat.match(line, i + len(key))
            if m:
                try:
                    return True, float(m.group(1))
                except ValueError:
                    return True, None
        i = line.find(key, i + 1)
    return False, None


def _take(
    log: LossLog,
    step: int,
    line: bytes,
    keys: tuple[tuple[bytes, bool, re.Pattern[bytes]], ...],
    n: int,
) -> None:
    (lkey, lb, lpat), (nkey, nb, npat) = keys
    found, loss = _number_after(line, lkey, lb, lpat)
    if found:
        if loss is None:
            return  # a malformed loss: the line is skipped whole
        log.loss[step] = loss
        log.first_line.setdefault(step, n)
    _, norm = _number_after(line, nkey, nb, npat)
    if norm is not None:
        log.grad_norm[step] = norm
