"""Data, seeds, determinism and runtime settings of a MindFormers config."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.boundaries import BOUNDARY_PARTS, boundaries_value
from cfglint.normalize.mindformers.view import MFView, first_written
from cfglint.normalize.placeholders import as_placeholder
from cfglint.normalize.shufflers import (
    GPT_DATASET,
    HF_SHUFFLE,
    IN_ORDER,
    MINDSPORE_SAMPLER,
)

# MindSpore's ParallelMode names and the integers MindFormers also accepts
# (MsParallelConfig: 0 data, 1 semi-auto, 2 auto, 3 hybrid parallel)
_PARALLEL_MODES = {
    "data_parallel": 0,
    "semi_auto_parallel": 1,
    "auto_parallel": 2,
    "hybrid_parallel": 3,
    "stand_alone": "stand_alone",
}
# dataset loaders that build Megatron's GPTDataset, whose sample order is a function of its
# seed exactly as in Megatron, with the seed each gives GPTDataset when its ``config:`` has no
# ``seed`` key. The loader reads ``config.get("seed", 1234)`` and nothing else: not the global
# seed, not ``random_seed`` (blended_megatron_dataloader.py:197, unchanged from the loader's
# first commit d9f53e5f4 to fd4deebc1)
_MEGATRON_DATASETS = {
    "BlendedMegatronDatasetDataLoader": (
        1234,
        "MindFormers BlendedMegatronDatasetDataLoader (its config has no seed key; "
        "blended_megatron_dataloader.py:197)",
    ),
}


def _is_megatron_loader(name: object) -> bool:
    # a loader type is a string when the config is sane; anything else is some other loader
    return isinstance(name, str) and name in _MEGATRON_DATASETS


def read_other(view: MFView, cfg: Config) -> None:
    o = cfg.other
    ctx = view.comp("ContextConfig", "context")
    o.enable_graph_kernel = view.key(
        "context.enable_graph_kernel", ctx, kind="bool", fallback=False
    )
    gk = view.node("context.graph_kernel_flags")
    o.graph_kernel_flags = view.value(gk, "context.graph_kernel_flags") if gk is not None else None
    eod = first_written(view, ["train_dataset.data_loader.config.eod"], "int")
    o.eod_token_id = eod
    dp = first_written(
        view,
        ["train_dataset.data_loader.config.data_path", "train_dataset.data_loader.dataset_dir"],
        "str",
    )
    o.data_path = as_placeholder(dp, "the dataset path")
    tok = first_written(
        view,
        [
            "processor.tokenizer.vocab_file",
            "processor.tokenizer.tokenizer_file",
            "pretrained_model_dir",
        ],
        "str",
    )
    o.tokenizer_path = as_placeholder(tok, "the tokenizer path")
    o.training_stage = training_stage(view)
    o.document_boundaries = _document_boundaries(view)
    d = cfg.determinism
    if view.v2:
        d.seed = view.key("training_args.training_seed", None, kind="int", fallback=None)
    else:
        d.seed = view.key("seed", view.comp("GeneralConfig", "top_level"), kind="int")
    use_par = view.key("use_parallel", view.comp("GeneralConfig", "top_level"), kind="bool")
    mode = parallel_mode(view)
    d.data_seed = _data_seed(view)
    d.data_shuffle = _data_shuffle(view)
    d.shuffler = _shuffler(view, d.data_shuffle)
    if d.seed is not None and d.seed.known and not d.seed.value:
        d.seed_applied = Value.derived(
            False, "seed", "MindFormers skips set_seed when seed is 0", [d.seed]
        )
    elif use_par.known and use_par.value and mode.known and mode.value in (1, 2):
        d.seed_applied = Value.derived(
            False,
            "seed",
            "MindFormers does not call set_seed in semi-auto / auto parallel runs "
            "(use_parallel True, parallel_mode 1 or 2); the seed only reaches the dataset",
            [use_par, mode],
        )
    else:
        d.seed_applied = Value.derived(True, "seed", "MindFormers applies the seed", [d.seed])
    sync = view.node("train_precision_sync") or view.node("context.train_precision_sync")
    det = view.node("context.deterministic")
    if sync is not None and sync.value:
        d.deterministic = view.value(sync, "train_precision_sync", "bool")
    elif det is not None:
        v = view.value(det, "context.deterministic")
        d.deterministic = (
            v.model_copy(update={"value": str(v.value).upper() == "ON"}) if v.known else v
        )
    elif sync is not None:
        d.deterministic = view.value(sync, "train_precision_sync", "bool")
    else:
        d.deterministic = Value.default(
            False, "train_precision_sync", "MindFormers template (deterministic computation off)"
        )
    cfg.launch.device = Value.default("npu", "context.device_target", "MindFormers (Ascend)")


def parallel_mode(view: MFView) -> Value:
    """``parallel.parallel_mode`` as MindFormers' integer code; MindSpore's mode names
    ("SEMI_AUTO_PARALLEL", "STAND_ALONE", ...) are valid spellings too."""
    v = view.key("parallel.parallel_mode", view.comp("MsParallelConfig", "parallel"))
    if v.known and isinstance(v.value, str):
        code = _PARALLEL_MODES.get(v.value.strip().lower())
        if code is None:
            view.warnings.append(f"{v.loc}: parallel.parallel_mode {v.value!r} is not a mode")
            return Value.unknown(v.knob, f"{v.value!r} is not a MindSpore parallel mode", loc=v.loc)
        return v.model_copy(update={"value": code})
    if v.known and (isinstance(v.value, bool) or not isinstance(v.value, int)):
        return Value.unknown(v.knob, f"{v.value!r} is not a parallel mode", loc=v.loc)
    return v


def training_stage(view: MFView) -> Value:
    """Pretraining or fine-tuning. ``run_mode: finetune`` says so; a ``train`` run on an
    instruction dataset (MindRecord with a labels column: prompt tokens masked out of the
    loss) is a fine-tuning run too, whatever run_mode says."""
    rm = view.node("run_mode")
    if rm is not None and isinstance(rm.value, str) and rm.value == "finetune":
        return view.value(rm, "run_mode").model_copy(update={"value": "sft"})
    loader = view.node("train_dataset.data_loader.type")
    cols = view.node("train_dataset.input_columns")
    if (
        cols is not None
        and isinstance(cols.plain(), list)
        and "labels" in cols.plain()
        and not (loader is not None and _is_megatron_loader(loader.value))
    ):
        return Value.derived(
            "sft",
            "train_dataset.input_columns",
            "an instruction dataset: the MindRecord samples carry labels (prompt masked)",
            [view.value(cols, "train_dataset.input_columns")],
        )
    if rm is not None and isinstance(rm.value, str):
        return view.value(rm, "run_mode").model_copy(update={"value": "pretrain"})
    return Value.default("pretrain", "run_mode", "MindFormers (run_mode train)")


# what a data loader does without a `shuffle` key: HFDataLoader reads in order
# (hf_dataloader.py:402, shuffle = kwargs.pop('shuffle', False) @ f52743ca); MindSpore's
# MindDataset and GeneratorDataset default to shuffle=None, a global shuffle every epoch
# (mindspore.dataset MindDataset, MindSpore 2.10 docs: "Default: None, performs
# Shuffle.ADAPTIVE", global up to 100 million samples)
_LOADER_SHUFFLE_DEFAULT = {
    "HFDataLoader": (False, "MindFormers HFDataLoader (hf_dataloader.py:402)"),
    "MindDataset": (True, "MindSpore MindDataset (shuffle=None: a global shuffle)"),
}


def _data_shuffle(view: MFView) -> Value | None:
    """Whether the training samples are read shuffled. MindFormers' Megatron-dataset loader
    always orders them by GPTDataset's shuffle index drawn from its seed (blended_datasets/
    gpt_dataset.py:405, 447-451 @ f52743ca); the other loaders follow their `shuffle` key, an
    HFDataLoader also its `shuffle` handler."""
    loader = view.node("train_dataset.data_loader.type")
    if loader is None or not isinstance(loader.value, str):
        return None
    knob = "train_dataset.data_loader.shuffle"
    kind = view.value(loader, "train_dataset.data_loader.type")
    if _is_megatron_loader(loader.value):
        return Value.derived(
            True,
            "train_dataset.data_loader.type",
            "the Megatron GPT dataset reads its samples through a shuffle index drawn from its "
            "seed",
            [kind],
        )
    handler = _shuffle_handler(view)
    if loader.value == "HFDataLoader" and handler is not None:
        return Value.derived(
            True, handler.knob, "a shuffle handler reorders the samples", [handler]
        )
    sh = view.node(knob)
    if sh is not None:
        return view.value(sh, knob, "bool")
    default = _LOADER_SHUFFLE_DEFAULT.get(loader.value)
    if default is None:
        return Value.unknown(knob, f"not set, and the default of {loader.value} is not known")
    return Value.default(default[0], knob, default[1])


def _shuffler(view: MFView, shuffle: Value | None) -> Value | None:
    """The code that orders a shuffled MindFormers dataset (normalize/shufflers.py): the
    Megatron GPT dataset for the Megatron-dataset loaders, the datasets library for an
    HFDataLoader's shuffle handler, MindSpore's sampler otherwise (MindDataset, and the
    GeneratorDataset an HFDataLoader wraps with shuffle=config.shuffle, hf_dataloader.py
    wrap_dataset @ c358dfe6)."""
    if shuffle is None or not shuffle.known:
        return shuffle
    loader = view.node("train_dataset.data_loader.type")
    if not shuffle.value or loader is None:
        return Value.derived(IN_ORDER, shuffle.knob, "no shuffling", [shuffle])
    if _is_megatron_loader(loader.value):
        name = GPT_DATASET
    elif loader.value == "HFDataLoader" and _shuffle_handler(view) is not None:
        name = HF_SHUFFLE
    else:
        name = MINDSPORE_SAMPLER
    why = shuffle.detail or f"{loader.value} shuffles"
    return Value.derived(name, shuffle.knob, why, list(shuffle.inputs) or [shuffle])


def _shuffle_handler(view: MFView) -> Value | None:
    """The HFDataLoader handler that shuffles the dataset (``shuffle: {seed: 42}`` or a list
    entry ``type: shuffle``), None when there is none."""
    knob = "train_dataset.data_loader.handler"
    handler = view.node(knob)
    if handler is None:
        return None
    spec = handler.plain()
    found = (isinstance(spec, dict) and "shuffle" in spec) or (
        isinstance(spec, list)
        and any(isinstance(h, dict) and h.get("type") == "shuffle" for h in spec)
    )
    return view.value(handler, knob) if found else None


def _data_seed(view: MFView) -> Value | None:
    """The seed that orders the samples. Only MindFormers' Megatron-dataset loader draws the
    same order as Megatron for the same seed (its GPTDataset config.seed); a MindRecord
    dataset is shuffled by MindSpore's sampler, whose order no Megatron seed reproduces."""
    loader = view.node("train_dataset.data_loader.type")
    if loader is None or not _is_megatron_loader(loader.value):
        # MindSpore's sampler orders MindRecord / other datasets: no seed on the Megatron
        # side reproduces that order, so there is no comparable knob (the data-set rows
        # compare what is read instead)
        return None
    if view.v2:
        return _v2_data_seed(view)
    knob = "train_dataset.data_loader.config.seed"
    n = view.node(knob)
    if n is not None:
        return view.value(n, knob, "int")
    ignored = view.node("train_dataset.data_loader.config.random_seed")
    if ignored is not None:
        view.warnings.append(
            f"{ignored.path}:{ignored.line}: {loader.value} does not read config.random_seed "
            "(it passes config.seed to GPTDataset): the dataset is ordered with the default "
            "seed instead"
        )
    default, source = _MEGATRON_DATASETS[loader.value]
    return Value.default(default, knob, source)


