"""Every planned fix checked before it is kept (issue 35).

The edited texts are read again the way the job reads them (the lint's own loaders: PyYAML
with YAML 1.1 for MindFormers, with its base_config merge and template-v2 resolution; the
project's bash reader for launch scripts), and the lint runs on them. A fix is kept only
when the result loads, its finding is gone (the value the framework resolves changed),
no other finding appeared, and no setting changed but the one it fixes (the same written
key may feed several rows; a value derived from it or a default may follow). A fix that
edits a base_config file, which other configs may inherit, is refused unless unsafe fixes
are asked for, naming the file and the configs found inheriting it.

The whole plan is checked at once (one more lint, the common case); when that fails, the
fixes are taken one by one, each kept only when it passes with those kept before it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from cfglint.check.context import Context
from cfglint.check.fixes import Fix, FixPlan
from cfglint.check.pipeline import Options, SideLoader, lint, load_side
from cfglint.check.rule import Rule
from cfglint.model.config import Config
from cfglint.model.edits import apply_edits
from cfglint.model.findings import Finding, Report
from cfglint.model.values import Origin

# the texts of the edited files (absolute path -> text) -> the lint of them
Relint = Callable[[dict[str, str]], tuple[Report, Context]]
# a base file's folder and the child's folder are searched for other configs that inherit it
_MAX_SIBLINGS = 400


def checked_plan(
    report: Report,
    ctx: Context,
    opts: Options,
    rules: tuple[Rule, ...],
    *,
    fix_to: str = "megatron",
    unsafe: bool = False,
    load: SideLoader = load_side,
    texts: dict[str, str] | None = None,
    only: set[str] | None = None,
) -> FixPlan:
    """The fixes of a lint, each checked (:func:`verify_plan`) against the lint of the files
    as they would be written; ``texts`` are unsaved buffers (the editor's); ``only`` limits
    the rules planned."""
    from cfglint.check.fixes import plan_fixes
    from cfglint.load.safeio import buffers

    todo = [f for f in report.findings if only is None or f.rule in only]
    plan = plan_fixes(todo, ctx, rules, fix_to=fix_to, unsafe=unsafe, texts=texts)
    snapshot_sides(plan, ctx, texts)

    def relint(edited: dict[str, str]) -> tuple[Report, Context]:
        with buffers({**(texts or {}), **edited}):
            return lint(opts, load=load)

    verify_plan(plan, report, ctx, rules, relint, unsafe=unsafe)
    return plan


def converge(
    report: Report,
    ctx: Context,
    opts: Options,
    rules: tuple[Rule, ...],
    *,
    fix_to: str = "megatron",
    unsafe: bool = False,
    rounds: int = 4,
) -> FixPlan:
    """Checked fixes applied in rounds, each planned from the lint of the last one's result,
    until a round has nothing left to fix (as ruff iterates): a fix that clashed with
    another in one round (an alias and its anchor) is made in the next, so one ``--fix``
    reaches what a second would. ``plan.final`` holds the texts to write; ``plan.texts``
    the texts first read, whose hashes the writer checks."""
    from cfglint.load.safeio import buffers

    total = checked_plan(report, ctx, opts, rules, fix_to=fix_to, unsafe=unsafe)
    first = {finding_key(f) for f in report.findings}
    current = _result(total, total.fixes)
    last, more = total, False
    for _ in range(rounds - 1):
        if not last.fixes:
            break
        # everything is planned again from the result: a fix that clashed with another,
        # a recommendation a comparison superseded until it was fixed. What the next
        # --fix would write is written now, so that one --fix reaches the fixed point.
        with buffers(current):
            rep, c = lint(opts)
        if rep.errors:
            break
        last = checked_plan(rep, c, opts, rules, fix_to=fix_to, unsafe=unsafe, texts=current)
        total.skipped = last.skipped
        if last.fixes:
            current = _result(last, last.fixes, current)
            total.fixes += last.fixes
            more = True
    if more:  # findings gone over all rounds
        with buffers(current):
            rep, _ = lint(opts)
        total.gone = gone_keys(first, flags(rep.findings))
    total.final = current
    return total


def _result(plan: FixPlan, fixes: list[Fix], base: dict[str, str] | None = None) -> dict[str, str]:
    """Absolute path -> text after ``fixes``, from ``base`` (else the texts first read)."""
    out = dict(base) if base else {os.path.abspath(p): t for p, (t, _) in plan.texts.items()}
    edits: dict[str, list[Any]] = {}
    for fx in fixes:
        for e in fx.edits:
            edits.setdefault(os.path.abspath(e.path), []).append(e)
    for path, es in edits.items():
        out[path] = apply_edits(out[path], es)
    return out


def finding_key(f: Finding) -> tuple[str, str, tuple[str, ...]]:
    """A finding's identity across a fix: its rule, row and the sides it flags (its values
    change with the fix)."""
    return f.rule, f.row, tuple(sorted(f.values))


def flags(findings: list[Finding]) -> dict[tuple[str, str], set[str]]:
    """(rule, row) -> the sides reported: a finding fixed on one of two flagged sides is
    still reported on the other."""
    out: dict[tuple[str, str], set[str]] = {}
    for f in findings:
        out.setdefault((f.rule, f.row), set()).update(f.values or {"": None})
    return out


def gone_keys(
    before: set[tuple[str, str, tuple[str, ...]]], now: dict[tuple[str, str], set[str]]
) -> set[tuple[str, str, tuple[str, ...]]]:
    """The findings of ``before`` reported on none of their sides any more."""
    return {k for k in before if not set(k[2] or ("",)) & now.get((k[0], k[1]), set())}


def verify_plan(
    plan: FixPlan,
    report: Report,
    ctx: Context,
    rules: tuple[Rule, ...],
    relint: Relint,
    *,
    unsafe: bool = False,
) -> None:
    """Drop from ``plan.fixes`` every fix that fails a check; each goes to ``plan.skipped``
    with its reason."""
    _refuse_base_files(plan, ctx, unsafe)
    if not plan.fixes:
        return
    judge = _Judge(plan, report, ctx, {r.id: r for r in rules}, relint)
    if judge.why(plan.fixes) is None:
        return
    kept: list[Fix] = []
    for fx in plan.fixes:
        why = judge.why([*kept, fx])
        if why is None:
            kept.append(fx)
        else:
            plan.skipped.append((fx.rule, f"{fx.title}: not written: {why}"))
    plan.fixes = kept


class _Judge:
    def __init__(
        self,
        plan: FixPlan,
        report: Report,
        ctx: Context,
        by_id: dict[str, Rule],
        relint: Relint,
    ) -> None:
        self.plan, self.ctx, self.by_id, self.relint = plan, ctx, by_id, relint
        self.before = {finding_key(f) for f in report.findings}
        self.flags_before = flags(report.findings)
        self.values = {side: _values(ctx.side(side)) for side in ("mindformers", "megatron")}

    def why(self, fixes: list[Fix]) -> str | None:
        """Why writing ``fixes`` together must not happen; None when it may."""
        texts = self._texts(fixes)
        after, actx = self.relint(texts)
        if after.errors:
            e = after.errors[0]
            where = f"{e.path}:{e.line}" if e.line else e.path
            return f"the result does not load ({where}: {e.message})"
        now = flags(after.findings)
        for fx in fixes:
            if fx.part:  # one part of a finding: that part agrees now
                if not _agree(actx, fx.part):
                    return f"{fx.part} still differs after it (the value read did not change)"
            elif set(fx.finding.values or {"": None}) & now.get((fx.rule, fx.finding.row), set()):
                return f"{fx.rule} is still reported after it (the value read did not change)"
        why = self._new_findings(fixes, now) or self._other_settings(fixes, actx)
        if why is None:
            self.plan.gone = gone_keys(self.before, now)
        return why

    def _new_findings(self, fixes: list[Fix], now: dict[tuple[str, str], set[str]]) -> str | None:
        """A finding (or a side of one) that was not reported: another row pulled apart,
        or this row's pair pulled apart. Only what a fix reveals may appear: a number made
        readable, a rule the fixed one superseded (a recommendation beside a comparison)."""
        revealed = {fx.finding.row for fx in fixes if fx.reveals}
        fixed = {fx.rule for fx in fixes}
        for (rule, row), sides in sorted(now.items()):
            if not sides - self.flags_before.get((rule, row), set()) or row in revealed:
                continue
            if fixed & set(getattr(self.by_id.get(rule), "superseded_by", ())):
                continue
            what = "another row" if row not in {fx.finding.row for fx in fixes} else "the pair"
            return f"it changes {what}: {row} ({rule}) would be reported"
        return None

    def _texts(self, fixes: list[Fix]) -> dict[str, str]:
        """Every file read, as it would be after ``fixes``."""
        edits: dict[str, list[Any]] = {}
        for fx in fixes:
            for e in fx.edits:
                edits.setdefault(e.path, []).append(e)
        return {
            os.path.abspath(p): apply_edits(text, edits.get(p, []))
            for p, (text, _) in self.plan.texts.items()
        }

    def _other_settings(self, fixes: list[Fix], actx: Context) -> str | None:
        """A setting that changed and is not the one fixed (an alias of it, a shell
        variable that also feeds another flag)."""
        for side in ("mindformers", "megatron"):
            allowed = self._knobs(fixes, side)
            old, new = self.values[side], _values(actx.side(side))
            for name in sorted(old.keys() & new.keys()):
                (v0, k0, _), (v1, k1, o1) = old[name], new[name]
                if v0 == v1 or o1 in (Origin.DERIVED, Origin.DEFAULT):
                    continue
                if k0 in allowed or k1 in allowed:
                    continue
                return f"it also changes {name} ({k1 or k0}: {v0} -> {v1}) on the {side} side"
        return None

    def _knobs(self, fixes: list[Fix], side: str) -> set[str]:
        """The written keys the fixes mean to change on ``side``."""
        cfg = self.ctx.side(side)
        out: set[str] = set()
        if cfg is None:
            return out
        for fx in fixes:
            rule = self.by_id.get(fx.rule)
            field = fx.part or getattr(rule, "field", None)
            if side not in fx.side.split("+"):
                continue
            v = cfg.get(field) if field else None
            if v is not None:
                out.add(v.knob)
            else:  # a misread number: the key written on the edited lines
                lines = {(os.path.abspath(e.path), e.line) for e in fx.edits}
                out |= {
                    k
                    for _, k, o, loc in _written(cfg)
                    if loc is not None and (os.path.abspath(loc.path), loc.line) in lines
                }
        return out


def snapshot_sides(plan: FixPlan, ctx: Context, given: dict[str, str] | None = None) -> None:
    """Read every file both sides were built from into ``plan.texts`` (with its hash): the
    check lints exactly these texts, and the writer refuses when any of them changed
    before it writes (a concurrent fix in the other direction edits the other side)."""
    from cfglint.load.safeio import read_text
    from cfglint.model.edits import digest

    for cfg in (ctx.mf, ctx.mg):
        if cfg is None:
            continue
        for path in dict.fromkeys([cfg.path, *cfg.files, cfg.launch_script]):
            if not path or path in plan.texts:
                continue
            text = (given or {}).get(os.path.abspath(path))
            if text is None:
                try:
                    text = read_text(path)
                except Exception:  # unreadable now: the writer's own check reports it
                    continue
            plan.texts[path] = (text, digest(text))


def _agree(ctx: Context, name: str) -> bool:
    a, b = (c.get(name) if c is not None else None for c in (ctx.mf, ctx.mg))
    if a is None or b is None or not (a.known and b.known):
        return False
    if isinstance(a.value, (int, float)) and isinstance(b.value, (int, float)):
        return math.isclose(a.value, b.value, rel_tol=1e-9, abs_tol=0.0)
    return bool(a.value == b.value)


def _values(cfg: Config | None) -> dict[str, tuple[str, str, Origin]]:
    if cfg is None:
        return {}
    out = {}
    for name in Config.field_paths():
        v = cfg.get(name)
        if v is not None:
            out[name] = (repr(v.value), v.knob, v.origin)
    return out


def _written(cfg: Config) -> list[tuple[str, str, Origin, Any]]:
    out = []
    for name in Config.field_paths():
        v = cfg.get(name)
        if v is not None and v.loc is not None:  # written (or misread) where it stands
            out.append((name, v.knob, v.origin, v.loc))
    return out


def _refuse_base_files(plan: FixPlan, ctx: Context, unsafe: bool) -> None:
    """A fix that edits a MindFormers base_config file changes every config that inherits
    it: refused unless unsafe fixes are asked for, naming the configs found inheriting it."""
    mf = ctx.mf
    if mf is None:
        return
    own = os.path.abspath(mf.path)
    bases = {os.path.abspath(p) for p in mf.files if p.endswith((".yaml", ".yml"))} - {own}
    kept = []
    for fx in plan.fixes:
        hit = next((e.path for e in fx.edits if os.path.abspath(e.path) in bases), None)
        if hit is None or unsafe:
            kept.append(fx)
            continue
        others = [os.path.basename(p) for p in inheritors(hit, [own]) if os.path.abspath(p) != own]
        also = f"; so do {', '.join(others[:5])}" if others else ""
        plan.skipped.append(
            (
                fx.rule,
                f"unsafe fix: {fx.title} edits {hit}, which {os.path.basename(own)} inherits "
                f"through base_config{also}; --unsafe-fixes writes it there",
            )
        )
    plan.fixes = kept


def inheritors(base: str, near: list[str]) -> list[str]:
    """YAML files in ``base``'s folder and the folders of ``near`` whose base_config names
    ``base`` (by its file name: a config names its base relative to where it runs)."""
    from cfglint.load.safeio import text_if_small

    name = os.path.basename(base)
    folders = dict.fromkeys(os.path.dirname(os.path.abspath(p)) for p in [base, *near])
    out = []
    for folder in folders:
        try:
            entries = sorted(os.listdir(folder))[:_MAX_SIBLINGS]
        except OSError:
            continue
        for entry in entries:
            path = os.path.join(folder, entry)
            if not entry.endswith((".yaml", ".yml")) or os.path.abspath(path) == base:
                continue
            text = text_if_small(path, max_bytes=1 << 20)
            if "base_config" in text and name in text:
                out.append(path)
    return out
