"""Drawing ``cfglint lr``: one or two learning-rate curves, each stopping where its run ends.

The curves come from :mod:`cfglint.evidence.lr` (the step-by-step simulation); this module
only draws them: in the terminal (plain characters, the same everywhere) and as a PNG
(matplotlib, imported only here and only for ``--plot``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfglint.evidence.lr.schedules import Schedule, compare, curve

NAMES = {"mindformers": "MindFormers", "megatron": "Megatron"}
MARKS = {"mindformers": "*", "megatron": "o"}
PNG_POINTS = 5000  # a curve is sampled on at most this many steps


@dataclass(frozen=True)
class Gap:
    """Where two curves differ, over the steps both runs train."""

    steps: int
    first: int | None
    first_values: tuple[float, float] | None
    largest: float
    at: int


def gap(a: Schedule, b: Schedule) -> Gap:
    n = min(a.total_steps, b.total_steps)
    d = compare(a, b, n)
    first_values = (
        (d.a_at_first or 0.0, d.b_at_first or 0.0) if d.first_diverging_step is not None else None
    )
    return Gap(n, d.first_diverging_step, first_values, d.max_rel_gap, d.max_gap_step)


def _points(s: Schedule, limit: int) -> tuple[list[int], list[float]]:
    ys = curve(s, s.total_steps)
    stride = max(1, s.total_steps // limit)
    xs = list(range(1, s.total_steps + 1, stride))
    if xs[-1] != s.total_steps:
        xs.append(s.total_steps)
    return xs, [ys[x - 1] for x in xs]


def plot_terminal(scheds: dict[str, Schedule], width: int = 100, height: int = 22) -> str:
    """Each curve drawn with its own mark up to its last step; ``#`` where they overlap."""
    n = max(s.total_steps for s in scheds.values())
    label_w = 9
    cols = max(10, width - label_w - 2)
    rows = max(5, height - 3)
    steps = [1 + round(c * (n - 1) / (cols - 1)) for c in range(cols)]
    series: dict[str, list[float | None]] = {}
    for side, s in scheds.items():
        ys = curve(s, s.total_steps)
        series[side] = [ys[x - 1] if x <= s.total_steps else None for x in steps]
    known = [v for ys in series.values() for v in ys if v is not None]
    top, bottom = max(known), min(known)
    span = (top - bottom) or 1.0
    grid = [[" "] * cols for _ in range(rows)]
    for side, ys in series.items():
        for c, v in enumerate(ys):
            if v is None:
                continue
            r = round((top - v) / span * (rows - 1))
            grid[r][c] = "#" if grid[r][c] not in (" ", MARKS[side]) else MARKS[side]
    labels = {0: top, rows // 2: (top + bottom) / 2, rows - 1: bottom}
    out = [
        f"{f'{labels[i]:.2e}' if i in labels else '':>{label_w}} |{''.join(line)}"
        for i, line in enumerate(grid)
    ]
    out.append(" " * label_w + " +" + "-" * cols)
    axis = [" "] * cols
    axis[-len(str(n)) :] = str(n)
    axis[0] = "1"
    out.append(f"{'step':>{label_w}}  " + "".join(axis))
    legend = "   ".join(f"{MARKS[side]} {NAMES[side]}" for side in scheds)
    if len(scheds) == 2:
        legend += "   # both"
    out.append("  " + legend)
    return "\n".join(out)


def figure_for(scheds: dict[str, Schedule], title: str) -> Any:
    """The PNG's figure: a curve per side that stops at its run's last step, the end of
    each warmup and (for a pair) the step with the largest gap marked."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:  # declared as a dependency; a broken install still says so
        raise RuntimeError("matplotlib is not installed; pip install matplotlib") from exc
    fig = Figure(figsize=(10, 5.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    colors = {"mindformers": "tab:blue", "megatron": "tab:orange"}
    styles = {"mindformers": "-", "megatron": "--"}
    for side, s in scheds.items():
        xs, ys = _points(s, PNG_POINTS)
        ax.plot(
            xs,
            ys,
            styles[side],
            color=colors[side],
            label=f"{NAMES[side]}: {s.style}, {s.total_steps} steps",
        )
        if s.warmup_steps > 0:
            ax.axvline(
                s.warmup_steps,
                color=colors[side],
                linestyle=":",
                linewidth=1,
                label=f"{NAMES[side]} warmup ends (step {s.warmup_steps})",
            )
    if len(scheds) == 2:
        g = gap(scheds["mindformers"], scheds["megatron"])
        if g.largest > 0:
            ax.axvline(
                g.at,
                color="red",
                linestyle="-.",
                linewidth=1,
                label=f"largest gap {g.largest:.1%} (step {g.at})",
            )
    ax.set_title(title)
    ax.set_xlabel("optimizer step (1 = first update)")
    ax.set_ylabel("learning rate")
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def write_png(scheds: dict[str, Schedule], title: str, path: str) -> None:
    figure_for(scheds, title).savefig(path, dpi=110)
