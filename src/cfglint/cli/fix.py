"""``--fix``, ``--diff``, ``--unsafe-fixes`` and ``--fix-to`` on the lint call.

As ruff does: ``--fix`` writes the fixes, then the lint runs again and reports what
remains (exit 0 when nothing at or above ``--fail-on`` remains); ``--diff`` prints the
unified diff of the fixes, writes nothing, and exits 1 when there is something to fix.
Unsafe fixes (they change more of the run than the finding's value) are applied only
with ``--unsafe-fixes``.

Files are written whole or not at all (a temporary file in the same folder, renamed over
the original), and a file whose content changed since the fix was planned is not written.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from cfglint.model.errors import InputError

if TYPE_CHECKING:  # the parser imports this module: planning is imported when it runs
    from cfglint.check.context import Context
    from cfglint.check.fixes import FixPlan
    from cfglint.check.pipeline import Options
    from cfglint.model.findings import Report


def add_fix_options(p: Any) -> None:
    p.add_argument(
        "--fix",
        action="store_true",
        help="write the fixes of fixable findings (MindFormers YAML and launch scripts, "
        "comments and layout kept), then report what remains",
    )
    p.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff and write nothing (exit 1 when there are fixes)",
    )
    p.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="also apply fixes that change more than the finding's value (parallel layout, "
        "model shape, sequence length, recommended values)",
    )
    p.add_argument(
        "--fix-to",
        choices=("megatron", "mindformers"),
        default="megatron",
        help="the side whose values are kept; the other side is edited to match "
        "(default: megatron, the reference run: MindFormers follows it)",
    )


def wants_fix(args: Any) -> bool:
    return bool(getattr(args, "fix", False) or getattr(args, "diff", False))


def fix_job(args: Any, opts: Options, report: Report, ctx: Context) -> tuple[Report, Context]:
    """Plan one job's fixes; print them (--diff) or write them and lint again (--fix).
    Returns the lint to show (and probe): what remains after writing."""
    if report.errors:
        return report, ctx
    from cfglint.check.fix_verify import converge
    from cfglint.check.pipeline import lint
    from cfglint.check.rulebook import load_rules

    plan = converge(report, ctx, opts, load_rules(), fix_to=args.fix_to, unsafe=args.unsafe_fixes)
    _tally(args, plan)
    if args.diff:
        sys.stdout.write(render_diff(plan))
        return report, ctx
    if not plan.fixes:
        return report, ctx
    write_plan(plan)
    return lint(opts)


def _tally(args: Any, plan: FixPlan) -> None:
    state = args.__dict__.setdefault(
        "fix_state", {"fixed": 0, "parts": 0, "files": set(), "skipped": []}
    )
    # only findings the checked re-lint no longer reports count as fixed
    gone, parts = plan.fixed_count() if not args.diff else (len(plan.fixes), 0)
    state["fixed"] += gone
    state["parts"] += parts
    state["files"].update(plan.changed())
    state["skipped"].extend(plan.skipped)


def render_diff(plan: FixPlan) -> str:
    import difflib

    out = []
    for path, (old, new) in plan.changed().items():
        out.extend(
            difflib.unified_diff(
                old.splitlines(keepends=True), new.splitlines(keepends=True), path, path
            )
        )
    text = "".join(out)
    return text if not text or text.endswith("\n") else text + "\n"


def write_plan(plan: FixPlan) -> None:
    """Every file both sides were read from checked unchanged (the side a fix planned
    from as well as the one it edits: two fixes running at once in opposite directions
    must not both win), every edited file checked writable, then each written atomically
    through its symbolic link to the file it names, its UTF-8 BOM kept."""
    from cfglint.load.safeio import read_bytes
    from cfglint.model.edits import digest  # a lint without --fix does not import it

    changed = plan.changed()
    for path, (_, sha) in plan.texts.items():
        if digest(_text(read_bytes(path), path)) != sha:
            raise InputError(path, "changed since it was read; not fixed (run again)")
    targets = {path: _target(path) for path in changed}
    for path, (_, new) in changed.items():
        data = read_bytes(path)
        bom = "\ufeff" if data.startswith(b"\xef\xbb\xbf") else ""
        write_atomic(targets[path], bom + new, path)


def _text(data: bytes, path: str) -> str:
    from cfglint.load.safeio import decode_text

    return decode_text(data, path)


def _target(path: str) -> str:
    """The file a fix of ``path`` writes: the one a symbolic link names (the link stays);
    refused when it is read-only (its owner's choice) or its folder is."""
    import stat

    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError as exc:
        raise InputError(path, f"cannot fix it: {exc.strerror}") from None
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(
        real, os.W_OK
    ):
        raise InputError(path, "is read-only; not fixed (make it writable to fix it)")
    if not os.access(os.path.dirname(real), os.W_OK | os.X_OK):
        raise InputError(path, f"its folder {os.path.dirname(real)} is read-only; not fixed")
    return real


def write_atomic(path: str, text: str, shown: str | None = None) -> None:
    """``text`` replaces ``path`` whole or not at all (load/outputs.py replace_file: a unique
    temporary file in the same folder, renamed over it, the mode kept)."""
    from cfglint.load.outputs import replace_file

    try:
        replace_file(path, text.encode("utf-8"))
    except OSError as exc:
        raise InputError(shown or path, f"cannot write the fix: {exc.strerror}") from None


def finish(args: Any, report: Report, fail_on: str) -> int:
    """The exit code and summary line of a --fix or --diff run (ruff's)."""
    from cfglint.check.engine import failing

    state = getattr(args, "fix_state", {"fixed": 0, "files": set(), "skipped": []})
    if args.diff:
        _list_skipped(args, state)
        return 1 if state["fixed"] else 0
    unsafe = sum(1 for _, why in state["skipped"] if why.startswith("unsafe fix"))
    line = f"cfglint: fixed {state['fixed']} finding(s) in {len(state['files'])} file(s)"
    if state.get("parts"):
        line += f"; aligned {state['parts']} part(s) of findings that remain"
    if unsafe:
        line += f"; {unsafe} more fixable with --unsafe-fixes"
    print(line, file=sys.stderr)
    _list_skipped(args, state)
    return 1 if failing(report.findings, fail_on) else 0


def _list_skipped(args: Any, state: dict[str, Any]) -> None:
    """With -v: every finding left unfixed, with why (those with no fix at all included)."""
    if args.verbose:
        for rule, why in dict.fromkeys(state["skipped"]):
            print(f"  not fixed: {rule}: {why}", file=sys.stderr)
