"""Library seeding helpers, modelled instead of followed.

Training scripts seldom call ``random.seed`` and friends themselves: they call a library's
helper. Each entry of ``data/library_models.yaml`` says which generators a helper seeds
and whether it switches deterministic algorithms on, read from the library's source at the
release named in ``source`` (facts restated, no code copied): adding a library is adding
data. A helper not in the table, from a library that is not scanned, is reported as
"unknown" (see ``SEEDISH_NAMES``), never as "not seeded".

Effect kinds are those of :data:`cfglint.evidence.scan.model.EffectKind`; ``torch`` is
``torch.manual_seed``, which seeds the CPU and every CUDA device.

The same file's ``optimizer_groups`` model library trainers that build their optimizer's
parameter groups themselves (the transformers Trainer and TRL's trainers): see
:data:`TRAINER_GROUPINGS`, read by the weight-decay scan.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

from cfglint.load.datacache import DATA_DIR, load_data


@dataclass(frozen=True)
class LibraryHelper:
    """Same fields as :class:`known.FrameworkInit`, plus where they were read."""

    kinds: tuple[str, ...]
    # ("arg", positional index, keyword) or ("config", knob)
    seed: tuple
    source: str  # "library version: file:line"
    note: str = ""
    # the call itself switches determinism when this keyword is a literal True
    deterministic_kw: tuple[int, str] | None = None
    # the helper always switches deterministic algorithms on
    deterministic_always: bool = False
    deterministic: str | None = None
    needs_nonzero_seed: bool = False
    conditional: bool = False
    deterministic_note: str = ""
    trains: bool = False


def _helper(entry: dict[str, Any]) -> LibraryHelper:
    """One entry of data/library_models.yaml."""
    fields = {f.name for f in dataclasses.fields(LibraryHelper)}
    kw = {k: v for k, v in entry.items() if k in fields}
    kw["kinds"] = tuple(kw.get("kinds", ()))
    kw["seed"] = tuple(kw.get("seed", ()))
    if kw.get("deterministic_kw") is not None:
        kw["deterministic_kw"] = tuple(kw["deterministic_kw"])
    return LibraryHelper(**kw)


@dataclass(frozen=True)
class TrainerGrouping:
    """One entry of ``optimizer_groups``: how a library trainer groups for weight decay."""

    policy: str
    excluded: tuple[str, ...]
    config: tuple[int, str]  # (positional index, keyword) of the config object
    field: str  # its field holding the decayed group's weight_decay
    default: float
    configs: frozenset[str]  # config classes whose `field` defaults to `default`
    replaced_by: tuple[str, ...] = ()
    unmodelled: tuple[str, ...] = ()
    source: str = ""
    note: str = ""


def _grouping(entry: dict[str, Any]) -> TrainerGrouping:
    return TrainerGrouping(
        policy=entry["policy"],
        excluded=tuple(entry["excluded"]),
        config=tuple(entry["config"]),  # type: ignore[arg-type]
        field=entry["field"],
        default=float(entry["default"]),
        configs=frozenset(entry["configs"]),
        replaced_by=tuple(entry.get("replaced_by", ())),
        unmodelled=tuple(entry.get("unmodelled", ())),
        source=entry["source"],
        note=entry.get("note", ""),
    )


def _load_groupings() -> dict[str, TrainerGrouping]:
    """Trainers that group parameters themselves, with the subclasses that inherit it."""
    data = load_data(DATA_DIR / "library_models.yaml")
    out: dict[str, TrainerGrouping] = {}
    for entry in data.get("optimizer_groups", {}).values():
        out.update(dict.fromkeys(entry["names"], _grouping(entry)))
    for sub in data.get("subclasses", ()):
        base = out.get(sub["base"])
        if base is not None:
            for name in sub["names"]:
                out[name] = dataclasses.replace(base, source=f"{sub['source']}; {base.source}")
    return out


def _load() -> dict[str, LibraryHelper]:
    """The helpers, and the library classes that inherit a modelled class's seeding
    (TRL's trainers -> transformers.Trainer), by every name they are called by."""
    data = load_data(DATA_DIR / "library_models.yaml")
    out: dict[str, LibraryHelper] = {}
    for entry in data["helpers"].values():
        helper = _helper(entry)
        out.update(dict.fromkeys(entry["names"], helper))
    for sub in data.get("subclasses", ()):
        base = out[sub["base"]]
        for name in sub["names"]:
            out[name] = dataclasses.replace(
                base,
                source=f"{sub['source']}; {base.source}",
                note=f"{name.rsplit('.', 1)[-1]} is a {sub['base']} subclass: {base.note}",
            )
    return out


LIBRARY_HELPERS: dict[str, LibraryHelper] = _load()
TRAINER_GROUPINGS: dict[str, TrainerGrouping] = _load_groupings()
# What a file's cached summary depends on besides its text and the scanner version: the
# library data (a new entry changes which calls train or seed).
DATA_KEY = hashlib.sha256((DATA_DIR / "library_models.yaml").read_bytes()).hexdigest()[:16]

# Last name parts of calls that look like a seeding helper: when such a call goes into a
# library that is neither in the tables nor scanned, the seeding is unknown, not missing.
SEEDISH_NAMES = frozenset(
    {
        "set_seed",
        "seed_everything",
        "set_random_seed",
        "random_seed",
        "seed_all",
        "set_seeds",
        "setup_seed",
        "init_seed",
        "fix_seed",
        "seed_torch",
        "manual_seed",
        "enable_full_determinism",
    }
)
