"""MindFormers default tables (``data/mindformers.yaml``) and the knob map."""

# Annotations are evaluated here, not kept as strings (no `from __future__ import
# annotations`): pydantic and typing.NamedTuple turn each string field annotation into a
# typing.ForwardRef, which Python 3.11 compiles one by one at import
# (tests/model/test_model_schemas.py).
import math
from functools import cache
from typing import Any, NamedTuple

from cfglint.load.datacache import DATA_DIR, load_data

DATA = DATA_DIR
REQUIRED = "<required>"


class Component(NamedTuple):
    name: str
    role: str
    version: str
    defaults: dict[str, Any]
    aliases: dict[str, str]
    raw: dict[str, Any]
    note: str = ""  # when its release is not the config's: why (" (absent in v1.5.0)")
    # why its defaults are not known for this config (a release cfglint has not read); the
    # defaults are then empty and every unset setting of the class is not decided
    unread: str = ""
    # the release the config is read at has no such class (data/mindformers_releases.yaml
    # present: false): it contributes no default there (MFModelConfig from v1.9.0 on)
    missing: bool = False

    @property
    def label(self) -> str:
        return f"MindFormers {self.version + ' ' if self.version else ''}{self.name}{self.note}"

    def has(self, key: str) -> bool:
        return key in self.defaults and self.defaults[key] != REQUIRED


class MFDefaults:
    """The default tables at one release. A component is built (at_release) when first
    asked for: a reading asks for a score of the table's classes, and a run builds the
    tables of each candidate release, so building all of them each time was most of it."""

    def __init__(
        self,
        data: dict[str, Any],
        knobs: dict[str, Any],
        release: str | None = None,
        per_release: dict[str, Any] | None = None,
        shown: str | None = None,
        copy: str | None = None,
        unread: str = "",
    ) -> None:
        self.project_version = release or data.get("version", "")
        self._at = (release, per_release, shown, copy, unread)
        self._entries: list[dict[str, Any]] = data["components"]
        # (name or registry alias, role) -> the table entry; the last of a name wins, and
        # a name before an alias, as when these maps held the components themselves
        self._names: dict[tuple[str, str], dict[str, Any]] = {}
        self._aliases: dict[tuple[str, str], dict[str, Any]] = {}
        for c in self._entries:
            self._names[(c["name"], c["role"])] = c
            for a in c.get("registry_aliases") or []:
                self._aliases[(a, c["role"])] = c
        self._types: dict[str, dict[str, Any]] | None = None
        self._built: dict[int, Component] = {}
        self.knobs = _with_copy(knobs, copy) if copy else knobs
        tc = self.get("TransformerConfig", "model_config")
        self.tc_aliases: dict[str, str] = tc.aliases if tc else {}
        self.tc_transforms: dict[str, str] = (tc.raw.get("alias_transforms") or {}) if tc else {}

    def _comp(self, c: dict[str, Any]) -> Component:
        """The entry's component at this release, built once (``is`` holds between asks)."""
        comp = self._built.get(id(c))
        if comp is None:
            release, per, shown, copy, unread = self._at
            comp = self._built[id(c)] = _component(c, release, per, shown, copy, unread)
        return comp

    def get(self, name: str | None, role: str) -> Component | None:
        if not name:
            return None
        c = self._names.get((name, role)) or self._aliases.get((name, role))
        return self._comp(c) if c is not None else None

    def model_type(self, mt: str) -> Component | None:
        """The class a ``model_type`` picks at this release (none where it registers none)."""
        c = self._type_map().get(mt)
        return self._comp(c) if c is not None else None

    def _type_map(self) -> dict[str, dict[str, Any]]:
        if self._types is None:
            release, per, *_ = self._at
            self._types = _type_entries(self._entries, release, per)
        return self._types

    @property
    def by_name(self) -> dict[tuple[str, str], Component]:
        """Every class of the tables, built (tests and package checks read them all)."""
        return {k: self._comp(c) for k, c in self._names.items()}

    @property
    def by_model_type(self) -> dict[str, Component]:
        return {t: self._comp(c) for t, c in self._type_map().items()}

    def canonical(self, key: str) -> str:
        """TransformerConfig field a new-dialect YAML / HF key is renamed to."""
        return self.tc_aliases.get(key, key)


def _model_types(
    c: dict[str, Any], comp: Component, release: str | None, per_release: dict[str, Any] | None
) -> list[str] | str:
    """The model_type values that pick this HF-style class: as the release read registers
    it (they move between classes: "telechat3" is TeleChat3Config's MoE model at master and
    a dense one from v1.9.0, whose MoE model is TeleChat3MoeConfig); none where the release
    has no such class."""
    if comp.role != "model_config":
        return []
    entry = ((per_release or {}).get(f"{comp.name}@{comp.role}") or {}).get(release or "")
    if entry is not None and release:
        return list(entry.get("model_type") or ()) if entry.get("present") else []
    return c.get("model_type") or []


