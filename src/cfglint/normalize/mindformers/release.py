"""Which MindFormers release a config belongs to, so that every default and citation is
that release's: ``--mindformers-version``, else the newest release in which every class the
config names exists (a config using FP32StateAdamWeightDecay cannot be a master config:
master no longer has it).
"""

from __future__ import annotations

from typing import Any

from cfglint.load.mindformers_yaml import MindFormersYaml
from cfglint.load.yamltree import get
from cfglint.normalize.mindformers.defaults import MF_RELEASES, mf_defaults, mf_table

# where a config names its classes, and the role of each
_TYPED = (
    ("model.model_config.type", "model_config_legacy"),
    ("optimizer.type", "optimizer"),
    ("lr_schedule.type", "lr_schedule"),
    ("runner_wrapper.type", "runner_wrapper"),
    ("training_args.optimizer.type", "optimizer"),
    ("training_args.lr_schedule.type", "lr_schedule"),
)


def _named(doc: MindFormersYaml) -> list[tuple[str, str]]:
    """(component key, what names it) for the classes the config names that we know."""
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
        comp = d.by_model_type.get(mt.value)
        if comp is not None:
            out.append((f"{comp.name}@{comp.role}", f"model_type: {mt.value}"))
    return out


def _present(per: dict[str, Any], key: str, own: str, release: str) -> bool:
    if own == release:
        return True
    entry = (per.get(key) or {}).get(release)
    return bool(entry and entry.get("present"))


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


def match_release(doc: MindFormersYaml) -> tuple[str | None, str]:
    """(release, why); (None, why) when no release has every class the config names."""
    per = mf_table("mindformers_releases.yaml")["components"]
    d = mf_defaults()
    named = _named(doc)
    own = {f"{c.name}@{c.role}": c.version for c in d.by_name.values()}
    excluded: list[str] = []
    arch = _arch_releases(doc)
    for rel in MF_RELEASES:
        missing = [w for k, w in named if not _present(per, k, own.get(k, ""), rel)]
        if arch is not None and rel not in arch[1]:
            missing.append(arch[0])
        if not missing:
            why = "every class it names exists there"
            if excluded:
                why = f"the newest release with {'; '.join(dict.fromkeys(excluded))}"
            return rel, why
        excluded += missing
    return None, f"no release cfglint knows has all of {', '.join(w for _, w in named)}"
