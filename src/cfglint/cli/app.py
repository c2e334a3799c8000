"""Command line: ``cfglint mindformers.yaml --megatron args.sh`` and friends."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from typing import Any

from cfglint import __version__
from cfglint.check.rulebook import RuleFileError
from cfglint.check.schema import PROFILES
from cfglint.model.errors import InputError
from cfglint.model.findings import FAIL_ON
from cfglint.report import FORMATS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # usage errors are input errors: one line, exit 2, no traceback; the top-level
        # parser's name is the line's own prefix (InputError with no path says "cfglint:")
        sub = self.prog.removeprefix("cfglint").strip()
        raise InputError(None, f"{sub}: {message}" if sub else message)


def _common_inputs(p: argparse.ArgumentParser) -> None:
    from cfglint.load.dialects import known_versions
    from cfglint.normalize.mindformers.defaults import MF_RELEASES

    p.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="MindFormers configs, launch scripts (training launches of either side) and "
        "folders holding them; .py files are training sources; - reads a config from stdin",
    )
    p.add_argument(
        "--megatron",
        metavar="FILE",
        help="the Megatron-LM / MindSpeed-LLM side: launch script, args file, training log "
        "(its arguments block) or --yaml-cfg YAML",
    )
    p.add_argument(
        "--launch",
        metavar="SCRIPT",
        help="the MindFormers side's msrun launch script (environment and device-count rules)",
    )
    p.add_argument(
        "--mindformers-version",
        choices=list(MF_RELEASES),
        help="the MindFormers release the config is for, whose defaults apply (default: the "
        "newest release in which every class the config names exists)",
    )
    p.add_argument(
        "--megatron-version",
        choices=known_versions(),
        help="the release whose argument defaults apply (default: detected from the flags: "
        "MindSpeed-LLM if the command uses MindSpeed-LLM's own flags, else the newest "
        "Megatron-LM table)",
    )


def _color(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-color",
        action="store_true",
        help="plain text (also NO_COLOR=1; FORCE_COLOR=1 colors output to a pipe)",
    )


COMMAND_HELP = {
    "lint": "check a config pair (the default: `cfglint FILE...` is `cfglint lint FILE...`)",
    "show": "print every checked setting with its value and origin",
    "rules": "list every rule",
    "explain": "rationale and fix of one rule",
    "lr": "both learning-rate curves, step by step",
    "probe": "run a short real training step of both sides and confirm the findings "
    "(needs the probe extra)",
    "cache": "the cache (parsed data, rules, source scans): clear it, or show its size",
    "logs": "compare a MindFormers and a Megatron training run step by step (Stage 3)",
    "server": "language server for editors (stdio; needs the server extra)",
}


def _commands_epilog() -> str:
    width = max(map(len, COMMAND_HELP))
    rows = "\n".join(f"  {name:<{width}}  {text}" for name, text in COMMAND_HELP.items())
    return f"commands (`cfglint COMMAND --help` for each):\n{rows}"


def lint_parser() -> argparse.ArgumentParser:
    """``cfglint [lint]``: the default command, whose options ``cfglint --help`` lists."""
    lint = _Parser(
        prog="cfglint",
        usage="cfglint [lint] [FILE ...] [options]",
        description="Find the configuration causes of loss-curve mismatches between\n"
        "Megatron-LM / MindSpeed-LLM and MindFormers training jobs.\n"
        "Options and files may come in any order.",
        epilog=_commands_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    lint.add_argument("--version", action="version", version=f"cfglint {__version__}")
    _common_inputs(lint)
    lint.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="PATH",
        help="Python training sources, a file or folder (repeatable, one value each; parsed in "
        "parallel, cached by content hash). A file named here, or started by the launch "
        "script, is an entry point; in a folder, a module is an entry point when it trains "
        "(reaches an optimizer step or a framework training call)",
    )
    lint.add_argument(
        "--format",
        "--output-format",
        dest="format",
        choices=tuple(FORMATS),
        help="text (default), concise (path:line:col: RULE message), json, sarif, or github "
        "(workflow annotations)",
    )
    lint.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    lint.add_argument(
        "--statistics",
        action="store_true",
        help="count findings per rule instead of listing them (JSON with --format json)",
    )
    lint.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print the findings and errors only: no summary line, no notes on skipped files",
    )
    lint.add_argument(
        "--pairs",
        action="store_true",
        help="lint the pairs of [tool.cfglint] pairs that include one of FILE (all of them "
        "when no FILE is given); for pre-commit",
    )
    lint.add_argument(
        "--no-cache",
        action="store_true",
        help="read and write no cache: parsed data, validated rules, source scans "
        "(see `cfglint cache`)",
    )
    lint.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="RULE|ROW",
        help="only these rules: ids in any case (OPT006, opt006), id prefixes (OPT, DET01), "
        "rows (optimizer.beta2), sections (optimizer) or the settings `show` prints; "
        "repeatable or comma-separated; the more specific of --select and --ignore wins; an "
        "unknown name is a usage error naming the closest ones",
    )
    lint.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="RULE|ROW",
        help="skip these rules (same names as --select)",
    )
    lint.add_argument(
        "--profile",
        choices=PROFILES,
        help="align adds the Stage-1 alignment-run rules (2 layers, constant lr, no warmup, "
        "eps 1e-8, no randomness, parallelism off, same initial weights), and on a single "
        "side the alignment advice that the default profile reports only for pairs",
    )
    lint.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        help="lowest severity that makes the exit code 1 (default: warning)",
    )
    lint.add_argument(
        "--exit-zero",
        dest="fail_on",
        action="store_const",
        const="never",
        help="exit 0 even with findings (--fail-on never); input errors still exit 2",
    )
    lint.add_argument(
        "--data", metavar="PREFIX", help="a Megatron .bin/.idx dataset for the data rows"
    )
    lint.add_argument(
        "--tokenizer",
        metavar="DIR",
        help="a Hugging Face tokenizer file or folder for the special-token rows",
    )
    lint.add_argument(
        "--loss-log",
        action="append",
        default=[],
        metavar="LOG",
        help="training log of either side with per-step losses, for the "
        "migration-standard rows (give one per side)",
    )
    lint.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also list each input warning, each row that could not be checked and why, and "
        "every skipped file",
    )
    _color(lint)
    from cfglint.cli.probe import add_probe_options

    add_probe_options(lint, on_lint=True)
    from cfglint.cli.fix import add_fix_options

    add_fix_options(lint)
    # kept for hook configurations written before detection: other YAML is always skipped now
    lint.add_argument("--skip-unrecognized-yaml", action="store_true", help=argparse.SUPPRESS)
    lint.add_argument(
        "--config",
        metavar="PYPROJECT",
        help="pyproject.toml with [tool.cfglint] (default: nearest one)",
    )
    return lint


def _sub(name: str) -> argparse.ArgumentParser:
    return _Parser(prog=f"cfglint {name}", description=COMMAND_HELP[name])


def _show_parser() -> argparse.ArgumentParser:
    show = _sub("show")
    _common_inputs(show)
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.add_argument("--all", action="store_true", help="also settings that are not set anywhere")
    show.add_argument(
        "--diff-only", action="store_true", help="only settings whose two values differ"
    )
    _color(show)
    return show


def _rules_parser() -> argparse.ArgumentParser:
    rules = _sub("rules")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    _color(rules)
    return rules


def _explain_parser() -> argparse.ArgumentParser:
    explain = _sub("explain")
    explain.add_argument("rule", metavar="RULE-ID")
    _color(explain)
    return explain


def _cache_parser() -> argparse.ArgumentParser:
    cache = _sub("cache")
    cache.add_argument("action", choices=("clear", "info"))
    return cache


def _lr_parser() -> argparse.ArgumentParser:
    lr = _sub("lr")
    _common_inputs(lr)
    lr.add_argument(
        "--steps",
        type=int,
        help="training length in optimizer steps, where a side leaves it to the dataset "
        "(MindFormers total_steps: -1); default: the length --data gives, else the other "
        "side's length",
    )
    lr.add_argument(
        "--data",
        metavar="PATH",
        help="the MindFormers side's MindRecord dataset (a file or folder): total_steps -1 is "
        "computed from its sample count as MindFormers' trainer does",
    )
    lr.add_argument("--plot", metavar="FILE.png", help="also write a PNG plot")
    _color(lr)
    return lr


def _probe_parser() -> argparse.ArgumentParser:
    from cfglint.cli.probe import add_probe_options

    probe = _sub("probe")
    _common_inputs(probe)
    probe.add_argument(
        "--source", nargs="+", default=[], metavar="PATH", help="training sources to scan"
    )
    probe.add_argument(
        "--data", metavar="PREFIX", help="Megatron .bin/.idx dataset prefix for the probe's tokens"
    )
    probe.add_argument("--format", choices=("text", "json", "sarif"))
    probe.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    probe.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        help="lowest severity that makes the exit code 1 (default: warning)",
    )
    add_probe_options(probe)
    _color(probe)
    return probe


def _logs_parser() -> argparse.ArgumentParser:
    from cfglint.cli.logs import add_arguments

    logs = _sub("logs")
    add_arguments(logs)
    return logs


def _server_parser() -> argparse.ArgumentParser:
    from cfglint.cli.server import add_arguments

    server = _sub("server")
    add_arguments(server)
    return server


PARSERS = {
    "lint": lint_parser,
    "show": _show_parser,
    "rules": _rules_parser,
    "explain": _explain_parser,
    "cache": _cache_parser,
    "lr": _lr_parser,
    "probe": _probe_parser,
    "logs": _logs_parser,
    "server": _server_parser,
}


def _valued_options(p: argparse.ArgumentParser) -> set[str]:
    """Option strings that take a value: the token after one is never the command."""
    return {
        s
        for a in p._actions  # argparse keeps no public list of a parser's options
        for s in a.option_strings
        if a.nargs != 0
    }


def split_command(argv: list[str], lint: argparse.ArgumentParser) -> tuple[str, list[str]]:
    """The command and its arguments: the first positional when it names a command (a
    file called like one is written ./rules), else ``lint`` with every argument."""
    valued = _valued_options(lint)
    skip = False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a == "--":
            break
        if a.startswith("-") and a != "-":
            skip = a in valued
            continue
        if a in PARSERS:
            return a, argv[:i] + argv[i + 1 :]
        break
    return "lint", argv


def parse(argv: list[str]) -> argparse.Namespace:
    """Options and positionals in any order, as ruff reads them."""
    lint = lint_parser()
    command, rest = split_command(argv, lint)
    parser = lint if command == "lint" else PARSERS[command]()
    args = parser.parse_intermixed_args(rest)
    args.command = command
    return args


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: the lint's (what ``cfglint --help`` prints)."""
    return lint_parser()


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        # A program run (console script, python -m), not a call from Python: what has been
        # imported so far lives until exit. Freezing it spares the cyclic collector from
        # walking those objects again in every full collection during the lint, about 5% of
        # a pair lint (see bench/). What the lint allocates from here on is collected as
        # before, so memory on large input stays bounded.
        gc.freeze()
        from cfglint.report.output import guard_stdout

        guard_stdout()  # `> /dev/full` is one line and exit 2, wherever the write fails
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse(args_list)
        rc = _dispatch(args)
        from cfglint.report.output import flush_stdout

        flush_stdout()
        return rc
    except InputError as exc:
        print(exc.one_line(), file=sys.stderr)
        _failed_report(args_list, exc)
        return 2
    except RuleFileError as exc:
        print(f"cfglint: invalid rule file: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        from cfglint.report.output import stdout_failing

        err = stdout_failing(exc)  # `> /dev/full`: one line, not an internal error
        if err is None:
            return _internal(exc)
        print(err.one_line(), file=sys.stderr)
        return 2
    except Exception as exc:
        return _internal(exc)


def _internal(exc: Exception) -> int:
    # An input we failed to anticipate must still end in one line, not a traceback.
    # CFGLINT_DEBUG=1 (set by the test suite) re-raises, so such bugs surface in tests.
    if os.environ.get("CFGLINT_DEBUG"):
        raise exc
    print(
        f"cfglint: internal error ({type(exc).__name__}: {exc}); please report it with "
        "the input files",
        file=sys.stderr,
    )
    return 2


def _option(argv: list[str], names: tuple[str, ...]) -> str | None:
    """The last value given to one of ``names`` (``--opt V``, ``--opt=V``, ``-oV``), read
    from the raw arguments: the parse itself may be what failed."""
    found = None
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv):
                found = argv[i + 1]
            elif a.startswith(n + "=") or (len(n) == 2 and a.startswith(n) and len(a) > 2):
                found = a[len(n) :].removeprefix("=")
    return found


