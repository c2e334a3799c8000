"""``cfglint probe ... --log-dir DIR``: each side's probe curves as that framework's own
training log, so that ``cfglint logs`` reads runs whose cause is known.

Four files: ``mindformers.log`` / ``megatron.log`` (the configured learning rates) and
``mindformers_lr0.log`` / ``megatron_lr0.log`` (lr = 0, the guide's forward/backward check).
Each line is what the framework prints, with its precision:

- MindFormers ``MFLossMonitor`` in sink mode as the v1.7.0 release prints it
  (mindformers/core/callback/callback.py:532,544-547@8ccc49b3): ``loss: %5.6f``, the lr as
  numpy prints a float32 scalar, the global norm as a one-element tensor. Releases up to
  v1.6.0 print three decimals (``loss: %5.3f``, callback.py:489@68fa8494); v1.7.0 and the
  later branches six (r1.8.0 callback.py:604@1a72d558), which shows the small differences a
  weight-decay or precision cause makes.
- Megatron ``training_log`` (training.py:3567-3641@d98e8a64): loss ``.6E``, lr ``.6E``,
  grad norm ``.3f``, loss scale ``.1f``.

Both print, at step ``i``, the rate of step ``i + 1`` (the scheduler has stepped; see
evidence/lr/schedule.py). Times are not measured: a fixed clock keeps the files
reproducible.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from cfglint.load.outputs import check_folder, check_target, write_atomic
from cfglint.model.errors import InputError

MODES = {"cfg": "", "zero": "_lr0"}
SIDES = ("mindformers", "megatron")
# what a log is called in the output rule's messages
LOG_WHAT = "probe log"
# decimals of MindFormers' loss print (v1.7.0, callback.py:532@8ccc49b3)
MF_LOSS_DECIMALS = 6
CLOCK = datetime(2026, 1, 1)


def log_path(log_dir: str, side: str, mode: str) -> str:
    """The one place a log's name is made: ``<side><suffix>.log`` in ``log_dir``."""
    return os.path.join(log_dir, f"{side}{MODES[mode]}.log")


def check_log_dir(log_dir: str, inputs: Iterable[str] = ()) -> None:
    """The output rule (load/outputs.py) on the folder and on every log the probe may write
    there, before any work: a link, an input, a read-only file or a folder at a log's name
    is one :class:`InputError` naming it, not a failure after the whole probe has run."""
    inputs = list(inputs)
    check_folder(log_dir, inputs)
    if not os.path.isdir(log_dir):
        return  # created by write_logs; check_folder has checked its parent
    for side in SIDES:
        for mode in MODES:
            path = log_path(log_dir, side, mode)
            if os.path.lexists(path):
                check_target(path, inputs, what=LOG_WHAT)


def write_logs(result: Any, log_dir: str) -> list[str]:
    """Write the four logs under the output rule (load/outputs.py: checked before the probe
    ran, checked again here, written atomically, never over an input or through a link);
    returns their paths."""
    check_log_dir(log_dir)
    try:
        os.makedirs(log_dir, exist_ok=True)
    except OSError as exc:
        raise InputError(log_dir, f"cannot create the --log-dir folder: {exc.strerror}") from None
    runs = result.side_runs
    mg_run, mg_spec = runs["megatron"]
    mf_run, mf_spec, mf_framework = runs["mindformers"]
    written = []
    for mode in MODES:
        if mode not in mg_run.curves or mode not in mf_run.curves:
            continue
        for side, text in (
            ("mindformers", mindformers_log(mf_run.curves[mode], mf_spec, mode, mf_framework)),
            ("megatron", megatron_log(mg_run.curves[mode], mg_spec, mode)),
        ):
            path = log_path(log_dir, side, mode)
            write_atomic(path, text, what=LOG_WHAT)
            written.append(path)
    return written


def _printed_lr(spec: Any, mode: str, step: int) -> float:
    return 0.0 if mode == "zero" else float(spec.lr_at(step + 1))


def mindformers_log(curve: Any, spec: Any, mode: str, framework: str) -> str:
    n = len(curve.loss)
    out = [
        f"{_stamp(0, ',')} - mindformers - INFO - cfglint probe: {n} steps of the MindFormers "
        f"spec in {framework}, lr {'0' if mode == 'zero' else 'as configured'}\n"
    ]
    for i, (loss, gn) in enumerate(zip(curve.loss, curve.grad_norm, strict=True), 1):
        lr = np.array2string(np.float32(_printed_lr(spec, mode, i)))
        norm = np.array2string(np.array([gn], dtype=np.float32))
        out.append(
            f"{_stamp(i, ',')} - mindformers[mindformers/core/callback/callback.py:544] - INFO - "
            f"{{ Epoch:[  1/  1], step:[{i:5d}/{n:5d}], loss: {loss:5.{MF_LOSS_DECIMALS}f}, "
            f"per_step_time: 0ms, lr: {lr}, overflow cond: False, loss_scale: 1.0, "
            f"global_norm: {norm}\n"
        )
    return "".join(out)


def megatron_log(curve: Any, spec: Any, mode: str) -> str:
    n = len(curve.loss)
    gbs = int(spec.batch)
    out = [f"cfglint probe: {n} steps of the Megatron spec in torch\n"]
    for i, (loss, gn) in enumerate(zip(curve.loss, curve.grad_norm, strict=True), 1):
        out.append(
            f" [{_stamp(i, '.')}] iteration {i:8d}/{n:8d} | consumed samples: {i * gbs:12d} | "
            f"elapsed time per iteration (ms): 0.0 | learning rate: "
            f"{_printed_lr(spec, mode, i):.6E} | global batch size: {gbs:5d} | lm loss: "
            f"{loss:.6E} | loss scale: 1.0 | grad norm: {gn:.3f} | number of skipped "
            f"iterations:   0 | number of nan iterations:   0 |\n"
        )
    return "".join(out)


def _stamp(i: int, sep: str) -> str:
    t = CLOCK + timedelta(seconds=i)
    return t.strftime("%Y-%m-%d %H:%M:%S") + f"{sep}000"
