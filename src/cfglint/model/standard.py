"""The migration accuracy standard (the guide's acceptance of a migrated run), in one place:
its limits and the errors they are judged on.

Every reader of training curves measures and judges with these: the lint's ``standard.*``
rows from two logs, the runtime probe's gap, and ``cfglint logs``. A limit is met when either
its absolute or its relative bound holds (the global norm has only the relative one). The
second run is the reference (Megatron): relative errors are against its values.

The error functions take equal-length float sequences or numpy arrays (``cfglint logs``
judges million-step runs, so arrays stay vectorized); numpy is never imported here for
anything else, so a plain lint does not pay for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# the checklist rows the standard's measurements are reported on (rules/standard.yaml); the
# rule files' loader fails when one of them has no rule
ROW_FIRST_LOSS = "standard.first_loss"
ROW_MEAN_LOSS = "standard.mean_loss"
ROW_GLOBAL_NORM = "standard.global_norm"
ROW_LOCAL_NORM = "standard.local_norm"
ROW_OPTIMIZER_UPDATE = "standard.optimizer_update"
ROWS = (ROW_FIRST_LOSS, ROW_MEAN_LOSS, ROW_GLOBAL_NORM, ROW_LOCAL_NORM, ROW_OPTIMIZER_UPDATE)

FIRST_LOSS_ABS = 0.005
FIRST_LOSS_REL = 0.005
MEAN_LOSS_ABS = 0.01
MEAN_LOSS_REL = 0.01
GLOBAL_NORM_REL = 0.10
# the guide's acceptance of a converged run: a late-stage loss gap under 1% goes on to
# downstream evaluation instead of further alignment
LATE_GAP_REL = 0.01

FIRST_LOSS_LIMIT = f"limit {FIRST_LOSS_ABS:g} or {FIRST_LOSS_REL:.1%}"
MEAN_LOSS_LIMIT = f"limit {MEAN_LOSS_ABS:g} or {MEAN_LOSS_REL:.0%}"
GLOBAL_NORM_LIMIT = f"limit {GLOBAL_NORM_REL:.0%}"


def first_loss_ok(abs_err: float, rel_err: float) -> bool:
    return abs_err < FIRST_LOSS_ABS or rel_err < FIRST_LOSS_REL


def mean_loss_ok(abs_err: float, rel_err: float) -> bool:
    return abs_err < MEAN_LOSS_ABS or rel_err < MEAN_LOSS_REL


def global_norm_ok(rel_err: float) -> bool:
    return rel_err <= GLOBAL_NORM_REL


# a reference value this close to zero: relative errors are taken against this instead, so a
# zero loss or gradient norm is a large error, never a division by zero
REL_FLOOR = 1e-12


def first_loss_error(a: float, b: float) -> tuple[float, float]:
    """Absolute and relative error of the first-step loss ``a`` against the reference ``b``."""
    err = abs(a - b)
    return err, err / max(abs(b), REL_FLOOR)


def mean_loss_error(a: Sequence[float] | Any, b: Sequence[float] | Any) -> tuple[float, float]:
    """Mean absolute and mean relative loss error over common steps (``a`` against ``b``)."""
    if hasattr(a, "__array__") or hasattr(b, "__array__"):
        import numpy as np

        d = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
        ref = np.maximum(np.abs(np.asarray(b, dtype=float)), REL_FLOOR)
        return float(np.mean(d)), float(np.mean(d / ref))
    n = len(a)
    errs = [abs(x - y) for x, y in zip(a, b, strict=True)]
    rels = [e / max(abs(y), REL_FLOOR) for e, y in zip(errs, b, strict=True)]
    return sum(errs) / n, sum(rels) / n


def global_norm_error(a: Sequence[float] | Any, b: Sequence[float] | Any) -> float:
    """Mean relative error of the global gradient norm over common steps (``a`` against ``b``)."""
    return mean_loss_error(a, b)[1]
