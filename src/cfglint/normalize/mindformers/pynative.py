"""MindFormers' pynative trainer config (v1.9.0+) -> the normalized model.

The pynative trainer (mindformers/pynative/trainer/trainer.py) reads its own dataclass
sections (mindformers/pynative/config/config.py): ``training``, ``optimizer``,
``lr_scheduler``, ``parallelism``, ``train_dataset.dataloader``, ``model``. Their defaults are
data extracted from each release's wheel (data/mindformers_pynative.yaml). What each section
does, read at mindformers-2.1.0.whl:

- ``model``: handed to the config registry as it is (``_build_model``,
  pynative/trainer/utils.py:330-358): the HF-style config class of ``model_type``
  (DeepseekV3Config), then ``convert_to_transformer_config`` as in the mcore train model
  (models/deepseek3/modeling_deepseek_v3_pynative.py:34-36). So the mcore readers read it.
- ``optimizer``: ``type: AdamW`` builds pynative/optimizer/adamw.py's AdamW
  (pynative/trainer/utils.py:573-578): decoupled decay ``p * (1 - lr*wd)``, bias-corrected
  moments, eps added after the square root (adamw.py:43-53), as torch's AdamW. Parameters
  without decay: 1-D, ``*.bias`` and the model's own list (get_param_groups, utils.py:216-284).
- ``lr_scheduler``: one of MindFormers' registered LR classes, given
  ``total_steps = training.steps`` (``_build_lr_scheduler``, utils.py:594-609).
- ``training.max_norm``: global-norm clipping (trainer.py:1994-1997); ``training.seed``:
  set_seed, manual_seed and np.random.seed (trainer.py:490-500).
- ``parallelism``: data parallel is what is left of the devices after TP x PP x CP
  (trainer.py:561-578); the device count is not in the file.

What was not read (the loss's reduction, the FSDP sharding's numerics, the pynative layers'
own initialisation) stays not decided.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cfglint.load.datacache import load_data
from cfglint.load.mindformers_yaml import MindFormersYaml
from cfglint.load.yamltree import Node
from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.anchors import yaml_sections
from cfglint.normalize.balancing import fold_single_sequence
from cfglint.normalize.mindformers.defaults import DATA, release_defaults
from cfglint.normalize.mindformers.moe import read_moe
from cfglint.normalize.mindformers.optimizer import read_schedule
from cfglint.normalize.mindformers.other import read_other
from cfglint.normalize.mindformers.precision import read_precision
from cfglint.normalize.mindformers.rope import read_rope
from cfglint.normalize.mindformers.structure import read_structure
from cfglint.normalize.mindformers.view import MFView
from cfglint.normalize.release_fit import settle

KIND = "mindformers-pynative"
ROOT_CLASS = "TrainConfig"
SOURCE = "pynative/config/config.py"
# the classic sections the pynative trainer does not read: a value a shared reader took
# from one of them (or from its template default) says nothing about a pynative run
_CLASSIC = (
    "runner_config",
    "runner_wrapper",
    "context",
    "parallel_config",
    "recompute_config",
    "moe_config",
    "lr_schedule",
    "train_dataset.data_loader",
    "training_args",
    "seed",
    "train_precision_sync",
    "print_separate_loss",
    "load_checkpoint",
)
_LAYERS = (
    "not decided: the pynative trainer builds its own layers (mindformers/pynative/"
    "transformers, base_models/gpt), which cfglint has not read; the mcore layers' "
    "behaviour does not carry over"
)
# what the shared mcore readers derive from the graph-mode layers' code, not from a setting
_NOT_READ = {
    "structure.output_head": _LAYERS,
    "weight.output_init_std": _LAYERS,
    "weight.embedding_dtype": _LAYERS,
    "weight.grad_reduce_dtype": "not decided: the pynative trainer's FSDP gradient "
    "reduction dtype was not read",
    "precision.softmax_dtype": _LAYERS,
    "precision.residual_dtype": _LAYERS,
    "precision.embedding_output_dtype": _LAYERS,
    "precision.loss_dtype": "not decided: the pynative loss (pynative/loss/loss.py "
    "CrossEntropyLoss) and its reduction were not read",
    "moe.router_pre_softmax": "not decided: the pynative router (pynative/transformers/moe/"
    "router.py) was not compared with the graph-mode one",
    "moe.separate_lm_loss": "not decided: the pynative trainer's loss logging was not read",
}
_WHY_CLASSIC = (
    "not decided: the pynative trainer does not read MindFormers' classic sections, and "
    "cfglint has not read what it does instead"
)


@cache
def _tables() -> dict[str, Any]:
    return load_data(DATA / "mindformers_pynative.yaml")


def is_pynative(root: Node) -> bool:
    """As the classifier decides: the pynative sections, and none of the classic trainer's
    own keys (a classic config wins, load/detect.py)."""
    from cfglint.load.detect import MF_OWN, pynative

    if not root.is_map or MF_OWN & set(root.value):
        return False
    model = root.value.get("model")
    if model is not None and model.is_map and "model_config" in model.value:
        return False
    return pynative(root.path, root.value) is not None


def accepting_releases(root: Node) -> tuple[list[str], str]:
    """The releases whose pynative config module takes every key the file writes (a class
    without ``allow_extra`` raises on a key it does not define: BaseConfig.from_dict,
    config.py:112-117 @ 2.1.0), newest first; and why the others do not."""
    rels = _tables()["releases"]
    fits, refused = [], []
    for rel in sorted(rels, reverse=True):
        entry = rels[rel]
        if not entry.get("present"):
            refused.append(f"{rel} has no pynative trainer")
            continue
        bad = _unknown_key(root, ROOT_CLASS, entry["classes"], "")
        if bad:
            refused.append(f"{rel} refuses {bad}")
        else:
            fits.append(rel)
    return fits, "; ".join(refused)


def _unknown_key(node: Node, cls: str, classes: dict[str, Any], at: str) -> str:
    spec = classes.get(cls) or {}
    fields = spec.get("fields") or {}
    for k, sub in node.value.items():
        if k not in fields:  # a field whose default is None is still a field
            if not spec.get("allow_extra"):
                return f"{at}{k} ({cls} has no such field)"
            continue
        f = fields[k]
        if isinstance(f, str) and f.startswith("<") and f.strip("<>") in classes and sub.is_map:
            bad = _unknown_key(sub, f.strip("<>"), classes, f"{at}{k}.")
            if bad:
                return bad
    return ""


def load_pynative(doc: MindFormersYaml, version: str | None = None) -> Config:
    """``version``: --mindformers-version; else every release whose module takes the file.
    Read at each, what they disagree on is not decided (release_fit.settle)."""
    fits, refused = accepting_releases(doc.root)
    why = "pynative config module takes every key it writes"
    refusal = ""
    if version:
        if version not in fits:
            # BaseConfig.from_dict would raise when that release loads the file
            refusal = next((r for r in refused.split("; ") if r.startswith(version)), "")
        fits, why = [version], "--mindformers-version"
    elif not fits:
        cfg = read_pynative(doc, None, f"no release's pynative config module takes it: {refused}")
        return cfg
    cfgs = {rel: read_pynative(doc, rel, why) for rel in fits}
    span = fits[0] if len(fits) == 1 else f"{fits[-1]}-{fits[0]}"
    if len(cfgs) == 1:
        cfg = next(iter(cfgs.values()))
    else:
        hint = "" if version else " (--mindformers-version names the release the job runs)"
        cfg = settle(cfgs, [], "MindFormers", why, hint)
    cfg.dialect = f"MindFormers {span} pynative trainer ({why})"
    if refusal:
        cfg.warnings.append(
            f"{doc.path}:1: MindFormers {refusal}: its pynative trainer would refuse the file"
        )
    return cfg


def read_pynative(doc: MindFormersYaml, release: str | None, why: str) -> Config:
    path = doc.path
    view = MFView(doc, release_defaults(release, why), model_path="model")
    cfg = Config.create(
        side="mindformers",
        path=path,
        kind=KIND,
        files=list(doc.files),
        sections=yaml_sections(doc.root, path),
    )
    cfg.warnings.extend(doc.warnings)
    if release is None:
        cfg.warnings.append(f"{path}:1: {why}; its defaults are not decided")
    cls = view.model_cls
    cfg.model_class = cls.name if cls else ""
    cfg.defaults_from = cls.label if cls else f"MindFormers {release} pynative trainer"
    tables = ((_tables()["releases"].get(release) or {}).get("classes")) if release else None
    rd = _Reader(view, tables, release)
    for field in view.d.knobs["model_fields"]:
        v = view.model(field)
        if v is not None:
            cfg.set(field, v)
    _parallel(rd, cfg)
    read_structure(view, cfg)
    read_rope(view, cfg)
    read_moe(view, cfg)
    _optimizer(rd, cfg)
    fold_single_sequence(cfg)
    read_precision(view, cfg)
    read_other(view, cfg)
    _determinism(rd, cfg)
    cfg.other.training_stage = _stage(rd)
    _drop_classic(cfg)
    cfg.warnings.extend(view.warnings)
    return cfg


class _Reader:
    """A pynative key as written, else its dataclass's default at the release."""

    def __init__(self, view: MFView, tables: dict[str, Any] | None, release: str | None):
        self.view, self.tables, self.release = view, tables, release

    def has(self, cls: str, name: str) -> bool:
        """Whether the release's ``cls`` has the field (an unread release: assume it may)."""
        if self.tables is None:
            return True
        return name in ((self.tables.get(cls) or {}).get("fields") or {})

    def key(self, dotted: str, cls: str, kind: str | None = None) -> Value:
        n = self.view.node(dotted)
        if n is not None:
            return self.view.value(n, dotted, kind)
        name = dotted.rsplit(".", 1)[-1]
        spec = (self.tables or {}).get(cls)
        if spec is None:
            return Value.unknown(dotted, f"not set, and no pynative {cls} of a release was read")
        fields = spec.get("fields") or {}
        if name not in fields or fields[name] in ("<unread>", "<required>"):
            return Value.unknown(
                dotted, f"not set, and {cls} at MindFormers {self.release} has no literal default"
            )
        return Value.default(
            fields[name],
            knob=dotted,
            source=f"MindFormers {self.release} {cls} ({SOURCE}:{spec['line']})",
        )


