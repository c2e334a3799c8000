"""``cfglint lr``: both learning-rate curves, step by step."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from cfglint.check.schedules import NAMES, LrComparison, check_steps, compare_lr
from cfglint.cli.common import load_pair, painter
from cfglint.model.errors import InputError


def _verdict(cmp: LrComparison, paint: Callable[[str, str], str]) -> str:
    """The line that says whether the two curves agree (both sides only)."""
    diff = cmp.diff
    assert diff is not None
    if diff.first_diverging_step is None and cmp.assumed:
        # equal lengths were assumed, not read: the agreement is conditional
        return paint(
            f"Assuming {'; '.join(cmp.assumed)}: the curves would agree within 1% over "
            f"{diff.steps} steps (largest gap {diff.max_rel_gap:.2%}). Give --steps N "
            "or --data to check the length as well.",
            "1;33",
        )
    if diff.first_diverging_step is None:
        return paint(
            f"The curves agree within 1% over {diff.steps} steps (largest gap "
            f"{diff.max_rel_gap:.2%}).",
            "32",
        )
    return paint(
        f"First step where they differ by more than 1%: {diff.first_diverging_step}"
        f" (MindFormers {diff.a_at_first:.6g}, Megatron {diff.b_at_first:.6g}); "
        f"largest gap {diff.max_rel_gap:.2%} at step {diff.max_gap_step}.",
        "1;33",
    )


def _text(cmp: LrComparison, paint: Callable[[str, str], str]) -> str:
    lines = [
        f"{paint(NAMES[side] + ':', '1'):13}{sch.style}, peak {sch.max_lr:g}, min "
        f"{sch.min_lr:g}, warmup {sch.warmup_steps} steps, {sch.total_steps} steps"
        for side, sch in cmp.schedules.items()
    ]
    lines += [f"note: {n}" for n in cmp.notes]
    if cmp.diff is not None:
        if cmp.common_steps is not None:
            a, b = cmp.schedules["mindformers"], cmp.schedules["megatron"]
            lines.append(
                f"note: the runs end at different steps (MindFormers {a.total_steps}, "
                f"Megatron {b.total_steps}); compared over the {cmp.common_steps}"
                " steps both train"
            )
        lines.append(_verdict(cmp, paint))
    return "".join(line + "\n" for line in lines)


def cmd_lr(args: argparse.Namespace) -> int:
    from cfglint.cli.terminal import term_width
    from cfglint.report import lr_plot

    check_steps(args.steps)  # before reading any file
    mf, mg = load_pair(args)
    cmp = compare_lr(mf, mg, args.steps, args.data)
    sys.stdout.write(_text(cmp, painter(args)))
    sys.stdout.write(
        lr_plot.plot_terminal(
            *cmp.schedules.values(), width=min(term_width(), 120), assumed=bool(cmp.assumed)
        )
        + "\n"
    )
    if args.plot:
        title = "Learning rate: " + " vs ".join(
            os.path.basename(c.path) for c in (mf, mg) if c is not None
        )
        try:
            lr_plot.write_png(cmp.schedules, title, args.plot)
        except RuntimeError as exc:
            raise InputError(args.plot, str(exc)) from None
        except OSError as exc:
            raise InputError(args.plot, f"cannot write the plot: {exc.strerror}") from None
        sys.stdout.write(f"wrote {args.plot}\n")
    return 1 if cmp.differ else 0
