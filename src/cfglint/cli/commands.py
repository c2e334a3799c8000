"""The subcommands behind :mod:`cfglint.cli.app`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from cfglint.cli.pipeline import Options, classify, lint
from cfglint.model.config import Config
from cfglint.model.errors import InputError
from cfglint.model.findings import SECTION_ORDER, InputProblem, Report
from cfglint.model.values import Value, fmt


def _settings(args: Any) -> dict[str, Any]:
    from cfglint.cli.settings import find_pyproject, load_settings

    path = getattr(args, "config", None)
    if path:
        from pathlib import Path

        if not os.path.lexists(path):
            raise InputError(path, "no such pyproject.toml")
        return load_settings(Path(path))
    return load_settings(find_pyproject())


def _out(text: str, output: str | None) -> None:
    if output:
        try:
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise InputError(output, f"cannot write report: {exc.strerror}") from None
    else:
        sys.stdout.write(text)


def _excluded(path: str, patterns: list[str]) -> bool:
    from fnmatch import fnmatch

    p = Path(path).as_posix()
    return any(fnmatch(p, pat) or fnmatch(Path(p).name, pat) for pat in patterns)


def _jobs(
    args: Any, exclude: list[str] | None = None
) -> list[tuple[list[str], str | None, list[str]]]:
    """(mindformers files, megatron file, sources) per lint run. Many YAML files without
    --megatron (a pre-commit run) are linted one by one; ``exclude`` globs (from
    [tool.cfglint]) drop files given on the command line."""
    files = [f for f in args.files if not _excluded(f, exclude or [])]
    yamls, sources, scripts = classify(files)
    if getattr(args, "skip_unrecognized_yaml", False):
        yamls = [y for y in yamls if looks_like_mindformers(y)]
    sources = sources + list(getattr(args, "source", []) or [])
    megatron = args.megatron
    if megatron is None and len(scripts) == 1 and len(yamls) <= 1:
        megatron, scripts = scripts[0], []
    jobs: list[tuple[list[str], str | None, list[str]]] = []
    if megatron is not None:
        for y in yamls or [None]:  # type: ignore[list-item]
            jobs.append(([y] if y else [], megatron, []))
    else:
        jobs.extend(([y], None, []) for y in yamls)
    jobs.extend(([], s, []) for s in scripts)
    if sources:
        if jobs:
            jobs[0] = (jobs[0][0], jobs[0][1], sources)
        else:
            jobs.append(([], None, sources))
    return jobs


MF_KEYS = {
    "model",
    "model_config",
    "runner_config",
    "optimizer",
    "lr_schedule",
    "parallel_config",
    "trainer",
    "training_args",
    "runner_wrapper",
    "base_config",
    "moe_config",
    "context",
}


def looks_like_mindformers(path: str) -> bool:
    """A YAML whose top level has MindFormers sections (CI files, compose files, ... do not).
    Unreadable files count as configs, so their errors are still reported."""
    from cfglint.load.yamltree import load_yaml

    try:
        root = load_yaml(path).root
    except InputError as exc:
        # a list or an empty document is some other YAML; a broken file is still reported
        return not exc.message.startswith(("top level is", "empty YAML"))
    return len(MF_KEYS & set(root.value)) >= 2


def cmd_lint(args: Any) -> int:
    cfg = _settings(args)
    fmt_name = args.format or cfg.get("format", "text")
    profile = args.profile or cfg.get("profile", "default")
    fail_on = args.fail_on or cfg.get("fail_on", "warning")
    version = args.megatron_version or cfg.get("megatron_version")
    jobs = _jobs(args, list(cfg.get("exclude", [])))
    if not jobs and args.skip_unrecognized_yaml:
        return 0  # a pre-commit run whose changed YAML files are not MindFormers configs
    if not jobs:
        raise InputError(
            None,
            "nothing to check: give a MindFormers YAML, --megatron FILE "
            "or --source PATH (see cfglint --help)",
        )
    total = Report()
    for mf, mg, sources in jobs:
        opts = Options(
            mindformers=mf,
            megatron=mg,
            launch=args.launch,
            sources=sources,
            profile=profile,
            select=args.select or list(cfg.get("select", [])),
            ignore=args.ignore + list(cfg.get("ignore", [])),
            megatron_version=version,
            data=args.data,
            tokenizer=args.tokenizer,
            loss_logs=args.loss_log,
        )
        report, _ = lint(opts)
        total.inputs.extend(report.inputs)
        total.findings.extend(report.findings)
        total.errors.extend(report.errors)
        total.warnings.extend(report.warnings)
        total.not_checked.extend(report.not_checked)
        total.suppressed += report.suppressed
    _emit(total, fmt_name, args)
    if total.errors:
        if fmt_name != "text" or args.output:
            for e in total.errors:
                print(_problem_line(e), file=sys.stderr)
        return 2
    from cfglint.check.engine import failing

    return 1 if failing(total.findings, fail_on) else 0


def _problem_line(e: InputProblem) -> str:
    return f"{e.path}:{e.line}: {e.message}" if e.line else f"{e.path}: {e.message}"


def _emit(report: Report, fmt_name: str, args: Any) -> None:
    from cfglint.report import RenderOptions, render

    color = False
    if fmt_name == "text":
        if report.errors and not args.output:
            # one clear line per input error, on stderr; the rest of the report still shows
            for e in report.errors:
                print(_problem_line(e), file=sys.stderr)
            report = report.model_copy(update={"errors": []})
        color = (
            not args.no_color
            and args.output is None
            and sys.stdout.isatty()
            and "NO_COLOR" not in os.environ
        )
    options = RenderOptions(verbose=args.verbose, color=color)
    _out(render(fmt_name, report, options), args.output)


# -- show -----------------------------------------------------------------------------------
def _load_pair(args: Any) -> tuple[Config | None, Config | None]:
    from cfglint.cli.pipeline import load_megatron_side, load_mindformers_side

    yamls, sources, scripts = classify(args.files)
    if sources:
        raise InputError(
            sources[0], "is a folder or Python source; this command reads configs, not sources"
        )
    megatron = args.megatron or (scripts[0] if scripts else None)
    if len(yamls) > 1:
        raise InputError(None, "show takes one MindFormers YAML")
    mf = load_mindformers_side(yamls[0], args.launch) if yamls else None
    mg = load_megatron_side(megatron, args.megatron_version) if megatron else None
    if mf is None and mg is None:
        raise InputError(None, "nothing to show: give a MindFormers YAML and/or --megatron FILE")
    return mf, mg


def _cell(v: Value | None) -> dict[str, Any] | None:
    if v is None:
        return None
    return {
        "value": v.value,
        "origin": v.origin.value,
        "where": v.where(),
        "brief": v.brief(),
        "locations": [str(loc) for loc in v.locations()],
    }


def cmd_show(args: Any) -> int:
    mf, mg = _load_pair(args)
    rows = []
    for path in Config.field_paths():
        a = mf.get(path) if mf else None
        b = mg.get(path) if mg else None
        if not args.all and a is None and b is None:
            continue
        rows.append((path, a, b))
    env_names = sorted(set((mf.env if mf else {}) | (mg.env if mg else {})))
    for name in env_names:
        rows.append(
            (f"env.{name}", mf.env.get(name) if mf else None, mg.env.get(name) if mg else None)
        )
    if args.format == "json":
        out = {
            "inputs": [
                {"path": c.path, "kind": c.kind, "defaults": c.defaults_from}
                for c in (mf, mg)
                if c is not None
            ],
            "settings": {p: {"mindformers": _cell(a), "megatron": _cell(b)} for p, a, b in rows},
            "warnings": [w for c in (mf, mg) if c is not None for w in c.warnings],
        }
        from cfglint.report.json import dumps

        sys.stdout.write(dumps(out, indent=2, default=str, ensure_ascii=False) + "\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    con = Console(highlight=False, soft_wrap=False, width=max(120, _term_width()))
    title = " vs ".join(
        f"{c.path} ({c.defaults_from or c.kind})" for c in (mf, mg) if c is not None
    )
    table = Table(title=title, show_lines=False, expand=True)
    table.add_column("setting", no_wrap=True)
    if mf:
        table.add_column("MindFormers", overflow="fold")
        table.add_column("from", style="dim", overflow="fold")
    if mg:
        table.add_column("Megatron", overflow="fold")
        table.add_column("from", style="dim", overflow="fold")
    for path, a, b in rows:
        cells = [path]
        for cfg, v in ((mf, a), (mg, b)):
            if cfg is None:
                continue
            cells += _show_cells(v)
        table.add_row(*cells)
    con.print(table)
    for c in (mf, mg):
        if c is not None:
            for w in c.warnings:
                con.print(f"[yellow]warning[/] {w}", markup=True)
    return 0


def _show_cells(v: Value | None) -> list[str]:
    from rich.markup import escape

    if v is None:
        return ["—", ""]
    if not v.known:
        return ["[red]unknown[/]", escape(v.detail)]
    val = escape(fmt(v.value))
    if v.yaml11_string:
        val = f"[red]{val!r} (string in MindFormers)[/]"
    return [val, escape(v.brief())]


def _term_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 160


# -- rules / explain --------------------------------------------------------------------------
def cmd_rules(args: Any) -> int:
    from cfglint.check.rulebook import load_rules

    rules = load_rules()
    if args.format == "json":
        data = {
            "rules": [
                {
                    "id": r.id,
                    "row": r.row,
                    "severity": r.severity,
                    "title": r.title,
                    "profiles": list(r.profiles),
                }
                for r in rules
            ]
        }
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    if args.format == "markdown":
        sys.stdout.write(rules_markdown(rules))
        return 0
    for r in rules:
        prof = "" if "default" in r.profiles else "  [align profile]"
        sys.stdout.write(f"{r.id}  {r.severity:<7}  {r.row:<36} {r.title}{prof}\n")
    return 0


def rules_markdown(rules: Any) -> str:
    """The rule reference for the README, one table per checklist section."""
    out: list[str] = []
    section = None
    for r in sorted(rules, key=lambda r: (SECTION_ORDER.index(r.row.split(".")[0]), r.id)):
        if r.section != section:
            section = r.section
            out += [
                "",
                f"#### {section}",
                "",
                "| rule | row | severity | what it reports |",
                "|---|---|---|---|",
            ]
        only = " *(align profile)*" if r.profiles == ("align",) else ""
        out.append(f"| {r.id} | `{r.row}` | {r.severity} | {r.title}{only} |")
    return "\n".join(out).lstrip("\n") + "\n"


def cmd_explain(args: Any) -> int:
    from cfglint.check.rulebook import load_rules

    want = args.rule.upper()
    for r in load_rules():
        if r.id == want:
            sys.stdout.write(
                f"{r.id}: {r.title}\n"
                f"row: {r.row}   severity: {r.severity}   kind: {r.kind}   "
                f"profiles: {', '.join(r.profiles)}\n\n"
                f"Why it matters:\n  {' '.join(r.rationale.split())}\n\n"
                f"How to fix:\n  {' '.join(r.fix.split())}\n"
            )
            return 0
    raise InputError(None, f"no rule {args.rule!r}; `cfglint rules` lists them")


# -- lr ------------------------------------------------------------------------------------------
def cmd_lr(args: Any) -> int:
    from cfglint.evidence import lr
    from cfglint.evidence.lr.bridge import schedule_of
    from cfglint.report import lr_plot

    mf, mg = _load_pair(args)
    scheds = {}
    for cfg in (mf, mg):
        if cfg is None:
            continue
        try:
            scheds[cfg.side] = schedule_of(cfg)
        except ValueError as exc:
            raise InputError(cfg.path, f"cannot build the learning-rate schedule: {exc}") from None
    if len(scheds) == 1:
        (s,) = scheds.values()
        sys.stdout.write(lr_plot.plot_terminal(s, s) + "\n")
        return 0
    a, b = scheds["mindformers"], scheds["megatron"]
    from cfglint.evidence.lr.bridge import MAX_STEPS

    steps = args.steps or max(a.total_steps, b.total_steps)
    if not 0 < steps <= MAX_STEPS:
        raise InputError(None, f"--steps must be between 1 and {MAX_STEPS}")
    diff = lr.compare(a, b, steps)
    for name, sch in (("MindFormers", a), ("Megatron", b)):
        sys.stdout.write(
            f"{name + ':':13}{sch.style}, peak {sch.max_lr:g}, min {sch.min_lr:g}, warmup "
            f"{sch.warmup_steps} steps, {sch.total_steps} steps\n"
        )
    for n in (*a.notes, *b.notes):
        sys.stdout.write(f"note: {n}\n")
    if diff.first_diverging_step is None:
        sys.stdout.write(
            f"The curves agree within 1% over {steps} steps (largest gap {diff.max_rel_gap:.2%}).\n"
        )
    else:
        sys.stdout.write(
            f"First step where they differ by more than 1%: {diff.first_diverging_step} "
            f"(MindFormers {diff.a_at_first:.6g}, Megatron {diff.b_at_first:.6g}); "
            f"largest gap {diff.max_rel_gap:.2%} at step {diff.max_gap_step}.\n"
        )
    sys.stdout.write("MindFormers is *, Megatron is o, # where they overlap\n")
    sys.stdout.write(lr_plot.plot_terminal(a, b) + "\n")
    if args.plot:
        try:
            lr_plot.plot_png(a, b, args.plot)
        except RuntimeError as exc:
            raise InputError(args.plot, str(exc)) from None
        sys.stdout.write(f"wrote {args.plot}\n")
    return 1 if diff.first_diverging_step is not None else 0
