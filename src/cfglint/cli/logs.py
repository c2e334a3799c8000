"""``cfglint logs MF_LOG MG_LOG``: the guide's Stage 3, two long runs compared step by step.

Each log is a training log in its framework's text format or TensorBoard event files (a
file or the run's folder). ``--baseline`` adds more runs of the reference (Megatron) for the
benchmark band; ``--config MF.yaml --megatron ARGS`` lints the pair and links the findings
the guide names for a gap or a divergence, and checks each logged lr against its config.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from cfglint.model.errors import InputError

PLOT_KINDS = (".png", ".html")
WATCH_INTERVAL = 30.0
NAMES = {"mindformers": "MindFormers", "megatron": "Megatron"}


def add_arguments(p: Any) -> None:
    p.add_argument(
        "mf_log", metavar="MF_LOG", help="MindFormers training log or TensorBoard events"
    )
    p.add_argument(
        "mg_log", metavar="MG_LOG", help="Megatron / MindSpeed-LLM training log or events"
    )
    p.add_argument(
        "--baseline",
        nargs="+",
        action="extend",
        default=[],
        metavar="MG_LOG2",
        help="more runs of the reference (determinism off) for the benchmark band",
    )
    p.add_argument("--config", metavar="MF.yaml", help="the MindFormers config of the run")
    p.add_argument("--megatron", metavar="ARGS", help="the Megatron arguments of the run")
    p.add_argument("--launch", metavar="SCRIPT", help=argparse_suppress())
    p.add_argument("--megatron-version", help=argparse_suppress())
    p.add_argument("--plot", metavar="FILE.png|FILE.html", help="write the picture")
    p.add_argument(
        "--watch",
        nargs="?",
        type=float,
        const=WATCH_INTERVAL,
        metavar="SECONDS",
        help="follow both logs while the runs go on, judge again as steps arrive (every "
        f"{WATCH_INTERVAL:g} s), refresh --plot, exit 1 as soon as the curves part",
    )
    p.add_argument(
        "--idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --watch: stop when neither log grew for this long (default: never)",
    )
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    p.add_argument("--no-color", action="store_true", help="plain text")


def argparse_suppress() -> str:
    import argparse

    return argparse.SUPPRESS


def read_side(path: str, framework: str) -> Any:
    from cfglint.load.tbevents import is_event_path, read_events

    if is_event_path(path):
        return read_events(path, framework)
    if os.path.isdir(path):
        raise InputError(path, "is a folder without TensorBoard event files; give the log file")
    from cfglint.load.losslog import read_run_log

    try:
        return read_run_log(path, framework)
    except InputError as exc:
        try:  # the other framework's log in this slot: say so
            other = read_run_log(path).framework
        except InputError:
            raise exc from None
        slot = "MF_LOG" if framework == "mindformers" else "MG_LOG"
        raise InputError(
            path,
            f"is a {NAMES[other]} training log, given as {slot}: the MindFormers log comes "
            "first, then the Megatron one",
        ) from None


def _read_sides(args: Any) -> list[Any]:
    """Both logs and the baselines: text logs read together (one pool of processes for
    all), event files and anything that fails one by one (its own message)."""
    sides = [(args.mf_log, "mindformers"), (args.mg_log, "megatron")]
    sides += [(p, "megatron") for p in args.baseline]
    _distinct_runs([p for p, _ in sides])
    from cfglint.load.tbevents import is_event_path

    if not any(is_event_path(p) or os.path.isdir(p) for p, _ in sides):
        from cfglint.load.losslog import read_run_logs

        try:
            return read_run_logs([(p, fw) for p, fw in sides])
        except InputError:
            pass  # read again one by one: the error names its side
    return [read_side(p, fw) for p, fw in sides]


def _distinct_runs(paths: list[str]) -> None:
    """Each log a run of its own: a --baseline that is the reference log (or the other
    log, or an earlier baseline) would make a band from one run compared with itself."""
    from cfglint.load.safeio import same_file

    names = ["MF_LOG", "MG_LOG"] + ["--baseline"] * (len(paths) - 2)
    for i, p in enumerate(paths[2:], 2):
        for j in range(i):
            if same_file(p, paths[j]):
                raise InputError(
                    p,
                    f"is {names[j]} ({paths[j]}) again: a --baseline is another run of the "
                    "reference, not the same log",
                )


def _lint(args: Any) -> tuple[Any, list[Any], dict[str, Any]]:
    """The lint report of the pair, its findings and both configured lr schedules."""
    from cfglint.check.pipeline import Options, lint
    from cfglint.model.findings import Report

    if not (args.config or args.megatron):
        return Report(), [], {}
    from cfglint.load.classify import one_pair

    job = one_pair([args.config] if args.config else [], args.megatron, args.launch, "logs")
    opts = Options(
        mindformers=[job.mindformers] if job.mindformers else [],
        megatron=job.megatron,
        megatron_form=job.megatron_form,
        launch=job.launch,
        megatron_version=args.megatron_version,
    )
    report, ctx = lint(opts)
    if report.errors:
        e = report.errors[0]
        raise InputError(e.path, e.message, line=e.line)
    from cfglint.check.runs import configured_schedules

    return report, report.findings, configured_schedules(report, ctx)


def _plot(judged: Any, path: str | None) -> None:
    if path:
        from cfglint.report import runs_plot

        if path.lower().endswith(".png"):
            runs_plot.write_png(judged, path)
        else:
            runs_plot.write_html(judged, path)


def _watch(args: Any, findings: list[Any], schedules: dict[str, Any]) -> Any:
    """Follow both logs until the curves part, the logs stop growing, or Ctrl-C; one status
    line a judgement. The last judgement (``None``: never two common steps)."""
    from cfglint.check.runs import watch_runs
    from cfglint.load.tbevents import is_event_path
    from cfglint.report.runs import headline

    for path in (args.mf_log, args.mg_log):
        if is_event_path(path) or os.path.isdir(path):
            raise InputError(path, "--watch follows text training logs")
    bases = [read_side(p, "megatron") for p in args.baseline]

    def show(judged: Any) -> None:
        _plot(judged, args.plot)
        st = judged.report.steps
        print(f"[{st['last']}] {headline(judged.report)[0]}", file=sys.stderr, flush=True)

    end = watch_runs(
        args.mf_log,
        args.mg_log,
        baselines=bases,
        findings=findings if (args.config or args.megatron) else None,
        schedules=schedules,
        on_judged=show,
        interval=args.watch,
        idle=args.idle,
    )
    print(f"watch ended ({end.reason}) after {end.polls} polls", file=sys.stderr, flush=True)
    return end.judged


def cmd_logs(args: Any) -> int:
    from cfglint.check.runs import judge_runs as judge

    if args.plot and not args.plot.lower().endswith(PLOT_KINDS):
        raise InputError(args.plot, "--plot writes a .png or an .html file")
    if args.watch is not None:
        lint_report, findings, schedules = _lint(args)
        judged = _watch(args, findings, schedules)
        if judged is None:
            raise InputError(args.mf_log, "no step with a finite loss in both logs yet")
    else:
        a, b, *bases = _read_sides(args)
        lint_report, findings, schedules = _lint(args)
        judged = judge(a, b, bases, findings if (args.config or args.megatron) else None, schedules)
        _plot(judged, args.plot)
    from cfglint.cli.terminal import write_output
    from cfglint.report import runs

    if args.format == "json":
        text = runs.render_json(lint_report, judged.report)
    elif args.format == "sarif":
        text = runs.render_sarif(lint_report, judged.report)
    else:
        color = (
            args.output is None
            and not args.no_color
            and sys.stdout.isatty()
            and "NO_COLOR" not in os.environ
        )
        text = runs.render_text(judged.report, color=color)
    write_output(text, args.output)
    return 1 if judged.report.failing else 0
