"""``cfglint probe MF.yaml --megatron ARGS`` and ``--probe`` on the lint call.

The lint runs first; the probe then runs both sides' numerics (torch and MindSpore, each in
its own process), and its evidence lands in the same report: the ``standard.*`` rows as
findings, a confirmation per finding, and a ``probe`` block in JSON / SARIF / text.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from cfglint import INSTALL_PROBE
from cfglint.check.pipeline import Options, lint
from cfglint.evidence.probe.devices import DEVICES
from cfglint.model import standard as std
from cfglint.model.errors import InputError
from cfglint.model.findings import Finding, Location, Report


def add_probe_options(p: Any, on_lint: bool = False) -> None:
    if on_lint:
        p.add_argument(
            "--probe",
            action="store_true",
            help="also run the runtime probe (needs the probe extra: " + INSTALL_PROBE + ")",
        )
    p.add_argument(
        "--steps", type=int, default=10, help="probe steps per curve (at least 3; default 10)"
    )
    p.add_argument("--device", choices=DEVICES, default="auto", help="probe device (default auto)")
    p.add_argument("--plot", metavar="FILE.png", help="write the probe's curves as a PNG")
    if not on_lint:
        p.add_argument(
            "--log-dir",
            metavar="DIR",
            help="also write each side's curves as that framework's training log "
            "(for `cfglint logs`)",
        )


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


def _tokens(prefix: str, limit: int) -> Any:
    import numpy as np

    from cfglint.load.indexed_dataset import DatasetError, open_indexed

    try:
        ds = open_indexed(prefix)
    except DatasetError as exc:
        raise InputError(exc.path, exc.message) from None
    return np.fromfile(prefix + ".bin", dtype=np.dtype(ds.typecode), count=limit)


def _locs(cfg: Any, side: str) -> list[Location]:
    return [Location.model_construct(path=cfg.path, line=1, side=side, anchor=True)]


def standard_findings(result: Any, mf: Any, mg: Any) -> list[Finding]:
    """The migration standard on the probe's gap, as findings on the ``standard.*`` rows."""
    from cfglint.check.context import finding
    from cfglint.check.rulebook import load_rules

    rules = {r.row: r for r in load_rules() if r.row.startswith("standard.")}
    gap, floor = result.gap, result.floor
    other = "mindspore " + result.device.get("mindspore", "") if result.cross_framework else "torch"
    where = (
        f"(runtime probe, {result.steps} steps, {result.device.get('torch')} torch against {other})"
    )
    locs = _locs(mf, "mindformers") + _locs(mg, "megatron")
    out: list[Finding] = []
    if result.standard["first_loss"] == "fail":
        out.append(
            finding(
                rules["standard.first_loss"],
                f"step-1 loss differs by {gap['first_loss_abs']:.3g} (relative "
                f"{gap['first_loss_rel']:.2%}; {std.FIRST_LOSS_LIMIT}) {where}",
                {"first_loss_abs": gap["first_loss_abs"]},
                locs,
            )
        )
    if result.standard["mean_loss"] == "fail":
        out.append(
            finding(
                rules["standard.mean_loss"],
                f"mean loss error {gap['mean_loss_abs']:.3g} (relative {gap['mean_loss_rel']:.2%}"
                f"; {std.MEAN_LOSS_LIMIT}) {where}",
                {"mean_loss_abs": gap["mean_loss_abs"]},
                locs,
            )
        )
    if result.standard["global_norm"] == "fail":
        out.append(
            finding(
                rules["standard.global_norm"],
                f"global-norm mean relative error {gap['global_norm_rel']:.1%} "
                f"({std.GLOBAL_NORM_LIMIT}) {where}",
                {"global_norm_rel": gap["global_norm_rel"]},
                locs,
            )
        )
    # no number in the guide for these two: "differs" means measurably above the floor
    from cfglint.evidence.probe.runner import CONFIRM_MULTIPLE

    ln, lf = gap["local_norm_rel"], max(floor["local_norm_rel"], 1.2e-7)
    if ln >= CONFIRM_MULTIPLE * lf:
        out.append(
            finding(
                rules["standard.local_norm"],
                f"worst weight {gap['worst_weight']}: step-1 gradient norm differs by "
                f"{ln:.3g} relative, {ln / lf:.0f}x the floor {where}",
                {"worst_weight": gap["worst_weight"], "local_norm_rel": ln},
                locs,
            )
        )
    ur, uf = gap.get("update_rel"), max(floor.get("update_rel", 0.0), 1.2e-7)
    if ur is not None and ur >= CONFIRM_MULTIPLE * uf:
        out.append(
            finding(
                rules["standard.optimizer_update"],
                f"worst weight {gap.get('update_worst_weight')}: the same step-1 gradients give "
                f"updates {ur:.3g} apart (relative norm), {ur / uf:.0f}x the floor {where}",
                {"worst_weight": gap.get("update_worst_weight"), "update_rel": ur},
                locs,
            )
        )
    return out


