"""The runtime probe's evidence in the lint's report: what a request may ask for, the run,
and its results as findings on the ``standard.*`` rows.

The probe's modules (numpy, and the frameworks in their own processes) are imported only when
a probe runs; this module's own import is light, so the command line can name ``DEVICES``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from cfglint import INSTALL_PROBE
from cfglint.check.context import Context, finding
from cfglint.check.rulebook import load_rules
from cfglint.evidence.probe.devices import DEVICES
from cfglint.model import standard as std
from cfglint.model.config import Config
from cfglint.model.errors import InputError
from cfglint.model.findings import Finding, Location, Report

__all__ = ["DEVICES", "check_probe_request", "run_probe", "standard_findings"]

# the rows only the probe decides; a lint without it leaves them "not checked"
PROBE_ROWS = (std.ROW_LOCAL_NORM, std.ROW_OPTIMIZER_UPDATE)
# a measured floor below this is float32 rounding, not a floor: ratios use this instead
MIN_FLOOR = 1.2e-7
# sequences the probe reads per step from --data (4 sequences of 32 tokens and the next one)
TOKENS_PER_STEP = 4 * 33


def check_probe_request(
    steps: int, device: str, log_dir: str | None, inputs: Iterable[str] = ()
) -> None:
    """What the command line alone decides, before the lint and any framework process:
    first every log ``--log-dir`` would write (the output rule; no framework is needed to
    refuse one), then the steps, the frameworks and the device."""
    from cfglint.evidence.probe.devices import DeviceMissing, preflight
    from cfglint.evidence.probe.runner import available
    from cfglint.evidence.probe.spec import MAX_LOG_STEPS, MAX_STEPS

    log_run = bool(log_dir)
    if log_dir:
        from cfglint.evidence.probe.textlog import check_log_dir

        check_log_dir(log_dir, inputs)
    top = MAX_LOG_STEPS if log_run else MAX_STEPS
    if not 3 <= steps <= top:
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
    if device == "npu" and not fw["mindspore"]:
        raise InputError(None, f"--device npu needs mindspore: {INSTALL_PROBE}")
    try:
        preflight(device)
    except DeviceMissing as exc:
        raise InputError(None, str(exc)) from None


def _tokens(prefix: str, limit: int) -> Any:
    import numpy as np

    from cfglint.load.indexed_dataset import DatasetError, open_indexed

    try:
        ds = open_indexed(prefix)
    except DatasetError as exc:
        raise InputError(exc.path, exc.message) from None
    return np.fromfile(prefix + ".bin", dtype=np.dtype(ds.typecode), count=limit)


def _locs(cfg: Config, side: str) -> list[Location]:
    return [Location.model_construct(path=cfg.path, line=1, side=side, anchor=True)]


def _guide_rows(result: Any, where: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(row, message, values) of the guide's three limits the probe's gap fails."""
    gap, out = result.gap, []
    if result.standard["first_loss"] == "fail":
        msg = (
            f"step-1 loss differs by {gap['first_loss_abs']:.3g} (relative "
            f"{gap['first_loss_rel']:.2%}; {std.FIRST_LOSS_LIMIT}) {where}"
        )
        out.append((std.ROW_FIRST_LOSS, msg, {"first_loss_abs": gap["first_loss_abs"]}))
    if result.standard["mean_loss"] == "fail":
        msg = (
            f"mean loss error {gap['mean_loss_abs']:.3g} (relative {gap['mean_loss_rel']:.2%}"
            f"; {std.MEAN_LOSS_LIMIT}) {where}"
        )
        out.append((std.ROW_MEAN_LOSS, msg, {"mean_loss_abs": gap["mean_loss_abs"]}))
    if result.standard["global_norm"] == "fail":
        msg = (
            f"global-norm mean relative error {gap['global_norm_rel']:.1%} "
            f"({std.GLOBAL_NORM_LIMIT}) {where}"
        )
        out.append((std.ROW_GLOBAL_NORM, msg, {"global_norm_rel": gap["global_norm_rel"]}))
    return out