def _component(
    c: dict[str, Any],
    release: str | None,
    per_release: dict[str, Any] | None,
    shown: str | None,
    copy: str | None,
    unread: str,
) -> Component:
    """One class of the table as the config's release defines it (no defaults when that
    release was not read)."""
    comp = Component(
        name=c["name"],
        role=c["role"],
        version=c.get("version", ""),
        defaults=dict(c.get("defaults") or {}),
        aliases=dict(c.get("aliases") or {}),
        raw=c,
    )
    if unread:
        return comp._replace(version=release or "", defaults={}, unread=unread)
    if release and per_release is not None:
        per = per_release.get(f"{comp.name}@{comp.role}")
        comp = at_release(comp, release, per, copy)
        if shown and comp.version == release:
            # the same default at every release the file fits: labelled with them all
            comp = comp._replace(version=shown)
    return comp


def _with_copy(knobs: dict[str, Any], copy: str) -> dict[str, Any]:
    """The knob map with the facts research folder ``copy``'s own classes fix in place of
    the recorded classes' (data/mindformers_copies.yaml)."""
    own = load_data(DATA / "mindformers_copies.yaml").get(copy) or {}
    if not own:
        return knobs
    classes = dict(knobs["legacy_classes"])
    for name, facts in own.items():
        merged = {**(classes.get(name) or {}), **facts}
        merged["absent"] = {
            **((classes.get(name) or {}).get("absent") or {}),
            **facts.get("absent", {}),
        }
        classes[name] = merged
    return {**knobs, "legacy_classes": classes}


def at_release(
    comp: Component, release: str, per: dict[str, Any] | None, copy: str | None = None
) -> Component:
    """``comp`` as release ``release`` defines it (data/mindformers_releases.yaml): the
    defaults that differ there, without the settings its class does not have there; labelled
    with the release. A class the release lacks keeps its own release, said in its label.
    ``copy``: the research folder whose own copy of the class the job builds, where the
    release ships one (research/deepseek2's DeepseekV2Config)."""
    entry = (per or {}).get(release)
    own = ((entry or {}).get("copies") or {}).get(copy or "")
    if own is not None:
        return _read_at(comp, release, per, own)._replace(note=f" ({own['file']})")
    if comp.version == release:
        return comp
    return _read_at(comp, release, per, entry)


def _read_at(
    comp: Component, release: str, per: dict[str, Any] | None, entry: dict[str, Any] | None
) -> Component:
    if entry is None:
        return comp._replace(note=f" (not checked against {release})")
    if entry.get("present") is None and entry.get("why"):
        # the source read for that release does not ship the class's folder (a wheel has
        # no research/): not known there, not known to be absent
        return comp._replace(note=f" (not read at {release}: {entry['why']})")
    if not entry.get("present"):
        return comp._replace(note=f" (no such class in MindFormers {release})", missing=True)
    # a setting missing from the release's signature is dropped only when our own release's
    # signature has it (else our extraction cannot see it at either: the value is kept)
    mine = set(((per or {}).get(comp.version) or {}).get("absent") or ())
    gone = set(entry.get("absent") or ()) - mine
    defaults = {k: v for k, v in comp.defaults.items() if k not in gone}
    defaults.update(entry.get("differs") or {})
    # what the release's register_mf_model_parameter passes that our class has no default for
    defaults.update(entry.get("adds") or {})
    return comp._replace(version=release, defaults=defaults)


# -- what one reading consults: when two candidate releases must read the same ------------
# load_mindformers reads a config at each candidate release and keeps what they agree on
# (release_fit.settle). A reading sees its release only through the MFDefaults it is given,
# and only through the MFView (view.py) that asks it: a component by name or by model_type
# (MFView.comp, _model_class), the knob map (a function of the research copy alone), the
# TransformerConfig key renames (the table's, the same at every release), and the release
# itself (MFView.release_in, for a branch; MFView.release_label, for words only). A
# component's name, role, aliases and raw entry are the table's at every release; what a
# release changes is its defaults, ``missing``, ``unread`` and its label (version, note),
# which go only into the words of a finding. Consulted records every question and the
# defaults keys read from each answer; another release whose tables give the same answer
# to each of them (same_answers) reads the config to the same values, question by
# question, so reading it again can only repeat them.
_ALL = "\0every key"  # a reading that iterated (or compared) a whole defaults mapping


