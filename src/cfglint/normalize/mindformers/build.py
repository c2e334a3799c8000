"""MindFormers YAML -> the normalized model, with MindFormers' own defaults and derivations.

Three layouts exist in the wild:

- legacy (``use_legacy`` absent or True): ``model.model_config.type: LlamaConfig`` and the
  class's keyword defaults; ``moe_config`` at top level with MoEConfig defaults;
- mcore (``use_legacy: False``): HF-style keys under ``model.model_config``, renamed to
  TransformerConfig fields; defaults per model class < MFModelConfig < TransformerConfig;
  the architecture may come from ``pretrained_model_dir/config.json``;
- v2 template (top-level ``model_config`` / ``training_args`` /
  ``distribute_parallel_config``): the mcore model with other section names.

Facts (defaults, formulas, template behaviour) are from the MindFormers versions recorded
in ``data/mindformers.yaml``. One module per checklist section does the reading.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cfglint.load.mindformers_yaml import MindFormersYaml, load_mindformers_yaml
from cfglint.model.config import Config
from cfglint.normalize.anchors import yaml_sections
from cfglint.normalize.balancing import fold_single_sequence
from cfglint.normalize.mindformers.defaults import Consulted, release_defaults
from cfglint.normalize.mindformers.moe import read_moe
from cfglint.normalize.mindformers.optimizer import read_optimizer
from cfglint.normalize.mindformers.other import read_other
from cfglint.normalize.mindformers.parallel import read_parallel
from cfglint.normalize.mindformers.precision import read_precision
from cfglint.normalize.mindformers.pynative import is_pynative, load_pynative
from cfglint.normalize.mindformers.release import fit_releases
from cfglint.normalize.mindformers.rope import read_rope
from cfglint.normalize.mindformers.structure import read_structure
from cfglint.normalize.mindformers.view import MFView
from cfglint.normalize.release_fit import settle
from cfglint.normalize.sharding import one_shard

if TYPE_CHECKING:
    from cfglint.load.reads import Reads


# ---------------------------------------------------------------------------------------
def load_mindformers(path: str, version: str | None = None, reads: Reads | None = None) -> Config:
    """``version``: the MindFormers release the config is for (``--mindformers-version``);
    else the releases that hold the file (release.fit_releases). Read at each of several
    candidate releases, what they disagree on is not decided (release_fit.settle). ``reads``:
    the run's planning may hand over its parse (load/reads.py)."""
    doc = load_mindformers_yaml(path, reads)
    if is_pynative(doc.root):
        return load_pynative(doc, version)
    cands = fit_releases(doc, version)
    builds = cands.builds()
    if len(builds) == 1 and not (cands.tables and cands.unread):
        rel, copy = builds[0]
        cfg = read_at_release(doc, rel, cands.why, copy=copy)
        if cands.unread:
            cfg.dialect = f"MindFormers {cands.span} ({cands.why})"
        return cfg
    cfgs = read_candidates(doc, builds, cands.why, cands.table_span)
    # what is left open by a given release is which research copy the job registers
    hint = "" if version else " (--mindformers-version names the release the job runs)"
    cfg = settle(cfgs, cands.unread, "MindFormers", cands.why, hint)
    cfg.dialect = f"MindFormers {cands.span} ({cands.why})"
    return cfg


def read_candidates(
    doc: MindFormersYaml, builds: list[tuple[str | None, str | None]], why: str, shown: str | None
) -> dict[str, Config]:
    """The config read at each candidate (release, research copy), newest first, for settle;
    less each candidate whose tables answer every question an earlier reading asked as that
    reading's did (defaults.Consulted.same_answers): it would read every value as that one
    did, only labelled with its own release. settle takes the newest candidate's reading
    and, of the others, names only the first whose value differs from it, so a candidate
    that repeats an earlier one's values is never the one named: leaving it out changes
    nothing settle says."""
    cfgs: dict[str, Config] = {}
    done: list[Consulted] = []
    for rel, copy in builds:
        d = release_defaults(rel, why, shown, copy)
        if rel is not None and any(c.same_answers(d) for c in done):
            continue
        rec = Consulted(d)
        name = " ".join(filter(None, (rel or "each class's own release", copy)))
        cfgs[name] = read_at_release(doc, rel, why, shown, copy, rec)
        if rel is not None:
            done.append(rec)
    return cfgs


