"""What the runner and a framework process exchange: a job directory.

``job.json`` lists runs; arrays travel as ``.npz`` files beside it. Each framework process
(``python -m cfglint.evidence.probe.torch_side JOBDIR`` or ``...ms_side JOBDIR``) answers
``result-<framework>.json`` plus one ``grads-<run>.npz`` per run that asks for gradients.
numpy only.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from cfglint.evidence.probe.spec import Spec

PROBE_LR = 1e-3  # confirmations and the optimizer check: a knob shows within a few steps
CHECK_LR = 1e-3


class Run(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    spec: Spec
    layout: str
    weights: str  # npz file name in the job dir, in ``layout``
    steps: int
    # "cfg": the spec's own lr curve; "zero": lr 0; "probe": constant PROBE_LR
    modes: list[str] = Field(default_factory=lambda: ["cfg"])
    save_grads: bool = False
    # canonical step-1 gradients (npz) to push through this spec's optimizer once
    check_grads: str = ""
    canonical_weights: str = ""  # the same start, canonical names, for the check


class Job(BaseModel):
    device: str = "cpu"
    tokens: str = "tokens.npy"
    runs: list[Run]


class Curve(BaseModel):
    loss: list[float]
    grad_norm: list[float]


class RunResult(BaseModel):
    id: str
    curves: dict[str, Curve] = Field(default_factory=dict)
    local_norms: dict[str, float] = Field(default_factory=dict)  # canonical name -> |g|
    # canonical name -> norm of (update from the shared gradients) and of its difference to
    # the reference update, filled by the runner
    update: dict[str, float] = Field(default_factory=dict)
    error: str = ""
    seconds: float = 0.0


class SideResult(BaseModel):
    framework: str
    device: str
    runs: list[RunResult] = Field(default_factory=list)
    error: str = ""
    seconds: float = 0.0
    # the process's CPU time so far (imports and compiles included): on a shared machine
    # the wall time follows the load, this much less
    cpu_seconds: float = 0.0


def job_path(job_dir: str, framework: str, n: int) -> str:
    return os.path.join(job_dir, f"job-{framework}-{n}.json")


def result_path(job_dir: str, framework: str, n: int) -> str:
    return os.path.join(job_dir, f"result-{framework}-{n}.json")


DONE = "done"  # the runner writes this file when it has no more jobs


def write_job(job_dir: str, framework: str, n: int, job: Job) -> None:
    path = job_path(job_dir, framework, n)
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(job.model_dump_json())
    os.replace(path + ".tmp", path)


def write_result(job_dir: str, n: int, res: SideResult, channel: str = "") -> None:
    path = result_path(job_dir, channel or res.framework, n)
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        fh.write(res.model_dump_json())
    os.replace(path + ".tmp", path)


def save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Write ``path`` (ending in .npz) whole or not at all: the other framework's process
    may be waiting for it (see :func:`wait_for`)."""
    tmp = path[: -len(".npz")] + ".part.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


# A job's time limit: an allowance for starting and compiling, and time for each trained
# step of each run. A fixed 540 s killed a 300-step --log-dir run on a loaded machine; the
# probe's small model trains a step well under a second, and a shared machine stretches that.
JOB_BASE_S = 540.0
JOB_PER_STEP_S = 2.0


def job_timeout(steps: int, runs: int = 1) -> float:
    """Seconds a job of ``runs`` runs of ``steps`` steps each may take."""
    return JOB_BASE_S + JOB_PER_STEP_S * max(0, steps) * max(1, runs)


def wait_for(path: str, job_dir: str, timeout: float = JOB_BASE_S) -> None:
    """Block until the other process has written ``path``. The MindSpore worker starts
    beside torch and needs torch's step-1 gradients only for its optimizer check, so it
    compiles and trains first and waits here, if at all, at the end."""
    import time

    t0 = time.perf_counter()
    while not os.path.exists(path):
        if os.path.exists(os.path.join(job_dir, DONE)):
            raise RuntimeError(f"the probe ended before {os.path.basename(path)} was written")
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"{os.path.basename(path)} did not appear in {timeout:.0f} s")
        time.sleep(0.02)


def load_npz(path: str) -> dict[str, np.ndarray]:
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def lr_for(run: Run, mode: str, step: int) -> float:
    if mode == "zero":
        return 0.0
    if mode == "probe":
        return PROBE_LR
    return run.spec.lr_at(step)


def rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-30)


def main_guard(framework: str, body: Any, idle_timeout: float = 600.0) -> None:
    """Shared ``__main__`` of a framework process: a worker that answers ``job-<framework>-1.json``,
    ``job-<framework>-2.json``, ... in turn (imports and backend start-up are paid once) until the
    runner writes ``done``; every failure becomes a JSON error, never a traceback."""
    import sys
    import time
    import traceback

    job_dir = sys.argv[1]
    # a second worker of one framework answers on its own channel (``mindspore-2``)
    channel = sys.argv[2] if len(sys.argv) > 2 else framework
    n = 1
    while True:
        waited = 0.0
        while not os.path.exists(job_path(job_dir, channel, n)):
            if os.path.exists(os.path.join(job_dir, DONE)) or waited > idle_timeout:
                return
            time.sleep(0.02)
            waited += 0.02
        t0 = time.perf_counter()
        try:
            with open(job_path(job_dir, channel, n), encoding="utf-8") as fh:
                job = Job.model_validate_json(fh.read())
            res = body(job_dir, job)
        except Exception as exc:  # reported by the runner as one line
            res = SideResult(
                framework=framework,
                device="?",
                error=f"{type(exc).__name__}: {exc}".splitlines()[0],
            )
            with open(os.path.join(job_dir, f"traceback-{channel}.txt"), "w") as fh:
                fh.write(traceback.format_exc())
        res.seconds = time.perf_counter() - t0
        res.cpu_seconds = time.process_time()
        write_result(job_dir, n, res, channel)
        n += 1


def dump_json(obj: Any) -> str:
    return json.dumps(obj)
