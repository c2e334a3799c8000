"""load -> normalize -> rules -> report, for one invocation."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cfglint.check.engine import Context, run_rules
from cfglint.check.rule import Rule
from cfglint.check.rulebook import load_rules
from cfglint.model.config import Config
from cfglint.model.errors import InputError
from cfglint.model.findings import SECTION_ORDER, Finding, InputProblem, InputRef, Report
from cfglint.model.lazy_re import compile_on_use
from cfglint.model.record import Record

if TYPE_CHECKING:
    from cfglint.load.reads import Reads


class Options(Record):
    __slots__ = (
        "data",
        "ignore",
        "launch",
        "loss_logs",
        "megatron",
        "megatron_form",
        "megatron_version",
        "mindformers",
        "mindformers_version",
        "per_file_ignores",
        "profile",
        "scan_cache",
        "select",
        "settings_base",
        "source_members",
        "sources",
        "tokenizer",
    )

    mindformers: list[str]
    megatron: str | None
    launch: str | None
    sources: list[str]
    # .py files named without --source (pre-commit's file list): scanned, and entry points
    # only when they train (scan_paths' members); only --source FILE makes an entry point
    source_members: list[str]
    megatron_form: str | None  # script | args | log | yaml, as the classifier found
    profile: str
    select: list[str]
    ignore: list[str]
    megatron_version: str | None
    mindformers_version: str | None
    data: str | None
    tokenizer: str | None
    loss_logs: list[str]
    scan_cache: bool  # --no-cache: neither read nor write the source-scan cache
    # [tool.cfglint] per-file-ignores (pattern -> selectors) and the folder its patterns
    # are relative to (the pyproject.toml's)
    per_file_ignores: dict[str, list[str]]
    settings_base: str

    def __init__(
        self,
        mindformers: list[str] | None = None,
        megatron: str | None = None,
        launch: str | None = None,
        sources: list[str] | None = None,
        source_members: list[str] | None = None,
        megatron_form: str | None = None,
        profile: str = "default",
        select: list[str] | None = None,
        ignore: list[str] | None = None,
        megatron_version: str | None = None,
        mindformers_version: str | None = None,
        data: str | None = None,
        tokenizer: str | None = None,
        loss_logs: list[str] | None = None,
        scan_cache: bool = True,
        per_file_ignores: dict[str, list[str]] | None = None,
        settings_base: str = ".",
    ) -> None:
        self.mindformers = [] if mindformers is None else mindformers
        self.megatron = megatron
        self.launch = launch
        self.sources = [] if sources is None else sources
        self.source_members = [] if source_members is None else source_members
        self.megatron_form = megatron_form
        self.profile = profile
        self.select = [] if select is None else select
        self.ignore = [] if ignore is None else ignore
        self.megatron_version = megatron_version
        self.mindformers_version = mindformers_version
        self.data = data
        self.tokenizer = tokenizer
        self.loss_logs = [] if loss_logs is None else loss_logs
        self.scan_cache = scan_cache
        self.per_file_ignores = {} if per_file_ignores is None else per_file_ignores
        self.settings_base = settings_base


def load_mindformers_side(
    path: str, launch: str | None = None, version: str | None = None, reads: Reads | None = None
) -> Config:
    from cfglint.normalize.mindformers.build import load_mindformers

    cfg = load_mindformers(path, version, reads)
    if launch:
        from cfglint.normalize.launch import attach_mindformers_launch

        attach_mindformers_launch(cfg, launch, reads)
    return cfg


def load_megatron_side(
    path: str, version: str | None = None, form: str | None = None, reads: Reads | None = None
) -> Config:
    from cfglint.normalize.megatron.build import normalize_megatron
    from cfglint.normalize.megatron.input import load_megatron

    return normalize_megatron(load_megatron(path, version, form, reads))


def _misread(f: Finding, rule: Rule) -> bool:
    """A finding raised to error above its rule's severity: a value the framework reads
    differently from what was written (YAML 1.1 numbers as strings), wrong in any run."""
    return f.severity == "error" and rule.severity != "error"


def single_side_filter(findings: list[Finding], rules: tuple[Rule, ...]) -> list[Finding]:
    by_id = {r.id: r for r in rules}
    out = []
    for f in findings:
        rule = by_id.get(f.rule)
        if rule is not None and rule.advice and not _misread(f, rule):
            continue
        out.append(f)
    return out


# (side, path, launch or Megatron version, MindFormers release or Megatron input form) -> the
# normalized side; the editor server passes one that keeps unchanged sides in memory
SideLoader = Callable[[str, str, "str | None", "str | None"], Config]


def load_side(
    side: str, path: str, extra: str | None, form: str | None = None, reads: Reads | None = None
) -> Config:
    """``reads``: the parses the run's planning hands over (load/reads.py)."""
    if side == "mindformers":
        return load_mindformers_side(path, extra, form, reads)
    return load_megatron_side(path, extra, form, reads)


