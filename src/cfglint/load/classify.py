"""The one place that turns what a user gave (a command line, folders, ``[tool.cfglint]
pairs``, pre-commit's file list) into typed lint jobs.

Each input is classified by content (:mod:`cfglint.load.detect`), given its role in a pair,
and checked against the role the user gave it: a MindFormers config as ``--megatron``, a
Megatron launch as ``--launch``, two Megatron sides, or a ``--yaml-cfg`` file without
Megatron arguments is a usage error naming what each file is. What is not a training input
is set aside with what it was taken for. Nothing here loads a config: classification is
cheap and never raises for a bad file, so a broken file still reaches its loader.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cfglint.load.detect import (
    MEGATRON_FORMS,
    Classified,
    InputKind,
    classified,
    classify,
    classify_megatron,
    classify_script,
    is_shell_name,
)
from cfglint.load.safeio import exists
from cfglint.load.walk import excluded, walk
from cfglint.model.errors import InputError
from cfglint.model.record import Record

if TYPE_CHECKING:
    from cfglint.load.reads import Reads


class Job(Record):
    """One lint run: a config and/or a Megatron side, with what goes with them."""

    __slots__ = ("launch", "megatron", "megatron_form", "members", "mindformers", "sources")

    mindformers: str | None
    megatron: str | None
    launch: str | None  # the MindFormers side's msrun script
    sources: list[str]  # --source: entry points when they train
    members: list[str]  # .py files named: scanned, judged
    megatron_form: str | None  # script | args | log | yaml

    def __init__(
        self,
        mindformers: str | None = None,
        megatron: str | None = None,
        launch: str | None = None,
        sources: list[str] | None = None,
        members: list[str] | None = None,
        megatron_form: str | None = None,
    ) -> None:
        self.mindformers = mindformers
        self.megatron = megatron
        self.launch = launch
        self.sources = [] if sources is None else sources
        self.members = [] if members is None else members
        self.megatron_form = megatron_form


class Plan(Record):
    __slots__ = ("jobs", "seen", "skipped", "walked")

    jobs: list[Job]
    skipped: list[Classified]
    walked: set[str]  # files found by walking a folder
    seen: list[Classified]  # every input, for -v

    def __init__(
        self,
        jobs: list[Job] | None = None,
        skipped: list[Classified] | None = None,
        walked: set[str] | None = None,
        seen: list[Classified] | None = None,
    ) -> None:
        self.jobs = [] if jobs is None else jobs
        self.skipped = [] if skipped is None else skipped
        self.walked = set() if walked is None else walked
        self.seen = [] if seen is None else seen


# -- roles the user gave ------------------------------------------------------------------------
def megatron_side(
    path: str,
    positional: list[Classified] | None = None,
    given: str = "--megatron",
    reads: Reads | None = None,
) -> Classified:
    """``--megatron PATH``: a Megatron-family launch, args file, log or ``--yaml-cfg`` file;
    anything else is a usage error that says what the file is."""
    c = classify_megatron(path, reads)
    if c.kind in MEGATRON_FORMS or c.kind is InputKind.BROKEN:
        return c
    message = _not_megatron(c, positional or [])
    raise InputError(path, message.replace("given as --megatron", f"given as {given}"))


def _not_megatron(c: Classified, positional: list[Classified]) -> str:
    what = c.describe()
    if c.kind in (InputKind.MF_TRAIN, InputKind.MF_INFER):
        swapped = next((p for p in positional if p.kind is InputKind.MG_LAUNCH), None)
        hint = (
            f"; swapped? `cfglint {c.path} --megatron {swapped.path}`"
            if swapped is not None
            else "; give it as FILE, and --megatron the launch script, args file or log"
        )
        return f"given as --megatron, but it is a {what}{hint}"
    if c.kind is InputKind.MF_LAUNCH:
        return f"given as --megatron, but it is a {what}; give it with --launch, beside its config"
    if c.kind is InputKind.OTHER_YAML:
        return (
            f"given as --megatron, but it holds no Megatron arguments ({c.why}); a --yaml-cfg "
            "file has Megatron argument names (num_layers, ...) or language_model: / "
            "model_parallel:"
        )
    if c.kind is InputKind.UNREADABLE_LAUNCH:
        return f"{what}: cfglint would compare Megatron's defaults instead of this run's values"
    if c.kind is InputKind.FSDP2:
        return f"MindSpeed-LLM FSDP2 launch: {c.why}"
    return f"given as --megatron, but it is not a Megatron-family training launch: {what}"


def launch_side(path: str, reads: Reads | None = None) -> Classified:
    """``--launch SCRIPT``: the MindFormers side's msrun script (or a script that only sets
    its environment)."""
    if not os.path.isfile(path) or not is_shell_name(path):
        return classify(path)
    c = classify_script(path, reads=reads)
    if c.kind is InputKind.MG_LAUNCH:
        raise InputError(
            path, f"given as --launch, but it is a {c.describe()}; give it with --megatron"
        )
    if c.kind in (InputKind.MF_LAUNCH, InputKind.HELPER, InputKind.BROKEN):
        return c
    raise InputError(
        path, f"given as --launch, but it is a {c.describe()}; --launch takes an msrun script"
    )


# -- command line and folders ------------------------------------------------------------------
def plan(
    files: list[str],
    *,
    megatron: str | None = None,
    launch: str | None = None,
    sources: list[str] | None = None,
    exclude: list[str] | None = None,
    base: Path | None = None,
    pairs: list[dict[str, Any]] | None = None,
    reads: Reads | None = None,
) -> Plan:
    """``pairs``: the configured pairs ([tool.cfglint]); one whose file is among the inputs
    (a folder's included) is linted as that pair, not each file alone. ``reads``: where the
    parses of the jobs' files are kept for the run's loaders (load/reads.py)."""
    base = base or Path.cwd()
    out = Plan()
    named = _classify_files(files, exclude or [], base, out, reads)
    mg_side = megatron_side(megatron, named, reads=reads) if megatron is not None else None
    if launch is not None:
        launch_side(launch, reads)
    by = _by_kind(out.seen)
    if mg_side is not None:
        _refuse_second_side(str(megatron), named)
    configs = [c.path for c in by[InputKind.MF_TRAIN]]
    _refuse_inference_pair(by[InputKind.MF_INFER], mg_side, configs, named)
    mg_launches = [c.path for c in by[InputKind.MG_LAUNCH]]
    for c in by[InputKind.BROKEN]:  # the loader names the problem (exit 2)
        (mg_launches if is_shell_name(c.path) else configs).append(c.path)
    launch_of = _pair_launches(by[InputKind.MF_LAUNCH], configs, named, out)
    if launch and configs:
        launch_of.update(dict.fromkeys(configs, launch))
    if mg_side is None:
        out.jobs += _configured_pairs(pairs or [], configs, mg_launches)
    _jobs(out, configs, mg_launches, launch_of, mg_side, launch)
    _add_sources(out, list(sources or []), [c.path for c in by[InputKind.PYTHON]])
    if reads is not None:
        reads.retain({p for j in out.jobs for p in (j.mindformers, j.megatron, j.launch) if p})
    return out


def _refuse_second_side(megatron: str, named: list[Classified]) -> None:
    """A Megatron launch named besides ``--megatron``: a lint compares one pair."""
    twin = [c for c in named if c.kind is InputKind.MG_LAUNCH]
    if twin:
        raise InputError(
            twin[0].path,
            f"two Megatron sides: {megatron} (--megatron) and {twin[0].path} "
            f"({twin[0].describe()}); a lint compares one MindFormers config with one "
            "Megatron run",
        )


def _add_sources(out: Plan, sources: list[str], members: list[str]) -> None:
    """``--source`` entry points and the .py files named go with the first job (a job of
    their own when there is none)."""
    if sources or members:
        if not out.jobs:
            out.jobs.append(Job())
        out.jobs[0].sources, out.jobs[0].members = sources, members


def _classify_files(
    files: list[str], exclude: list[str], base: Path, out: Plan, reads: Reads | None = None
) -> list[Classified]:
    """Every input, found or named; returns those named on the command line."""
    named: list[Classified] = []
    for f in files:
        if os.path.isdir(f):
            # what a bounded walk leaves out (too deep, a .gitignore not applied) is a note
            note = lambda p, why: out.seen.append(  # noqa: E731
                classified(p, InputKind.OTHER, why)
            )
            for p in walk(f, exclude, base, on_skip=note):
                out.walked.add(p)
                out.seen.append(classify(p, named=False, reads=reads))
            continue
        if excluded(f, exclude, base):
            continue
        c = (
            classify(f, reads=reads)
            if exists(f)
            else classified(f, InputKind.BROKEN, "no such file")
        )
        named.append(c)
        out.seen.append(c)
    return named


def _by_kind(seen: list[Classified]) -> dict[InputKind, list[Classified]]:
    out: dict[InputKind, list[Classified]] = {k: [] for k in InputKind}
    for c in seen:
        out[c.kind].append(c)
    return out


def _refuse_inference_pair(
    infer: list[Classified], mg_side: Classified | None, configs: list[str], named: list[Classified]
) -> None:
    """An inference config paired with a Megatron run is a mix-up, not a single side."""
    if mg_side is None or configs:
        return
    mine = [c for c in infer if c in named]
    if mine:
        raise InputError(
            mine[0].path,
            f"is a {mine[0].describe()}: it trains nothing to compare with {mg_side.path}; "
            "give the training config",
        )


def _pair_launches(
    launches: list[Classified], configs: list[str], named: list[Classified], out: Plan
) -> dict[str, str]:
    """Each MindFormers launch joins the config it runs."""
    launch_of: dict[str, str] = {}
    for c in launches:
        target = resolve_config(c.path, c.config) if c.config else None
        same = next((x for x in configs if target and _same(x, target)), None)
        if same is not None:
            launch_of[same] = c.path
        elif target is not None:
            configs.append(target)
            launch_of[target] = c.path
        elif len(configs) == 1 and c in named:
            launch_of[configs[0]] = c.path
        else:
            why = (
                f"the config it runs ({c.config}) was not found"
                if c.config
                else "no --config found to pair it with"
            )
            out.skipped.append(c.replace(why=f"{c.why}; {why}"))
    return launch_of


def _configured_pairs(
    pairs: list[dict[str, Any]], configs: list[str], mg_launches: list[str]
) -> list[Job]:
    """The configured pairs a config or launch among the inputs belongs to, as pair jobs;
    their files leave ``configs`` and ``mg_launches`` (they are not linted alone too)."""
    jobs = []
    for p in pairs:
        mine = [
            (found, p.get(k))
            for found, k in ((configs, "mindformers"), (mg_launches, "megatron"))
            if p.get(k)
        ]
        hits = [(found, x) for found, want in mine for x in found if _same(x, want)]
        if not hits:
            continue
        for found, x in hits:
            found.remove(x)
        mg = p.get("megatron")
        side = megatron_side(mg, given="megatron in [tool.cfglint] pairs") if mg else None
        form = MEGATRON_FORMS.get(side.kind) if side is not None else None
        jobs.append(
            Job(p.get("mindformers"), mg, p.get("launch"), list(p["source"]), megatron_form=form)
        )
    return jobs


def _jobs(
    out: Plan,
    configs: list[str],
    mg_launches: list[str],
    launch_of: dict[str, str],
    mg_side: Classified | None,
    launch: str | None,
) -> None:
    """The jobs of the configs and launches left once the configured pairs took theirs;
    every other input is set aside with what it was taken for."""
    _pair_jobs(out, configs, mg_launches, launch_of, mg_side, launch)
    out.jobs.extend(Job(None, m, megatron_form="script") for m in mg_launches)
    skipped = {s.path for s in out.skipped}
    out.skipped += [
        c
        for c in out.seen
        if c.role is None and c.kind is not InputKind.BROKEN and c.path not in skipped
    ]
    if not configs and launch and mg_side is None and not out.jobs:
        raise InputError(launch, "--launch needs the MindFormers config it launches")


def _pair_jobs(
    out: Plan,
    configs: list[str],
    mg_launches: list[str],
    launch_of: dict[str, str],
    mg_side: Classified | None,
    launch: str | None,
) -> None:
    """Each config paired with the Megatron side: ``--megatron``'s, or the one launch named
    with at most one config (not found by walking a folder); else each config alone."""
    explicit_pair = (
        mg_side is None and len(mg_launches) == 1 and len(configs) <= 1 and not out.walked
    )
    if mg_side is None and not explicit_pair:
        out.jobs.extend(Job(c, None, launch_of.get(c)) for c in configs)
        return
    mg = mg_side.path if mg_side is not None else mg_launches.pop()
    form = MEGATRON_FORMS.get(mg_side.kind) if mg_side is not None else "script"
    for c in configs or [None]:
        out.jobs.append(Job(c, mg, launch_of.get(c) if c else launch, megatron_form=form))


def resolve_config(script: str, written: str) -> str | None:
    """MindFormers is run from its repository root, so a relative ``--config`` is looked
    up from the script's folder and each folder above it, then from the current one."""
    if os.path.isabs(written):
        return written if os.path.isfile(written) else None
    here = Path(script).resolve().parent
    for d in (here, *here.parents):
        cand = d / written
        if cand.is_file():
            return os.path.relpath(cand)
    return written if os.path.isfile(written) else None


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normpath(a) == os.path.normpath(b)


# -- one pair (show, lr, probe) --------------------------------------------------------------------
def one_pair(files: list[str], megatron: str | None, launch: str | None, what: str) -> Job:
    """The single pair a ``show`` / ``lr`` / ``probe`` call names, classified as the lint's
    inputs are: at most one MindFormers config and one Megatron side."""
    folder = next((f for f in files if os.path.isdir(f)), None)
    if folder is not None:
        raise InputError(folder, f"is a directory; {what} takes files")
    p = plan(files, megatron=megatron, launch=launch)
    if p.skipped:
        raise InputError(p.skipped[0].path, f"{p.skipped[0].describe()}: nothing to {what}")
    configs = {j.mindformers for j in p.jobs if j.mindformers}
    sides = {j.megatron for j in p.jobs if j.megatron}
    if len(configs) > 1 or len(sides) > 1:
        raise InputError(None, f"{what} takes one MindFormers YAML and one Megatron side")
    if not configs and not sides:
        raise InputError(None, f"nothing to {what}: give a MindFormers YAML and/or --megatron FILE")
    job = next((j for j in p.jobs if j.mindformers and j.megatron), None) or p.jobs[0]
    if job.megatron is None and sides:
        job = Job(job.mindformers, sides.pop(), job.launch, megatron_form="script")
    return job


# -- [tool.cfglint] pairs (pre-commit) -------------------------------------------------------------
def plan_pairs(pairs: list[dict[str, Any]], files: list[str], settings: str | None) -> Plan:
    """The configured pairs that a changed file belongs to (all of them when no file is
    given, or when the settings file itself changed), each side checked for its role."""
    changed_settings = settings is not None and any(
        os.path.abspath(f) == os.path.abspath(settings) for f in files
    )
    chosen = pairs if not files or changed_settings else [p for p in pairs if _touches(p, files)]
    jobs = []
    for p in chosen:
        mg = p.get("megatron")
        side = megatron_side(mg, given="megatron in [tool.cfglint] pairs") if mg else None
        form = MEGATRON_FORMS.get(side.kind) if side is not None else None
        if p.get("launch") and os.path.lexists(p["launch"]):
            launch_side(p["launch"])
        jobs.append(
            Job(p.get("mindformers"), mg, p.get("launch"), list(p["source"]), megatron_form=form)
        )
    return Plan(jobs=jobs)


def _touches(pair: dict[str, Any], files: list[str]) -> bool:
    """A changed file belongs to a pair: one of its files, or under one of its sources."""
    mine = [pair.get(k) for k in ("mindformers", "megatron", "launch")]
    roots = [os.path.abspath(x) for x in [*mine, *pair["source"]] if x]
    for f in files:
        full = os.path.abspath(f)
        if any(full == r or full.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
            return True
    return False
