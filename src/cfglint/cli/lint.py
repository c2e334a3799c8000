"""``cfglint [lint] ...``: the main call."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from cfglint.check.pipeline import Options, lint, load_side, planned_loader
from cfglint.cli.common import settings
from cfglint.cli.fix import wants_fix
from cfglint.cli.terminal import report_format, write_output
from cfglint.load.classify import Plan
from cfglint.load.reads import Reads
from cfglint.model.errors import InputError
from cfglint.model.findings import InputProblem, Report


def _planned_jobs(args: argparse.Namespace, cfg: dict[str, Any], reads: Reads) -> Plan:
    """What this invocation lints: the configured pairs (no FILE, or --pairs), else the
    files and folders given, each classified before any rule sees it (its parse kept in
    ``reads`` for the job's loader)."""
    from cfglint.load.classify import plan, plan_pairs

    pairs = cfg.get("pairs") or []
    no_inputs = not (args.files or args.megatron or args.source)
    if args.pairs or (no_inputs and pairs):
        if not pairs:
            raise InputError(None, "--pairs: no pairs in [tool.cfglint] (docs/setup/pre-commit.md)")
        return plan_pairs(pairs, list(args.files), cfg.get("_path"))
    return plan(
        list(args.files),
        megatron=args.megatron,
        launch=args.launch,
        sources=list(args.source or []),
        exclude=list(cfg.get("exclude", [])),
        base=Path(cfg.get("_base") or Path.cwd()),
        pairs=pairs,
        reads=reads,
    )


def _check_paths(args: argparse.Namespace) -> None:
    """--data and --tokenizer name files the user expects to exist: a typo is an input
    error, not a finding about a file that is not there."""
    data = getattr(args, "data", None)
    if data and not any(os.path.exists(data + ext) for ext in ("", ".bin", ".idx")):
        raise InputError(
            data, "--data: no such dataset (looked for PREFIX, PREFIX.bin, PREFIX.idx)"
        )
    tok = getattr(args, "tokenizer", None)
    if tok and not os.path.exists(tok):
        raise InputError(tok, "--tokenizer: no such file or folder")


def _check_selectors(args: argparse.Namespace, cfg: dict[str, Any]) -> None:
    from cfglint.check.rulebook import load_rules
    from cfglint.check.selection import check_known, split

    rules = load_rules()
    check_known(split(args.select), rules, "--select")
    check_known(split(args.ignore), rules, "--ignore")
    where = "[tool.cfglint]"
    try:
        check_known(split(cfg.get("select", [])), rules, f"{where} select")
        check_known(split(cfg.get("ignore", [])), rules, f"{where} ignore")
        for pattern, names in cfg.get("per_file_ignores", {}).items():
            check_known(split(names), rules, f"{where} per-file-ignores {pattern!r}")
    except InputError as exc:  # name the file the bad setting is in
        from cfglint.cli.settings import find_pyproject

        pyproject = getattr(args, "config", None) or find_pyproject()
        raise InputError(str(pyproject) if pyproject else None, exc.message) from None


STDIN_NAME = "<stdin>"


def _stdin_file(files: list[str]) -> tuple[list[str], str | None]:
    """``-`` as a FILE: standard input, read once into a private file for the loaders."""
    if "-" not in files:
        return files, None
    import tempfile

    from cfglint.load.safeio import MAX_BYTES

    data = sys.stdin.buffer.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise InputError(STDIN_NAME, f"input larger than {MAX_BYTES // (1024 * 1024)} MiB")
    folder = tempfile.mkdtemp(prefix="cfglint-stdin-")
    path = os.path.join(folder, "stdin.yaml")
    with open(path, "wb") as fh:
        fh.write(data)
    return [path if f == "-" else f for f in files], path


def _rename(report: Report, old: str, new: str) -> Report:
    """Paths of the private stdin file, as the user knows them."""
    text = report.model_dump_json()
    text = text.replace(json.dumps(old)[1:-1], new).replace(os.path.basename(old), new)
    renamed = Report.model_validate_json(text)
    # a default's stand-in location is no part of the JSON: keep it one
    for f, g in zip(report.findings, renamed.findings, strict=True):
        g.locations = [
            b.model_copy(update={"anchor": a.anchor})
            for a, b in zip(f.locations, g.locations, strict=True)
        ]
    return renamed


def _lint_inputs(
    args: argparse.Namespace, cfg: dict[str, Any], profile: str, version: str | None
) -> tuple[Plan, Report]:
    """Plan and lint every job; standard input is read into a temporary file for the run
    and named ``-`` again in the report."""
    if "-" in args.files and wants_fix(args):
        raise InputError(STDIN_NAME, "--fix and --diff edit files; standard input is not one")
    args.files, stdin_path = _stdin_file(list(args.files))
    try:
        reads = Reads()
        todo = _planned_jobs(args, cfg, reads)
        total = _run_jobs(todo, args, cfg, profile, version, reads)
    finally:
        if stdin_path:
            import shutil

            shutil.rmtree(os.path.dirname(stdin_path), ignore_errors=True)
    if stdin_path:
        total = _rename(total, stdin_path, STDIN_NAME)
    return todo, total


def _nothing_linted(
    total: Report, args: argparse.Namespace, cfg: dict[str, Any], fmt_name: str
) -> int:
    """Nothing was linted: every skipped file, with what it was taken for, is the answer."""
    for x in [] if args.quiet else total.skipped:
        print(f"{x.path}: {x.message}", file=sys.stderr)
    if not total.skipped and not (args.pairs or cfg.get("pairs")):
        named = args.files[0] if len(args.files) == 1 else None  # e.g. an empty folder
        raise InputError(
            named,
            "nothing to check: give a MindFormers YAML, a launch script, a folder, "
            "--megatron FILE or --source PATH (see cfglint --help)",
        )
    what = f": {len(total.skipped)} file(s) skipped, none is a training input"
    if not args.quiet:
        print(f"cfglint: nothing checked{what if total.skipped else ''}", file=sys.stderr)
    if fmt_name in ("json", "sarif"):
        # a CI step that asked for a report (and may upload it) still gets a valid one
        _emit(total, fmt_name, args, False)
    return 0


def _input_errors(total: Report, todo: Plan, args: argparse.Namespace, fmt_name: str) -> int:
    """Input errors: one line each on stderr, and the report when one was asked for."""
    from cfglint.report.output import error_lines

    for line in error_lines(total.errors, args.verbose):
        print(line, file=sys.stderr)
    if total.findings or fmt_name != "text":
        _emit(
            total.model_copy(update={"errors": total.errors if fmt_name != "text" else []}),
            fmt_name,
            args,
            len(todo.jobs) > 1,
        )
    return 2


def cmd_lint(args: argparse.Namespace) -> int:
    cfg = settings(args)
    fmt_name = args.format or cfg.get("format") or report_format(None, args.output) or "text"
    profile = args.profile or cfg.get("profile", "default")
    fail_on = args.fail_on or cfg.get("fail_on", "warning")
    version = args.megatron_version or cfg.get("megatron_version")
    _check_selectors(args, cfg)
    _check_paths(args)
    todo, total = _lint_inputs(args, cfg, profile, version)
    if not todo.jobs:
        return _nothing_linted(total, args, cfg, fmt_name)
    _note_skipped(todo, total, args)
    if total.errors:
        return _input_errors(total, todo, args, fmt_name)
    if getattr(args, "diff", False):  # the diff is the output (ruff's --diff)
        from cfglint.cli.fix import finish

        return finish(args, total, fail_on)
    _emit(_hook_view(total, fmt_name, args, fail_on), fmt_name, args, len(todo.jobs) > 1)
    if getattr(args, "fix", False):
        from cfglint.cli.fix import finish

        return finish(args, total, fail_on)
    from cfglint.check.engine import failing

    return 1 if failing(total.findings, fail_on) else 0


def _run_jobs(
    todo: Plan,
    args: argparse.Namespace,
    cfg: dict[str, Any],
    profile: str,
    version: str | None,
    reads: Reads,
) -> Report:
    total = Report.model_construct()
    fix_wanted = wants_fix(args)
    # the planner's parses, each used by the first load of its file; --fix writes files a
    # later job may read, so its jobs read them again
    load = load_side if fix_wanted else planned_loader(reads)
    for job in todo.jobs:
        opts = Options(
            mindformers=[job.mindformers] if job.mindformers else [],
            megatron=job.megatron,
            launch=job.launch,
            sources=job.sources,
            source_members=job.members,
            megatron_form=job.megatron_form,
            profile=profile,
            select=args.select or list(cfg.get("select", [])),
            ignore=args.ignore + list(cfg.get("ignore", [])),
            megatron_version=version,
            mindformers_version=getattr(args, "mindformers_version", None),
            data=args.data,
            tokenizer=args.tokenizer,
            loss_logs=args.loss_log,
            scan_cache=not args.no_cache,
            per_file_ignores=cfg.get("per_file_ignores", {}),
            settings_base=str(cfg.get("_base") or "."),
        )
        report, ctx = lint(opts, load=load)
        if fix_wanted:
            from cfglint.cli.fix import fix_job

            report, ctx = fix_job(args, opts, report, ctx)
        if getattr(args, "probe", False) and not report.errors:
            from cfglint.cli.probe import run_probe_command

            report = run_probe_command(args, report, ctx)
        total.inputs.extend(report.inputs)
        total.findings.extend(report.findings)
        total.errors.extend(report.errors)
        total.warnings.extend(report.warnings)
        total.not_checked.extend(report.not_checked)
        total.suppressed += report.suppressed
        total.probe = report.probe if report.probe is not None else total.probe
    total.skipped = [
        InputProblem.model_construct(path=d.path, message=f"skipped: {d.describe()}", level="note")
        for d in todo.skipped
    ]
    return total


def _note_skipped(todo: Plan, report: Report, args: argparse.Namespace) -> None:
    """A note per skipped file named on the command line (pre-commit passes names); files
    found by walking a folder are counted, and listed with -v (which --quiet does not
    silence: a hook's `args: [-v]` asks for the rest)."""
    if args.quiet and not args.verbose:
        return
    walked = [s for s in report.skipped if s.path in todo.walked]
    if args.verbose:  # what each linted file was taken for, and why
        for c in todo.seen:
            if c.role is not None:
                print(f"{c.path}: {c.role} side: {c.describe()}", file=sys.stderr)
    for s in report.skipped:
        if s.path not in todo.walked or args.verbose:
            print(f"{s.path}: {s.message}", file=sys.stderr)
    if walked and not args.verbose and todo.jobs:
        print(
            f"cfglint: {len(walked)} file(s) in the given folders skipped as not training "
            "inputs (converters, preprocessing, other YAML, ...); -v lists them",
            file=sys.stderr,
        )


def _hook_view(report: Report, fmt_name: str, args: argparse.Namespace, fail_on: str) -> Report:
    """``--format concise --quiet`` (the pre-commit hooks): the findings that block, like
    ruff's hook; the rest is counted in one line, and listed with -v."""
    if fmt_name != "concise" or not args.quiet or args.verbose or args.statistics:
        return report
    from cfglint.check.engine import blocking

    shown = blocking(report.findings, fail_on)
    hidden = len(report.findings) - len(shown)
    if hidden:
        print(
            f"cfglint: {hidden} more finding(s) below --fail-on {fail_on}; -v lists them",
            file=sys.stderr,
        )
    return report.model_copy(update={"findings": shown})


def _emit(report: Report, fmt_name: str, args: argparse.Namespace, many: bool = False) -> None:
    from cfglint.cli.terminal import term_width, use_color
    from cfglint.report import RenderOptions, render

    if args.statistics:
        from cfglint.check.rulebook import load_rules
        from cfglint.report.concise import render_statistics

        titles = {r.id: r.title for r in load_rules()}
        write_output(render_statistics(report, titles, fmt_name), args.output)
        return
    color = fmt_name == "text" and use_color(args, to_file=args.output is not None)
    options = RenderOptions(
        verbose=args.verbose,
        color=color,
        width=term_width() if args.output is None else 100,
        name_files=many,
        quiet=args.quiet,
    )
    write_output(render(fmt_name, report, options), args.output)
