"""Parallel strategy of a Megatron run: TP/PP/CP/EP, world size and data parallel, the way
``initialize_model_parallel`` derives them.
"""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.megatron.common import fixed_int
from cfglint.normalize.megatron.input import MegatronInput


def read_parallel(m: MegatronInput, cfg: Config) -> None:
    p = cfg.parallel
    p.tensor_parallel = m.arg("tensor_model_parallel_size")
    p.pipeline_parallel = m.arg("pipeline_model_parallel_size")
    p.context_parallel = m.arg("context_parallel_size")
    p.expert_parallel = m.arg("expert_model_parallel_size")
    p.distributed_optimizer = m.arg("use_distributed_optimizer")
    sp = m.arg("sequence_parallel")
    tp = p.tensor_parallel
    if sp.value and tp.known and tp.value == 1 and not m.final:
        sp = Value.derived(
            False,
            "--sequence-parallel",
            "switched off by Megatron because tensor parallel size is 1",
            [sp, tp],
        )
    p.sequence_parallel = sp
    vpp = m.arg("num_layers_per_virtual_pipeline_stage")
    if not vpp.value and "num_virtual_stages_per_pipeline_rank" in m.table.by_dest:
        vpp = m.arg("num_virtual_stages_per_pipeline_rank")
    p.virtual_pipeline = vpp
    p.world_size = _world_size(m)
    if m.final and m.given("data_parallel_size"):
        p.data_parallel = m.arg("data_parallel_size")
    elif p.world_size is not None and p.world_size.known:
        ws, tpv = p.world_size, p.tensor_parallel
        pp, cp = p.pipeline_parallel, p.context_parallel
        sizes = (tpv, pp, cp)
        if (
            all(x.known and isinstance(x.value, int) and x.value > 0 for x in sizes)
            and ws.value % (tpv.value * pp.value * cp.value) != 0
        ):
            p.data_parallel = Value.unknown(
                "data_parallel",
                f"world size {ws.value} is not divisible by TP x PP x CP "
                f"({tpv.value} x {pp.value} x {cp.value}); Megatron refuses to start",
            )
        elif all(x.known and isinstance(x.value, int) and x.value > 0 for x in sizes):
            p.data_parallel = Value.derived(
                ws.value // (tpv.value * pp.value * cp.value),
                "data_parallel",
                "derived as world size / (TP x PP x CP)",
                [ws, tpv, pp, cp],
            )
        else:
            p.data_parallel = Value.derived(None, "data_parallel", "", [ws, tpv, pp, cp])
    else:
        p.data_parallel = Value.unknown(
            "data_parallel", "the device count is not known (no launcher arguments)"
        )
    p.micro_batch_interleave = None


def _world_size(m: MegatronInput) -> Value | None:
    if m.final:
        return m.arg("world_size") if m.given("world_size") else None
    la = m.launcher_args
    launcher = m.launcher.value if m.launcher is not None else None
    if launcher is None:
        return None
    if launcher == "msrun":
        if "worker_num" in la:
            return fixed_int(la["worker_num"], "--worker_num")
        return Value.unknown("--worker_num", "msrun without --worker_num")
    if launcher in ("python", "python3"):
        return Value.derived(
            1, "world size", "a plain python launch runs one process", [m.launcher]
        )
    per = la.get("nproc_per_node") or la.get("num_gpus")
    nodes = la.get("nnodes") or la.get("num_nodes")
    per_v = (
        fixed_int(per, "--nproc_per_node")
        if per
        else Value.default(1, "--nproc_per_node", f"{launcher} (one process per node)")
    )
    nodes_v = fixed_int(nodes, "--nnodes") if nodes else Value.default(1, "--nnodes", launcher)
    if per_v.known and nodes_v.known:
        return Value.derived(
            per_v.value * nodes_v.value,
            "world size",
            "derived as nproc_per_node x nnodes",
            [per_v, nodes_v],
        )
    return Value.derived(None, "world size", "", [per_v, nodes_v])
