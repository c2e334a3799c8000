"""Data, seeds, determinism and runtime settings of a MindFormers config."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.mindformers.view import MFView, first_written


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
    o.data_path = dp
    tok = first_written(
        view,
        [
            "processor.tokenizer.vocab_file",
            "processor.tokenizer.tokenizer_file",
            "pretrained_model_dir",
        ],
        "str",
    )
    o.tokenizer_path = tok
    rm = view.node("run_mode")
    if rm is not None and isinstance(rm.value, str):
        o.training_stage = view.value(rm, "run_mode").model_copy(
            update={"value": "sft" if rm.value == "finetune" else "pretrain"}
        )
    else:
        o.training_stage = Value.default("pretrain", "run_mode", "MindFormers (run_mode train)")
    d = cfg.determinism
    if view.v2:
        d.seed = view.key("training_args.training_seed", None, kind="int", fallback=None)
    else:
        d.seed = view.key("seed", view.comp("GeneralConfig", "top_level"), kind="int")
    use_par = view.key("use_parallel", view.comp("GeneralConfig", "top_level"), kind="bool")
    mode = view.key("parallel.parallel_mode", view.comp("MsParallelConfig", "parallel"), kind="int")
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
