"""The lint's parser (what ``cfglint --help`` prints) and the pieces every command's parser
shares."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from cfglint import INSTALL_PROBE, PROBE_DEVICES, __version__
from cfglint.check.rule import PROFILES
from cfglint.cli.terminal import terminal_columns
from cfglint.model.errors import InputError
from cfglint.model.findings import FAIL_ON
from cfglint.report import FORMATS


class Parser(argparse.ArgumentParser):
    def __init__(
        self,
        *args: Any,
        formatter_class: type[argparse.HelpFormatter] = argparse.HelpFormatter,
        **kwargs: Any,
    ) -> None:
        # argparse builds a help formatter for every add_argument (to check its metavar),
        # and each one left to find its width imports shutil for it: the same width
        # (argparse's: the terminal's, 80 without one, less 2), read as often, without shutil
        def formatter(prog: str) -> argparse.HelpFormatter:
            return formatter_class(prog, width=terminal_columns(80) - 2)

        super().__init__(*args, formatter_class=formatter, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        # usage errors are input errors: one line, exit 2, no traceback; the top-level
        # parser's name is the line's own prefix (InputError with no path says "cfglint:")
        sub = self.prog.removeprefix("cfglint").strip()
        raise InputError(None, f"{sub}: {message}" if sub else message)


class _KnownVersions:
    """``--megatron-version``'s choices, read from the tables only when argparse needs them
    (the option is given, or --help): building the parser reads no table, so ``--version``
    and every command start without them, and ``--no-cache`` is in force before any read."""

    def _names(self) -> list[str]:
        from cfglint.load.dialects import known_versions

        return known_versions()

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())


def common_inputs(p: argparse.ArgumentParser) -> None:
    from cfglint.normalize.mindformers.defaults import MF_RELEASES, MF_UNREAD_RELEASES

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
        choices=[*MF_RELEASES, *MF_UNREAD_RELEASES],
        help="the MindFormers release the config is for, whose defaults apply (default: the "
        "releases that hold the file, by content or path; what they disagree on is not "
        "decided. For a file no release holds: every release in which every class the config "
        "names exists, the same way); for one whose defaults cfglint has not read (v1.0.0 to "
        "v1.2.0 and the v1.4.0 betas) no default is decided",
    )
    p.add_argument(
        "--megatron-version",
        choices=_KnownVersions(),  # type: ignore[arg-type]
        # a metavar: argparse would list the choices (read every table) to build the parser
        metavar="VERSION",
        help="the release whose argument defaults apply (default: detected from the flags: "
        "MindSpeed-LLM if the command uses MindSpeed-LLM's own flags, else the newest "
        "Megatron-LM table); an unknown name lists the known ones",
    )


def add_color(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-color",
        action="store_true",
        help="plain text (also NO_COLOR=1; FORCE_COLOR=1 colors output to a pipe)",
    )


def add_probe_options(p: argparse.ArgumentParser, on_lint: bool = False) -> None:
    if on_lint:
        p.add_argument(
            "--probe",
            action="store_true",
            help="also run the runtime probe (needs the probe extra: " + INSTALL_PROBE + ")",
        )
    p.add_argument(
        "--steps", type=int, default=10, help="probe steps per curve (at least 3; default 10)"
    )
    p.add_argument(
        "--device", choices=PROBE_DEVICES, default="auto", help="probe device (default auto)"
    )
    p.add_argument("--plot", metavar="FILE.png", help="write the probe's curves as a PNG")
    if not on_lint:
        p.add_argument(
            "--log-dir",
            metavar="DIR",
            help="also write each side's curves as that framework's training log "
            "(for `cfglint logs`)",
        )


COMMAND_HELP = {
    "lint": "check a config pair (the default: `cfglint FILE...` is `cfglint lint FILE...`)",
    "show": "print every checked setting with its value and origin",
    "rules": "list every rule",
    "explain": "rationale and fix of a rule, or of every rule of a checklist row",
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
    lint = Parser(
        prog="cfglint",
        usage="cfglint [lint] [FILE ...] [options]",
        description="Find the configuration causes of loss-curve mismatches between\n"
        "Megatron-LM / MindSpeed-LLM and MindFormers training jobs.\n"
        "Options and files may come in any order.",
        epilog=_commands_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    lint.add_argument("--version", action="version", version=f"cfglint {__version__}")
    common_inputs(lint)
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
    add_color(lint)
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
