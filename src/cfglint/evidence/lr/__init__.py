"""Learning-rate schedules of Megatron-LM and MindFormers, simulated step by step.

Pure Python and stdlib only, so ``cfglint lr`` and the lint engine import it cheaply.
``schedule`` holds the shared types and the step-indexing notes, ``megatron`` and
``mindformers`` each framework's schedules, ``curves`` evaluation and comparison, and
``bridge`` the glue from a normalized config.
"""

from cfglint.evidence.lr.curves import compare, curve, largest_abs_gap, lr_at, sample
from cfglint.evidence.lr.megatron import megatron_schedule, wsd_decay_style
from cfglint.evidence.lr.mindformers import mindformers_schedule
from cfglint.evidence.lr.schedule import CurveDiff, Schedule

__all__ = [
    "CurveDiff",
    "Schedule",
    "compare",
    "curve",
    "largest_abs_gap",
    "lr_at",
    "megatron_schedule",
    "mindformers_schedule",
    "sample",
    "wsd_decay_style",
]
