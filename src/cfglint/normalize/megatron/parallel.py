"""Parallel strategy of a Megatron run: TP/PP/CP/EP, world size and data parallel, the way
``initialize_model_parallel`` derives them.
"""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.lazy_re import compile_on_use
from cfglint.model.values import Value
from cfglint.normalize.launch import UNKNOWN_OPTIONS, fixed_int
from cfglint.normalize.megatron.input import MegatronInput

_DEFAULTED = compile_on_use(r"\$\{\w+:?-[^}]*\}")


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
    p.data_parallel = _data_parallel(m, cfg)
    p.micro_batch_interleave = None
    _check_layout(m, cfg)


def _ints(*vals: Value | None) -> list[int] | None:
    out = []
    for v in vals:
        if v is None or not v.known or isinstance(v.value, bool) or not isinstance(v.value, int):
            return None
        if v.value <= 0:
            return None
        out.append(v.value)
    return out


def _env_default(m: MegatronInput, v: Value) -> str:
    """The ``${NAME:-default}`` a value came from ("" when it was written plainly)."""
    lines = m.text.splitlines()
    for loc in v.locations():
        if 0 < loc.line <= len(lines):
            line = lines[loc.line - 1]
            # the pattern only on a line with an expansion that has a default
            hit = _DEFAULTED.search(line) if "${" in line and "-" in line else None
            if hit:
                return hit.group(0)
    return ""


def _check_layout(m: MegatronInput, cfg: Config) -> None:
    """Megatron refuses a layout whose world size is not a multiple of TP x PP x CP
    (parallel_state.py: data-parallel size) or of expert-TP x EP x PP
    (Megatron-LM megatron/core/parallel_state.py:881; expert TP defaults to TP,
    megatron/training/arguments.py:587). When the device count comes from a
    ``${SLURM_NNODES:-1}``-style default, the script was written for another node count:
    the world size and the data-parallel size are unknown, not derived from the default."""
    p = cfg.parallel
    ws = p.world_size
    if ws is None or not ws.known:
        return
    etp = (
        m.arg("expert_tensor_parallel_size")
        if "expert_tensor_parallel_size" in m.table.by_dest
        else None
    )
    if etp is not None and (not etp.known or etp.value is None):
        etp = p.tensor_parallel
    sizes = _ints(ws, p.tensor_parallel, p.pipeline_parallel, p.context_parallel)
    if sizes is None:
        return
    world, tp, pp, cp = sizes
    problems = []
    defaulted = _env_default(m, ws)
    # a plain TP x PP x CP mismatch is PAR012's; here only when the count is a default
    if world % (tp * pp * cp) and defaulted:
        problems.append(f"{world} devices are not a multiple of TP x PP x CP = {tp} x {pp} x {cp}")
    e = _ints(p.expert_parallel, etp)
    moe = bool(m.arg("num_experts").value)  # read_moe runs later
    dense_ok = world % (tp * pp * cp) == 0  # when it is not, PAR012 says so already
    if moe and e is not None and world % (e[1] * e[0] * pp) and (dense_ok or defaulted):
        problems.append(
            f"{world} devices cannot place the experts: not a multiple of expert-TP x EP x PP "
            f"= {e[1]} x {e[0]} x {pp}"
        )
    if not problems:
        p.layout_problem = Value.derived(
            "", "parallel layout", "the layout fits the device count", [ws, p.tensor_parallel]
        )
        return
    why = "; ".join(problems)
    if defaulted:
        why += (
            f" (the device count comes from the default of {defaulted}: the script is meant "
            "for another node count)"
        )
        p.world_size = Value.unknown("world size", why, loc=ws.loc, via=ws.via)
        p.data_parallel = Value.unknown("data_parallel", why, loc=ws.loc, via=ws.via)
    p.layout_problem = Value.derived(
        why, "parallel layout", "Megatron refuses to start with this layout", [ws]
    )


# what an outer launcher (mpirun, srun) sets in each process it starts: a script that reads
# them is run once per rank, and its plain `python x.py` is one rank of many
_PER_RANK_ENV = ("OMPI_COMM_WORLD_", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_")


def _python_world(m: MegatronInput) -> Value:
    """The world size of a plain ``python x.py`` launch: one process, unless the command
    line gives the rank count itself (a fork's ``--world-size``, hygon's
    examples/*/train_*.sh) or the script reads what mpirun/srun set per rank (then it is
    one rank of an outer launch whose size is not in it)."""
    given = m.values.get("world_size")
    if given is not None:
        return given
    marker = next((e for e in _PER_RANK_ENV if e in m.text), None)
    if marker is not None:
        return Value.unknown(
            "world size",
            f"the script reads {marker}* (set per rank by an outer mpirun/srun): it runs one "
            "rank of a launch whose size it does not say",
        )
    return Value.derived(1, "world size", "a plain python launch runs one process", [m.launcher])


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
        return _python_world(m)
    return _spawned_world(m, launcher, la)


def _spawned_world(m: MegatronInput, launcher: str, la: dict[str, Value]) -> Value:
    """The world size of a torchrun-style launcher: processes per node x nodes."""
    per = la.get("nproc_per_node") or la.get("num_gpus") or la.get("num_accelerators")
    nodes = la.get("nnodes") or la.get("num_nodes")
    hidden = la.get(UNKNOWN_OPTIONS)
    if hidden is not None and not (per and nodes):
        # an option list cfglint cannot read may set the process count: no default applies
        return Value.unknown(
            "world size", f"the {launcher} options are not all known: {hidden.detail}"
        )
    if launcher == "deepspeed" and not per:
        # the deepspeed launcher's --num_gpus defaults to -1: every device each node has,
        # or the ones --include / CUDA_VISIBLE_DEVICES name (deepspeed/launcher/runner.py:
        # 104-109, 450-472 @ edaa722); unlike torchrun it does not default to one process
        picked = (
            "deepspeed --include picks the devices"
            if "include" in la or "i" in la
            else "deepspeed without --num_gpus starts one process per device each node has"
        )
        return Value.unknown("world size", f"{picked}: the count depends on the machine")
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


def _data_parallel(m: MegatronInput, cfg: Config) -> Value:
    """The data-parallel size, derived as world size / (TP x PP x CP) like
    initialize_model_parallel."""
    p = cfg.parallel
    if m.final and m.given("data_parallel_size"):
        return m.arg("data_parallel_size")
    ws = p.world_size
    if ws is None:
        return Value.unknown(
            "data_parallel", "the device count is not known (no launcher arguments)"
        )
    if not ws.known:
        return Value.unknown("data_parallel", f"the device count is not known: {ws.detail}")
    tpv, pp, cp = p.tensor_parallel, p.pipeline_parallel, p.context_parallel
    if not all(x.known and isinstance(x.value, int) and x.value > 0 for x in (tpv, pp, cp)):
        return Value.derived(None, "data_parallel", "", [ws, tpv, pp, cp])
    if ws.value % (tpv.value * pp.value * cp.value) != 0:
        return Value.unknown(
            "data_parallel",
            f"world size {ws.value} is not divisible by TP x PP x CP "
            f"({tpv.value} x {pp.value} x {cp.value}); Megatron refuses to start",
        )
    return Value.derived(
        ws.value // (tpv.value * pp.value * cp.value),
        "data_parallel",
        "derived as world size / (TP x PP x CP)",
        [ws, tpv, pp, cp],
    )