def check_probe_args(args: Any) -> None:
    """What the command line alone decides, before the lint and any framework process."""
    from cfglint.evidence.probe.devices import DeviceMissing, preflight
    from cfglint.evidence.probe.runner import available
    from cfglint.evidence.probe.spec import MAX_LOG_STEPS, MAX_STEPS

    log_run = bool(getattr(args, "log_dir", None))
    top = MAX_LOG_STEPS if log_run else MAX_STEPS
    if not 3 <= args.steps <= top:
        longer = "" if log_run else f", up to {MAX_LOG_STEPS} with --log-dir"
        raise InputError(
            None,
            f"--steps must be between 3 and {top} (a beta mismatch shows from step 3; "
            f"the probe's size is for short runs{longer})",
        )
    fw = available()
    if not fw["torch"]:
        raise InputError(
            None,
            f"the runtime probe needs torch (and mindspore for both frameworks): {INSTALL_PROBE}",
        )
    if args.device == "npu" and not fw["mindspore"]:
        raise InputError(None, f"--device npu needs mindspore: {INSTALL_PROBE}")
    try:
        preflight(args.device)
    except DeviceMissing as exc:
        raise InputError(None, str(exc)) from None


def run_probe_command(args: Any, report: Report, ctx: Any) -> Report:
    """Run the probe after a lint; returns the report with the probe's findings and its
    result (``report.probe``, which every format renders)."""
    from cfglint.evidence.probe.runner import ProbeUnavailable, available, probe

    if ctx.mf is None or ctx.mg is None:
        raise InputError(None, "the probe needs both sides: MINDFORMERS.yaml --megatron ARGS")
    check_probe_args(args)
    data = None
    if getattr(args, "data", None):
        data = _tokens(args.data, 4 * 33 * args.steps)
    progress = _Progress()
    try:
        result = probe(
            ctx.mf,
            ctx.mg,
            report.findings,
            steps=args.steps,
            device=args.device,
            data=data,
            frameworks=available(),
            progress=progress,
            log_run=bool(getattr(args, "log_dir", None)),
        )
    except ProbeUnavailable as exc:
        raise InputError(None, str(exc)) from None
    finally:
        progress.stop()
    extra = standard_findings(result, ctx.mf, ctx.mg)
    report.findings = [f for f in report.findings if not f.row.startswith("standard.")] + extra
    probe_rows = {"standard.local_norm", "standard.optimizer_update"}
    report.not_checked = [
        nc
        for nc in report.not_checked
        if nc[0] not in probe_rows
        and not (nc[0].startswith("standard.") and "needs" in nc[1] and "log" in nc[1])
    ]
    if args.plot:
        from cfglint.report.probe import plot

        plot(result, args.plot, (ctx.mf.path, ctx.mg.path))
    if getattr(args, "log_dir", None):
        from cfglint.evidence.probe.textlog import write_logs

        write_logs(result, args.log_dir)
    report.probe = result.model_dump(mode="json")
    return report


def cmd_probe(args: Any) -> int:
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