def _failed_report(argv: list[str], exc: InputError) -> None:
    """A lint that stopped before its report (a bad option, selector or setting, a file in
    the wrong role) still writes the JSON or SARIF file it was asked for, saying that the
    run failed, so a CI step that uploads it always has one."""
    output = _option(argv, ("--output", "-o"))
    if not output or (argv and argv[0] in PARSERS and argv[0] not in ("lint", "probe")):
        return
    from cfglint.cli.terminal import report_format

    fmt = report_format(_option(argv, ("--format", "--output-format")), output)
    if fmt not in ("json", "sarif"):
        return
    from cfglint.cli.terminal import write_output
    from cfglint.model.findings import InputProblem, Report
    from cfglint.report import RenderOptions, render

    problem = InputProblem.model_construct(path=exc.path or "", message=exc.message, line=exc.line)
    report = Report.model_construct(errors=[problem])
    try:
        write_output(render(fmt, report, RenderOptions()), output)
    except InputError as again:  # the report file itself cannot be written: said once
        if again.path != exc.path:
            print(again.one_line(), file=sys.stderr)


def _dispatch(args: Any) -> int:
    import importlib

    from cfglint.load.datacache import use_cache
    from cfglint.load.safeio import forget_reads
    from cfglint.report.output import check_targets

    forget_reads()  # one process may run many command lines (the test suite does)
    use_cache(not getattr(args, "no_cache", False))
    check_targets(args)  # an output that is an input is refused before any work

    # one module per subcommand, imported only when it runs (a plain lint stays light)
    module = "rules" if args.command == "explain" else args.command
    run = getattr(importlib.import_module(f"cfglint.cli.{module}"), f"cmd_{args.command}")
    return int(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
