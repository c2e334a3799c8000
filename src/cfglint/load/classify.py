"""From command-line paths to lint jobs: walk directories, recognise each file, pair a
MindFormers launch script with the config it runs, and set aside (with a note) what is not a
training input. Nothing here loads a config: detection is cheap and never raises for a bad
file, so a broken file still reaches its loader and is reported."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from cfglint.load.detect import NOT_A_MAPPING, Detected, Kind, detect
from cfglint.load.walk import excluded, walk
from cfglint.model.errors import InputError


@dataclass
class Job:
    """One lint run: a config and/or a Megatron side, with what goes with them."""

    mindformers: str | None = None
    megatron: str | None = None
    launch: str | None = None  # the MindFormers side's msrun script
    sources: list[str] = field(default_factory=list)


@dataclass
class Plan:
    jobs: list[Job] = field(default_factory=list)
    skipped: list[Detected] = field(default_factory=list)
    walked: set[str] = field(default_factory=set)  # files found by walking a folder


_CONFIG_FLAG = re.compile(r"--config(?:=(.+))?$")


def named_config(d: Detected) -> str | None:
    """The ``--config`` a MindFormers launch passes to run_mindformer.py, as written."""
    from cfglint.load.shell import parse_script

    if d.kind is not Kind.MINDFORMERS_LAUNCH or d.path == "-":
        return None
    try:
        sh = parse_script(d.path)
    except InputError:
        return None
    for inv in sh.invocations:
        words = [w.text for w in inv.args]
        for i, t in enumerate(words):
            m = _CONFIG_FLAG.match(t or "")
            if not m:
                continue
            value = m.group(1) if m.group(1) else (words[i + 1] if i + 1 < len(words) else None)
            if value:
                return value
    m = re.search(r"run_mindformer\.py[^\n\"']*?--config[ =]+(\S+\.ya?ml)", sh.text)
    return m.group(1) if m else None


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


def plan(
    files: list[str],
    *,
    megatron: str | None = None,
    launch: str | None = None,
    sources: list[str] | None = None,
    exclude: list[str] | None = None,
    base: Path | None = None,
) -> Plan:
    base = base or Path.cwd()
    exclude = exclude or []
    out = Plan()
    found: list[Detected] = []
    explicit: list[Detected] = []
    py: list[str] = []
    for f in files:
        if f != "-" and os.path.isdir(f):
            note = lambda p, why: found.append(Detected(p, Kind.OTHER, why))  # noqa: E731
            for p in walk(f, exclude, base, on_skip=note):
                out.walked.add(p)
                found.append(detect(p))
            continue
        if f != "-" and excluded(f, exclude, base):
            continue
        if f != "-" and not os.path.exists(f):
            d = Detected(f, Kind.BROKEN, "no such file")
        else:
            d = detect(f)
        if d.kind is Kind.OTHER_YAML and d.why.startswith(NOT_A_MAPPING):
            # a YAML named on the command line that holds no settings at all is a mistake
            # to report (exit 2); one found in a folder is just some other YAML
            d = Detected(f, Kind.BROKEN, d.why)
        if d.kind is Kind.PYTHON:
            py.append(f)
            continue
        explicit.append(d)
        found.append(d)
    configs = [d.path for d in found if d.kind is Kind.MINDFORMERS_CONFIG]
    broken = [d for d in found if d.kind is Kind.BROKEN]
    mf_launches = [d for d in found if d.kind is Kind.MINDFORMERS_LAUNCH]
    mg_launches = [d.path for d in found if d.kind is Kind.MEGATRON_LAUNCH]
    out.skipped = [d for d in found if d.kind not in (*_LINTED_KINDS,)]
    # a broken file still goes to its loader, which names the problem (exit 2)
    for d in broken:
        if d.path.lower().endswith((".sh", ".bash")):
            mg_launches.append(d.path)
        else:
            configs.append(d.path)
    # each MindFormers launch joins the config it runs
    launch_of: dict[str, str] = {}
    for d in mf_launches:
        written = named_config(d)
        target = resolve_config(d.path, written) if written else None
        same = next((c for c in configs if target and _same(c, target)), None)
        if same is not None:
            launch_of[same] = d.path
        elif target is not None:
            configs.append(target)
            launch_of[target] = d.path
        elif len(configs) == 1 and d in explicit:
            launch_of[configs[0]] = d.path
        else:
            why = (
                f"MindFormers launch; the config it runs ({written}) was not found"
                if written
                else "MindFormers launch; no --config found to pair it with"
            )
            out.skipped.append(Detected(d.path, Kind.MINDFORMERS_LAUNCH, why))
    if launch and configs:
        for c in configs:
            launch_of[c] = launch
    explicit_pair = (
        megatron is None and len(mg_launches) == 1 and len(configs) <= 1 and not out.walked
    )
    if megatron is not None or explicit_pair:
        mg = megatron if megatron is not None else mg_launches.pop()
        for c in configs or [None]:
            out.jobs.append(Job(c, mg, launch_of.get(c) if c else launch))
    else:
        out.jobs.extend(Job(c, None, launch_of.get(c)) for c in configs)
    out.jobs.extend(Job(None, m) for m in mg_launches if m != megatron)
    if not configs and launch and megatron is None and not out.jobs:
        raise InputError(launch, "--launch needs the MindFormers config it launches")
    srcs = py + list(sources or [])
    if srcs:
        if out.jobs:
            out.jobs[0].sources = srcs
        else:
            out.jobs.append(Job(sources=srcs))
    return out


_LINTED_KINDS = (
    Kind.MINDFORMERS_CONFIG,
    Kind.MINDFORMERS_LAUNCH,
    Kind.MEGATRON_LAUNCH,
    Kind.BROKEN,
)


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normpath(a) == os.path.normpath(b)
