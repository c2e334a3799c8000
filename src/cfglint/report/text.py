"""Terminal output: grouped by checklist section, one block per finding."""

from __future__ import annotations

import io
import textwrap
from collections import defaultdict
from typing import TYPE_CHECKING

from cfglint.model.findings import SECTION_ORDER, Finding, Report

STYLE = {"error": "bold red", "warning": "bold yellow", "note": "bold cyan"}

if TYPE_CHECKING:
    from cfglint.report import RenderOptions


def _wrap(text: str, indent: str, width: int) -> str:
    """``text`` filled to ``width`` as ``textwrap.fill`` fills its words (whitespace runs
    made one space, no word broken, at hyphens or anywhere): each word joins the line when
    it fits, else starts the next one, where it stands alone when longer than a line.
    Without textwrap's chunking regex and per-chunk loop, which were most of rendering a
    pair lint's report (issue 29); tests/report/test_wrap.py checks it against textwrap."""
    if width <= 0:
        return _textwrap_fill(text, indent, width)  # its ValueError
    room = width - len(indent)
    lines: list[str] = []
    line: list[str] = []
    used = 0
    for word in text.split():
        if line and used + 1 + len(word) <= room:
            line.append(word)
            used += 1 + len(word)
            continue
        if line:
            lines.append(indent + " ".join(line))
        line, used = [word], len(word)
    if line:
        lines.append(indent + " ".join(line))
    return "\n".join(lines)


