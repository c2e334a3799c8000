"""Data, seeds, determinism and runtime settings of a Megatron run."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.boundaries import BOUNDARY_PARTS, boundaries_value
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.placeholders import as_placeholder
from cfglint.normalize.shufflers import GPT_DATASET, IN_ORDER, MSL_INSTRUCTION


def read_other(m: MegatronInput, cfg: Config) -> None:
    o = cfg.other
    o.data_path = as_placeholder(m.arg("data_path"), "--data-path")
    tok = m.arg("tokenizer_model")
    if not tok.value and "tokenizer_name_or_path" in m.table.by_dest:
        tok = m.arg("tokenizer_name_or_path")
    o.tokenizer_path = as_placeholder(tok, tok.knob or "tokenizer")
    o.prompt_template = m.arg("prompt_type") if "prompt_type" in m.table.by_dest else None
    stage = None
    for dest in ("stage", "is_instruction_dataset"):
        if dest in m.table.by_dest and m.arg(dest).value:
            stage = m.arg(dest)
            break
    if stage is not None:
        o.training_stage = stage.model_copy(update={"value": "sft"})
    elif m.modelled:
        o.training_stage = Value.default("pretrain", "--stage", f"{m.table.label} (pretraining)")
    else:
        o.training_stage = m.undecided("--stage")
    o.document_boundaries = _document_boundaries(m)
    d = cfg.determinism
    d.seed = m.arg("seed")
    d.seed_applied = Value.derived(
        True,
        "--seed",
        "Megatron seeds random, numpy, torch and CUDA with it (+100 per pipeline rank)",
        [d.seed],
    )
    # the GPT dataset builder takes random_seed=args.seed (Megatron-LM pretrain_gpt.py:405);
    # MindSpeed-LLM builds its datasets through the same builder
    d.data_seed = Value.derived(
        d.seed.value,
        "--seed",
        "Megatron shuffles the dataset samples with --seed (GPTDataset random_seed)",
        [d.seed],
    )
    d.data_shuffle = _data_shuffle(m, d.seed)
    d.shuffler = _shuffler(m, d.data_shuffle)
    det = m.arg("deterministic_mode")
    if "npu_deterministic" in m.table.by_dest and m.arg("npu_deterministic").value:
        det = m.arg("npu_deterministic")
    d.deterministic = det


def _data_shuffle(m: MegatronInput, seed: Value) -> Value:
    """Whether the training samples are read shuffled. Megatron's GPTDataset always reads
    through a shuffle index drawn from --seed (megatron/core/datasets/gpt_dataset.py:555,
    595-601 @ core_v0.19.0; :408, 452-458 @ core_v0.12.1). MindSpeed-LLM's instruction
    datasets (--is-instruction-dataset) shuffle the same way unless --no-shuffle, which reads
    the documents in order (mindspeed_llm/tasks/preprocess/decoder_packed_mtf_dataset.py:148,
    449-454 @ c77308a1); --no-shuffle does not reach the GPT dataset."""
    sft = m.arg("is_instruction_dataset") if "is_instruction_dataset" in m.table.by_dest else None
    off = m.arg("no_shuffle") if "no_shuffle" in m.table.by_dest else None
    if sft is not None and off is not None:
        if not sft.known:
            return Value.derived(None, "--no-shuffle", "", [sft])
        if sft.value:
            if not off.known:
                return Value.derived(None, "--no-shuffle", "", [off])
            return Value.derived(
                not off.value,
                "--no-shuffle",
                "MindSpeed-LLM's instruction dataset "
                + ("reads the documents in order" if off.value else "shuffles them with --seed"),
                [sft, off],
            )
    return Value.derived(
        True,
        "--seed",
        "Megatron's GPT dataset always reads through a shuffle index drawn from --seed",
        [seed],
    )


def _shuffler(m: MegatronInput, shuffle: Value) -> Value:
    """The code that orders the samples (normalize/shufflers.py): MindSpeed-LLM's
    instruction dataset shuffles its documents itself; everything else reads through the
    GPT dataset's shuffle index."""
    if not shuffle.known:
        return shuffle
    if not shuffle.value:
        return Value.derived(IN_ORDER, shuffle.knob, "no shuffling", [shuffle])
    sft = m.arg("is_instruction_dataset") if "is_instruction_dataset" in m.table.by_dest else None
    name = MSL_INSTRUCTION if sft is not None and sft.known and sft.value else GPT_DATASET
    # the inputs of the shuffle decision (the seed, the flags), not the boolean itself
    return Value.derived(name, shuffle.knob, shuffle.detail, list(shuffle.inputs) or [shuffle])


def _document_boundaries(m: MegatronInput) -> Value:
    """Megatron's GPT dataset marks the document ends of a packed sample with
    --reset-attention-mask, --reset-position-ids and --eod-mask-loss (gpt_dataset.py
    _get_ltor_masks_and_position_ids). Positions and the loss mask reach the model whatever
    the attention kernel; the reset attention mask reaches it in MindSpeed-LLM, whose
    reset_attention_mask feature hands the document lengths to its flash attention
    (mindspeed_llm/features_manager/transformer/flash_attention/ @ c77308a1). Elsewhere a
    causal flash-attention kernel may ignore the dataset's mask, so that part stays unknown."""
    flags = [
        m.arg(dest) for dest in ("reset_attention_mask", "reset_position_ids", "eod_mask_loss")
    ]
    attention = flags[0]
    if attention.known and attention.value and not m.kind.startswith("mindspeed"):
        return Value.unknown(
            attention.knob or "--reset-attention-mask",
            "whether the attention kernel applies the dataset's document mask depends on the "
            "attention implementation (a causal flash-attention kernel ignores it); cfglint "
            "models it for MindSpeed-LLM only",
            loc=attention.loc,
        )
    on = [v.known and bool(v.value) for v in flags]
    return boundaries_value(
        [part for part, yes in zip(BOUNDARY_PARTS, on, strict=True) if yes],
        "--reset-attention-mask",
        "document-boundary flags (--reset-attention-mask, --reset-position-ids, --eod-mask-loss)",
        flags,
    )
