"""The load-balancing loss in the form both frameworks can be compared in."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value

# a balancing loss that is not added (weight 0, or a router that does not compute it)
NO_LOSS = "none"


def device_loss(weight: object, groups: object) -> str:
    """DeepSeek-V2's device-level balancing loss in one form for both frameworks: the sum
    over expert groups of a group's summed mean scores times its mean load. MindFormers'
    _device_load_balancing (moe.py:1831-1859 @ fd4deebc) and MindSpeed-LLM's (router.py:
    116-147 @ c77308a1) reduce to alpha x G x sum_g P_g x count_g / (kN) alike."""
    return f"{weight} x group scores x group loads over {groups} expert groups"


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
