"""Which MindFormers release a config belongs to, so that every default and citation is
that release's: ``--mindformers-version``; else the releases that hold the file
(normalize/release_fit.py: its content, path or name), narrowed to those in which every
class the config names exists; else, for a file no release holds, every release in which
every class it names exists (a config using FP32StateAdamWeightDecay cannot be a master
config: master no longer has it), read at each like any several candidates.
"""

from __future__ import annotations

from typing import Any

from cfglint.load.mindformers_yaml import MindFormersYaml
from cfglint.load.yamltree import get
from cfglint.model.record import Record
from cfglint.normalize.mindformers.defaults import (
    MF_RELEASES,
    mf_defaults,
    mf_table,
    model_types,
    own_releases,
)
from cfglint.normalize.mindformers.view import is_mcore
from cfglint.normalize.release_fit import fit_file, span

# the config class every mcore-layout model builds on (data/mindformers_releases.yaml):
# TransformerConfig, from v1.6.0 on (MFModelConfig, its base up to v1.8.0, is gone at v1.9.0)
MCORE_BASE = "TransformerConfig@model_config"

# where a config names its classes, and the role of each
_TYPED = (
    ("model.model_config.type", "model_config_legacy"),
    ("optimizer.type", "optimizer"),
    ("lr_schedule.type", "lr_schedule"),
    ("runner_wrapper.type", "runner_wrapper"),
    ("training_args.optimizer.type", "optimizer"),
    ("training_args.lr_schedule.type", "lr_schedule"),
)


# the key _named gives a model_type that some release registers but ``release`` does not
NOT_REGISTERED = ""


def _named(doc: MindFormersYaml, release: str | None = None) -> list[tuple[str, str]]:
    """(component key, what names it) for the classes the config names that we know; with
    ``release``, the class its model_type picks there (NOT_REGISTERED: none there)."""
    d = mf_defaults()
    out = []
    for dotted, role in _TYPED:
        node = get(doc.root, dotted)
        if node is None or not isinstance(node.value, str) or not node.value:
            continue
        comp = d.get(node.value, role)
        if comp is not None:
            out.append((f"{comp.name}@{comp.role}", f"{dotted}: {node.value}"))
    mt = get(doc.root, "model.model_config.model_type") or get(doc.root, "model_config.model_type")
    if mt is not None and isinstance(mt.value, str):
        key = model_types(release).get(mt.value) if release else None
        comp = d.model_type(mt.value)
        if release and key is None and comp is not None:
            out.append((NOT_REGISTERED, f"model_type: {mt.value}"))
        elif key or comp is not None:
            out.append((key or f"{comp.name}@{comp.role}", f"model_type: {mt.value}"))
    return out


def _present(per: dict[str, Any], key: str, own: str, release: str) -> bool:
    if own == release:
        return True
    entry = (per.get(key) or {}).get(release)
    return bool(entry and (entry.get("present") or entry.get("copies")))


def _unread_why(per: dict[str, Any], key: str, release: str) -> str:
    """Why the class was not read at ``release`` ("" when it was, present or not): the
    source read there does not ship its folder (a wheel has no research/)."""
    entry = (per.get(key) or {}).get(release) or {}
    return str(entry.get("why") or "") if entry.get("present") is None else ""


def _copies(doc: MindFormersYaml, release: str, path: str) -> list[str | None]:
    """Which copies of the config's classes a job at ``release`` may build: the research
    folder the file lies in, where it ships its own copy (None: the recorded class); all of
    them when nothing says which folder the job registers."""
    per = mf_table("mindformers_releases.yaml")["components"]
    d = mf_defaults()
    for key, _ in _named(doc):
        entry = (per.get(key) or {}).get(release) or {}
        copies = list(entry.get("copies") or ())
        if not copies:
            continue
        name, role = key.split("@")
        comp = d.get(name, role)
        home = str(comp.raw.get("file", "")).rsplit("/", 1)[0] if comp else ""
        mine = [c for c in copies if path.startswith(c + "/")]
        if mine:
            return [mine[0]]
        if entry.get("present") and (not path or path.startswith(home + "/")):
            return [None] if path else [None, *copies]
        return ([None] if entry.get("present") else []) + copies
    return [None]


