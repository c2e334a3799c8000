"""``cfglint lr``: both learning-rate curves, step by step."""

from __future__ import annotations

import os
import sys
from typing import Any

from cfglint.cli.common import load_pair, painter
from cfglint.evidence.lr.runlength import NAMES, build_schedules
from cfglint.model.errors import InputError


def lr_schedules(
    mf_path: str | None, mg_path: str | None, steps: int | None, launch: str | None = None
) -> dict[str, Any]:
    """Both sides' schedules for ``cfglint lr``, each with a training length."""
    from cfglint.check.pipeline import load_megatron_side, load_mindformers_side

    mf = load_mindformers_side(mf_path, launch) if mf_path else None
    mg = load_megatron_side(mg_path) if mg_path else None
    scheds, _, _ = build_schedules(mf, mg, steps)
    return scheds


def cmd_lr(args: Any) -> int:
    from cfglint.evidence.lr.bridge import MAX_STEPS
    from cfglint.report import lr_plot

    if args.steps is not None and not 0 < args.steps <= MAX_STEPS:
        raise InputError(None, f"--steps must be between 1 and {MAX_STEPS}")
    mf, mg = load_pair(args)
    scheds, notes, assumed = build_schedules(mf, mg, args.steps, args.data)
    paint = painter(args)
    for side, sch in scheds.items():
        sys.stdout.write(
            f"{paint(NAMES[side] + ':', '1'):13}{sch.style}, peak {sch.max_lr:g}, min "
            f"{sch.min_lr:g}, warmup {sch.warmup_steps} steps, {sch.total_steps} steps\n"
        )
    for n in (*notes, *(n for s in scheds.values() for n in s.notes)):
        sys.stdout.write(f"note: {n}\n")
    code = 0
    if len(scheds) == 2:
        a, b = scheds["mindformers"], scheds["megatron"]
        if a.total_steps != b.total_steps:
            sys.stdout.write(
                f"note: the runs end at different steps (MindFormers {a.total_steps}, "
                f"Megatron {b.total_steps}); compared over the {min(a.total_steps, b.total_steps)}"
                " steps both train\n"
            )
        diff = lr_plot.common_diff(a, b)
        if diff.first_diverging_step is None and assumed:
            # equal lengths were assumed, not read: the agreement is conditional
            sys.stdout.write(
                paint(
                    f"Assuming {'; '.join(assumed)}: the curves would agree within 1% over "
                    f"{diff.steps} steps (largest gap {diff.max_rel_gap:.2%}). Give --steps N "
                    "or --data to check the length as well.",
                    "1;33",
                )
                + "\n"
            )
        elif diff.first_diverging_step is None:
            sys.stdout.write(
                paint(
                    f"The curves agree within 1% over {diff.steps} steps (largest gap "
                    f"{diff.max_rel_gap:.2%}).",
                    "32",
                )
                + "\n"
            )
        else:
            code = 1
            sys.stdout.write(
                paint(
                    f"First step where they differ by more than 1%: {diff.first_diverging_step}"
                    f" (MindFormers {diff.a_at_first:.6g}, Megatron {diff.b_at_first:.6g}); "
                    f"largest gap {diff.max_rel_gap:.2%} at step {diff.max_gap_step}.",
                    "1;33",
                )
                + "\n"
            )
    from cfglint.cli.terminal import term_width

    sys.stdout.write(
        lr_plot.plot_terminal(*scheds.values(), width=min(term_width(), 120), assumed=bool(assumed))
        + "\n"
    )
    if args.plot:
        title = "Learning rate: " + " vs ".join(
            os.path.basename(c.path) for c in (mf, mg) if c is not None
        )
        try:
            lr_plot.write_png(scheds, title, args.plot)
        except RuntimeError as exc:
            raise InputError(args.plot, str(exc)) from None
        except OSError as exc:
            raise InputError(args.plot, f"cannot write the plot: {exc.strerror}") from None
        sys.stdout.write(f"wrote {args.plot}\n")
    return code
