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

SUBCOMMANDS = ("lint", "show", "rules", "explain", "lr", "probe", "cache", "logs", "server")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # usage errors are input errors: one line, exit 2, no traceback
        raise InputError(None, f"{self.prog}: {message}")


def _common_inputs(p: argparse.ArgumentParser) -> None:
    from cfglint.normalize.megatron.args import known_versions

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
        help="Megatron-LM / MindSpeed-LLM arguments: launch script, args file, "
        "training log, or --yaml-cfg file",
    )
    p.add_argument(
        "--launch",
        metavar="SCRIPT",
        help="the MindFormers side's launch script (msrun), for environment checks",
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


def build_parser() -> argparse.ArgumentParser:
    root = _Parser(
        prog="cfglint",
        description="Find the configuration causes of loss-curve mismatches between "
        "Megatron-LM / MindSpeed-LLM and MindFormers training jobs.",
    )
    root.add_argument("--version", action="version", version=f"cfglint {__version__}")
    sub = root.add_subparsers(dest="command", parser_class=_Parser)

    lint = sub.add_parser("lint", help="check a config pair (the default command)")
    _common_inputs(lint)
    lint.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="PATH",
        help="a training source file or folder to scan (repeatable, one value each)",
    )
    lint.add_argument("--format", "--output-format", dest="format", choices=tuple(FORMATS))
    lint.add_argument(
        "--statistics", action="store_true", help="count findings per rule instead of listing them"
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
        help="neither read nor write the source-scan cache (see `cfglint cache`)",
    )
    lint.add_argument("--output", "-o", metavar="FILE", help="write the report here")
    lint.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="RULE|ROW",
        help="only these rules: ids in any case, id prefixes (OPT, DET01), rows, sections, or "
        "settings as `show` prints them (repeatable, comma lists)",
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
        help="align adds the Stage-1 alignment-run settings, and on a single side the "
        "alignment advice that the default profile reports only for pairs",
    )
    lint.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        help="lowest severity that makes the exit code 1 (default: warning)",
    )
    lint.add_argument(
        "--data", metavar="PATH", help="dataset prefix (Megatron .bin/.idx) for the data rows"
    )
    lint.add_argument(
        "--tokenizer", metavar="PATH", help="tokenizer file or folder for the special-token rows"
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
        help="also list rows that could not be checked, and why, and every skipped file",
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

    show = sub.add_parser("show", help="print every checked setting with its value and origin")
    _common_inputs(show)
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.add_argument("--all", action="store_true", help="also settings that are not set anywhere")
    show.add_argument(
        "--diff-only", action="store_true", help="only settings whose two values differ"
    )
    _color(show)

    rules = sub.add_parser("rules", help="list every rule")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    _color(rules)

    explain = sub.add_parser("explain", help="rationale and fix of one rule")
    explain.add_argument("rule", metavar="RULE-ID")
    _color(explain)

    cache = sub.add_parser("cache", help="the source-scan cache: clear it, or show its size")
    cache.add_argument("action", choices=("clear", "info"))

    lr = sub.add_parser("lr", help="both learning-rate curves, step by step")
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

    probe = sub.add_parser(
        "probe",
        help="run a short real training step of both sides and confirm the findings "
        "(needs the probe extra)",
    )
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
    from cfglint.cli.logs import add_parser as add_logs

    add_logs(sub)
    from cfglint.cli.server import add_server_options

    add_server_options(sub)
    return root


def _argv_with_default_command(argv: list[str]) -> list[str]:
    for i, a in enumerate(argv):
        if a in ("-h", "--help", "--version"):
            return argv
        if not a.startswith("-") or (i > 0 and argv[i - 1] in ("--megatron", "--launch")):
            return argv if a in SUBCOMMANDS else ["lint", *argv]
    return ["lint", *argv]


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        # A program run (console script, python -m), not a call from Python: what has been
        # imported so far lives until exit. Freezing it spares the cyclic collector from
        # walking those objects again in every full collection during the lint, about 5% of
        # a pair lint (see bench/). What the lint allocates from here on is collected as
        # before, so memory on large input stays bounded.
        gc.freeze()
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(_argv_with_default_command(args_list))
        return _dispatch(args)
    except InputError as exc:
        print(exc.one_line(), file=sys.stderr)
        return 2
    except RuleFileError as exc:
        print(f"cfglint: invalid rule file: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        # An input we failed to anticipate must still end in one line, not a traceback.
        # CFGLINT_DEBUG=1 (set by the test suite) re-raises, so such bugs surface in tests.
        if os.environ.get("CFGLINT_DEBUG"):
            raise
        print(
            f"cfglint: internal error ({type(exc).__name__}: {exc}); please report it with "
            "the input files",
            file=sys.stderr,
        )
        return 2


def _dispatch(args: Any) -> int:
    import importlib

    # one module per subcommand, imported only when it runs (a plain lint stays light)
    module = "rules" if args.command == "explain" else args.command
    run = getattr(importlib.import_module(f"cfglint.cli.{module}"), f"cmd_{args.command}")
    return int(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