def _arch_releases(doc: MindFormersYaml) -> tuple[str, list[str]] | None:
    """The class the job instantiates (model.arch.type) and the releases that define it
    (knobs: arch_classes), for a class with that fact: a research class lives in the
    research/ folder of some releases only (Baichuan2 up to v1.3.2)."""
    node = get(doc.root, "model.arch.type")
    if node is None or not isinstance(node.value, str):
        return None
    entry = ((mf_defaults().knobs.get("arch_classes") or {}).get("classes") or {}).get(node.value)
    if not entry or "releases" not in entry:
        return None
    return f"model.arch.type: {node.value}", list(entry["releases"])


class Candidates(Record):
    """The releases a config may belong to: those cfglint has tables for (newest first),
    those it has none for, and why."""

    __slots__ = ("copies", "tables", "unread", "why")

    tables: list[str]
    unread: list[str]
    why: str
    # release -> the research copies of the config's classes a job there may build
    copies: dict[str, list[str | None]]

    def __init__(
        self,
        tables: list[str],
        unread: list[str] | None = None,
        why: str = "",
        copies: dict[str, list[str | None]] | None = None,
    ) -> None:
        self.tables = tables
        self.unread = [] if unread is None else unread
        self.why = why
        self.copies = {} if copies is None else copies

    def builds(self) -> list[tuple[str | None, str | None]]:
        """(release, research copy) to read the config at: every candidate."""
        if not self.tables:
            # only releases cfglint has not read: their newest, whose defaults are unknown
            return [(self.unread[-1] if self.unread else None, None)]
        return [(r, c) for r in self.tables for c in self.copies.get(r, [None])]

    @property
    def span(self) -> str:
        return span("mindformers", [*self.tables, *self.unread])

    @property
    def table_span(self) -> str | None:
        """The candidates cfglint has tables for, as the defaults' label names them."""
        return span("mindformers", self.tables) if self.tables else None


def _missing(doc: MindFormersYaml, rel: str) -> list[str]:
    """What the config names that release ``rel`` does not have."""
    per = mf_table("mindformers_releases.yaml")["components"]
    own = own_releases()
    missing = [
        f"{w} (not read there: {why})" if (why := _unread_why(per, k, rel)) else w
        for k, w in _named(doc, rel)
        if k == NOT_REGISTERED or not _present(per, k, own.get(k, ""), rel)
    ]
    arch = _arch_releases(doc)
    if arch is not None and rel not in arch[1]:
        missing.append(arch[0])
    if is_mcore(doc.root) and not _present(per, MCORE_BASE, "", rel):
        # the layout names a class too: use_legacy False / the v2 template build the mcore
        # model, whose config class (mindformers/parallel_core) older releases lack
        missing.append("an mcore layout (use_legacy: False or the v2 template)")
    return missing


def fit_releases(doc: MindFormersYaml, version: str | None = None) -> Candidates:
    """The releases that hold the file, less those lacking a class it names; for a file
    no release holds, every release with every class (class_fit); ``version``
    (--mindformers-version) when given."""
    fit = fit_file("mindformers", doc.path, doc.texts.get(doc.path, ""))
    if version:
        folder = fit.path if fit is not None else ""
        return Candidates(
            [version], [], "--mindformers-version", {version: _copies(doc, version, folder)}
        )
    if fit is None or fit.by_name:
        fits, why = class_fit(doc)
        return Candidates(fits, [], why, {r: _copies(doc, r, "") for r in fits})
    held = [r for r in MF_RELEASES if r in fit.releases]
    unread = [r for r in fit.releases if r not in MF_RELEASES]
    fits = [r for r in held if not _missing(doc, r)]
    why = fit.why
    if fits and fits != held:
        why += f"; of those, {span('mindformers', fits)} have every class it names"
    elif held and not fits:
        why += " (though cfglint's class tables lack a class it names there)"
    tables = fits or held
    return Candidates(tables, unread, why, {r: _copies(doc, r, fit.path) for r in tables})


def class_fit(doc: MindFormersYaml) -> tuple[list[str], str]:
    """(releases, why) for a file no release holds: every release cfglint has tables for in
    which every class the config names exists (newest first), all of them candidates: which
    one the job runs is not known, so a default they disagree on is not decided; ([], why)
    when no release has every class."""
    fits, excluded = [], []
    for rel in MF_RELEASES:
        missing = _missing(doc, rel)
        if missing:
            excluded += missing
        else:
            fits.append(rel)
    if not fits:
        named = ", ".join(w for _, w in _named(doc))
        return [], f"no release cfglint knows has all of {named}"
    why = f"in no release; every class it names exists in {span('mindformers', fits)}"
    if excluded:
        why += f" (not in the others: {'; '.join(dict.fromkeys(excluded))})"
    return fits, why
