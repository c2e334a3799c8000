"""Fixes: the edits that make a finding go away, planned from the rules' ``fix_action``.

A compare rule moves one side to the other's value (``fix_to`` names the side whose value
is kept: by default the Megatron reference run, so MindFormers follows it); a recommend
rule writes its expected value on the side it flags; an env rule exports its variable in
the side's launch script. A value typed in a file is edited where it was typed (the file a
``base_config`` value came from, the variable a flag expands); a value that is a default
is added (a MindFormers key under its mapping, a Megatron flag next to the other flags). A
derived or unknown value, a value set inside an undecided script branch, or a value whose
spelling on the moving side the rule does not know is not fixed, and the reason says why.

Planning reads each file once and keeps its text and hash: a writer refuses to write a
file that changed since.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cfglint.check.context import Context
from cfglint.check.rule import FixAction, Rule, SideFix
from cfglint.model.config import Config
from cfglint.model.edits import TextEdit, digest, overlaps
from cfglint.model.findings import Finding
from cfglint.model.values import Origin, Value, fmt

SIDES = ("mindformers", "megatron")
# why a finding is left to the user: its rule has no fix_action (the report's fix line says
# what to change by hand)
NO_FIX = "no automatic fix: follow the finding's fix advice"
# why a fix waits for the next round: it edits what another fix of this round edits
CLASH = "conflicts with another fix"
# Megatron inputs a fix may edit: launch scripts, plain argument files and --yaml-cfg files
# (a written value only: a setting's place in the nested YAML is Megatron's to decide); a
# training log records a past run
EDITABLE_MEGATRON = frozenset(
    {"megatron-script", "mindspeed-script", "megatron-args", "megatron-yaml"}
)


@dataclass
class Fix:
    rule: str
    finding: Finding
    side: str  # the side whose file changes
    safety: str
    title: str  # "set optimizer.betas[1] to 0.95 (mindformers.yaml:69)"
    edits: list[TextEdit]
    # the field this fix moves when it is one part of a finding (rule.fix_parts)
    part: str = ""
    # a number PyYAML read as a string, written as the number: the value becomes readable,
    # so a comparison of it may be reported for the first time (a real difference revealed)
    reveals: bool = False


@dataclass
class FixPlan:
    fixes: list[Fix] = field(default_factory=list)
    # fixes left out: (rule, why)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # every file read while planning: path -> (text, sha256 of it)
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)
    # the findings (rule, row, sides) the checked fixes make go away, once checked
    gone: set[tuple[str, str, tuple[str, ...]]] = field(default_factory=set)
    # absolute path -> the text to write, when fixes were made in rounds (check.fix_verify)
    final: dict[str, str] = field(default_factory=dict)

    def changed(self) -> dict[str, tuple[str, str]]:
        """Path as read -> (text read, text to write), for every file a fix changes."""
        import os

        from cfglint.model.edits import apply_edits

        out = {}
        for path, (old, _) in self.texts.items():
            new = self.final.get(os.path.abspath(path))
            if new is None:
                new = apply_edits(old, self.edits_by_file().get(path, []))
            if new != old:
                out[path] = (old, new)
        return out

    def fixed_count(self) -> tuple[int, int]:
        """(findings the fixes make go away, parts of findings that stay)."""
        keys = {_key(f.finding) for f in self.fixes}
        parts = {f.part for f in self.fixes if f.part and _key(f.finding) not in self.gone}
        return len(keys & self.gone), len(parts)

    def edits_by_file(self) -> dict[str, list[TextEdit]]:
        out: dict[str, list[TextEdit]] = {}
        for f in self.fixes:
            for e in f.edits:
                out.setdefault(e.path, []).append(e)
        return out


class _Texts:
    """Each file's text, read once (or given: the editor's unsaved buffers)."""

    def __init__(self, plan: FixPlan, given: dict[str, str] | None) -> None:
        self.plan = plan
        self.given = given or {}

    def get(self, path: str) -> str | None:
        if path not in self.plan.texts:
            text = self.given.get(path)
            if text is None:  # the editor's buffers and a fix round's texts: absolute paths
                import os

                text = self.given.get(os.path.abspath(path))
            if text is None:
                from cfglint.load.safeio import read_text

                try:
                    text = read_text(path)
                except Exception:  # unreadable now: nothing to fix in it
                    return None
            self.plan.texts[path] = (text, digest(text))
        return self.plan.texts[path][0]


def plan_fixes(
    findings: list[Finding],
    ctx: Context,
    rules: tuple[Rule, ...],
    *,
    fix_to: str = "megatron",
    unsafe: bool = False,
    texts: dict[str, str] | None = None,
) -> FixPlan:
    """The fixes of ``findings``, each with its edits, and why each other finding has none;
    fixes that would write a combination neither framework runs are left out."""
    plan = FixPlan()
    reader = _Texts(plan, texts)
    by_id = {r.id: r for r in rules}
    # aligned fields: a recommendation on a field that a compare fix aligns is left alone
    # (it would pull the pair apart again); compare and env fixes are planned first
    aligned: set[str] = set()
    todo = [(by_id[f.rule], f) for f in findings if f.rule in by_id]
    plan.skipped += [(f.rule, NO_FIX) for f in findings if f.rule not in by_id]
    todo.sort(key=lambda rf: rf[0].kind == "recommend")
    for rule, f in todo:
        if rule.fix_action is None and rule.fix_parts and _misread_number(f, reader) is None:
            parts, why_not = _plan_parts(rule, f, ctx, fix_to, unsafe, reader)
            plan.skipped += why_not
            plan.fixes += [p for p in parts if not _clashes(p, plan)]
            continue
        fix, why = _decide(rule, f, ctx, fix_to, unsafe, reader, aligned)
        _add_fix(plan, rule, f, fix, why, aligned)
    _both_or_neither(plan, [(r, f) for r, f in todo if r.fix_action is not None])
    _with_fields(plan, by_id, findings)
    return plan


def _add_fix(
    plan: FixPlan, rule: Rule, f: Finding, fix: Fix | None, why: str, aligned: set[str]
) -> None:
    """One finding's fix joins the plan, unless there is none (``why`` says why), another
    rule asked for the same edit, or it clashes with a planned one (it waits for the next
    round). A compare fix marks its field aligned."""
    if fix is None:
        plan.skipped.append((f.rule, why))
        return
    if rule.kind == "compare":
        aligned.add(rule.field)  # type: ignore[union-attr]
    if any(_same(fix, other) for other in plan.fixes):
        return  # the same edit, asked for by two rules
    if _clashes(fix, plan):
        plan.skipped.append((f.rule, f"{fix.title}: {CLASH}"))
    else:
        plan.fixes.append(fix)


def _with_fields(plan: FixPlan, by_id: dict[str, Rule], findings: list[Finding]) -> None:
    """A fix whose ``with_fields`` are still reported and not fixed in this run is left out:
    alone it would write a combination neither framework runs."""
    fixed = {f.rule for f in plan.fixes}
    open_fields: dict[str, str] = {}
    for f in findings:
        field = getattr(by_id.get(f.rule), "field", None)
        if field and f.rule not in fixed:
            open_fields.setdefault(field, f.rule)
    kept = []
    for fx in plan.fixes:
        fa = by_id[fx.rule].fix_action if fx.rule in by_id else None
        blocking = [(w, open_fields[w]) for w in (fa.with_fields if fa else ()) if w in open_fields]
        if not blocking:
            kept.append(fx)
            continue
        field, rule = blocking[0]
        plan.skipped.append(
            (
                fx.rule,
                f"{fx.title}: left out while {field} differs too ({rule} is not fixed "
                "in this run: --unsafe-fixes fixes both)",
            )
        )
    plan.fixes = kept


def _decide(
    rule: Rule,
    f: Finding,
    ctx: Context,
    fix_to: str,
    unsafe: bool,
    reader: _Texts,
    aligned: set[str],
) -> tuple[Fix | None, str]:
    """One finding's fix, or why there is none."""
    # a MindFormers number PyYAML reads as a string is written as a number, whatever the
    # rule (a safe fix: the value meant is the value written)
    misread = _misread_number(f, reader)
    if misread is not None:
        return Fix(rule.id, f, "mindformers", "safe", misread[0], [misread[1]], reveals=True), ""
    if rule.fix_action is None:
        return None, NO_FIX
    if rule.kind == "recommend" and rule.field in aligned:  # type: ignore[union-attr]
        return None, "the pair is aligned on this setting instead"
    if rule.fix_action.safety == "unsafe" and not unsafe:
        return None, "unsafe fix: needs --unsafe-fixes"
    return _plan_one(rule, f, ctx, fix_to, reader)