def _parallel(rd: _Reader, cfg: Config) -> None:
    p = cfg.parallel
    cls = "ParallelismConfig"
    p.tensor_parallel = rd.key("parallelism.tensor_parallel", cls, "int")
    p.pipeline_parallel = rd.key("parallelism.pipeline_parallel", cls, "int")
    p.context_parallel = rd.key("parallelism.context_parallel", cls, "int")
    p.expert_parallel = rd.key("parallelism.expert_parallel", cls, "int")
    p.sequence_parallel = _sequence_parallel(
        rd.key("parallelism.sequence_parallel", cls, "bool"), p.tensor_parallel
    )
    p.virtual_pipeline = rd.key("parallelism.pipeline_parallel_interleave_num", cls, "int")
    p.data_parallel = Value.unknown(
        "parallelism.data_parallel_shard",
        "the pynative trainer takes the devices left after tensor x pipeline x context "
        "parallel (trainer.py:561-578 @ 2.1.0); the device count is not in the file",
    )
    p.distributed_optimizer = Value.unknown(
        "parallelism.data_parallel_shard_strategy",
        "the pynative trainer shards by FSDP (data_parallel_shard_strategy); cfglint has not "
        "modelled how that compares with Megatron's distributed optimizer",
    )
    p.sharded_optimizer = p.distributed_optimizer
    p.world_size = Value.unknown("device count", "not in a pynative config")