def planned_loader(reads: Reads) -> SideLoader:
    """The side loader of a run whose planning parsed its inputs into ``reads``: each
    parse is used once, by the first load of its file."""
    return lambda side, path, extra, form=None: load_side(side, path, extra, form, reads)


def _load_sides(opts: Options, load: SideLoader, report: Report, ctx: Context) -> None:
    """Both sides' configs into ``ctx`` (an input error lands in ``report``)."""
    mf_path = opts.mindformers[0] if opts.mindformers else None
    if len(opts.mindformers) > 1:
        raise InputError(None, "one MindFormers YAML at a time (use `cfglint lint` per file)")
    if mf_path:
        report.inputs.append(InputRef.model_construct(path=mf_path, kind="mindformers"))
        if opts.launch:
            report.inputs.append(InputRef.model_construct(path=opts.launch, kind="launch"))
        ctx.mf = _guarded(
            report,
            mf_path,
            lambda: load("mindformers", mf_path, opts.launch, opts.mindformers_version),
        )
    if opts.megatron:
        report.inputs.append(InputRef.model_construct(path=opts.megatron, kind="megatron"))
        ctx.mg = _guarded(
            report,
            opts.megatron,
            lambda: load("megatron", opts.megatron, opts.megatron_version, opts.megatron_form),
        )
    for cfg in (ctx.mf, ctx.mg):
        if cfg is not None:
            report.warnings.extend(_warnings(cfg))


def _scan_sources(opts: Options, report: Report, ctx: Context) -> None:
    """The training sources, scanned into ``ctx.sources`` (imported only when given)."""
    from cfglint.evidence.scan import scan_paths

    for s in [*opts.sources, *opts.source_members]:
        report.inputs.append(InputRef.model_construct(path=s, kind="source"))
    ctx.sources = scan_paths(
        opts.sources,
        entry_hints=_entry_hints(ctx),
        use_cache=opts.scan_cache,
        members=opts.source_members,
    )
    for problem in ctx.sources.errors:
        (report.warnings if problem.level == "warning" else report.errors).append(problem)
    # a source file that was not scanned (too big) is no checked input: the summary must
    # not count it ("No findings in 1 file" for a 1 GB file nobody read)
    unscanned = {s for s in opts.sources if os.path.isfile(s)} - set(ctx.sources.files)
    report.inputs = [i for i in report.inputs if i.path not in unscanned]


def _kept(
    findings: list[Finding], rules: tuple[Rule, ...], opts: Options, ctx: Context
) -> tuple[list[Finding], set[str]]:
    """The findings a single side, the dialect and per-file-ignores keep, and the rules
    that ran (for unused suppressions)."""
    ran = {r.id for r in rules} - {why.partition(":")[0] for _, why in ctx.not_checked}
    if opts.profile == "default" and (ctx.mf is None) != (ctx.mg is None):
        findings = single_side_filter(findings, rules)
        ran -= {r.id for r in rules if r.advice}
    if ctx.mg is not None and ctx.mg.dialect_name:
        from cfglint.check.respell import respell_fixes

        findings = respell_fixes(findings, ctx.mg.dialect_name)
    if opts.per_file_ignores:
        from cfglint.check.selection import PerFileIgnores

        table = PerFileIgnores(opts.per_file_ignores, opts.settings_base, opts.select)
        by_id = {r.id: r for r in rules}
        findings = [f for f in findings if not table.drops(f, by_id.get(f.rule))]
    return findings, ran


