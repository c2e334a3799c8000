"""``cfglint probe MF.yaml --megatron ARGS`` and ``--probe`` on the lint call.

The lint runs first; the probe then runs both sides' numerics (torch and MindSpore, each in
its own process), and its evidence lands in the same report: the ``standard.*`` rows as
findings, a confirmation per finding, and a ``probe`` block in JSON / SARIF / text.
"""

from __future__ import annotations

import argparse
import os
import sys

from cfglint.check.context import Context
from cfglint.check.pipeline import Options, lint
from cfglint.check.probe import check_probe_request, run_probe
from cfglint.model.errors import InputError
from cfglint.model.findings import Report


class _Progress:
    """rich progress on a terminal (stderr), silence otherwise."""

    def __init__(self) -> None:
        self.console = None
        if sys.stderr.isatty():
            from rich.console import Console

            self.console = Console(file=sys.stderr)
            self.status = self.console.status("probe: preparing")
            self.status.start()

    def __call__(self, msg: str) -> None:
        if self.console is not None:
            self.status.update(f"probe: {msg}")

    def stop(self) -> None:
        if self.console is not None:
            self.status.stop()


def check_probe_args(args: argparse.Namespace) -> None:
    """What the command line alone decides, before the lint and any framework process."""
    from cfglint.load.outputs import named_inputs

    check_probe_request(args.steps, args.device, getattr(args, "log_dir", None), named_inputs(args))


def run_probe_command(args: argparse.Namespace, report: Report, ctx: Context) -> Report:
    """Run the probe after a lint; returns the report with the probe's findings and its
    result (``report.probe``, which every format renders)."""
    progress = _Progress()
    try:
        report, result = run_probe(
            report,
            ctx,
            steps=args.steps,
            device=args.device,
            data=getattr(args, "data", None),
            log_dir=getattr(args, "log_dir", None),
            progress=progress,
        )
    finally:
        progress.stop()
    if args.plot and ctx.mf is not None and ctx.mg is not None:
        from cfglint.report.probe import plot

        plot(result, args.plot, (ctx.mf.path, ctx.mg.path))
    return report


def cmd_probe(args: argparse.Namespace) -> int:
    from cfglint.load.classify import one_pair

    job = one_pair(list(args.files), args.megatron, args.launch, "probe")
    if job.mindformers is None or job.megatron is None:
        raise InputError(None, "probe takes one MindFormers YAML and --megatron ARGS")
    check_probe_args(args)
    opts = Options(
        mindformers=[job.mindformers],
        megatron=job.megatron,
        megatron_form=job.megatron_form,
        launch=job.launch,
        sources=list(getattr(args, "source", []) or []),
        megatron_version=args.megatron_version,
        data=getattr(args, "data", None),
    )
    report, ctx = lint(opts)
    if report.errors:
        from cfglint.report.output import error_lines

        for line in error_lines(report.errors):
            print(line, file=sys.stderr)
        return 2
    report = run_probe_command(args, report, ctx)
    from cfglint.cli.terminal import write_output
    from cfglint.report import RenderOptions, render

    output = getattr(args, "output", None)
    color = output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    write_output(render(args.format or "text", report, RenderOptions(color=color)), output)
    from cfglint.check.engine import failing

    return 1 if failing(report.findings, getattr(args, "fail_on", None) or "warning") else 0