def _sequence_parallel(sp: Value, tp: Value) -> Value:
    """Sequence parallelism splits activations across the tensor-parallel group: at TP 1
    there is nothing to split (Megatron switches it off there too)."""
    if sp.known and sp.value is True and tp.known and tp.value == 1:
        return Value.derived(False, sp.knob, "no effect with tensor_parallel 1", [sp, tp])
    return sp


def _optimizer(rd: _Reader, cfg: Config) -> None:
    o = cfg.optimizer
    cls = "OptimizerConfig"
    t = rd.key("optimizer.type", cls)
    o.type = t
    if t.known and t.value == "AdamW":
        o.type = t.model_copy(update={"value": "adamw", "raw": "AdamW"})
        _adamw(rd, cfg)
    else:
        why = f"optimizer.type {t.value!r}: cfglint has read only the pynative AdamW"
        for f in ("eps", "beta1", "beta2", "weight_decay"):
            setattr(o, f, Value.unknown(f"optimizer.{f}", why))
    tcls = "TrainingConfig"
    o.clip_grad = rd.key("training.max_norm", tcls, "float")
    o.global_batch_size = rd.key("training.global_batch_size", tcls, "int")
    o.micro_batch_size = rd.key("training.local_batch_size", tcls, "int")
    steps = rd.key("training.steps", tcls, "int")
    sec = rd.view.node("lr_scheduler")
    if sec is None or not sec.is_map:
        for f in ("lr", "min_lr", "lr_decay_style", "lr_warmup_steps", "lr_warmup_init"):
            setattr(o, f, Value.unknown(f"lr_scheduler.{f}", "no lr_scheduler section"))
        o.train_steps = steps
        return
    read_schedule(rd.view, cfg, sec, "lr_scheduler", steps)
    if rd.view.node("lr_scheduler.learning_rate") is None:
        o.lr = rd.key("lr_scheduler.learning_rate", "LrSchedulerConfig", "float")


