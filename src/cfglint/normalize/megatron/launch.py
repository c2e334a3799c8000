"""What the launcher of a Megatron run says: device kind, processes per node, nodes."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.megatron.common import implementation_fact
from cfglint.normalize.megatron.input import GPU_ENV, NPU_ENV, MegatronInput


def read_launch(m: MegatronInput, cfg: Config) -> None:
    la = cfg.launch
    la.launcher = m.launcher
    la.entry_script = m.entry_script
    if "nproc_per_node" in m.launcher_args:
        la.nproc_per_node = m.launcher_args["nproc_per_node"]
    if "nnodes" in m.launcher_args:
        la.nnodes = m.launcher_args["nnodes"]
    la.device = _device(m)


def _device(m: MegatronInput) -> Value:
    names = list(m.env)
    if m.kind.startswith("mindspeed"):
        return implementation_fact("npu", "device", "MindSpeed-LLM runs on Ascend NPUs")
    if m.launcher is not None and m.launcher.value == "msrun":
        return implementation_fact("npu", "device", "msrun launches on Ascend NPUs")
    if any(n.startswith(NPU_ENV) for n in names):
        return implementation_fact(
            "npu", "device", "the launch script sets Ascend environment variables"
        )
    if any(n.startswith(GPU_ENV) for n in names):
        return implementation_fact(
            "gpu", "device", "the launch script sets CUDA/NCCL environment variables"
        )
    return implementation_fact("gpu", "device", "Megatron-LM runs on NVIDIA GPUs")
