"""The other commands' parsers, and how a command line is split into a command and its
arguments (options and positionals in any order, as ruff reads them)."""

from __future__ import annotations

import argparse

from cfglint.cli.parsers import (
    COMMAND_HELP,
    Parser,
    add_color,
    add_probe_options,
    common_inputs,
    lint_parser,
)
from cfglint.model.findings import FAIL_ON


def sub_parser(name: str) -> argparse.ArgumentParser:
    return Parser(prog=f"cfglint {name}", description=COMMAND_HELP[name])


def _show_parser() -> argparse.ArgumentParser:
    show = sub_parser("show")
    common_inputs(show)
    show.add_argument("--format", choices=("text", "json"), default="text")
    show.add_argument("--all", action="store_true", help="also settings that are not set anywhere")
    show.add_argument(
        "--diff-only", action="store_true", help="only settings whose two values differ"
    )
    add_color(show)
    return show


def _rules_parser() -> argparse.ArgumentParser:
    rules = sub_parser("rules")
    rules.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    add_color(rules)
    return rules


def _explain_parser() -> argparse.ArgumentParser:
    explain = sub_parser("explain")
    explain.add_argument(
        "rule", metavar="RULE|ROW", help="a rule id (OPT006) or a checklist row (optimizer.beta2)"
    )
    add_color(explain)
    return explain


def _cache_parser() -> argparse.ArgumentParser:
    cache = sub_parser("cache")
    cache.add_argument("action", choices=("clear", "info"))
    return cache


def _lr_parser() -> argparse.ArgumentParser:
    lr = sub_parser("lr")
    common_inputs(lr)
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
    add_color(lr)
    return lr


def _probe_parser() -> argparse.ArgumentParser:
    probe = sub_parser("probe")
    common_inputs(probe)
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
    add_color(probe)
    return probe


def _logs_parser() -> argparse.ArgumentParser:
    from cfglint.cli.logs import add_arguments

    logs = sub_parser("logs")
    add_arguments(logs)
    return logs


def _server_parser() -> argparse.ArgumentParser:
    from cfglint.cli.server import add_arguments

    server = sub_parser("server")
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
    rest, held = _hold_after_dashdash(rest)
    args = parser.parse_intermixed_args(rest)
    _restore(args, held)
    args.command = command
    return args


def _hold_after_dashdash(argv: list[str]) -> tuple[list[str], dict[str, str]]:
    """``--`` ends the options: every argument after it is a positional, also one that
    starts with "-" (a file named ``-x.yaml``). argparse's intermixed parsing does not honour
    ``--`` (Python 3.11), so each such argument is held under a name no argument can have
    (it starts with a NUL) and put back after the parse."""
    if "--" not in argv:
        return argv, {}
    i = argv.index("--")
    held = {f"\0{k}": a for k, a in enumerate(argv[i + 1 :])}
    return argv[:i] + list(held), held


def _restore(args: argparse.Namespace, held: dict[str, str]) -> None:
    for name, value in vars(args).items():
        if isinstance(value, str) and value in held:
            setattr(args, name, held[value])
        elif isinstance(value, list):
            setattr(args, name, [held.get(v, v) if isinstance(v, str) else v for v in value])


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: the lint's (what ``cfglint --help`` prints)."""
    return lint_parser()
