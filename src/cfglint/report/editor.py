"""The editor's view of a lint: what ``cfglint server`` publishes, without the protocol.

A :class:`Workspace` keeps the parsed rules and every normalized side in memory, keyed by
the exact text it was built from (an open document's buffer) or by the file's size and
modification time (a file on disk); an edit re-normalizes only the side that changed and
re-runs the rules. Documents are paired through ``[tool.cfglint] pairs``; a document in no
pair is linted alone (a MindFormers YAML, a launch script, a Python training source).

Positions here are 0-based lines and UTF-16 columns, as the Language Server Protocol
counts them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from cfglint.check.context import Context
from cfglint.check.fix_verify import checked_plan
from cfglint.check.fixes import Fix
from cfglint.check.pipeline import Options, lint, load_side
from cfglint.model.config import Config
from cfglint.model.edits import TextEdit, digest
from cfglint.model.errors import InputError
from cfglint.model.findings import Finding, Report
from cfglint.model.values import Value, fmt

YAML_SUFFIXES = (".yaml", ".yml")
SCRIPT_SUFFIXES = (".sh", ".bash")


@dataclass(frozen=True)
class Job:
    mindformers: str | None = None
    megatron: str | None = None
    launch: str | None = None
    sources: tuple[str, ...] = ()

    def files(self) -> list[str]:
        return [p for p in (self.mindformers, self.megatron, self.launch, *self.sources) if p]


@dataclass
class Diagnostic:
    line: int
    column: int
    end_column: int
    severity: str  # error | warning | note
    code: str
    message: str
    fixable: bool = False


@dataclass
class Action:
    title: str
    rule: str
    safe: bool
    # path -> [(start line, start col, end line, end col, new text)]
    edits: dict[str, list[tuple[int, int, int, int, str]]] = field(default_factory=dict)


@dataclass
class _Linted:
    report: Report
    ctx: Context
    texts: dict[str, str]  # the buffers it was linted from
    opts: Options | None = None
    planned: list[Fix] | None = None  # by fixes(), when asked for


class Workspace:
    def __init__(
        self,
        pairs: list[dict[str, Any]] | None = None,
        *,
        profile: str = "default",
        select: list[str] | None = None,
        ignore: list[str] | None = None,
        megatron_version: str | None = None,
        fix_to: str = "megatron",
        base: str = "",
    ) -> None:
        from cfglint.check.rulebook import load_rules

        self.rules = load_rules()  # parsed once
        self.base = base  # the folder the pairs' paths are relative to
        self.pairs = [self._job(p) for p in pairs or []]
        self.profile, self.fix_to = profile, fix_to
        self.select, self.ignore = select or [], ignore or []
        self.megatron_version = megatron_version
        self.texts: dict[str, str] = {}  # open documents: absolute path -> text
        self._sides: dict[tuple[str, str, str | None, str | None], tuple[Any, Config]] = {}
        self._last: dict[Job, _Linted] = {}

    def _job(self, p: dict[str, Any]) -> Job:
        """A configured pair, its paths relative to the settings file's folder."""

        def ab(x: str | None) -> str | None:
            return os.path.abspath(os.path.join(self.base, x)) if x else None

        srcs = tuple(ab(s) or "" for s in p.get("source") or [])
        return Job(ab(p.get("mindformers")), ab(p.get("megatron")), ab(p.get("launch")), srcs)

    # -- documents ------------------------------------------------------------------------
    def open(self, path: str, text: str) -> None:
        self.texts[os.path.abspath(path)] = text

    def close(self, path: str) -> None:
        self.texts.pop(os.path.abspath(path), None)

    def jobs_for(self, path: str) -> list[Job]:
        """The configured pairs the file belongs to (named in the pair, or read by one of
        its sides: a base_config file, a sourced script); else the file alone, by its kind."""
        full = os.path.abspath(path)
        mine = [j for j in self.pairs if full in j.files() or _under(full, j.sources)]
        mine += [j for j in self.pairs if j not in mine and full in self._read_by(j)]
        if mine:
            return mine
        return self.alone(full)

    def _read_by(self, job: Job) -> set[str]:
        """Every file the job's sides were built from (linted once to know them)."""
        linted = self._last.get(job) or self.lint_job(job)
        return set(_side_files(linted.ctx))

    def alone(self, path: str) -> list[Job]:
        """``path`` linted on its own, by its kind (no configured pair names it)."""
        full = os.path.abspath(path)
        if full.endswith(YAML_SUFFIXES):
            return [Job(mindformers=full)]
        if full.endswith(SCRIPT_SUFFIXES):
            return [Job(megatron=full)]
        if full.endswith(".py"):
            return [Job(sources=(full,))]
        return []

    # -- linting --------------------------------------------------------------------------
    def lint_job(self, job: Job) -> _Linted:
        from cfglint.load.safeio import buffers

        opts = Options(
            mindformers=[job.mindformers] if job.mindformers else [],
            megatron=job.megatron,
            launch=job.launch,
            sources=list(job.sources),
            profile=self.profile,
            select=self.select,
            ignore=self.ignore,
            megatron_version=self.megatron_version,
        )
        with buffers(self.texts):
            try:
                report, ctx = lint(opts, load=self._load)
            except InputError as exc:
                report, ctx = Report.model_construct(), Context(profile=self.profile)
                report.errors.append(_problem(exc, job))
        done = _Linted(report, ctx, dict(self.texts), opts)
        self._last[job] = done
        return done

    def fixes(self, linted: _Linted) -> list[Fix]:
        """The lint's fixes, planned when an editor first asks for them (planning reads
        the files the fixes edit: not worth doing on every keystroke)."""
        if linted.planned is None:
            linted.planned = []
            if not linted.report.errors and linted.opts is not None:
                # each fix checked as --fix checks it: the editor offers no edit that
                # breaks the file, leaves its finding or changes another row
                plan = checked_plan(
                    linted.report,
                    linted.ctx,
                    linted.opts,
                    self.rules,
                    fix_to=self.fix_to,
                    unsafe=True,
                    texts=linted.texts,  # (the side cache is keyed by the open buffers)
                )
                linted.planned = plan.fixes
        return linted.planned

    def _load(self, side: str, path: str, extra: str | None, form: str | None = None) -> Config:
        """A side from memory when none of its files changed since it was normalized (its
        own text, its launch, its base_config or sourced files)."""
        key = (side, path, extra, form)
        own = [path, *([extra] if side == "mindformers" and extra else [])]
        hit = self._sides.get(key)
        if hit is not None:
            stamp, cfg = hit
            if stamp == self._stamp([*own, *cfg.files]):
                return cfg
        cfg = load_side(side, path, extra, form)
        self._sides[key] = (self._stamp([*own, *cfg.files]), cfg)
        return cfg

    def _stamp(self, paths: list[str]) -> tuple[Any, ...]:
        out: list[Any] = []
        for p in paths:
            full = os.path.abspath(p)
            text = self.texts.get(full)
            if text is not None:
                out.append(digest(text))
                continue
            try:
                st = os.stat(full)
                out.append((st.st_mtime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)

    # -- what the editor shows --------------------------------------------------------------
    def diagnostics(self, path: str) -> dict[str, list[Diagnostic]]:
        """Every file of every job ``path`` belongs to -> its diagnostics (each file of a
        pair changes when either side does)."""
        out: dict[str, list[Diagnostic]] = {}
        for job in self.jobs_for(path):
            linted = self.lint_job(job)
            for f in [*job.files(), *_side_files(linted.ctx)]:
                out.setdefault(f, [])
            fixable = {r.id for r in self.rules if r.fix_action is not None}
            for e in linted.report.errors:
                target = os.path.abspath(e.path) if e.path else os.path.abspath(path)
                line = (e.line or 1) - 1
                out.setdefault(target, []).append(
                    Diagnostic(line, 0, 0, "error", "input", e.message)
                )
            for finding in linted.report.findings:
                for d_path, diag in self._finding_diagnostics(finding, finding.rule in fixable):
                    out.setdefault(d_path, []).append(diag)
        return out

    def _finding_diagnostics(self, f: Finding, fixable: bool) -> list[tuple[str, Diagnostic]]:
        """One diagnostic per file the finding points into, at its first location there."""
        seen: set[str] = set()
        out = []
        for loc in f.locations:
            full = os.path.abspath(loc.path)
            if full in seen:
                continue
            seen.add(full)
            line, col, end = self._span(full, loc.line, loc.column, loc.anchor)
            out.append((full, Diagnostic(line, col, end, f.severity, f.rule, f.message, fixable)))
        return out

    def _span(self, path: str, line: int, column: int, anchor: bool) -> tuple[int, int, int]:
        """0-based line, UTF-16 start and end of the word at ``line``:``column``."""
        text = self._text(path)
        lines = text.split("\n") if text is not None else []
        row = max(line - 1, 0)
        if row >= len(lines):
            return row, 0, 0
        src = lines[row]
        if anchor:
            return row, 0, _u16(src, len(src))
        start = min(max(column - 1, 0), len(src))
        end = start
        while end < len(src) and not src[end].isspace() and src[end] not in ",]}#":
            end += 1
        return row, _u16(src, start), _u16(src, max(end, start + 1) if end < len(src) else end)

    def _text(self, path: str) -> str | None:
        text = self.texts.get(path)
        if text is None:
            from cfglint.load.safeio import text_if_small

            text = text_if_small(path) or None
        return text

    def code_actions(self, path: str, first: int, last: int) -> list[Action]:
        """The fixes of the findings that point at lines ``first``..``last`` (0-based) of
        ``path``; and one action that applies every safe fix of the pair."""
        full = os.path.abspath(path)
        out: list[Action] = []
        for job in self.jobs_for(path):
            linted = self._last.get(job) or self.lint_job(job)
            safe: list[Fix] = []
            for fx in self.fixes(linted):
                here = [
                    loc
                    for loc in fx.finding.locations
                    if os.path.abspath(loc.path) == full and first <= loc.line - 1 <= last
                ]
                if fx.safety == "safe":
                    safe.append(fx)
                if here:
                    out.append(self._action(fx))
            if len(safe) > 1:
                out.append(self._merge(safe))
        return out

    def _action(self, fx: Fix) -> Action:
        unsafe = "" if fx.safety == "safe" else " (unsafe: changes more than this value)"
        act = Action(f"cfglint {fx.rule}: {fx.title}{unsafe}", fx.rule, fx.safety == "safe")
        for e in fx.edits:
            act.edits.setdefault(os.path.abspath(e.path), []).append(self._range(e))
        return act

    def _merge(self, fixes: list[Fix]) -> Action:
        act = Action(f"cfglint: apply all {len(fixes)} safe fixes of this pair", "", True)
        for fx in fixes:
            for e in fx.edits:
                act.edits.setdefault(os.path.abspath(e.path), []).append(self._range(e))
        return act

    def _range(self, e: TextEdit) -> tuple[int, int, int, int, str]:
        text = self._text(os.path.abspath(e.path)) or ""
        a, b = _position(text, e.start), _position(text, e.end)
        return (*a, *b, e.text)

    def hover(self, path: str, line: int, column: int) -> str | None:
        """The setting written on ``line`` (0-based) of ``path``: its value and origin on
        this side and the other side's, for every field it feeds."""
        full = os.path.abspath(path)
        for job in self.jobs_for(path):
            linted = self._last.get(job) or self.lint_job(job)
            ctx = linted.ctx
            for mine, other in ((ctx.mf, ctx.mg), (ctx.mg, ctx.mf)):
                if mine is None:
                    continue
                found = _fields_at(mine, full, line + 1)
                if found:
                    return _hover_text(found, mine, other)
        return None


def _side_files(ctx: Context) -> list[str]:
    out = []
    for cfg in (ctx.mf, ctx.mg):
        if cfg is not None:
            out += [cfg.path, *cfg.files, cfg.launch_script]
    return [os.path.abspath(p) for p in dict.fromkeys(out) if p]


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _problem(exc: InputError, job: Job) -> Any:
    from cfglint.model.findings import InputProblem

    where = exc.path or (job.files()[0] if job.files() else "")
    return InputProblem.model_construct(path=where, message=exc.message, line=exc.line)


def _u16(line: str, index: int) -> int:
    """UTF-16 code units before character ``index`` of ``line``."""
    head = line[:index]
    return len(head) + sum(1 for ch in head if ord(ch) > 0xFFFF)


def _position(text: str, offset: int) -> tuple[int, int]:
    row = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return row, _u16(text[start:offset], offset - start)


def _fields_at(cfg: Config, path: str, line: int) -> list[tuple[str, Value]]:
    """The fields typed on ``line``, then those it feeds (a variable a flag expands, an
    input of a derived value)."""
    own, fed = [], []
    for name in Config.field_paths():
        v = cfg.get(name)
        if v is None:
            continue
        here = [loc for loc in v.locations() if os.path.abspath(loc.path) == path]
        if v.loc is not None and v.loc in here and v.loc.line == line:
            own.append((name, v))
        elif any(loc.line == line for loc in here):
            fed.append((name, v))
    return own or fed[:6]


def _hover_text(found: list[tuple[str, Value]], mine: Config, other: Config | None) -> str:
    from cfglint.check.context import label

    parts = []
    for name, v in found:
        lines = [f"**{name}**", f"- {label(mine)}: `{fmt(v.value)}` ({v.where()})"]
        if other is not None:
            o = other.get(name)
            if o is None:
                lines.append(f"- {label(other)}: no such setting")
            else:
                lines.append(f"- {label(other)}: `{fmt(o.value)}` ({o.where()})")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
