"""Our torch model of Megatron's semantics against megatron-core's own GPTModel.

megatron-core 0.16.1 runs on CPU with the shims listed in
cfglint/evidence/probe/mcore_check.py; the check runs in its own process (the shims patch
torch globals). The MoE variants cover both dispatchers (alltoall, allgather), dropless
and capacity 1.0 with each drop policy, softmax before and after top-k, sigmoid scores,
the top-k scaling factor, aux loss, sequence aux loss, z-loss, gated shared experts and
group-limited routing (a group's top-2 logit sum, a group's maximum sigmoid score). The
structure variants cover LayerNorm (its q/k layernorms carry a bias too), linear and QKV
biases, q/k norms, tied embeddings and the GeLU, squared-ReLU and quick-GeGLU MLPs.
Skips when megatron-core or torch is not installed; a shim that breaks with
a new release fails here, not in the probe.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None
    or importlib.util.find_spec("megatron") is None
    or importlib.util.find_spec("megatron.core") is None,
    reason="megatron-core (and torch) are not installed",
)

FLOOR_LOSS = 2e-6  # the float32 CPU floor the probe measures across frameworks
FLOOR_NORM = 1e-6


# parameters per variant: 21 dense; MoE (1 dense + 1 MoE layer, 8 experts) 43, + gated
# shared experts 47
N_PARAMS = {
    "dense": 21,
    "gqa": 21,
    "moe-alltoall": 47,
    "moe-allgather": 43,
    "moe-position": 43,
    "moe-groups": 43,
    "moe-groups-sigmoid": 43,
    # LayerNorm (with biases, q/k layernorms too), linear + QKV biases, tied embeddings:
    # GeLU, squared ReLU (plain fc1), quick GeGLU (gated, fc1 twice as wide)
    "structure-gelu": 43,
    "structure-squared-relu": 43,
    "structure-quick-geglu": 47,
}


@pytest.mark.parametrize("variant", list(N_PARAMS))
def test_torch_model_agrees_with_megatron_core(variant: str, tmp_path: Path) -> None:
    out = tmp_path / "mcore.json"
    env = dict(os.environ, TORCHDYNAMO_DISABLE="1", OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [sys.executable, "-m", "cfglint.evidence.probe.mcore_check", str(out), variant],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    d = json.loads(out.read_text())
    assert d["megatron_core"].startswith("0.16")
    assert abs(d["loss_ours"] - d["loss_mcore"]) < FLOOR_LOSS
    a, b = d["local_norms_ours"], d["local_norms_mcore"]
    assert set(a) == set(b) and len(b) == N_PARAMS[variant]
    worst = max(abs(a[k] - b[k]) / b[k] for k in b)
    assert worst < FLOOR_NORM, worst