def _clashes(fix: Fix, plan: FixPlan) -> bool:
    return any(overlaps(e, o) for other in plan.fixes for o in other.edits for e in fix.edits)


def _both_or_neither(plan: FixPlan, todo: list[tuple[Rule, Finding]]) -> None:
    """A recommendation flagged on both sides is fixed on both or on neither: one side
    alone would make the pair differ where it agreed."""
    flagged: dict[str, int] = {}
    for rule, _ in todo:
        if rule.kind == "recommend":
            flagged[rule.id] = flagged.get(rule.id, 0) + 1
    for rid, n in flagged.items():
        mine = [f for f in plan.fixes if f.rule == rid]
        if mine and len(mine) < n:
            plan.fixes = [f for f in plan.fixes if f.rule != rid]
            plan.skipped.append((rid, "the other side cannot be fixed the same way"))


def _key(f: Finding) -> tuple[str, str, tuple[str, ...]]:
    return f.rule, f.row, tuple(sorted(f.values))


def _same(a: Fix, b: Fix) -> bool:
    key = [(e.path, e.start, e.end, e.text) for e in a.edits]
    return key == [(e.path, e.start, e.end, e.text) for e in b.edits]


def _plan_one(
    rule: Rule, f: Finding, ctx: Context, fix_to: str, texts: _Texts
) -> tuple[Fix | None, str]:
    fa: FixAction = rule.fix_action  # type: ignore[assignment]
    if rule.kind == "env":
        side = next(iter(f.values), "")
        cfg = ctx.side(side)
        if cfg is None:
            return None, "no such side"
        return _env_fix(rule, f, cfg, fa, texts)
    if rule.kind == "compare":
        return _move(rule.id, rule.field, fa, f, ctx, fix_to, texts)  # type: ignore[attr-defined]
    # recommend: every side it flags takes the expected value, or none does (one side
    # alone would leave the finding reported on the other)
    movers = [s for s in f.values if s in SIDES] or [next(iter(f.values), "")]
    done = [
        _write(rule.id, rule.field, fa, f, ctx, side, _expected(rule), texts)  # type: ignore[attr-defined]
        for side in movers
    ]
    why = next((w for fx, w in done if fx is None), "")
    if why:
        return None, why if len(movers) == 1 else f"{why} (it flags both sides)"
    fixes = [fx for fx, _ in done if fx is not None]
    if len(fixes) == 1:
        return fixes[0], ""
    title = "; ".join(fx.title for fx in fixes)
    edits = [e for fx in fixes for e in fx.edits]
    return Fix(rule.id, f, "+".join(movers), fa.safety, title, edits), ""


