"""Per-step loss and gradient norm from training logs of either framework.

Megatron prints ``iteration  N/ M | ... | lm loss: 1.0E+01 | ... | grad norm: 1.2 |``;
MindFormers prints ``{ Epoch:[ 1/ 1], step:[ N/ M], loss: 10.1, ..., global_norm: [1.2] ...``.
The file is streamed; only those lines are read.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field

from cfglint.model.errors import InputError

_MG_ITER = re.compile(r"iteration\s+(\d+)\s*/\s*\d+\s*\|")
_MG_LOSS = re.compile(r"\blm loss:\s*([-+0-9.eE]+)")
_MG_NORM = re.compile(r"\bgrad norm:\s*([-+0-9.eE]+)")
_MF_STEP = re.compile(r"step:\s*\[\s*(\d+)\s*/\s*\d+\s*\]")
_MF_LOSS = re.compile(r"\bloss:\s*([-+0-9.eE]+)")
_MF_NORM = re.compile(r"global_norm:\s*\[?\s*([-+0-9.eE]+)")
MAX_LINES = 5_000_000


@dataclass
class LossLog:
    path: str
    framework: str  # "megatron" or "mindformers"
    loss: dict[int, float] = field(default_factory=dict)
    grad_norm: dict[int, float] = field(default_factory=dict)
    first_line: dict[int, int] = field(default_factory=dict)


def read_loss_log(path: str) -> LossLog:
    if not os.path.isfile(path):
        raise InputError(path, "no such training log")
    mg, mf = LossLog(path, "megatron"), LossLog(path, "mindformers")
    try:
        fh = open(path, "rb")  # noqa: SIM115 -- opened apart from `with` to report errors cleanly
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    with fh:
        for n, raw in enumerate(fh, start=1):
            if n > MAX_LINES:
                break
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