def _v2_data_seed(view: MFView) -> Value:
    """The template-v2 trainer orders the samples with ``training_args.dataset_seed or
    training_args.training_seed or 1234`` and writes it over the loader's config.seed
    (mindformers/trainer/llm_trainer_for_graph_experimental/llm_trainer.py:1380,
    dataset/llm_dataset.py:331 @ 26cd9a4f, branch br_feature_llm_trainer): a zero or null
    falls through to the next."""
    knob = "training_args.dataset_seed"
    n = view.node(knob)
    own = view.value(n, knob, "int") if n is not None else None
    if own is not None and (not own.known or own.value):
        return own
    t = view.node("training_args.training_seed")
    seed = view.value(t, "training_args.training_seed", "int") if t is not None else None
    if seed is not None and (not seed.known or seed.value):
        # not written (or 0): the dataset takes the training seed; a fix writes dataset_seed
        return Value.default(
            seed.value, knob, f"training_args.training_seed at {seed.loc} (dataset_seed unset)"
        )
    return Value.default(
        1234, knob, "MindFormers v2 trainer (dataset_seed or training_seed or 1234)"
    )


# BlendedMegatronDatasetDataLoader's document-boundary options (each default False,
# blended_megatron_dataloader.py:207-209 @ fd4deebc) and the columns that carry each to the
# model: the reset mask travels in attention_mask or, compressed, in actual_seq_len
_BOUNDARY_OPTIONS = (
    ("reset_attention_mask", ("attention_mask", "actual_seq_len")),
    ("reset_position_ids", ("position_ids",)),
    ("eod_mask_loss", ("loss_mask",)),
)
# MindRecord columns that only carry tokens: a sample of them is one causal sequence
_TOKEN_COLUMNS = {"input_ids", "labels", "text"}


