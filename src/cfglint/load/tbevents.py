"""Per-step series from TensorBoard event files, read with tensorboard's own event reader.

Scalar tags each framework writes: Megatron-LM (megatron/training/training.py:3380-3428
@d98e8a64) ``lm loss``, ``learning-rate``, ``loss-scale``, ``grad-norm``, ``iteration-time``
(seconds), ``throughput``; MindFormers through tensorboardX (mindformers/core/callback/
callback.py:495-535@fd4deebc) ``loss``, ``learning-rate``, ``loss-scale``, ``grad-norm``,
``iteration-time`` (milliseconds), ``model-flops-throughput-per-npu``. The ``... vs samples``
copies are skipped. tensorboard is an optional extra, imported only here.
"""

from __future__ import annotations

import os

import numpy as np

from cfglint import install_hint
from cfglint.load.losslog import SERIES, RunLog
from cfglint.load.safeio import check_regular
from cfglint.model.errors import InputError

INSTALL = install_hint("logs")
MAX_EVENTS = 20_000_000
TAGS: dict[str, dict[str, str]] = {
    "megatron": {
        "lm loss": "loss",
        "learning-rate": "lr",
        "loss-scale": "loss_scale",
        "grad-norm": "grad_norm",
        "throughput": "throughput",
    },
    "mindformers": {
        "loss": "loss",
        "learning-rate": "lr",
        "loss-scale": "loss_scale",
        "grad-norm": "grad_norm",
        "model-flops-throughput-per-npu": "throughput",
    },
}
# iteration-time: Megatron writes seconds, MindFormers milliseconds
TIME_SCALE = {"megatron": 1000.0, "mindformers": 1.0}


def is_event_path(path: str) -> bool:
    """An event file, or a folder holding some (TensorBoard's run folder)."""
    if os.path.isdir(path):
        return bool(_event_files(path))
    return "tfevents" in os.path.basename(path)


def _event_files(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if "tfevents" in n]


def read_events(path: str, framework: str) -> RunLog:
    try:
        from tensorboard.backend.event_processing.event_file_loader import (
            LegacyEventFileLoader,
        )
        from tensorboard.util import tensor_util
    except ImportError:
        raise InputError(
            path, f"reading TensorBoard event files needs tensorboard: {INSTALL}"
        ) from None
    files = _event_files(path) if os.path.isdir(path) else [path]
    if not files:
        raise InputError(path, "no TensorBoard event file (events.out.tfevents.*) in this folder")
    tags = TAGS[framework]
    rows: dict[str, dict[int, float]] = {k: {} for k in SERIES}
    seen = 0
    for f in files:  # in name order: a resumed run's later file wins
        check_regular(f, what="TensorBoard event file")
        try:
            for event in LegacyEventFileLoader(f).Load():
                seen += 1
                if seen > MAX_EVENTS:
                    break
                for v in event.summary.value:
                    name = tags.get(v.tag) or ("step_time_ms" if v.tag == "iteration-time" else "")
                    if not name:
                        continue
                    if v.HasField("simple_value"):
                        x = float(v.simple_value)
                    else:
                        x = float(np.asarray(tensor_util.make_ndarray(v.tensor)).reshape(-1)[0])
                    if name == "step_time_ms":
                        x *= TIME_SCALE[framework]
                    rows[name][int(event.step)] = x
        except InputError:
            raise
        except Exception as exc:  # a corrupt record: one line, not the reader's traceback
            raise InputError(f, f"cannot read TensorBoard event file: {exc}") from None
    if not rows["loss"]:
        want = " or ".join(k for k, v in tags.items() if v == "loss")
        raise InputError(path, f"no '{want}' scalars in the TensorBoard events")
    steps = np.array(sorted(rows["loss"]), dtype=np.int64)
    series = {
        k: np.array([d.get(int(s), np.nan) for s in steps], dtype=np.float64)
        for k, d in rows.items()
        if d
    }
    return RunLog(path, framework, source="TensorBoard events", steps=steps, series=series)
