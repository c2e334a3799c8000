"""The subcommands behind :mod:`cfglint.cli.app`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from cfglint.cli.inputs import Plan
from cfglint.cli.pipeline import Options, lint
from cfglint.cli.terminal import write_output
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


def _planned_jobs(args: Any, cfg: dict[str, Any]) -> Plan:
    """What this invocation lints: the configured pairs (no FILE, or --pairs), else the
    files and folders given, each recognised before any rule sees it."""
    from cfglint.cli.inputs import Job, plan

    base = cfg.get("_base") or Path.cwd()
    pairs = cfg.get("pairs") or []
    no_inputs = not (args.files or args.megatron or args.source)
    if args.pairs or (no_inputs and pairs):
        if not pairs:
            raise InputError(None, "--pairs: no pairs in [tool.cfglint] (see README, pre-commit)")
        settings = cfg.get("_path")
        changed_settings = settings is not None and any(
            os.path.abspath(f) == os.path.abspath(settings) for f in args.files
        )
        chosen = (
            pairs
            if not args.files or changed_settings
            else [p for p in pairs if _touches(p, args.files)]
        )
        return Plan(
            jobs=[
                Job(p.get("mindformers"), p.get("megatron"), p.get("launch"), list(p["source"]))
                for p in chosen
            ]
        )
    if args.megatron is not None:
        _check_megatron_side(args.megatron)
    return plan(
        list(args.files),
        megatron=args.megatron,
        launch=args.launch,
        sources=list(args.source or []),
        exclude=list(cfg.get("exclude", [])),
        base=Path(base),
    )


def _touches(pair: dict[str, Any], files: list[str]) -> bool:
    """A changed file belongs to a pair: one of its files, or under one of its sources."""
    mine = [pair.get(k) for k in ("mindformers", "megatron", "launch")]
    roots = [os.path.abspath(x) for x in [*mine, *pair["source"]] if x]
    for f in files:
        full = os.path.abspath(f)
        if any(full == r or full.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
            return True
    return False


def _check_megatron_side(path: str) -> None:
    """--megatron names the Megatron side: a converter or an FSDP2 script is refused with
    what it is, never read with Megatron's defaults."""
    from cfglint.load.detect import Kind, detect_script

    if not path.lower().endswith((".sh", ".bash")) or not os.path.isfile(path):
        return
    d = detect_script(path)
    if d.kind is Kind.NOT_TRAINING:
        raise InputError(path, f"not a training launch ({d.why}); nothing to compare")
    if d.kind is Kind.FSDP2_LAUNCH:
        raise InputError(path, f"MindSpeed-LLM FSDP2 launch: {d.why}")
    if d.kind is Kind.MINDFORMERS_LAUNCH:
        raise InputError(
            path, f"a MindFormers launch ({d.why}); give it with --launch, beside its config"
        )


def _check_paths(args: Any) -> None:
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


def _check_selectors(args: Any, cfg: dict[str, Any]) -> None:
    from cfglint.check.rulebook import load_rules
    from cfglint.cli.selection import check_known, split

    rules = load_rules()
    check_known(split(args.select), rules, "--select")
    check_known(split(args.ignore), rules, "--ignore")
    where = "[tool.cfglint]"
    try:
        check_known(split(cfg.get("select", [])), rules, f"{where} select")
        check_known(split(cfg.get("ignore", [])), rules, f"{where} ignore")
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
    return Report.model_validate_json(text)


