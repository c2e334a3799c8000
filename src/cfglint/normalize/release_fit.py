"""Which releases of MindFormers or MindSpeed-LLM a file belongs to, from evidence that the
file is in them (data/release_files/<project>.json, from ``git ls-tree`` of each release tag
by scripts/extract_release_files.py):

1. its content: the git blob id of the file equals a recorded file's at some releases (an
   unchanged copy, wherever it lies);
2. its path: the longest tail of the path (two components or more) that a release holds,
   e.g. ``research/deepseek2/finetune_deepseek2_236B.yaml``;
3. its name alone, as a file of those releases is named.

The first that finds anything decides; nothing found is no evidence (None). Content and
path say that the file is in those releases: several are a range, never a guess, and the
caller states the defaults the candidates share and leaves the others not decided. A name
alone says only where an edited copy came from (``Fit.by_name``): the caller says so and
keeps its own choice.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from typing import Any, NamedTuple

from cfglint.load.datacache import DATA_DIR
from cfglint.model.config import Config
from cfglint.model.record import Frozen
from cfglint.model.values import Origin, Value, fmt

PROJECTS = {"mindformers": "MindFormers", "mindspeed_llm": "MindSpeed-LLM"}
# folders whose subfolders hold the code a file there runs with: a MindFormers research
# config registers the model classes of its own folder (--register_path research/X), so a
# file in research/X belongs to a release that ships research/X even when no release holds
# the file itself
CODE_FOLDERS = {"mindformers": "research"}


class Fit(Frozen):
    __slots__ = ("by_name", "heads", "path", "project", "releases", "why")

    project: str  # "MindFormers" | "MindSpeed-LLM"
    releases: tuple[str, ...]  # the releases that hold the file, oldest first
    heads: tuple[str, ...]  # development heads (after the last tag) that hold it too
    why: str  # the evidence, in words
    by_name: bool  # only the file name matched: a hint, not that the file is there
    # the recorded path whose tail the file's path is (two components or more), "" if none:
    # where in the release the file lies (a research folder's own classes)
    path: str

    def __init__(
        self,
        project: str,
        releases: tuple[str, ...],
        heads: tuple[str, ...],
        why: str,
        by_name: bool = False,
        path: str = "",
    ) -> None:
        self.project = project
        self.releases = releases
        self.heads = heads
        self.why = why
        self.by_name = by_name
        self.path = path

    @property
    def span(self) -> str:
        """``v2.2.0``, ``v2.0.0-v2.2.0`` (consecutive releases) or a list."""
        return span(self.project_key, self.releases)

    @property
    def project_key(self) -> str:
        return next(k for k, v in PROJECTS.items() if v == self.project)


# one file per project: a lint asks about one project at a time, and reads that one as it
# ships (MindFormers' is 44 KB, MindSpeed-LLM's 276 KB); one file for both, split into
# ready parts at install, cost a sha256 of all 328 KB on each run to find the right part
RELEASE_FILES = "release_files"


@cache
def project_data(project_key: str) -> dict[str, Any]:
    """One project's recorded facts (JSON written by the script, read as is)."""
    with open(DATA_DIR / RELEASE_FILES / f"{project_key}.json", encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def release_data() -> dict[str, dict[str, Any]]:
    """Every project's recorded facts, by project."""
    return {key: project_data(key) for key in PROJECTS}


def order(project_key: str) -> list[str]:
    """Every recorded release and head of the project, oldest first."""
    return [r[0] for r in project_data(project_key)["releases"]]


def span(project_key: str, releases: tuple[str, ...] | list[str]) -> str:
    names = order(project_key)
    idx = sorted(names.index(r) for r in releases)
    if not idx:
        return "no release"
    if len(idx) == 1:
        return names[idx[0]]
    if idx == list(range(idx[0], idx[-1] + 1)):
        return f"{names[idx[0]]}-{names[idx[-1]]}"
    return ", ".join(names[i] for i in idx)


def blob_id(text: str) -> str:
    """git's id of a file with this text (what ``git hash-object`` prints), 12 digits."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()[:12]


class _Found(NamedTuple):
    mask: int  # the releases, as bits of order()
    why: str  # the evidence in words, before "of <project> <releases>"
    path: str = ""  # the recorded path the file's path ends with (where it lies there)
    by_name: bool = False


def _parts(path: str) -> list[str]:
    return [p for p in os.path.normpath(path).replace("\\", "/").split("/") if p]


def _union(paths: dict[str, int], hits: list[str]) -> int:
    mask = 0
    for p in hits:
        mask |= paths[p]
    return mask


def _by_path(paths: dict[str, int], path: str) -> _Found | None:
    """The longest recorded tail of ``path`` (two components or more), else its name. A
    tail ends in the file's name, so only the recorded paths of that name are compared: one
    pass over the recorded paths, not one for each length of tail."""
    parts = _parts(path)
    if not parts:
        return None
    name, suffix = parts[-1], "/" + parts[-1]
    named = [p for p in paths if p.endswith(suffix) or p == name]
    for k in range(len(parts), 1, -1):
        tail = "/".join(parts[-k:])
        hits = [p for p in named if p == tail or p.endswith("/" + tail)]
        if hits:
            more = f" (and {len(hits) - 1} more)" if hits[1:] else ""
            return _Found(_union(paths, hits), f"a file at {hits[0]}{more}", hits[0])
    if not named:
        return None
    return _Found(_union(paths, named), f"named like {named[0]}", by_name=True)


def _by_folder(project_key: str, paths: dict[str, int], path: str) -> _Found | None:
    """The code folder the file lies in (CODE_FOLDERS), when releases ship that folder."""
    top = CODE_FOLDERS.get(project_key)
    parts = _parts(path)
    at = [i for i, p in enumerate(parts[:-2]) if p == top]
    if not at:
        return None
    folder = f"{top}/{parts[at[-1] + 1]}"
    mask = _union(paths, [p for p in paths if p.startswith(folder + "/")])
    # the path it has in that folder says which research copy of a class it builds
    return _Found(mask, f"a file in {folder}, a folder", f"{folder}/{parts[-1]}") if mask else None


def _evidence(project_key: str, path: str, text: str) -> _Found | None:
    paths = project_data(project_key)["paths"]
    blob = project_data(project_key)["blobs"].get(blob_id(text))
    named = _by_path(paths, path)
    if blob is not None:
        if named is None:
            return _Found(blob, "byte for byte a file")
        # the recorded path its tail or name matches; the content decides the releases
        where = named.why.split(" ", 3)[-1] if not named.by_name else named.why.split(" ", 2)[-1]
        return _Found(blob, f"byte for byte the file at {where}", named.path)
    if named is None or named.by_name:
        return _by_folder(project_key, paths, path) or named
    return named


def fit_file(project_key: str, path: str, text: str) -> Fit | None:
    """The releases that hold this file, by the first evidence that finds any."""
    found = _evidence(project_key, path, text)
    if found is None or not found.mask:
        return None
    heads = set(project_data(project_key).get("heads") or ())
    held = [n for bit, n in enumerate(order(project_key)) if found.mask >> bit & 1]
    return Fit(
        project=PROJECTS[project_key],
        releases=tuple(n for n in held if n not in heads),
        heads=tuple(n for n in held if n in heads),
        why=f"{found.why} of {PROJECTS[project_key]} {span(project_key, held)}",
        by_name=found.by_name,
        path=found.path,
    )


# -- several candidate releases: keep what they agree on ----------------------------------
def _leans_on_default(v: Value) -> bool:
    """Whether a value is, or is derived from, a framework default (or a fact of the
    framework's code, which cfglint states as a default too)."""
    if v.origin is Origin.DEFAULT:
        return True
    return any(_leans_on_default(i) for i in v.inputs)


def _same(a: Value | None, b: Value | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.known == b.known and a.value == b.value and type(a.value) is type(b.value)


def _said(v: Value | None, release: str, why_empty: str) -> str:
    """A candidate's value in words, for the reason a setting is not decided."""
    if v is None:
        return f"none at {release}" + (f" ({why_empty})" if why_empty else "")
    if not v.known:
        return f"unknown at {release}"
    return f"{fmt(v.value)} at {release}: {v.where()}"


def settle(
    cfgs: dict[str, Config], unread: list[str], project: str, why: str, hint: str = ""
) -> Config:
    """One config from the same file normalized at each candidate release (newest first):
    a setting the candidates give different values (or one gives none) is not decided, with
    each value and where it came from; with a candidate cfglint has no tables for
    (``unread``), so is every setting that leans on a default. The rest is the newest
    candidate's."""
    names = list(cfgs)
    base = cfgs[names[0]]
    for path in Config.field_paths():
        got = [(n, cfgs[n].get(path)) for n in names]
        v = got[0][1]  # the newest candidate's, base's own
        split = [(n, o) for n, o in got[1:] if not _same(v, o)]
        if split:
            n, o = split[0]
            knob = next(x.knob for _, x in got if x is not None)
            said = [
                _said(x, r, cfgs[r].not_applicable.get(path, ""))
                for r, x in ((names[0], v), (n, o))
            ]
            base.set(
                path,
                Value.unknown(
                    knob,
                    f"{why}: {project} {names[0]} and {n} disagree on it ({'; '.join(said)}): "
                    f"not decided{hint}",
                ),
            )
            base.not_applicable.pop(path, None)
        elif unread and v is not None and v.known and _leans_on_default(v):
            base.set(
                path,
                Value.unknown(
                    v.knob,
                    f"{why}: it rests on {v.where()}, and cfglint has not read "
                    f"the defaults of {project} {', '.join(unread)}: not decided{hint}",
                    loc=v.loc,
                ),
            )
    return base