def _adamw(rd: _Reader, cfg: Config) -> None:
    o = cfg.optimizer
    cls = "OptimizerConfig"
    o.eps = rd.key("optimizer.eps", cls, "float")
    o.weight_decay = rd.key("optimizer.weight_decay", cls, "float")
    betas = rd.view.node("optimizer.betas")
    if betas is not None and betas.is_seq and len(betas.value) == 2:
        o.beta1 = rd.view.value(betas.value[0], "optimizer.betas[0]", "float")
        o.beta2 = rd.view.value(betas.value[1], "optimizer.betas[1]", "float")
    elif betas is None:
        d = rd.key("optimizer.betas", cls)
        pair = d.value if d.known and isinstance(d.value, list) and len(d.value) == 2 else None
        o.beta1 = d.model_copy(update={"value": pair[0]}) if pair else d
        o.beta2 = d.model_copy(update={"value": pair[1]}) if pair else d
    else:
        why = "optimizer.betas is not a list of two numbers; AdamW refuses it (adamw.py:83-84)"
        o.beta1 = Value.unknown("optimizer.betas", why)
        o.beta2 = o.beta1
    o.wd_to_qk_layernorm = Value.default(
        False,
        "weight decay grouping",
        "MindFormers pynative get_param_groups (1-D parameters and biases get no decay, "
        "pynative/trainer/utils.py:270-280)",
    )


def _determinism(rd: _Reader, cfg: Config) -> None:
    d = cfg.determinism
    cls = "TrainingConfig"
    d.seed = rd.key("training.seed", cls, "int")
    d.seed_applied = Value.derived(
        True,
        "training.seed",
        "the pynative trainer applies it (set_seed, manual_seed, np.random.seed: "
        "trainer.py:490-500 @ 2.1.0)",
        [d.seed],
    )
    d.deterministic = rd.key("training.deterministic", cls, "bool")
    d.data_shuffle = rd.key("train_dataset.dataloader.shuffle", "DataloaderConfig", "bool")
    # the checkpoint to start from: load_path, else base_load_path ("" for both: random
    # initialization; trainer.py:934-936 @ 2.1.0)
    ck = rd.key("checkpoint.load_path", "CheckpointConfig")
    base = rd.key("checkpoint.base_load_path", "CheckpointConfig")
    # a release without base_load_path (2.0.0) loads none; an unknown one leaves it open
    has_base = rd.view.node("checkpoint.base_load_path") is not None or rd.has(
        "CheckpointConfig", "base_load_path"
    )
    if ck.known and not ck.value and has_base and (not base.known or base.value):
        ck = base
    cfg.weight.load_checkpoint = ck
    d.data_seed = Value.unknown(
        "train_dataset.dataloader", "the pynative dataloader's shuffle seed was not read"
    )
    d.shuffler = Value.unknown(
        "train_dataset.dataloader", "the pynative dataloader's shuffling code was not read"
    )


def _stage(rd: _Reader) -> Value:
    """Pretraining when the loader reads Megatron's GPT dataset (documents, no prompt
    masking); the pynative run_mode ``train`` covers fine-tuning too, so otherwise open."""
    t = rd.view.node("train_dataset.dataloader.datasets_type")
    if t is not None and t.value == "GPTDataset":
        return Value.derived(
            "pretrain",
            "train_dataset.dataloader.datasets_type",
            "Megatron's GPT dataset: plain documents, nothing masked",
            [rd.view.value(t, "train_dataset.dataloader.datasets_type")],
        )
    return Value.unknown(
        "train_dataset.dataloader",
        "the pynative run_mode train covers pretraining and fine-tuning; cfglint reads the "
        "stage only from a GPTDataset loader",
    )


def _drop_classic(cfg: Config) -> None:
    """Values a shared reader took from a classic section (or its template default): not
    decided for a pynative run."""
    for path in Config.field_paths():
        v = cfg.get(path)
        if path in _NOT_READ:
            cfg.set(path, Value.unknown(v.knob if isinstance(v, Value) else path, _NOT_READ[path]))
        elif isinstance(v, Value) and _classic(v.knob):
            cfg.set(path, Value.unknown(v.knob, _WHY_CLASSIC))


def _classic(knob: str) -> bool:
    return any(knob == s or knob.startswith((s + ".", s + "[")) for s in _CLASSIC)