def read_at_release(
    doc: MindFormersYaml,
    release: str | None,
    why: str,
    shown: str | None = None,
    copy: str | None = None,
    consulted: Consulted | None = None,
) -> Config:
    """The config normalized with ``release``'s defaults (``copy``: the research folder
    whose own copy of its classes the job builds), labelled ``shown`` when given;
    ``consulted``: records what the reading asks of those defaults (its ``d``)."""
    path = doc.path
    d = release_defaults(release, why, shown, copy)
    if consulted is not None and consulted.d is not d:
        raise ValueError("consulted records another release's tables")
    view = MFView(doc, d, consulted=consulted)
    cfg = Config.create(
        side="mindformers",
        path=path,
        kind="mindformers-mcore" if view.mcore else "mindformers-legacy",
        files=list(doc.files),
        sections=yaml_sections(doc.root, path),
    )
    cfg.warnings.extend(doc.warnings)
    cfg.dialect = f"MindFormers {release} ({why})" if release else ""
    if release is None:
        cfg.warnings.append(
            f"{path}:1: release not matched ({why}); the class defaults are not decided"
        )
    cls = view.model_cls
    cfg.model_class = cls.name if cls else ""
    cfg.defaults_from = cls.label if cls else f"MindFormers {view.release_label}"
    if cls is not None and view.outer_cls is not None:
        cfg.defaults_from += f" (the text model of {view.outer_cls.name})"
    if not view.mcore and view.model_node is not None and cls is None:
        t = view.node(f"{view.model_path}.type")
        if t is not None and t.value not in (None, ""):
            cfg.warnings.append(
                f"{t.path}:{t.line}: model class {t.value} is not in cfglint's "
                "MindFormers tables; its defaults are unknown"
            )
    for field in view.d.knobs["model_fields"]:
        v = view.model(field)
        if v is not None:
            cfg.set(field, v)
    read_parallel(view, cfg)
    one_shard(cfg)
    read_structure(view, cfg)
    read_rope(view, cfg)
    read_moe(view, cfg)
    read_optimizer(view, cfg)
    fold_single_sequence(cfg)
    read_precision(view, cfg)
    read_other(view, cfg)
    _not_applicable(view, cfg)
    cfg.warnings.extend(view.warnings)
    return cfg


_ROPE_FIELDS = (
    "structure.rope_theta",
    "structure.rope_scaling",
    "structure.yarn_mscale",
    "structure.rope_interleaved",
    "structure.rotary_percent",
    "structure.fused_rope",
    "precision.rotary_dtype",
)


def _not_applicable(view: MFView, cfg: Config) -> None:
    """Record why a field of this model class is empty: the class facts' ``no_knob`` /
    ``not_applicable`` entries, and every RoPE field of a model without rotary positions."""
    if view.mcore or view.model_cls is None:
        return
    facts = view.d.knobs["legacy_classes"].get(view.model_cls.name) or {}
    for field, (value, why) in (facts.get("absent") or {}).items():
        if value in ("no_knob", "not_applicable"):
            cfg.set(field, None)
            cfg.not_applicable[field] = why
    # fields derived from a field that does not apply do not apply either
    derived = {
        "structure.num_heads": ("structure.num_query_groups", "structure.head_dim"),
        "structure.ffn_hidden_size": ("moe.expert_ffn_size",),
    }
    for src, fields in derived.items():
        if src in cfg.not_applicable:
            for field in fields:
                if cfg.get(field) is None:
                    cfg.not_applicable[field] = f"follows {src}: {cfg.not_applicable[src]}"
    pe = cfg.structure.position_embedding_type
    if pe is not None and pe.known and pe.value not in ("rope", "yarn", "llama3", "partial_rope"):
        for field in _ROPE_FIELDS:
            cfg.set(field, None)
            cfg.not_applicable.setdefault(field, f"{pe.value} position embeddings, no RoPE")