def _columns(view: MFView, key: str) -> list[str] | None:
    n = view.node(f"train_dataset.{key}")
    names = n.plain() if n is not None else None
    return [str(x) for x in names] if isinstance(names, list) else None


def _document_boundaries(view: MFView) -> Value | None:
    """What the model does at the document ends of a packed sample. The Megatron-dataset
    loader builds Megatron's three options into columns; an option counts when its column is
    handed to the model by name (construct_args_key), not when it is only built, and is
    unknown when the columns reach the model by position. A MindRecord whose samples carry
    only tokens is one causal sequence: no document end is visible to the model."""
    loader = view.node("train_dataset.data_loader.type")
    if loader is None:
        return None
    knob = "train_dataset.data_loader.type"
    cols = _columns(view, "input_columns")
    if _is_megatron_loader(loader.value):
        return _megatron_loader_boundaries(view, cols, _columns(view, "construct_args_key"))
    if loader.value == "MindDataset" and cols is not None and set(cols) <= _TOKEN_COLUMNS:
        return boundaries_value(
            [],
            knob,
            f"the MindRecord samples carry only {', '.join(cols)}: the model sees each as one "
            "causal sequence",
            [view.value(loader, knob)],
        )
    return Value.unknown(
        knob,
        f"how {loader.value} data marks document ends depends on how it was built "
        "(cfglint models the Megatron-dataset loader and token-only MindRecords)",
        loc=view.value(loader, knob).loc,
    )


def _megatron_loader_boundaries(
    view: MFView, cols: list[str] | None, by_name: list[str] | None
) -> Value:
    parts, inputs = [], []
    for (option, carriers), part in zip(_BOUNDARY_OPTIONS, BOUNDARY_PARTS, strict=True):
        key = f"train_dataset.data_loader.config.{option}"
        n = view.node(key)
        if n is None:
            continue
        v = view.value(n, key, "bool")
        inputs.append(v)
        if not (v.known and v.value) or not set(carriers) & set(cols or []):
            continue
        if by_name is None:
            return Value.unknown(
                key,
                f"{option} is built into the {'/'.join(carriers)} column, which reaches the "
                "model by position (no construct_args_key): which argument receives it "
                "depends on the model class",
                loc=v.loc,
            )
        if set(carriers) & set(by_name):
            parts.append(part)
    return boundaries_value(
        parts,
        "train_dataset.data_loader.config",
        "the Megatron-dataset loader's reset_attention_mask / reset_position_ids / "
        "eod_mask_loss (default false), counted when their column reaches the model",
        inputs,
    )