def _move(
    rule_id: str, field: str, fa: FixAction, f: Finding, ctx: Context, fix_to: str, texts: _Texts
) -> tuple[Fix | None, str]:
    """The other side moved to ``fix_to``'s value of ``field``."""
    mover = "mindformers" if fix_to == "megatron" else "megatron"
    keep = ctx.side(fix_to)
    target = keep.get(field) if keep is not None else None
    if target is None or not target.known:
        return None, f"the {fix_to} value is not known"
    if target.branch_choice or target.conditional:
        return None, f"the {fix_to} value is set in a script branch: which runs is unknown"
    gate = keep.get(fa.copy_only_if) if keep is not None and fa.copy_only_if else None
    # refused when the kept value itself switches the gate off (seed 0: "do not seed"), not
    # when something else does (a parallel mode that skips set_seed still shuffles with it)
    off_by_value = any(i.knob == target.knob for i in (gate.inputs if gate else ()))
    if gate is not None and gate.known and not gate.value and off_by_value:
        why = gate.detail or f"{fa.copy_only_if} is false"
        return (
            None,
            f"the {fix_to} value {fmt(target.value)} is not applied ({why}): no value to copy",
        )
    return _write(rule_id, field, fa, f, ctx, mover, target.value, texts)


def _write(
    rule_id: str,
    field: str,
    fa: FixAction,
    f: Finding,
    ctx: Context,
    mover: str,
    want: Any,
    texts: _Texts,
) -> tuple[Fix | None, str]:
    cfg = ctx.side(mover)
    how = getattr(fa, mover, None) if mover in SIDES else None
    if cfg is None or how is None:
        return None, f"not fixable on the {mover} side"
    current = cfg.get(field)
    if current is None:
        return None, f"{mover} has no such setting"
    ok, spelled = how.spelling(want)
    if not ok:
        return None, f"{fmt(want)} has no spelling in {mover} that the rule knows"
    edits, why = _edit_side(cfg, how, current, spelled, texts)
    if not edits:
        return None, why
    title = _title(how, current, spelled, edits[0])
    return Fix(rule_id, f, mover, fa.safety, title, edits), ""