def _floor_rows(result: Any, where: str) -> list[tuple[str, str, dict[str, Any]]]:
    """The two rows the guide gives no number for: "differs" is measurably above the floor."""
    from cfglint.evidence.probe.runner import CONFIRM_MULTIPLE

    gap, floor, out = result.gap, result.floor, []
    ln, lf = gap["local_norm_rel"], max(floor["local_norm_rel"], MIN_FLOOR)
    if ln >= CONFIRM_MULTIPLE * lf:
        msg = (
            f"worst weight {gap['worst_weight']}: step-1 gradient norm differs by "
            f"{ln:.3g} relative, {ln / lf:.0f}x the floor {where}"
        )
        out.append(
            (
                std.ROW_LOCAL_NORM,
                msg,
                {"worst_weight": gap["worst_weight"], "local_norm_rel": ln},
            )
        )
    ur, uf = gap.get("update_rel"), max(floor.get("update_rel", 0.0), MIN_FLOOR)
    if ur is not None and ur >= CONFIRM_MULTIPLE * uf:
        msg = (
            f"worst weight {gap.get('update_worst_weight')}: the same step-1 gradients give "
            f"updates {ur:.3g} apart (relative norm), {ur / uf:.0f}x the floor {where}"
        )
        values = {"worst_weight": gap.get("update_worst_weight"), "update_rel": ur}
        out.append((std.ROW_OPTIMIZER_UPDATE, msg, values))
    return out


def standard_findings(result: Any, mf: Config, mg: Config) -> list[Finding]:
    """The migration standard on the probe's gap, as findings on the ``standard.*`` rows."""
    rules = {r.row: r for r in load_rules() if r.row.startswith("standard.")}
    other = "mindspore " + result.device.get("mindspore", "") if result.cross_framework else "torch"
    where = (
        f"(runtime probe, {result.steps} steps, {result.device.get('torch')} torch against {other})"
    )
    locs = _locs(mf, "mindformers") + _locs(mg, "megatron")
    rows = _guide_rows(result, where) + _floor_rows(result, where)
    return [finding(rules[row], msg, values, locs) for row, msg, values in rows]


def _with_result(report: Report, result: Any, mf: Config, mg: Config) -> Report:
    """The report with the probe's standard findings in place of the lint's, and the rows
    the probe decided no longer listed as not checked."""
    extra = standard_findings(result, mf, mg)
    report.findings = [f for f in report.findings if not f.row.startswith("standard.")] + extra
    report.not_checked = [
        nc
        for nc in report.not_checked
        if nc[0] not in PROBE_ROWS
        and not (nc[0].startswith("standard.") and "needs" in nc[1] and "log" in nc[1])
    ]
    report.probe = result.model_dump(mode="json")
    return report


def run_probe(
    report: Report,
    ctx: Context,
    *,
    steps: int,
    device: str,
    data: str | None = None,
    log_dir: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Report, Any]:
    """Run the probe after a lint: the report with the probe's findings and its result
    (``report.probe``, which every format renders), and the result itself (for pictures).
    ``log_dir``: also write each side's curves as that framework's training log."""
    from cfglint.evidence.probe.runner import ProbeUnavailable, available, probe

    if ctx.mf is None or ctx.mg is None:
        raise InputError(None, "the probe needs both sides: MINDFORMERS.yaml --megatron ARGS")
    check_probe_request(steps, device, log_dir)
    tokens = _tokens(data, TOKENS_PER_STEP * steps) if data else None
    try:
        result = probe(
            ctx.mf,
            ctx.mg,
            report.findings,
            steps=steps,
            device=device,
            data=tokens,
            frameworks=available(),
            progress=progress,
            log_run=bool(log_dir),
        )
    except ProbeUnavailable as exc:
        raise InputError(None, str(exc)) from None
    report = _with_result(report, result, ctx.mf, ctx.mg)
    if log_dir:
        from cfglint.evidence.probe.textlog import write_logs

        write_logs(result, log_dir)
    return report, result
