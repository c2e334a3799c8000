"""The migration accuracy standard (the guide's acceptance of a migrated run), in one place.

Every reader of training curves judges against these: the lint's ``standard.*`` rows from
two logs, the runtime probe's gap, and ``cfglint logs``. A limit is met when either its
absolute or its relative bound holds (the global norm has only the relative one).
"""

from __future__ import annotations

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
