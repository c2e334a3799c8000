"""The editor server's lints: what ``cfglint server`` lints and keeps between edits.

A :class:`Workspace` keeps the parsed rules and every normalized side in memory, keyed by
the exact text it was built from (an open document's buffer) or by the file's size and
modification time (a file on disk); an edit re-normalizes only the side that changed and
re-runs the rules through the same :func:`cfglint.check.pipeline.lint` the command line
calls. Documents are paired through ``[tool.cfglint] pairs``; a document in no pair is
linted alone (a MindFormers YAML, a launch script, a Python training source). What an
editor shows of a lint is rendered by :mod:`cfglint.report.editor`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from cfglint.check.context import Context
from cfglint.check.fix_verify import checked_plan
from cfglint.check.fixes import Fix
from cfglint.check.pipeline import Options, lint, load_side
from cfglint.model.config import Config
from cfglint.model.edits import digest
from cfglint.model.errors import InputError
from cfglint.model.findings import InputProblem, Report

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
class Linted:
    """One job's lint: its report, the sides it read and the buffers it read them from."""

    job: Job
    report: Report
    ctx: Context
    texts: dict[str, str]  # the buffers it was linted from
    opts: Options | None = None
    planned: list[Fix] | None = None  # by Workspace.fixes(), when asked for

    def files(self) -> list[str]:
        """The job's files, then every file its sides were built from (absolute)."""
        return list(dict.fromkeys([*self.job.files(), *side_files(self.ctx)]))


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
        # the rules whose findings an editor can offer a fix for
        self.fixable = {r.id for r in self.rules if r.fix_action is not None}
        self.base = base  # the folder the pairs' paths are relative to
        self.pairs = [self._job(p) for p in pairs or []]
        self.profile, self.fix_to = profile, fix_to
        self.select, self.ignore = select or [], ignore or []
        self.megatron_version = megatron_version
        self.texts: dict[str, str] = {}  # open documents: absolute path -> text
        self._sides: dict[tuple[str, str, str | None, str | None], tuple[Any, Config]] = {}
        self._last: dict[Job, Linted] = {}

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

    def text(self, path: str) -> str | None:
        """An open document's buffer, else the file's text (None when it cannot be read)."""
        full = os.path.abspath(path)
        text = self.texts.get(full)
        if text is None:
            from cfglint.load.safeio import text_if_small

            text = text_if_small(full) or None
        return text

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
        return set(side_files(linted.ctx))

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
    def lint_path(self, path: str) -> list[Linted]:
        """Every job ``path`` belongs to, linted now from the current buffers."""
        return [self.lint_job(job) for job in self.jobs_for(path)]

    def last_lints(self, path: str) -> list[Linted]:
        """Every job ``path`` belongs to, as last linted (linted now if never)."""
        return [self._last.get(job) or self.lint_job(job) for job in self.jobs_for(path)]

    def lint_job(self, job: Job) -> Linted:
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
        done = Linted(job, report, ctx, dict(self.texts), opts)
        self._last[job] = done
        return done

    def fixes(self, linted: Linted) -> list[Fix]:
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


def side_files(ctx: Context) -> list[str]:
    """Every file the lint's sides were built from, absolute."""
    out = []
    for cfg in (ctx.mf, ctx.mg):
        if cfg is not None:
            out += [cfg.path, *cfg.files, cfg.launch_script]
    return [os.path.abspath(p) for p in dict.fromkeys(out) if p]


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _problem(exc: InputError, job: Job) -> InputProblem:
    where = exc.path or (job.files()[0] if job.files() else "")
    return InputProblem.model_construct(path=where, message=exc.message, line=exc.line)
