"""Data, seeds, determinism and runtime settings of a Megatron run."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.placeholders import as_placeholder


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
    o.training_stage = (
        stage.model_copy(update={"value": "sft"})
        if stage is not None
        else Value.default("pretrain", "--stage", f"{m.table.label} (pretraining)")
    )
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
    det = m.arg("deterministic_mode")
    if "npu_deterministic" in m.table.by_dest and m.arg("npu_deterministic").value:
        det = m.arg("npu_deterministic")
    d.deterministic = det