def _plan_parts(
    rule: Rule, f: Finding, ctx: Context, fix_to: str, unsafe: bool, texts: _Texts
) -> tuple[list[Fix], list[tuple[str, str]]]:
    """The parts of ``f`` (``rule.fix_parts``) whose values differ, each moved to
    ``fix_to``'s value."""
    fixes, skipped = [], []
    for name, fa in rule.fix_parts.items():
        a, b = (ctx.side(s) for s in SIDES)
        va, vb = (c.get(name) if c is not None else None for c in (a, b))
        if va is None or vb is None or (va.known and vb.known and va.value == vb.value):
            continue
        if fa.safety == "unsafe" and not unsafe:
            skipped.append((rule.id, f"unsafe fix: {name} needs --unsafe-fixes"))
            continue
        fix, why = _move(rule.id, name, fa, f, ctx, fix_to, texts)
        if fix is None:
            skipped.append((rule.id, f"{name}: {why}"))
        else:
            fix.part = name
            fixes.append(fix)
    return fixes, skipped


def _misread_number(f: Finding, texts: _Texts) -> tuple[str, TextEdit] | None:
    """A MindFormers number that PyYAML reads as a string (``1e-8``) where ``f`` points:
    whichever side moves, the first fix is to write it as the number it was meant to be."""
    from cfglint.load.edit_yaml import Unreadable, misread_number_at

    for loc in f.locations:
        if loc.side != "mindformers" or loc.anchor:
            continue
        text = texts.get(loc.path)
        try:
            edit = misread_number_at(text, loc.path, loc.line, loc.column) if text else None
        except Unreadable:
            return None
        if edit is not None:
            old = text[edit.start : edit.end].strip()  # type: ignore[index]
            return f"write {old} as the number {edit.text.strip()} ({_at(edit)})", edit
    return None


def _expected(rule: Rule) -> Any:
    exp = rule.expect  # type: ignore[union-attr]
    return {"truthy": True, "falsy": False}.get(exp.op, exp.value)


def _edit_side(
    cfg: Config, how: SideFix, current: Value, value: Any, texts: _Texts
) -> tuple[list[TextEdit], str]:
    if current.branch_choice or current.conditional:
        return [], f"{current.knob} is set inside a script branch: edit it by hand"
    if current.origin is Origin.DERIVED:
        return [], f"{current.knob} is derived ({current.detail}): edit its inputs by hand"
    if current.origin is Origin.UNKNOWN:
        return [], f"{current.knob} is unknown: {current.detail}"
    if cfg.side == "megatron" and cfg.kind not in EDITABLE_MEGATRON:
        return [], f"{cfg.path} is a {cfg.kind}, not a script or argument file to edit"
    from cfglint.load.edit_yaml import Unreadable

    try:
        if current.origin is Origin.FILE:
            return _edit_written(cfg, how, current, value, texts)
        edit, why = _add_default(cfg, how, current.knob, value, texts)
    except Unreadable as exc:  # PyYAML refuses the text: the lint did not read it either
        return [], f"its YAML does not load: {exc}"
    return ([edit] if edit else []), why


def _edit_written(
    cfg: Config, how: SideFix, current: Value, value: Any, texts: _Texts
) -> tuple[list[TextEdit], str]:
    loc = current.loc
    # a written value is edited where the lint read it, whatever the dialect spells it
    # (template v2, a fork's flag); the check that follows re-reads the result the way the
    # framework does and refuses an edit that does not change the finding's value
    if loc is None or (how.switch and current.knob not in how.keys):
        return [], f"{current.knob} is not one of the settings the fix writes"
    text = texts.get(loc.path)
    if text is None:
        return [], f"cannot read {loc.path}"
    if cfg.side == "mindformers":
        from cfglint.load.edit_yaml import edit_path

        # by key path: the use being fixed, whatever anchors, aliases and merges it shares
        return edit_path(text, loc.path, current.knob, value)
    if cfg.kind == "megatron-yaml":
        from cfglint.load.edit_yaml import set_scalar_at

        edit = set_scalar_at(text, loc.path, loc.line, loc.column, value)
        return ([edit] if edit else []), "" if edit else f"cannot edit {current.knob} at {loc}"
    if how.switch:
        from cfglint.load.edit_shell import remove_flag_at

        if value:
            return [], f"{current.knob} is on already"
        edit = remove_flag_at(text, loc.path, loc, current.knob)
    else:
        from cfglint.load.edit_shell import set_value_at

        edit = set_value_at(text, loc.path, loc, current.via, value, current.knob, current.raw)
    return ([edit] if edit else []), "" if edit else f"cannot edit {current.knob} at {loc} in place"


