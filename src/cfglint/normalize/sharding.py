"""Optimizer-state sharding as it really happens: both MindSpore's parallel optimizer and
Megatron's distributed optimizer split the state over the data-parallel ranks (Megatron over
data x context parallel: DistributedOptimizer's data_parallel_group_with_cp, core_v0.12.1
megatron/core/optimizer/__init__.py; MindSpore over the data-parallel dimension,
optimizer_weight_shard_size at most data_parallel). With one such rank there is one shard,
and the switch changes nothing about the reduction."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value


def one_shard(cfg: Config) -> None:
    """``parallel.sharded_optimizer`` from the switch and the data-parallel size (PAR014);
    the switch itself stays as written (PAR005 recommends it off while aligning)."""
    p = cfg.parallel
    on, dp, cp = p.distributed_optimizer, p.data_parallel, p.context_parallel
    p.sharded_optimizer = on
    if on is None or not on.known or not on.value or dp is None:
        return
    if not dp.known:
        p.sharded_optimizer = Value.derived(None, on.knob, "", [on, dp])  # unknown: why dp is
        return
    if dp.value != 1 or (cp is not None and (not cp.known or cp.value not in (1, None))):
        return
    p.sharded_optimizer = Value.derived(
        False,
        on.knob,
        "switched on, but with data-parallel size 1 the optimizer state has one shard: "
        "nothing is sharded",
        [on, dp] + ([cp] if cp is not None else []),
    )