class _Seen(dict):  # type: ignore[type-arg]
    """A component's defaults that note every key a reading looks at."""

    __slots__ = ("seen",)

    def __init__(self, data: dict[str, Any], seen: set[str]) -> None:
        super().__init__(data)
        self.seen = seen

    def __getitem__(self, key: str) -> Any:
        self.seen.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        self.seen.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.seen.add(str(key))
        return super().__contains__(key)

    def _whole(self) -> None:
        self.seen.add(_ALL)

    def __iter__(self) -> Any:
        self._whole()
        return super().__iter__()

    def __len__(self) -> int:
        self._whole()
        return super().__len__()

    def keys(self) -> Any:  # type: ignore[override]
        self._whole()
        return super().keys()

    def items(self) -> Any:  # type: ignore[override]
        self._whole()
        return super().items()

    def values(self) -> Any:  # type: ignore[override]
        self._whole()
        return super().values()

    def __eq__(self, other: object) -> bool:
        self._whole()
        return super().__eq__(other)

    def __ne__(self, other: object) -> bool:
        self._whole()
        return super().__ne__(other)

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> dict[str, Any]:
        self._whole()
        return dict(super().items())


class Consulted:
    """What one reading asked of its MFDefaults, in order, with each answer; the components
    it got back carry _Seen defaults (one per component, so ``is`` between them holds as
    between the tables' own)."""

    def __init__(self, d: MFDefaults) -> None:
        self.d = d
        self.asked: list[tuple[str, str]] = []  # (name, role); role "" for a model_type
        self.answers: list[int] = []  # index into comps, -1 for none
        self.comps: list[Component] = []  # the tables' own components, first asked first
        self.seen: list[set[str]] = []  # the defaults keys read from each
        self.wrapped: list[Component] = []
        self.releases: list[tuple[frozenset[str], bool]] = []  # release_in(...) and its answer

    def ask(self, name: str | None, role: str) -> Component | None:
        comp = self.d.get(name, role)
        return self._answer((name or "", role), comp)

    def ask_model_type(self, mt: str) -> Component | None:
        return self._answer((mt, ""), self.d.model_type(mt))

    def release_in(self, releases: frozenset[str]) -> bool:
        got = self.d.project_version in releases
        self.releases.append((releases, got))
        return got

    def _answer(self, query: tuple[str, str], comp: Component | None) -> Component | None:
        self.asked.append(query)
        if comp is None:
            self.answers.append(-1)
            return None
        i = next((i for i, c in enumerate(self.comps) if c is comp), -1)
        if i < 0:
            i = len(self.comps)
            self.comps.append(comp)
            self.seen.append(set())
            self.wrapped.append(comp._replace(defaults=_Seen(comp.defaults, self.seen[i])))
        self.answers.append(i)
        return self.wrapped[i]

    def same_answers(self, other: MFDefaults) -> bool:
        """Whether ``other`` answers every question of this reading as its tables did."""
        if other.knobs is not self.d.knobs and other.knobs != self.d.knobs:
            return False
        if (other.tc_aliases, other.tc_transforms) != (self.d.tc_aliases, self.d.tc_transforms):
            return False
        if any((other.project_version in r) != got for r, got in self.releases):
            return False
        got: list[Component] = []
        for (name, role), want in zip(self.asked, self.answers, strict=True):
            c = other.model_type(name) if not role else other.get(name, role)
            i = -1 if c is None else next((i for i, g in enumerate(got) if g is c), len(got))
            if i == len(got):
                got.append(c)  # type: ignore[arg-type]
            if i != want:
                return False
        return all(_same_part(a, b, k) for a, b, k in zip(self.comps, got, self.seen, strict=True))


def _same_part(a: Component, b: Component, keys: set[str]) -> bool:
    """Whether two components agree on everything a reading took from ``a`` but its label."""
    if (a.name, a.role, a.missing, a.unread) != (b.name, b.role, b.missing, b.unread):
        return False
    if a.raw is not b.raw or a.aliases != b.aliases:
        return False
    if _ALL in keys:
        return _exact(list(a.defaults.items())) == _exact(list(b.defaults.items()))
    return all(_exact(a.defaults.get(k, _ALL)) == _exact(b.defaults.get(k, _ALL)) for k in keys)


def _exact(v: Any) -> str:
    """A default as its type and value (1, 1.0 and True are equal in Python, not here)."""
    return repr(v)


@cache
def mf_table(name: str) -> Any:
    """One of the MindFormers tables of data/, read once per run: matching a release and
    the defaults at that release read the same tables (read-only here). Their mappings of
    records are read by key only (mindformers_releases.yaml's classes: a lint asks a few),
    so each record is decoded when asked for where the install ships them keyed."""
    return load_data(DATA / name, keyed=True)