def _add_default(
    cfg: Config, how: SideFix, knob: str, value: Any, texts: _Texts
) -> tuple[TextEdit | None, str]:
    text = texts.get(cfg.path)
    if text is None:
        return None, f"cannot read {cfg.path}"
    if knob not in how.keys and legacy_key(knob) not in how.keys:
        # the default's knob names where this dialect reads the setting; a key the rule
        # does not list might be one this config's class never reads
        return None, f"{knob} is not one of the settings the fix writes"
    if cfg.side == "mindformers":
        from cfglint.load.edit_yaml import set_or_add

        edit = set_or_add(text, cfg.path, knob, value)
        return edit, "" if edit else f"no place for {knob} in {cfg.path}"
    from cfglint.load.edit_shell import add_flag

    if cfg.kind == "megatron-yaml":
        return None, f"{knob} is not in {cfg.path}: add it to the --yaml-cfg file by hand"
    if how.switch and not value:
        return None, f"{knob} is off already"
    anchors = _flag_lines(cfg)
    edit = add_flag(text, cfg.path, anchors, knob, None if how.switch else value)
    return edit, "" if edit else f"no flag line in {cfg.path} to add {knob} next to"


# MindFormers' template v2 (top-level model_config / training_args) spells some settings
# differently from the legacy layout the rules' keys name: the v2 key -> the legacy one.
# training_args.dataset_seed replaces data_loader.config.seed: the v2 trainer writes
# ``dataset_seed or training_seed or 1234`` over it (mindformers/trainer/
# llm_trainer_for_graph_experimental/llm_trainer.py:1380 and dataset/llm_dataset.py:331
# @ 26cd9a4f, branch br_feature_llm_trainer)
V2_KEYS = {
    "training_args.training_seed": "seed",
    "training_args.dataset_seed": "train_dataset.data_loader.config.seed",
}
V2_PREFIXES = {"model_config.": "model.model_config."}


def legacy_key(knob: str) -> str:
    """The legacy-layout key of a template-v2 ``knob`` (itself when it has none)."""
    if knob in V2_KEYS:
        return V2_KEYS[knob]
    for new, old in V2_PREFIXES.items():
        if knob.startswith(new):
            return old + knob[len(new) :]
    return knob


def _flag_lines(cfg: Config) -> list[int]:
    """Lines of the script's own training flags, last first: a new flag goes among them."""
    lines = set()
    for section in ("structure", "moe", "optimizer", "weight", "precision", "parallel"):
        for _, v in getattr(cfg, section).items():
            written = v.origin is Origin.FILE and v.loc is not None and not v.conditional
            if written and v.knob.startswith("--") and v.loc.path == cfg.path:  # type: ignore[union-attr]
                lines.add(v.loc.line)  # type: ignore[union-attr]
    return sorted(lines, reverse=True)


def _env_fix(
    rule: Rule, f: Finding, cfg: Config, fa: FixAction, texts: _Texts
) -> tuple[Fix | None, str]:
    from cfglint.load.edit_shell import add_export, set_export_at

    name = rule.env  # type: ignore[union-attr]
    script = cfg.launch_script
    if not script:
        return None, "no launch script to export it in"
    current = cfg.env.get(name)
    if current is not None and current.loc is not None:
        text = texts.get(current.loc.path)
        edit = set_export_at(text, current.loc, name, fa.export) if text is not None else None
        where = str(current.loc)
    else:
        text = texts.get(script)
        before = _command_line(cfg)
        edit = add_export(text, script, name, fa.export, before) if text is not None else None
        where = script
    if edit is None:
        return None, f"cannot export {name} in {where}"
    title = f"export {name}={fa.export} ({_at(edit)})"
    return Fix(rule.id, f, cfg.side, fa.safety, title, [edit]), ""


def _command_line(cfg: Config) -> int | None:
    launcher = cfg.launch.launcher
    return launcher.loc.line if launcher is not None and launcher.loc is not None else None


def _at(edit: TextEdit) -> str:
    import os

    return f"{os.path.basename(edit.path)}:{edit.line}"


def _title(how: SideFix, current: Value, value: Any, edit: TextEdit) -> str:
    if how.switch and not value:
        return f"remove {current.knob} ({_at(edit)})"
    if how.switch:
        return f"add {how.keys[0]} ({_at(edit)})"
    knob = current.knob if current.origin is Origin.FILE else how.keys[0]
    verb = "set" if current.origin is Origin.FILE else "add"
    return f"{verb} {knob} to {fmt(value)} ({_at(edit)})"
