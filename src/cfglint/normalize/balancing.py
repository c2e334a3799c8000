"""The load-balancing loss in the form both frameworks can be compared in."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value


def fold_single_sequence(cfg: Config) -> None:
    """A per-sequence balancing loss over micro-batches of one sequence is the per-micro-batch
    loss: Megatron's seq_aux_loss averages the loss of each sequence of a micro-batch
    (router.py seq_aux_loss_load_balancing, core_v0.12.1), aux_loss takes the micro-batch's
    tokens at once, and MindFormers' "expert" loss takes each data-parallel slice's tokens
    (moe.py _expert_load_balancing @ 1d7cbefc). With one sequence per micro-batch all three
    are the same number, so a side's seq_aux_loss is compared as aux_loss there."""
    e, mbs = cfg.moe, cfg.optimizer.micro_batch_size
    lb = e.load_balancing_type
    if not cfg.is_moe or lb is None or not lb.known or str(lb.value) != "seq_aux_loss":
        return
    if mbs is None or not mbs.known or mbs.value != 1:
        return
    e.load_balancing_type = Value.derived(
        "aux_loss",
        lb.knob,
        f"{lb.detail}; with one sequence per micro-batch the per-sequence loss is the "
        "per-micro-batch one",
        [lb, mbs],
    )