def cmd_lint(args: Any) -> int:
    cfg = _settings(args)
    fmt_name = args.format or cfg.get("format", "text")
    profile = args.profile or cfg.get("profile", "default")
    fail_on = args.fail_on or cfg.get("fail_on", "warning")
    version = args.megatron_version or cfg.get("megatron_version")
    _check_selectors(args, cfg)
    _check_paths(args)
    args.files, stdin_path = _stdin_file(list(args.files))
    try:
        todo = _planned_jobs(args, cfg)
        total = _run_jobs(todo, args, cfg, profile, version)
    finally:
        if stdin_path:
            import shutil

            shutil.rmtree(os.path.dirname(stdin_path), ignore_errors=True)
    if stdin_path:
        total = _rename(total, stdin_path, STDIN_NAME)
    if not todo.jobs:
        # nothing was linted: every skipped file, with what it was taken for, is the answer
        for x in total.skipped:
            print(f"{x.path}: {x.message}", file=sys.stderr)
        if not total.skipped and not (args.pairs or cfg.get("pairs")):
            named = args.files[0] if len(args.files) == 1 else None  # e.g. an empty folder
            raise InputError(
                named,
                "nothing to check: give a MindFormers YAML, a launch script, a folder, "
                "--megatron FILE or --source PATH (see cfglint --help)",
            )
        what = f": {len(total.skipped)} file(s) skipped, none is a training input"
        print(f"cfglint: nothing checked{what if total.skipped else ''}", file=sys.stderr)
        if fmt_name in ("json", "sarif"):
            # a CI step that asked for a report (and may upload it) still gets a valid one
            _emit(total, fmt_name, args, False)
        return 0
    _note_skipped(todo, total, args)
    if total.errors:
        for e in total.errors:
            print(_problem_line(e), file=sys.stderr)
        if total.findings or fmt_name != "text":
            _emit(
                total.model_copy(update={"errors": total.errors if fmt_name != "text" else []}),
                fmt_name,
                args,
                len(todo.jobs) > 1,
            )
        return 2
    _emit(total, fmt_name, args, len(todo.jobs) > 1)
    from cfglint.check.engine import failing

    return 1 if failing(total.findings, fail_on) else 0


def _run_jobs(
    todo: Plan, args: Any, cfg: dict[str, Any], profile: str, version: str | None
) -> Report:
    total = Report.model_construct()
    for job in todo.jobs:
        opts = Options(
            mindformers=[job.mindformers] if job.mindformers else [],
            megatron=job.megatron,
            launch=job.launch,
            sources=job.sources,
            profile=profile,
            select=args.select or list(cfg.get("select", [])),
            ignore=args.ignore + list(cfg.get("ignore", [])),
            megatron_version=version,
            data=args.data,
            tokenizer=args.tokenizer,
            loss_logs=args.loss_log,
            scan_cache=not args.no_cache,
        )
        report, ctx = lint(opts)
        if getattr(args, "probe", False) and not report.errors:
            from cfglint.cli.probe import run_probe_command

            report, args.probe_result = run_probe_command(args, report, ctx)
        total.inputs.extend(report.inputs)
        total.findings.extend(report.findings)
        total.errors.extend(report.errors)
        total.warnings.extend(report.warnings)
        total.not_checked.extend(report.not_checked)
        total.suppressed += report.suppressed
    total.skipped = [
        InputProblem.model_construct(
            path=d.path, message=f"skipped: {d.kind.value} ({d.why})", level="note"
        )
        for d in todo.skipped
    ]
    return total


def _note_skipped(todo: Plan, report: Report, args: Any) -> None:
    """A note per skipped file named on the command line (pre-commit passes names); files
    found by walking a folder are counted, and listed with -v."""
    walked = [s for s in report.skipped if s.path in todo.walked]
    for s in report.skipped:
        if s.path not in todo.walked or args.verbose:
            print(f"{s.path}: {s.message}", file=sys.stderr)
    if walked and not args.verbose and todo.jobs:
        print(
            f"cfglint: {len(walked)} file(s) in the given folders skipped as not training "
            "inputs (converters, preprocessing, other YAML, ...); -v lists them",
            file=sys.stderr,
        )


def _problem_line(e: InputProblem) -> str:
    return f"{e.path}:{e.line}: {e.message}" if e.line else f"{e.path}: {e.message}"


def _emit(report: Report, fmt_name: str, args: Any, many: bool = False) -> None:
    from cfglint.cli.terminal import term_width, use_color
    from cfglint.report import RenderOptions, render

    probe_result = getattr(args, "probe_result", None)
    if probe_result is not None:  # lint --probe: the probe's evidence joins the report
        from cfglint.cli.probe import emit

        emit(report, probe_result, fmt_name, args.output)
        return

    if args.statistics:
        from cfglint.check.rulebook import load_rules
        from cfglint.report.concise import render_statistics

        titles = {r.id: r.title for r in load_rules()}
        write_output(render_statistics(report, titles), args.output)
        return
    color = fmt_name == "text" and use_color(args, to_file=args.output is not None)
    options = RenderOptions(
        verbose=args.verbose,
        color=color,
        width=term_width() if args.output is None else 100,
        name_files=many,
    )
    write_output(render(fmt_name, report, options), args.output)


