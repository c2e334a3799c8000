"""Two learning-rate curves drawn in the terminal or as a PNG (matplotlib, imported only here)."""

from __future__ import annotations

from cfglint.evidence.lr.curves import compare, fill, schedule_pieces
from cfglint.evidence.lr.schedule import CurveDiff, Schedule


def _fmt_lr(value: float) -> str:
    return f"{value:.2e}"


def _sample(s: Schedule, steps: list[int]) -> list[float]:
    pieces = schedule_pieces(s)
    return [fill(pieces, step - 1, step)[0] for step in steps]


def _canvas(ya: list[float], yb: list[float], rows: int, mark_col: int | None) -> list[list[str]]:
    """Character grid; row 0 is the top. The divergence column is drawn under the curves."""
    top, bottom = max(ya + yb), min(ya + yb)
    span = (top - bottom) or 1.0
    grid = [[" "] * len(ya) for _ in range(rows)]
    if mark_col is not None:
        for line in grid:
            line[mark_col] = "|"
    for c, (va, vb) in enumerate(zip(ya, yb, strict=True)):
        ra = round((top - va) / span * (rows - 1))
        rb = round((top - vb) / span * (rows - 1))
        grid[ra][c] = "*"
        grid[rb][c] = "#" if ra == rb else "o"
    return grid


def _legend(a: Schedule, b: Schedule, diff: CurveDiff) -> list[str]:
    lines = [f"  * {a.label}   o {b.label}   # both"]
    if diff.first_diverging_step is None:
        lines.append("  the curves agree within 1% at every step")
    else:
        lines.append(
            f"  | first divergence at step {diff.first_diverging_step}: "
            f"{_fmt_lr(diff.a_at_first or 0.0)} vs {_fmt_lr(diff.b_at_first or 0.0)}; "
            f"largest gap {diff.max_rel_gap:.1%} at step {diff.max_gap_step}"
        )
    return lines


def plot_terminal(a: Schedule, b: Schedule, width: int = 100, height: int = 25) -> str:
    """Both curves as text: ``*`` is ``a``, ``o`` is ``b``, ``#`` where they overlap.

    Drawn without plotext so the output is the same wherever cfglint runs.
    """
    n = max(a.total_steps, b.total_steps)
    diff = compare(a, b, n)
    label_w = 9
    cols = max(10, width - label_w - 2)
    rows = max(5, height - 4)
    steps = [1 + round(c * (n - 1) / (cols - 1)) for c in range(cols)]
    ya, yb = _sample(a, steps), _sample(b, steps)
    mark = None
    if diff.first_diverging_step is not None:
        mark = round((diff.first_diverging_step - 1) * (cols - 1) / max(n - 1, 1))
    top, bottom = max(ya + yb), min(ya + yb)
    labels = {0: top, rows // 2: (top + bottom) / 2, rows - 1: bottom}
    out = [
        f"{_fmt_lr(labels[i]) if i in labels else '':>{label_w}} |{''.join(line)}"
        for i, line in enumerate(_canvas(ya, yb, rows, mark))
    ]
    out.append(" " * label_w + " +" + "-" * cols)
    axis = [" "] * cols
    axis[-len(str(n)) :] = str(n)
    axis[0] = "1"
    if mark is not None:
        axis[mark] = "^"
    out.append(f"{'step':>{label_w}}  " + "".join(axis))
    return "\n".join(out + _legend(a, b, diff))


def plot_png(a: Schedule, b: Schedule, path: str) -> None:
    """Write both curves to a PNG file (needs matplotlib)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise RuntimeError("matplotlib is not installed; pip install matplotlib") from exc
    n = max(a.total_steps, b.total_steps)
    diff = compare(a, b, n)
    stride = max(1, n // 5000)
    xs = list(range(1, n + 1, stride))
    if xs[-1] != n:
        xs.append(n)
    fig = Figure(figsize=(10, 5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(xs, _sample(a, xs), label=a.label)
    ax.plot(xs, _sample(b, xs), linestyle="--", label=b.label)
    if diff.first_diverging_step is not None:
        ax.axvline(
            diff.first_diverging_step,
            color="red",
            linestyle=":",
            label=f"first divergence (step {diff.first_diverging_step})",
        )
    ax.set_xlabel("optimizer step (1 = first update)")
    ax.set_ylabel("learning rate")
    ax.legend()
    fig.savefig(path)
