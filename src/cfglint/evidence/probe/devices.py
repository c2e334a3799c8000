"""Where each framework's side of the probe runs.

torch runs on CPU, on an NVIDIA GPU (CUDA), or on an Ascend NPU through torch_npu (which
registers the ``npu`` device with torch). MindSpore runs on CPU or on Ascend
(``device_target`` Ascend); it has no CUDA build in the probe's environment. The floor is
always measured where the runs it judges ran, on the same devices.

The choice is a pure function of what is requested and what is present, so it is tested
without the hardware; the framework processes ask their framework what is present.
"""

from __future__ import annotations

import importlib.util

from cfglint import PROBE_DEVICES

DEVICES = PROBE_DEVICES


class DeviceMissing(Exception):
    """A requested device is absent: one line for the user."""


def torch_device(want: str, cuda: bool, npu: bool) -> str:
    """torch's device for ``want`` given whether torch sees CUDA and torch_npu an NPU.
    ``auto`` prefers an accelerator: CUDA, then Ascend, then the CPU."""
    if want == "cuda" and not cuda:
        raise DeviceMissing("CUDA was requested but torch sees no CUDA device")
    if want == "npu" and not npu:
        raise DeviceMissing("an Ascend NPU was requested but torch_npu sees none")
    if want in ("cuda", "npu", "cpu"):
        return want
    return "cuda" if cuda else "npu" if npu else "cpu"


def mindspore_device(want: str, ascend: bool) -> str:
    """MindSpore's device_target for ``want``: Ascend for an NPU (and for ``auto`` where
    one is present), else the CPU (``cuda`` runs torch on the GPU, MindSpore on the CPU)."""
    if want == "npu" and not ascend:
        raise DeviceMissing("an Ascend NPU was requested but MindSpore sees none")
    if want == "npu" or (want == "auto" and ascend):
        return "Ascend"
    return "CPU"


def half_matmul(framework: str, device: str) -> bool:
    """Whether the framework computes bfloat16 matmuls and softmax on the device.
    MindSpore 2.10's CPU kernels do not (measured, issue 8; float16 they do); torch's do
    everywhere."""
    return not (framework == "mindspore" and device.lower() == "cpu")


def preflight(want: str) -> None:
    """Fail at once, before any framework process starts, when a requested accelerator
    cannot be there: ``cuda`` without a CUDA device (torch.cuda.is_available, which
    imports torch here only when CUDA is asked for), ``npu`` without torch_npu."""
    if want == "cuda":
        import torch

        torch_device(want, cuda=torch.cuda.is_available(), npu=False)
    elif want == "npu" and importlib.util.find_spec("torch_npu") is None:
        raise DeviceMissing("an Ascend NPU was requested but torch_npu is not installed")
