"""Command line: ``cfglint mindformers.yaml --megatron args.sh`` and friends."""

from __future__ import annotations

import argparse
import os
import sys

from cfglint.check.rulebook import RuleFileError
from cfglint.cli.commands import PARSERS, build_parser, parse
from cfglint.cli.parsers import lint_parser
from cfglint.model.errors import InputError

__all__ = ["PARSERS", "build_parser", "lint_parser", "main", "parse"]


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # a program run (cfglint.cli.run), not a call from Python
        from cfglint.report.output import guard_stdout

        guard_stdout()  # `> /dev/full` is one line and exit 2, wherever the write fails
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        _cache_before_parsing(args_list)
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
    if exc.path and os.path.abspath(exc.path) == os.path.abspath(output):
        return  # the report file itself failed (a full disk): the previous one stays whole
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


def _cache_before_parsing(args_list: list[str]) -> None:
    """Parsing may read a data table (``--megatron-version``'s choices): ``--no-cache`` is in
    force from the start, so such a run reads and writes no cache file at all."""
    from cfglint.load.datacache import use_cache

    options = args_list[: args_list.index("--")] if "--" in args_list else args_list
    use_cache("--no-cache" not in options)


def _dispatch(args: argparse.Namespace) -> int:
    import importlib

    from cfglint.load.datacache import use_cache
    from cfglint.load.outputs import check_targets
    from cfglint.load.safeio import forget_reads

    forget_reads()  # one process may run many command lines (the test suite does)
    use_cache(not getattr(args, "no_cache", False))
    check_targets(args)  # an output that is an input is refused before any work

    # one module per subcommand, imported only when it runs (a plain lint stays light)
    module = "rules" if args.command == "explain" else args.command
    run = getattr(importlib.import_module(f"cfglint.cli.{module}"), f"cmd_{args.command}")
    return int(run(args))


if __name__ == "__main__":
    raise SystemExit(main())