def _textwrap_fill(text: str, indent: str, width: int) -> str:
    return textwrap.fill(
        " ".join(text.split()),
        width=width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def render_text(
    report: Report,
    titles: dict[str, str],
    *,
    color: bool = False,
    verbose: bool = False,
    width: int = 100,
    name_files: bool = False,
    quiet: bool = False,
) -> str:
    """The report as (style, text) lines, printed through rich only when colored: rich
    costs a noticeable share of a pre-commit run's start-up, and plain text needs none."""
    lines = _lines(report, titles, verbose, width, name_files, quiet)
    if not color:
        return "".join(text + "\n" for _, text in lines)
    from rich.console import Console
    from rich.text import Text

    buf = io.StringIO()
    con = Console(file=buf, force_terminal=True, width=width, highlight=False, soft_wrap=True)
    for style, text in lines:
        con.print(Text(text, style=style or ""))
    return buf.getvalue()


def _finding_lines(f: Finding, width: int, name_files: bool) -> list[tuple[str, str]]:
    """One finding: its head, message, why, fix and the written places it points at."""
    head = f"  {f.severity:<7} {f.rule} {f.row}"
    if name_files and f.locations:
        head += f"  {f.locations[0].path}"
    out = [(STYLE[f.severity], head), ("", _wrap(f.message, "    ", width))]
    if f.rationale:
        out.append(("dim", _wrap("why: " + f.rationale, "    ", width)))
    if f.fix:
        out.append(("green", _wrap("fix: " + f.fix, "    ", width)))
    # a default is written nowhere: its place is where its section begins, marked as such
    if f.locations:
        at = ", ".join(
            f"{loc.path}:{loc.line}" + (" (not set)" if loc.anchor else "") for loc in f.locations
        )
        out.append(("dim", _wrap("at: " + at, "    ", width)))
    return out


def _verbose_lines(report: Report, width: int) -> list[tuple[str, str]]:
    """-v: every input warning and every row that could not be checked, with why."""
    out = []
    for w in report.warnings:
        where = f"{w.path}:{w.line}" if w.line else w.path
        out.append(("yellow", f"warning {where}: {w.message}"))
    if report.not_checked:
        out.append(("bold", "Not checked"))
        for row, why in report.not_checked:
            out.append(("", _wrap(f"{row}: {why}", "  ", width)))
    return out


def _lines(
    report: Report,
    titles: dict[str, str],
    verbose: bool,
    width: int,
    name_files: bool = False,
    quiet: bool = False,
) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    by_section: dict[str, list[Finding]] = defaultdict(list)
    for f in report.findings:
        by_section[f.row.split(".")[0]].append(f)
    for section in sorted(
        by_section, key=lambda s: SECTION_ORDER.index(s) if s in SECTION_ORDER else 99
    ):
        out.append(("bold underline", titles.get(section, section)))
        for f in by_section[section]:
            out += _finding_lines(f, width, name_files)
        out.append(("", ""))
    for e in report.errors:
        where = f"{e.path}:{e.line}" if e.line else e.path
        out.append(("bold red", f"input error {where}: {e.message}"))
    if verbose:
        out += _verbose_lines(report, width)
    if not quiet:
        unchecked = not_checked_line(report, verbose)
        if unchecked:
            out.append(("", _wrap(unchecked, "", width)))
        out.append(("bold", summary_line(report)))
    return out


# what a missing piece of evidence is called in the summary, by a phrase of its reason
_NEEDS = (
    ("(--source)", "--source"),
    ("launch script", "a launch script"),
    ("--loss-log", "--loss-log"),
    ("probe", "the probe"),
    ("--data", "--data"),
    ("--tokenizer", "--tokenizer"),
    ("not installed", "an installed MindFormers"),
    ("version table", "an installed MindFormers"),
)


_SIDES = ("MindFormers", "Megatron", "MindSpeed-LLM")


def not_checked_line(report: Report, verbose: bool = False) -> str:
    """How many rules could not decide their row and the main reasons: the evidence that
    was not given, counted, and what was undecided, by rule."""
    if not report.not_checked:
        return ""
    needs: dict[str, int] = {}
    undecided: dict[str, list[str]] = {}
    for _row, why in report.not_checked:
        rule, _, reason = why.partition(": ")
        need = next((name for key, name in _NEEDS if key in reason), None)
        if need is not None:
            needs[need] = needs.get(need, 0) + 1
            continue
        parts = reason.split(";")[0].split(": ")
        # "Megatron: does not name ...": the side, and what it could not decide
        short = ": ".join(parts[:2]) if parts[0] in _SIDES and len(parts) > 1 else parts[0]
        undecided.setdefault(short, []).append(rule)
    n = len(report.not_checked)
    out = [f"Not checked: {n} rule{'s' if n != 1 else ''}."]
    if undecided:
        out.append(
            "Undecided: "
            + "; ".join(f"{', '.join(rules)} ({what})" for what, rules in undecided.items())
            + "."
        )
    if needs:
        order = sorted(needs.items(), key=lambda kv: -kv[1])
        out.append("Not given: " + ", ".join(f"{name} ({k})" for name, k in order) + ".")
    if not verbose:
        out.append("-v lists each reason.")
    return " ".join(out)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _counts_text(report: Report) -> str:
    """What was found ("Found 2 errors, 1 note; 1 input error."), or that nothing was in
    the files checked."""
    if not report.findings and not report.errors:
        # say what was checked: a run that read nothing never gets here (cli says so)
        n = len({i.path for i in report.inputs})
        return f"No findings in {_plural(n, 'file')}." if n else "No findings."
    counts = {"error": 0, "warning": 0, "note": 0}
    for f in report.findings:
        counts[f.severity] += 1
    parts = [_plural(n, k) for k, n in counts.items() if n]
    text = "Found " + (", ".join(parts) if parts else "no findings")
    if report.errors:
        text += f"; {_plural(len(report.errors), 'input error')}"
    return text + "."


def summary_line(report: Report) -> str:
    if not report.findings and not report.errors and not report.inputs and report.warnings:
        # every input was left out (a source too big to scan): say so, not "No findings"
        first = report.warnings[0]
        more = len(report.warnings) - 1
        return f"Nothing checked: {first.path}: {first.message}" + (
            f" ({more} more input warning(s); -v lists them)" if more else "."
        )
    text = _counts_text(report)
    if report.suppressed:
        text += f" ({report.suppressed} suppressed inline.)"
    if report.warnings:
        text += f" {_plural(len(report.warnings), 'input warning')}; -v lists them."
    return text


def render(report: Report, options: RenderOptions) -> str:
    from cfglint.check.rulebook import section_titles

    text = render_text(
        report,
        section_titles(),
        color=options.color,
        verbose=options.verbose,
        width=options.width,
        name_files=options.name_files,
        quiet=options.quiet,
    )
    if report.probe is not None:
        from cfglint.report.probe import text_section

        text += text_section(report.probe)
    return text
