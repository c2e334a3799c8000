"""Learning-rate schedules of Megatron-LM and MindFormers, simulated step by step.

Pure Python and stdlib only, so ``cfglint lr`` and the lint engine import it cheaply.
``schedule`` holds the shared types and the step-indexing notes, ``megatron`` and
``mindformers`` each framework's schedules, ``curves`` evaluation and comparison, and
``bridge`` the glue from a normalized config.

Each name below is imported from its module on first use (PEP 562): a lint whose
MindFormers schedule is left to run time (``total_steps: -1``) builds one schedule and
compares no curves, and does not import ``curves`` or the other framework's module
(tests/cli/test_import_work.py).
"""

from importlib import import_module
from typing import Any

# name -> the module under this package that defines it
_HOME = {
    "compare": "curves",
    "curve": "curves",
    "largest_abs_gap": "curves",
    "lr_at": "curves",
    "sample": "curves",
    "megatron_schedule": "megatron",
    "wsd_decay_style": "megatron",
    "mindformers_schedule": "mindformers",
    "CurveDiff": "schedule",
    "Schedule": "schedule",
}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value  # later lookups find it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