def _section_key(f: Finding) -> tuple[Any, ...]:
    section = f.row.split(".")[0]
    return (SECTION_ORDER.index(section) if section in SECTION_ORDER else 99, *f.sort_key())


def lint(opts: Options, load: SideLoader = load_side) -> tuple[Report, Context]:
    report = Report.model_construct()
    ctx = Context(profile=opts.profile)
    _load_sides(opts, load, report, ctx)
    if opts.sources or opts.source_members:
        _scan_sources(opts, report, ctx)
    if opts.data:
        ctx.data["data"] = opts.data
    if opts.tokenizer:
        ctx.data["tokenizer"] = opts.tokenizer
    ctx.logs = list(opts.loss_logs)
    if ctx.mf is None and ctx.mg is None and ctx.sources is None:
        return report, ctx
    from cfglint.check.selection import select_rules

    rules = select_rules(load_rules(), opts.select, opts.ignore)
    try:
        findings = run_rules(rules, ctx)
    except InputError as exc:  # a data file or log a builtin check had to read
        report.errors.append(
            InputProblem.model_construct(path=exc.path or "", message=exc.message, line=exc.line)
        )
        return report, ctx
    findings, ran = _kept(findings, rules, opts, ctx)
    from cfglint.check.suppress import apply

    findings, report.suppressed, unused = apply(findings, load_rules(), _read_files(ctx), ran)
    report.warnings.extend(unused)
    findings.sort(key=_section_key)
    report.findings = findings
    report.not_checked = sorted(set(ctx.not_checked))
    return report, ctx


def _read_files(ctx: Context) -> list[str]:
    """Every config and script file the two sides were read from: where a suppression
    comment that silences nothing is reported."""
    out: list[str] = []
    for cfg in (ctx.mf, ctx.mg):
        if cfg is not None:
            out += [cfg.path, *cfg.files, *([cfg.launch_script] if cfg.launch_script else [])]
    return list(dict.fromkeys(p for p in out if p))


def _guarded(report: Report, path: str, load):  # type: ignore[no-untyped-def]
    try:
        return load()
    except InputError as exc:
        report.errors.append(
            InputProblem.model_construct(path=exc.path or path, message=exc.message, line=exc.line)
        )
        return None


# where a loader's warning text says it comes from: "path:12: ..." or a script's "line 12: ..."
_AT_PATH = compile_on_use(r"(?P<path>[^\s:][^:]*):(?P<line>[0-9]+): (?P<message>.+)", re.DOTALL)
_AT_LINE = compile_on_use(r"line (?P<line>[0-9]+): (?P<message>.+)", re.DOTALL)


def _warnings(cfg: Config) -> list[InputProblem]:
    # a flag the release does not have is a finding (OTH011), not a warning: Megatron's
    # argument parser refuses it at start-up
    return [_located(cfg.path, w) for w in cfg.warnings]


def _located(path: str, text: str) -> InputProblem:
    """A warning with its file and line as fields, so JSON, SARIF and GitHub annotations
    point at the line instead of repeating it inside the message."""
    m = _AT_PATH.fullmatch(text)
    if m is not None and os.path.exists(m["path"]):
        return InputProblem.model_construct(
            path=m["path"], line=int(m["line"]), message=m["message"], level="warning"
        )
    m = _AT_LINE.fullmatch(text)
    if m is not None:
        return InputProblem.model_construct(
            path=path, line=int(m["line"]), message=m["message"], level="warning"
        )
    return InputProblem.model_construct(path=path, message=text, level="warning")


def _entry_hints(ctx: Context) -> list[str]:
    hints = []
    for cfg in (ctx.mf, ctx.mg):
        if cfg is None or cfg.launch.entry_script is None or not cfg.launch.entry_script.known:
            continue
        script = str(cfg.launch.entry_script.value)
        base = (
            os.path.dirname(cfg.launch.entry_script.loc.path) if cfg.launch.entry_script.loc else ""
        )
        hints.append(
            os.path.normpath(os.path.join(base, script)) if not os.path.isabs(script) else script
        )
    return hints