@cache
def model_types(release: str) -> dict[str, str]:
    """model_type -> the component ("Name@role") that release registers for it, without
    building the release's tables (the class fit asks this of every release)."""
    per = mf_table("mindformers_releases.yaml")["components"]
    entries = _type_entries(mf_table("mindformers.yaml")["components"], release, per)
    return {t: f"{c['name']}@{c['role']}" for t, c in entries.items()}


def _type_entries(
    entries: list[dict[str, Any]], release: str | None, per: dict[str, Any] | None
) -> dict[str, dict[str, Any]]:
    """model_type -> the table entry that picks it at ``release`` (the last, where several
    do)."""
    out: dict[str, dict[str, Any]] = {}
    for c in entries:
        stub = Component(c["name"], c["role"], c.get("version", ""), {}, {}, c)
        for t in _listed(_model_types(c, stub, release, per)):
            out[t] = c
    return out


def _listed(mt: list[str] | str) -> list[str]:
    return mt if isinstance(mt, list) else [mt]


@cache
def own_releases() -> dict[str, str]:
    """ "Name@role" -> the release its table entry was read at (the last entry of a name)."""
    return {
        f"{c['name']}@{c['role']}": c.get("version", "")
        for c in mf_table("mindformers.yaml")["components"]
    }


@cache
def mf_defaults(
    release: str | None = None, shown: str | None = None, copy: str | None = None
) -> MFDefaults:
    """The default tables; with ``release``, each component as that MindFormers release
    has it (``None``: each at the release its table was read from), labelled ``shown``
    (the range of releases the config fits) when given; a class of which research folder
    ``copy`` ships its own copy, as that copy has it."""
    per = mf_table("mindformers_releases.yaml")["components"] if release else None
    return MFDefaults(
        mf_table("mindformers.yaml"),
        mf_table("mindformers_knobs.yaml"),
        release,
        per,
        shown,
        copy,
    )


# MindFormers releases cfglint has defaults for, newest first (mindformers_releases.yaml):
# v1.8.0-v2.1.0 read from the package index's wheels, after the mirror's master (2026-01-15)
MF_RELEASES = (
    "v2.1.0",
    "v2.0.0",
    "v1.9.0",
    "v1.8.0",
    "master",
    "v1.7.0",
    "v1.6.0",
    "v1.5.0",
    "v1.3.2",
    "v1.3.0",
)
# older releases (tags of mindspore-lab/mindformers) whose class defaults cfglint has not read:
# a config for one of them gets no default, only what it writes and the class facts
MF_UNREAD_RELEASES = (
    "v1.4.0-beta2",
    "v1.4.0-beta1",
    "v1.2.0",
    "v1.1.0",
    "v1.0.2",
    "v1.0.1",
    "v1.0.0",
)


@cache
def release_defaults(
    release: str | None, why: str, shown: str | None = None, copy: str | None = None
) -> MFDefaults:
    """The tables for the release a config is for (``why``: how it was found; ``shown``,
    ``copy``: as mf_defaults). A release cfglint has not read, or none found, leaves every
    class default unknown: taking another release's value would be a guess (the certainty
    rule)."""
    if release in MF_RELEASES:
        return mf_defaults(release, shown, copy)
    unread = (
        f"cfglint has not read the defaults of MindFormers {release} ({why})"
        if release
        else "no MindFormers release cfglint has read defines every class this config names, "
        "so no release's defaults apply"
    )
    return MFDefaults(
        load_data(DATA / "mindformers.yaml"),
        load_data(DATA / "mindformers_knobs.yaml"),
        release,
        None,
        unread=unread,
    )


DTYPES = {
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float32": "float32",
    "fp32": "float32",
    "float": "float32",
    "float64": "float64",
    "fp64": "float64",
}


def canonical_dtype(v: Any) -> Any:
    if isinstance(v, str):
        return DTYPES.get(v.strip().lower().removeprefix("mstype.").removeprefix("ms."), v)
    return v


def coerce(v: Any, kind: str | None) -> Any:
    """Bring a YAML value to the canonical type, leaving strings MindFormers would choke on
    (PyYAML strings like '1e-5') untouched so rules can report them."""
    if v is None or kind is None:
        return v
    if kind == "dtype":
        return canonical_dtype(v)
    if kind == "int" and isinstance(v, float) and v.is_integer():
        return int(v)
    if kind == "float" and isinstance(v, int) and not isinstance(v, bool):
        try:
            return float(v)
        except OverflowError:  # a 400-digit integer: beyond any float, as float() says
            return math.inf if v > 0 else -math.inf
    if kind == "bool" and isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    return v