# -- show -----------------------------------------------------------------------------------
def _load_pair(args: Any) -> tuple[Config | None, Config | None]:
    from cfglint.cli.pipeline import load_megatron_side, load_mindformers_side
    from cfglint.load.detect import Kind, detect

    configs, scripts, launch = [], [], args.launch
    for f in args.files:
        d = detect(f) if os.path.exists(f) else None
        if d is None or (
            d.kind in (Kind.MINDFORMERS_CONFIG, Kind.BROKEN) and not f.endswith((".sh", ".bash"))
        ):
            configs.append(f)
        elif d.kind is Kind.MINDFORMERS_LAUNCH:
            launch = launch or f
        elif d.kind is Kind.MEGATRON_LAUNCH or d.kind is Kind.BROKEN:
            scripts.append(f)
        else:
            raise InputError(f, f"{d.kind.value} ({d.why}): nothing to show")
    megatron = args.megatron or (scripts[0] if scripts else None)
    if megatron is not None:
        _check_megatron_side(megatron)
    if len(configs) > 1:
        raise InputError(None, f"{args.command} takes one MindFormers YAML")
    mf = load_mindformers_side(configs[0], launch) if configs else None
    mg = load_megatron_side(megatron, args.megatron_version) if megatron else None
    if mf is None and mg is None:
        raise InputError(
            None, f"nothing to {args.command}: give a MindFormers YAML and/or --megatron FILE"
        )
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
                | ({"not_applicable": c.not_applicable} if c.not_applicable else {})
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
    from rich.markup import escape
    from rich.table import Table

    from cfglint.cli.terminal import term_width, use_color

    color = use_color(args)
    width = term_width()
    con = Console(
        highlight=False,
        soft_wrap=False,
        width=width,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
    )
    both = mf is not None and mg is not None
    if args.diff_only:
        if not both:
            raise InputError(None, "--diff-only compares two sides: give both")
        rows = [r for r in rows if _differs(r[1], r[2])]
    title = " vs ".join(
        f"{c.path} ({c.defaults_from or c.kind})" for c in (mf, mg) if c is not None
    )
    # Wide terminals get separate "from" columns; narrow ones put the origin under the value.
    wide = width >= 120
    table = Table(title=escape(title), show_lines=not wide, expand=True, pad_edge=False)
    longest = max((len(r[0]) for r in rows), default=10)
    table.add_column("setting", no_wrap=True, min_width=min(longest, width // 3))
    for cfg, name in ((mf, "MindFormers"), (mg, "Megatron")):
        if cfg is None:
            continue
        table.add_column(name, overflow="fold", ratio=3)
        if wide:
            table.add_column("from", style="dim", overflow="fold", ratio=3)
    for path, a, b in rows:
        cells = [path]
        for cfg, v in ((mf, a), (mg, b)):
            if cfg is None:
                continue
            value, origin = _show_cells(v, narrow=not wide)
            if v is None and path in cfg.not_applicable:
                value, origin = "n/a", escape(f"not applicable: {cfg.not_applicable[path]}")
            cells += (
                [value, origin] if wide else [value + (f"\n[dim]{origin}[/]" if origin else "")]
            )
        table.add_row(*cells, style="bold yellow" if both and _differs(a, b) else None)
    con.print(table)
    if both:
        n = sum(1 for _, a, b in rows if _differs(a, b))
        con.print(
            f"{n} setting(s) differ"
            + ("" if args.diff_only else " (highlighted; --diff-only lists only them)")
        )
    for c in (mf, mg):
        if c is not None:
            for w in c.warnings:
                con.print(f"[yellow]warning[/] {escape(w)}", markup=True)
    return 0


def _differs(a: Value | None, b: Value | None) -> bool:
    """Both sides set the setting and their values differ (numbers within 1e-9)."""
    if a is None or b is None or not a.known or not b.known:
        return False
    x, y = a.value, b.value
    if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
        return abs(x - y) > 1e-9 * max(abs(x), abs(y), 1e-300)
    return fmt(x) != fmt(y)


def _show_cells(v: Value | None, narrow: bool = False) -> list[str]:
    from rich.markup import escape

    if v is None:
        return ["—", ""]
    if not v.known:
        return ["[red]unknown[/]", escape(v.detail)]
    val = escape(fmt(v.value))
    if v.yaml11_string:
        val = f"[red]{val!r} (string in MindFormers)[/]"
    origin = v.brief()
    if narrow and v.origin.value == "file" and v.loc is not None:
        origin = f"{os.path.basename(v.loc.path)}:{v.loc.line}"  # the key is the row already
        if v.branch_choice:
            origin += f"; {v.choice_note()}"
    return [val, escape(origin)]


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
    paint = _painter(args)
    for r in rules:
        prof = "" if "default" in r.profiles else "  [align profile]"
        sev = paint(f"{r.severity:<7}", SEVERITY_ANSI[r.severity])
        sys.stdout.write(f"{paint(r.id, '1')}  {sev}  {r.row:<36} {r.title}{prof}\n")
    return 0


SEVERITY_ANSI = {"error": "1;31", "warning": "1;33", "note": "1;36"}


def _painter(args: Any) -> Any:
    """ANSI styling for the small plain-text commands, under the same switches as lint."""
    from cfglint.cli.terminal import use_color

    if not use_color(args):
        return lambda text, code: text
    return lambda text, code: f"\x1b[{code}m{text}\x1b[0m"


def rules_page(rules: Any) -> str:
    """docs/rules.md: every rule under its own anchor (the SARIF helpUri points there)."""
    out = [
        "# cfglint rules",
        "",
        "Generated from `rules/*.yaml` by `scripts/update_readme_rules.py`; do not edit by hand.",
        "A rule marked *align profile* runs only with `--profile align`; a recommendation",
        "(kind `recommend` or `env`) runs for a pair, and on a single side with `--profile align`.",
    ]
    section = None
    for r in sorted(rules, key=lambda r: (SECTION_ORDER.index(r.row.split(".")[0]), r.id)):
        if r.section != section:
            section = r.section
            out += ["", f"## {section}"]
        only = " *(align profile)*" if r.profiles == ("align",) else ""
        out += [
            "",
            f'<a id="{r.id.lower()}"></a>',
            f"### {r.id}: {r.title}{only}",
            "",
            f"Row `{r.row}` · severity {r.severity} · kind {r.kind}",
            "",
            " ".join(r.rationale.split()),
            "",
            f"**Fix:** {' '.join(r.fix.split())}",
        ]
    return "\n".join(out) + "\n"


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


def cmd_cache(args: Any) -> int:
    """``cfglint cache clear`` / ``cfglint cache info``: the source-scan cache."""
    from cfglint.evidence.scan.runner import Cache
    from cfglint.load.datacache import cache_dir

    cache = Cache(cache_dir() / "scan")
    if args.action == "clear":
        n, freed = cache.clear()
        sys.stdout.write(f"removed {n} cached scan summaries ({freed / 2**20:.1f} MiB)\n")
    else:
        n, size = cache.usage()
        sys.stdout.write(
            f"{cache.root}: {n} scan summaries, {size / 2**20:.1f} MiB "
            f"(bound {cache.max_bytes / 2**20:.0f} MiB, CFGLINT_SCAN_CACHE_MB)\n"
        )
    return 0


def cmd_explain(args: Any) -> int:
    from cfglint.check.rulebook import load_rules

    want = args.rule.upper()
    paint = _painter(args)
    for r in load_rules():
        if r.id == want:
            sys.stdout.write(
                f"{paint(r.id + ': ' + r.title, '1')}\n"
                f"row: {r.row}   severity: {paint(r.severity, SEVERITY_ANSI[r.severity])}   "
                f"kind: {r.kind}   profiles: {', '.join(r.profiles)}\n\n"
                f"{paint('Why it matters:', '1')}\n  {' '.join(r.rationale.split())}\n\n"
                f"{paint('How to fix:', '1')}\n  {' '.join(r.fix.split())}\n"
            )
            return 0
    raise InputError(None, f"no rule {args.rule!r}; `cfglint rules` lists them")


# -- lr ------------------------------------------------------------------------------------------
NAMES = {"mindformers": "MindFormers", "megatron": "Megatron"}
# A constant schedule has the same rate at every step; without a length it is drawn this long.
CONSTANT_SPAN = 100


def _length_open(cfg: Config) -> bool:
    """The config leaves the training length to run time: MindFormers ``total_steps: -1``
    (or absent) is replaced by the dataset's length x epochs (mindformers: trainer/
    base_trainer.py, where the lr schedule is built with the computed total_steps)."""
    o = cfg.optimizer
    if o.train_steps is not None and o.train_steps.known and o.train_steps.value:
        return False
    if cfg.side == "megatron":
        return not any(k in o.lr_extra for k in ("train_iters", "train_samples"))
    declared = o.lr_extra.get("total_steps")
    return declared is None or not declared.known or declared.value in (None, -1)


def _is_constant(cfg: Config) -> bool:
    style = cfg.optimizer.lr_decay_style
    return style is not None and style.known and str(style.value) == "constant"


def lr_schedules(
    mf_path: str | None, mg_path: str | None, steps: int | None, launch: str | None = None
) -> dict[str, Any]:
    """Both sides' schedules for ``cfglint lr``, each with a training length."""
    from cfglint.cli.pipeline import load_megatron_side, load_mindformers_side

    mf = load_mindformers_side(mf_path, launch) if mf_path else None
    mg = load_megatron_side(mg_path) if mg_path else None
    scheds, _ = _build_schedules(mf, mg, steps)
    return scheds


def _dataset_length(cfg: Config, data: str) -> tuple[int, str]:
    """MindFormers' total_steps -1 for the dataset at ``data``, as its trainer computes it."""
    from cfglint.load.mindrecord import MindRecordError, count_samples, is_mindrecord
    from cfglint.normalize.mindformers.optimizer import steps_from_samples

    if not os.path.exists(data):
        raise InputError(data, "no such file or folder (--data)")
    if not is_mindrecord(data):
        raise InputError(
            data,
            "not a MindRecord file or folder: --data gives the length of a MindFormers run "
            "whose total_steps is -1 (a Megatron-format dataset's length is its loader's "
            "sizes[0] in the YAML)",
        )
    try:
        found = count_samples(data)
    except MindRecordError as exc:
        raise InputError(exc.path, str(exc)) from None
    o = cfg.optimizer
    gbs = o.global_batch_size
    if (
        gbs is None
        or not gbs.known
        or isinstance(gbs.value, bool)
        or not isinstance(gbs.value, int)
    ):
        raise InputError(
            cfg.path, "the global batch size is unknown, so the dataset's length in steps is too"
        )
    length = steps_from_samples(found.samples, gbs.value, o.length_terms)
    if length is None:
        bad = [k for k, v in o.length_terms.items() if not v.known or v.yaml11_string]
        raise InputError(
            cfg.path, f"cannot compute total_steps from the dataset: {', '.join(bad)} unusable"
        )
    terms = {k: v.value for k, v in o.length_terms.items()}
    source = (
        f"{found.samples} samples in {data} ({found.how}), global batch {gbs.value}, "
        f"epochs {terms['epochs']}, sink_mode {terms['sink_mode']}, sink_size "
        f"{terms['sink_size']}, drop_remainder {terms['drop_remainder']}, repeat "
        f"{terms['repeat']}"
    )
    dp = cfg.parallel.data_parallel
    if terms.get("full_batch") is False and dp is not None and dp.known and dp.value != 1:
        source += (
            f"; full_batch is off, so each of the {dp.value} data-parallel ranks reads its own "
            "shard and MindSpore's shard rounding can move this by a step per epoch"
        )
    return length, source


def _build_schedules(
    mf: Config | None, mg: Config | None, steps: int | None, data: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    from cfglint.evidence.lr.bridge import MAX_STEPS, schedule_of

    scheds: dict[str, Any] = {}
    notes: list[str] = []
    cfgs = [c for c in (mg, mf) if c is not None]  # the side that knows its length first
    for cfg in cfgs:
        name = NAMES[cfg.side]
        length, source = None, ""
        if _length_open(cfg):
            other = next((s for side, s in scheds.items() if side != cfg.side), None)
            if steps is not None:
                length, source = steps, "--steps"
            elif data is not None and cfg.side == "mindformers":
                length, source = _dataset_length(cfg, data)
            elif other is not None:
                flag = "--train-iters" if other.framework == "megatron" else "total_steps"
                length, source = other.total_steps, f"{NAMES[other.framework]}'s {flag}"
            elif _is_constant(cfg):
                length, source = CONSTANT_SPAN, "none needed: the schedule is constant"
            else:
                raise InputError(
                    cfg.path,
                    f"{name} leaves the training length to the dataset (total_steps: -1); "
                    "give --steps N, the dataset with --data, or the other side with --megatron",
                )
        try:
            scheds[cfg.side] = schedule_of(cfg, length)
        except ValueError as exc:
            raise InputError(cfg.path, f"cannot build the learning-rate schedule: {exc}") from None
        if not 0 < scheds[cfg.side].total_steps <= MAX_STEPS:
            raise InputError(
                cfg.path,
                f"{name} trains {scheds[cfg.side].total_steps} steps: nothing to simulate "
                f"(a length between 1 and {MAX_STEPS} is needed; --steps N gives one)",
            )
        if length is not None:
            notes.append(f"{name} training length {length} steps ({source})")
    ordered = {k: scheds[k] for k in ("mindformers", "megatron") if k in scheds}
    return ordered, notes


def cmd_lr(args: Any) -> int:
    from cfglint.evidence.lr.bridge import MAX_STEPS
    from cfglint.report import lr_plot

    if args.steps is not None and not 0 < args.steps <= MAX_STEPS:
        raise InputError(None, f"--steps must be between 1 and {MAX_STEPS}")
    mf, mg = _load_pair(args)
    scheds, notes = _build_schedules(mf, mg, args.steps, args.data)
    paint = _painter(args)
    for side, sch in scheds.items():
        sys.stdout.write(
            f"{paint(NAMES[side] + ':', '1'):13}{sch.style}, peak {sch.max_lr:g}, min "
            f"{sch.min_lr:g}, warmup {sch.warmup_steps} steps, {sch.total_steps} steps\n"
        )
    for n in (*notes, *(n for s in scheds.values() for n in s.notes)):
        sys.stdout.write(f"note: {n}\n")
    code = 0
    if len(scheds) == 2:
        a, b = scheds["mindformers"], scheds["megatron"]
        if a.total_steps != b.total_steps:
            sys.stdout.write(
                f"note: the runs end at different steps (MindFormers {a.total_steps}, "
                f"Megatron {b.total_steps}); compared over the {min(a.total_steps, b.total_steps)}"
                " steps both train\n"
            )
        diff = lr_plot.common_diff(a, b)
        if diff.first_diverging_step is None:
            sys.stdout.write(
                paint(
                    f"The curves agree within 1% over {diff.steps} steps (largest gap "
                    f"{diff.max_rel_gap:.2%}).",
                    "32",
                )
                + "\n"
            )
        else:
            code = 1
            sys.stdout.write(
                paint(
                    f"First step where they differ by more than 1%: {diff.first_diverging_step}"
                    f" (MindFormers {diff.a_at_first:.6g}, Megatron {diff.b_at_first:.6g}); "
                    f"largest gap {diff.max_rel_gap:.2%} at step {diff.max_gap_step}.",
                    "1;33",
                )
                + "\n"
            )
    from cfglint.cli.terminal import term_width

    sys.stdout.write(lr_plot.plot_terminal(*scheds.values(), width=min(term_width(), 120)) + "\n")
    if args.plot:
        title = "Learning rate: " + " vs ".join(
            os.path.basename(c.path) for c in (mf, mg) if c is not None
        )
        try:
            lr_plot.write_png(scheds, title, args.plot)
        except RuntimeError as exc:
            raise InputError(args.plot, str(exc)) from None
        except OSError as exc:
            raise InputError(args.plot, f"cannot write the plot: {exc.strerror}") from None
        sys.stdout.write(f"wrote {args.plot}\n")
    return code
