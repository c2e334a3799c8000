"""Which configuration rows the accuracy guide names for each Stage-3 symptom.

The guide's long-run section (acc_optimize "阶段3:长稳训练排查" / "Stage 3: long stable
training"): for a gap that opens late ("loss后期差异较大"), check the optimizer parameters
(type, learning rate, weight decay and which weights it reaches) and mixed precision; for a
divergence at some step ("loss发散"), check the data around that step, overflow near it, and
the local norms; draw both learning-rate curves. A row name ending in "." covers its section.
"""

from __future__ import annotations

OPTIMIZER_AND_PRECISION = (
    "optimizer.type",
    "optimizer.lr",
    "optimizer.lr_warmup",
    "optimizer.weight_decay",
    "source.weight_decay_grouping",
    "optimizer.beta1",
    "optimizer.beta2",
    "optimizer.eps",
    "optimizer.clip_grad",
    "precision.",
    "weight.param_init_type",
)
DATA_AND_OVERFLOW = (
    "other.data_check",
    "other.input_ids_range",
    "other.special_tokens",
    "other.template_consistency",
    "other.overflow_detection",
)
LR = ("optimizer.lr", "optimizer.lr_warmup", "optimizer.train_steps", "optimizer.global_batch_size")

# What differs from the first update (the guide's Stage 1 and 2 prerequisites of a long
# run): dropout and the model structure ("turn off the randomness parameter ... it is
# recommended that both sides be closed"), the initial weights ("parameters such as mean/std
# in the random distribution need to be checked for consistency") and fixed randomness
# ("Fixed Randomness and Start Deterministic Computation"). A run that parts from the start
# or keeps a steady offset carries them.
EARLY = ("structure.", "weight.", "determinism.")
EARLY_WHY = (
    "parting from the first steps: the guide's prerequisites (the same structure and "
    "dropout, the same initial weights, fixed seeds and deterministic computation)"
)

# judgement row -> (rows the guide names for it, what the guide says to look at)
CAUSES: dict[str, tuple[tuple[str, ...], str]] = {
    "late_gap": (
        OPTIMIZER_AND_PRECISION,
        "a late-stage gap: the guide checks the optimizer parameters (type, learning rate, "
        "weight decay and which weights it reaches) and mixed precision",
    ),
    "drift": (
        OPTIMIZER_AND_PRECISION,
        "a steady offset: the guide checks the optimizer parameters and mixed precision",
    ),
    "divergence": (
        OPTIMIZER_AND_PRECISION + DATA_AND_OVERFLOW,
        "a divergence: the guide checks the data around that step (decode the batches, or "
        "skip them), overflow near it, and the local norms",
    ),
    "lr.logged": (LR, "the two printed learning-rate curves differ"),
}


def matches(row: str, wanted: tuple[str, ...]) -> bool:
    return any(row == w or (w.endswith(".") and row.startswith(w)) for w in wanted)


def is_data_row(row: str) -> bool:
    return row in DATA_AND_OVERFLOW and row != "other.overflow_detection"
