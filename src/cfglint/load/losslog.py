"""Per-step loss and gradient norm from training logs of either framework.

Megatron prints ``iteration  N/ M | ... | lm loss: 1.0E+01 | ... | grad norm: 1.2 |``;
MindFormers prints ``{ Epoch:[ 1/ 1], step:[ N/ M], loss: 10.1, ..., global_norm: [1.2] ...``.
The file is streamed; only those lines are read.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

from cfglint.load.safeio import iter_lines, open_regular
from cfglint.model.errors import InputError

# step numbers are bounded to 18 digits: int() of a 5,000-digit run would raise
_MG_ITER = re.compile(r"iteration\s+(\d{1,18})\s*/\s*\d+\s*\|")
_MG_LOSS = re.compile(r"\blm loss:\s*([-+0-9.eE]+)")
_MG_NORM = re.compile(r"\bgrad norm:\s*([-+0-9.eE]+)")
_MF_STEP = re.compile(r"step:\s*\[\s*(\d{1,18})\s*/\s*\d+\s*\]")
_MF_LOSS = re.compile(r"\bloss:\s*([-+0-9.eE]+)")
_MF_NORM = re.compile(r"global_norm:\s*\[?\s*([-+0-9.eE]+)")
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
            # most lines of a real log are neither kind: skip them before decoding
            if too_long or (b"iteration" not in raw and b"step:" not in raw):
                continue
            line = raw.decode("utf-8", "replace")
            m = _MG_ITER.search(line)
            if m:
                _take(mg, int(m.group(1)), line, _MG_LOSS, _MG_NORM, n)
                continue
            m = _MF_STEP.search(line)
            if m:
                _take(mf, int(m.group(1)), line, _MF_LOSS, _MF_NORM, n)
    best = mg if len(mg.loss) >= len(mf.loss) else mf
    if not best.loss:
        raise InputError(
            path,
            "no per-step loss lines found (Megatron 'iteration ... lm loss:' "
            "or MindFormers 'step:[...] loss:')",
        )
    return best


def _take(
    log: LossLog, step: int, line: str, lre: re.Pattern[str], nre: re.Pattern[str], n: int
) -> None:
    lm = lre.search(line)
    if lm:
        try:
            log.loss[step] = float(lm.group(1))
            log.first_line.setdefault(step, n)
        except ValueError:
            return
    nm = nre.search(line)
    if nm:
        with contextlib.suppress(ValueError):
            log.grad_norm[step] = float(nm.group(1))
