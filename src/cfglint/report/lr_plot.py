"""Learning-rate curves drawn in the terminal or as a PNG (matplotlib, imported only here).

One or two schedules; each curve stops at its own run's last step, so a shorter run is
never drawn (or compared) as a learning rate of 0 after it ends. A pair is compared only
over the steps both runs train.
"""

from __future__ import annotations

from typing import Any

from cfglint.evidence.lr import CurveDiff, Schedule, compare, largest_abs_gap, sample

NAMES = {"mindformers": "MindFormers", "megatron": "Megatron"}
MARKS = ("*", "o")
PNG_POINTS = 5000  # a curve is sampled on at most this many steps


def _fmt_lr(value: float) -> str:
    return f"{value:.2e}"


def common_diff(a: Schedule, b: Schedule) -> CurveDiff:
    """How two curves differ over the steps both runs train."""
    return compare(a, b, min(a.total_steps, b.total_steps))


def _legend(scheds: tuple[Schedule, ...], assumed: bool = False) -> list[str]:
    names = "   ".join(f"{m} {s.label}" for m, s in zip(MARKS, scheds, strict=False))
    if len(scheds) == 1:
        return [f"  {names}"]
    a, b = scheds
    diff = common_diff(a, b)
    lines = [f"  {names}   # both"]
    if diff.first_diverging_step is None:
        lines.append(
            f"  within 1% at every one of the {diff.steps} steps, with the run length assumed"
            if assumed
            else f"  the curves agree within 1% at every step both runs train ({diff.steps})"
        )
    else:
        lines.append(
            f"  | first divergence at step {diff.first_diverging_step}: "
            f"{_fmt_lr(diff.a_at_first or 0.0)} vs {_fmt_lr(diff.b_at_first or 0.0)}; "
            f"largest gap {diff.max_rel_gap:.1%} at step {diff.max_gap_step}"
        )
    return lines


def _divergence_column(scheds: tuple[Schedule, ...], n: int, cols: int) -> int | None:
    """The column of the first step where two curves part by more than 1%, if they do."""
    if len(scheds) != 2:
        return None
    diff = common_diff(*scheds)
    if diff.first_diverging_step is None:
        return None
    return round((diff.first_diverging_step - 1) * (cols - 1) / max(n - 1, 1))


def _grid(series: list[list[float | None]], rows: int, cols: int, mark: int | None) -> Any:
    """The curves drawn on a rows x cols grid, and its top and bottom values."""
    known = [v for ys in series for v in ys if v is not None]
    top, bottom = max(known), min(known)
    span = (top - bottom) or 1.0
    grid = [[" "] * cols for _ in range(rows)]
    if mark is not None:
        for line in grid:
            line[mark] = "|"
    for m, ys in zip(MARKS, series, strict=False):
        for c, v in enumerate(ys):
            if v is None:
                continue
            r = round((top - v) / span * (rows - 1))
            grid[r][c] = "#" if grid[r][c] in MARKS and grid[r][c] != m else m
    return grid, top, bottom


def plot_terminal(
    *scheds: Schedule, width: int = 100, height: int = 25, assumed: bool = False
) -> str:
    """One or two curves as text: ``*`` the first, ``o`` the second, ``#`` where they
    overlap, ``|`` the first divergence. Plain characters, the same on every terminal."""
    if not 1 <= len(scheds) <= 2:
        raise ValueError("plot_terminal draws one or two schedules")
    n = max(s.total_steps for s in scheds)
    legend = _legend(scheds, assumed)
    label_w = 9
    cols = max(10, width - label_w - 2)
    rows = max(5, height - 2 - len(legend))
    steps = [1 + round(c * (n - 1) / (cols - 1)) for c in range(cols)]
    series = []
    for s in scheds:
        # only the plotted steps are evaluated: the whole curve of a long run is GBs
        ys = sample(s, [x for x in steps if x <= s.total_steps])
        series.append(ys + [None] * (len(steps) - len(ys)))
    mark = _divergence_column(scheds, n, cols)
    grid, top, bottom = _grid(series, rows, cols, mark)
    labels = {0: top, rows // 2: (top + bottom) / 2, rows - 1: bottom}
    out = [
        f"{_fmt_lr(labels[i]) if i in labels else '':>{label_w}} |{''.join(line)}"
        for i, line in enumerate(grid)
    ]
    out.append(" " * label_w + " +" + "-" * cols)
    axis = [" "] * cols
    axis[-len(str(n)) :] = str(n)
    axis[0] = "1"
    if mark is not None:
        axis[mark] = "^"
    out.append(f"{'step':>{label_w}}  " + "".join(axis))
    return "\n".join(out + legend)


def _points(s: Schedule) -> tuple[list[int], list[float]]:
    stride = max(1, s.total_steps // PNG_POINTS)
    xs = list(range(1, s.total_steps + 1, stride))
    if xs[-1] != s.total_steps:
        xs.append(s.total_steps)
    return xs, sample(s, xs)


def figure_for(scheds: dict[str, Schedule], title: str) -> Any:
    """The PNG's figure: a curve per side that stops at its run's last step, the end of
    each warmup, and (for a pair) the step with the largest gap, all marked."""
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
        xs, ys = _points(s)
        name = NAMES.get(side, side)
        ax.plot(
            xs,
            ys,
            styles.get(side, "-"),
            color=colors.get(side),
            label=f"{name}: {s.style}, {s.total_steps} steps",
        )
        if s.warmup_steps > 0:
            ax.axvline(
                s.warmup_steps,
                color=colors.get(side),
                linestyle=":",
                linewidth=1,
                label=f"{name} warmup ends (step {s.warmup_steps})",
            )
    if len(scheds) == 2:
        # the largest absolute gap: a relative gap peaks where both rates are near zero
        # (the end of a decay), which says little on a plot
        a, b = scheds.values()
        n = min(a.total_steps, b.total_steps)
        at, va, vb = largest_abs_gap(a, b, n)
        if va != vb:
            ax.axvline(
                at + 1,
                color="red",
                linestyle="-.",
                linewidth=1,
                label=f"largest absolute gap at step {at + 1}: {va:.3g} vs {vb:.3g}",
            )
    ax.set_title(title)
    ax.set_xlabel("optimizer step (1 = first update)")
    ax.set_ylabel("learning rate")
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def write_png(scheds: dict[str, Schedule], title: str, path: str) -> None:
    """The plot to ``path``, written whole and never over a file the run read."""
    import io

    from cfglint.load.outputs import write_atomic

    buf = io.BytesIO()
    fig = figure_for(scheds, title)
    fig.savefig(buf, format=path.rpartition(".")[2].lower() if "." in path else "png", dpi=110)
    write_atomic(path, buf.getvalue(), what="plot")
