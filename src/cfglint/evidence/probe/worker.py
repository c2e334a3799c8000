"""One framework process of the probe, answering jobs in turn."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from cfglint.evidence.probe.protocol import DONE, Job, SideResult, result_path, write_job


class Worker:
    """One framework process (``python -m cfglint.evidence.probe.<side> JOBDIR``) that
    answers jobs in turn: imports and backend start-up are paid once, and a worker started
    early warms up while the other framework computes."""

    def __init__(self, framework: str, job_dir: str, channel: str = "") -> None:
        self.framework, self.dir, self.n = framework, job_dir, 0
        # the name its jobs and results go by: two workers of one framework run side by
        # side on two cores (MindSpore's graph compiles dominate its time)
        self.channel = channel or framework
        self.sent = time.perf_counter()
        module = "torch_side" if framework == "torch" else "ms_side"
        env = dict(os.environ)
        env.setdefault("TORCHDYNAMO_DISABLE", "1")
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("GLOG_v", "3")  # MindSpore's C++ log level: errors only
        # deterministic cuBLAS on a GPU (torch.use_deterministic_algorithms needs it)
        env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        self.err = open(os.path.join(job_dir, f"stderr-{self.channel}.txt"), "w+b")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"cfglint.evidence.probe.{module}", job_dir, self.channel],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.err,
        )

    def send(self, job: Job) -> int:
        """Hand the worker a job and return at once; :meth:`wait` collects the answer."""
        self.n += 1
        write_job(self.dir, self.channel, self.n, job)
        self.sent = time.perf_counter()
        return self.n

    def wait(self, n: int, timeout: float) -> SideResult:
        path = result_path(self.dir, self.channel, n)
        t0 = self.sent
        while not os.path.exists(path):
            if self.proc.poll() is not None:
                self.err.seek(0)
                tail = self.err.read().decode(errors="replace").strip().splitlines()[-1:]
                why = tail[0] if tail else "no output"
                return SideResult(
                    framework=self.framework,
                    device="?",
                    error=f"exit {self.proc.returncode}: {why}",
                )
            if time.perf_counter() - t0 > timeout:
                self.close()
                return SideResult(
                    framework=self.framework, device="?", error=f"timed out after {timeout:.0f} s"
                )
            time.sleep(0.02)
        with open(path, encoding="utf-8") as fh:
            return SideResult.model_validate_json(fh.read())

    def close(self, now: bool = False) -> None:
        """Tell the worker there is no more work; ``now``: stop it without waiting for the
        job it may still be running (the probe has already failed)."""
        with open(os.path.join(self.dir, DONE), "w"):
            pass
        try:
            if now:
                self.proc.kill()
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.err.close()
