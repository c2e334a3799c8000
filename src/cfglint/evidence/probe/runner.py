"""The runtime probe: specs from both configs, identical start, one process per framework,
noise floor, gap, per-knob confirmations, residual and the migration-standard verdicts.

The lint calls :func:`probe` with its two normalized configs and its findings. Nothing here
imports a framework; each side runs as ``python -m cfglint.evidence.probe.<side>``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from cfglint.evidence.probe.protocol import (
    DONE,
    PROBE_LR,
    Job,
    Run,
    RunResult,
    SideResult,
    load_npz,
    result_path,
    write_job,
)
from cfglint.evidence.probe.spec import COMPANIONS, Spec, SpecPair, pair_specs
from cfglint.evidence.probe.weights import init_weights, to_layout, tokens
from cfglint.model import standard as std
from cfglint.model.config import Config

INSTALL_HINT = "pip install 'cfglint[probe]'"
CONFIRM_MULTIPLE = 10.0  # an effect this many floors above the floor is confirmed
F32_EPS = float(np.finfo(np.float32).eps)
METRICS = ("first_loss_abs", "mean_loss_abs", "global_norm_rel", "local_norm_rel", "update_rel")
LABELS = {
    "first_loss_abs": "step-1 loss",
    "mean_loss_abs": "mean loss",
    "global_norm_rel": "global norm",
    "local_norm_rel": "local norms",
    "update_rel": "optimizer update",
}

# checklist row -> the spec fields that express it
ROW_FIELDS: dict[str, tuple[str, ...]] = {
    "structure.dropout": ("hidden_dropout", "attention_dropout"),
    "structure.norm_epsilon": ("norm_eps",),
    "structure.normalization": ("norm",),
    "structure.activation": ("activation",),
    "structure.position_embedding": ("rope_theta", "rotary_percent"),
    "structure.tied_embeddings": ("tied",),
    "structure.linear_bias": ("qkv_bias", "linear_bias"),
    "structure.qk_norm": ("qk_norm",),
    "optimizer.type": ("bias_correction",),
    "optimizer.eps": ("eps",),
    "optimizer.beta1": ("beta1",),
    "optimizer.beta2": ("beta2",),
    "optimizer.weight_decay": ("weight_decay", "wd_scope"),
    "source.weight_decay_grouping": ("wd_scope",),
    "optimizer.clip_grad": ("clip_grad", "clip_formula"),
    "optimizer.lr": ("lr",),
    "optimizer.lr_warmup": ("lr",),
    "weight.init_method_std": ("init_std", "output_init_std"),
    # half-precision weights: Megatron keeps float32 masters, MindSpore none; aligning the
    # dtype alone would give the MindFormers spec half weights with no master copy
    "weight.param_init_type": ("param_dtype", "embedding_dtype", "fp32_master"),
    "precision.weight_compute": ("embedding_dtype", "fp32_master", "embedding_output_dtype"),
    "precision.compute_dtype": ("compute_dtype",),
    "precision.layernorm_compute_type": ("norm_dtype", "norm_param_dtype"),
    "precision.softmax_compute_type": ("softmax_dtype",),
    "precision.rotary_dtype": ("rotary_dtype",),
    "precision.residual_add": ("residual_dtype",),
    "precision.loss": ("loss_dtype",),
    # MoE routing (evidence/probe/moe.py: each side's effective semantics)
    "moe.num_experts_chosen": ("moe_topk",),
    "moe.capacity_factor": ("moe_capacity", "moe_drop", "moe_norm_after_drop"),
    "moe.enable_sdrop": ("moe_drop",),
    # with the aux loss on, whether the printed loss includes it is part of the row
    "moe.aux_loss_factor": ("moe_aux", "moe_aux_coeff", "moe_logged_aux"),
    "moe.load_balancing": ("moe_aux", "moe_aux_coeff"),
    "moe.router_dense_type": ("moe_router_dtype",),
    "moe.use_shared_expert_gating": ("moe_shared_gate",),
    "moe.router_scoring": (
        "moe_score",
        "moe_pre_softmax",
        "moe_norm_topk",
        "moe_norm_after_drop",
        "moe_topk_scale",
    ),
}
# rules sharing a row that each express one part of it
RULE_FIELDS: dict[str, tuple[str, ...] | None] = {
    "WGT003": ("init_std",),
    "WGT005": ("output_init_std",),
    "MOE014": ("moe_pre_softmax", "moe_norm_topk", "moe_norm_after_drop"),
    "MOE015": ("moe_topk_scale",),
    "MOE016": ("moe_score",),
    "MOE017": ("moe_aux", "moe_aux_coeff"),
    "MOE021": ("moe_logged_aux",),
    "MOE018": None,
    "MOE022": ("moe_groups", "moe_group_topk", "moe_group_top"),
    # the group score: its sum, or logits against probabilities (pre-softmax, score function)
    "MOE023": ("moe_group_top", "moe_pre_softmax", "moe_score"),
    "STR028": None,
    "STR029": None,
    "STR030": None,
    "MOE007": None,
    "MOE009": None,
}
RULE_WHY = {
    "STR028": "RoPE frequency scaling (YaRN, llama3, linear) is not modelled: the probe runs "
    "plain RoPE on both sides",
    "STR029": "interleaved RoPE (rotating adjacent pairs) is not modelled: the probe rotates "
    "halves (Megatron's default) on both sides",
    "STR030": "YaRN's mscale (of cos/sin and of the softmax scale) is not modelled: the probe "
    "runs plain RoPE on both sides",
    "MOE018": "the load-based expert bias (aux-loss-free balancing) is not modelled",
    "MOE007": "padding expert input to capacity adds zero-weight slots: no change in value",
    "MOE009": "fused kernels are not run by the probe (the same unfused math on both sides)",
}
SHAPE_ROWS = {
    "structure.num_layers",
    "structure.num_heads",
    "structure.hidden_size",
    "structure.intermediate_size",
    "structure.n_kv_heads",
    "structure.vocab_size",
    "structure.seq_length",
    "moe.expert_num",
    "moe.shared_experts",
    "moe.expert_ffn_size",
    "moe.dense_layers",
}
SECTION_WHY = {
    "moe": "a MoE setting the probe does not model",
    "parallel": "the probe runs on one device; parallel layouts are out of its reach",
    "determinism": "the probe fixes seeds, data and weights on both sides itself",
    "alignment": "advice for the alignment run, not a numeric of the step",
    "other": "not a numeric of the training step",
    "source": "the probe does not model this source pattern",
    "standard": "the probe's own verdict row",
}


class ProbeUnavailable(Exception):
    """A framework or device the probe needs is missing: one line, exit 2."""


class Confirmation(BaseModel):
    rule: str
    row: str
    verdict: str  # "confirmed" | "no measurable effect" | "not probed"
    effect: dict[str, float] = Field(default_factory=dict)
    floor_multiple: float | None = None
    measure: str = ""  # which measure floor_multiple is on
    reason: str = ""
    knobs: dict[str, list[Any]] = Field(default_factory=dict)  # field -> [mindformers, megatron]
    curve: list[float] = Field(default_factory=list, exclude=True)
    by_weight: dict[str, float] = Field(default_factory=dict, exclude=True)


class ProbeResult(BaseModel):
    device: dict[str, str]
    steps: int
    floor: dict[str, float]
    gap: dict[str, Any]
    standard: dict[str, str]
    confirmations: list[Confirmation]
    residual: dict[str, Any]
    lr: dict[str, Any] = Field(default_factory=dict)
    gap_lr0: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    not_probed: list[dict[str, str]] = Field(default_factory=list)
    cross_framework: bool = True
    seconds: float = 0.0
    timings: list[str] = Field(default_factory=list)
    # for the plot and the text report; kept out of JSON
    curves: dict[str, list[float]] = Field(default_factory=dict, exclude=True)
    local_norms: dict[str, dict[str, float]] = Field(default_factory=dict, exclude=True)
    # per-step curves and lr of both sides, for --log-dir (evidence/probe/textlog.py)
    side_runs: dict[str, Any] = Field(default_factory=dict, exclude=True)


def available() -> dict[str, bool]:
    return {name: importlib.util.find_spec(name) is not None for name in ("torch", "mindspore")}


# -- comparing runs ---------------------------------------------------------------------
def compare(a: RunResult, b: RunResult, mode: str, upd: tuple[str, str] | None = None) -> dict:
    """a against b (b is the reference). ``upd``: the two saved update files to compare."""
    ca, cb = a.curves[mode], b.curves[mode]
    n = min(len(ca.loss), len(cb.loss))
    out: dict[str, Any] = {
        "first_loss_abs": abs(ca.loss[0] - cb.loss[0]),
        "mean_loss_abs": sum(abs(ca.loss[i] - cb.loss[i]) for i in range(n)) / n,
        "mean_loss_rel": sum(abs(ca.loss[i] - cb.loss[i]) / abs(cb.loss[i]) for i in range(n)) / n,
        "first_loss_rel": abs(ca.loss[0] - cb.loss[0]) / abs(cb.loss[0]),
        "global_norm_rel": sum(
            abs(ca.grad_norm[i] - cb.grad_norm[i]) / max(cb.grad_norm[i], 1e-30) for i in range(n)
        )
        / n,
    }
    by_weight = {
        k: abs(a.local_norms[k] - vb) / max(vb, 1e-30)
        for k, vb in b.local_norms.items()
        if k in a.local_norms
    }
    worst = max(by_weight, key=lambda k: by_weight[k]) if by_weight else ""
    out["local_norm_rel"] = by_weight.get(worst, 0.0)
    out["worst_weight"] = worst
    out["local_norms_rel"] = by_weight
    if upd is not None and all(os.path.exists(p) for p in upd):
        ua, ub = load_npz(upd[0]), load_npz(upd[1])
        worst_u, worst_r = "", 0.0
        for k, vb in ub.items():
            if k not in ua:
                continue
            d = float(np.linalg.norm(ua[k].astype(np.float64) - vb))
            r = d / max(float(np.linalg.norm(vb)), 1e-30)
            if r >= worst_r:
                worst_u, worst_r = k, r
        out["update_rel"] = worst_r
        out["update_worst_weight"] = worst_u
    return out


def effective_floor(floor: dict[str, float], ref_loss: float) -> dict[str, float]:
    """The floor each metric is judged against: the measured one, never below float32
    rounding of the quantity (two runs can agree to the bit, which is not a zero floor)."""
    out = {}
    for m in METRICS:
        tiny = F32_EPS * (abs(ref_loss) if m.endswith("loss_abs") else 1.0)
        out[m] = max(floor.get(m, 0.0), tiny)
    return out


def multiple(effect: dict[str, Any], floor: dict[str, float]) -> tuple[float, str]:
    """How many floors the effect is, and on which measure: the mean loss when it alone
    clears the bar (the measure the migration standard speaks of), else the largest."""
    ratios = {m: effect[m] / floor[m] for m in METRICS if m in effect}
    if not ratios:
        return 0.0, ""
    if ratios.get("mean_loss_abs", 0.0) >= CONFIRM_MULTIPLE:
        return ratios["mean_loss_abs"], LABELS["mean_loss_abs"]
    best = max(ratios, key=lambda m: ratios[m])
    return ratios[best], LABELS[best]


def knob_mode(fields: tuple[str, ...]) -> str:
    """The curve a knob is judged on: the probe's constant learning rate shows most knobs
    within a few steps, but it is the same on both sides, so a learning-rate knob (the
    schedule's first steps) can only show on the configured learning rates."""
    return "cfg" if "lr" in fields else "probe"


def without_dropout(spec: Spec) -> Spec:
    return spec.model_copy(update={"hidden_dropout": 0.0, "attention_dropout": 0.0})


def residual_spec(mf: Spec, mg: Spec, fields: set[str]) -> Spec:
    """The MindFormers spec with ``fields`` set to Megatron's values, then the fields that
    are the same math once those are aligned (an MoE implementation order stops mattering
    when no side drops by position any more), dropout off. Aligning same-math fields changes
    no number but lets MindSpore reuse the floor's compiled graph."""
    aligned = mf.with_knobs(mg, sorted(fields))
    return without_dropout(aligned.with_knobs(mg, same_math(aligned, mg)))


# spec fields whose difference is known to stay at the last bit: Megatron divides the
# clip coefficient by (norm + 1e-6), MindSpore by max(norm, clip)
NEGLIGIBLE = {"clip_formula"}


def unnamed(res: Spec, ref: Spec) -> list[str]:
    """The fields the residual run still differs in from the floor's spec: what is left for
    the residual to measure. Init fields do not count when both start from one checkpoint,
    nor the schedule (the residual runs at the probe's constant learning rate)."""
    skip = set(NEGLIGIBLE) | {"seed", "lr"}
    if not (res.random_init and ref.random_init):
        skip |= {"init_std", "output_init_std"}
    return [f for f in res.diff(ref) if f not in skip]


def start_dtype(*specs: Spec) -> str:
    """The narrowest dtype any of the specs keeps weights in."""
    kept = {getattr(s, f) for s in specs for f in ("param_dtype", "embedding_dtype")}
    return next((d for d in ("bfloat16", "float16") if d in kept), "float32")


def round_to(a: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values rounded (to nearest even) to ``dtype``, kept as float32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "float16":
        return a.astype(np.float16).astype(np.float32)
    if dtype == "bfloat16":
        b = a.view(np.uint32).astype(np.uint64)
        b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
        return b.astype(np.uint32).view(np.float32)
    return a


# -- processes --------------------------------------------------------------------------
class Worker:
    """One framework process (``python -m cfglint.evidence.probe.<side> JOBDIR``) that
    answers jobs in turn: imports and backend start-up are paid once, and a worker started
    early warms up while the other framework computes."""

    def __init__(self, framework: str, job_dir: str) -> None:
        self.framework, self.dir, self.n = framework, job_dir, 0
        self.sent = time.perf_counter()
        module = "torch_side" if framework == "torch" else "ms_side"
        env = dict(os.environ)
        env.setdefault("TORCHDYNAMO_DISABLE", "1")
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("GLOG_v", "3")  # MindSpore's C++ log level: errors only
        self.err = open(os.path.join(job_dir, f"stderr-{framework}.txt"), "w+b")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"cfglint.evidence.probe.{module}", job_dir],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.err,
        )

    def send(self, job: Job) -> int:
        """Hand the worker a job and return at once; :meth:`wait` collects the answer."""
        self.n += 1
        write_job(self.dir, self.framework, self.n, job)
        self.sent = time.perf_counter()
        return self.n

    def submit(self, job: Job, timeout: float) -> SideResult:
        return self.wait(self.send(job), timeout)

    def wait(self, n: int, timeout: float) -> SideResult:
        path = result_path(self.dir, self.framework, n)
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


def _by_id(res: SideResult) -> dict[str, RunResult]:
    return {r.id: r for r in res.runs}


# -- the probe --------------------------------------------------------------------------
class Probe:
    def __init__(
        self,
        pair: SpecPair,
        steps: int,
        device: str,
        data: np.ndarray | None,
        mf_dialect: str,
        job_dir: str,
        frameworks: dict[str, bool],
        progress: Callable[[str], None],
    ) -> None:
        self.pair, self.steps, self.device = pair, steps, device
        self.dir, self.fw, self.say = job_dir, frameworks, progress
        self.mf_dialect = mf_dialect
        self.notes: list[str] = list(pair.notes)
        mf, mg = pair.mindformers, pair.megatron
        np.save(os.path.join(job_dir, "tokens.npy"), tokens(mg, steps, data))
        # identical start: one draw; each side's own std only when both start randomly
        # a start both sides hold exactly: when either keeps weights in half precision,
        # the draw is rounded to it (Megatron creates its weights in params_dtype,
        # tensor_parallel/layers.py:241; a loaded checkpoint's own precision cannot be told)
        self.start_dtype = start_dtype(mf, mg)
        self.start_mg = self._init(mg)
        self.start_mf = self._init(mf) if mg.random_init else self.start_mg
        self._save("start-mg", self.start_mg)
        self._save("start-mf", self.start_mf)
        self.weight_files: dict[tuple[str, str], str] = {}

    def _init(self, spec: Spec) -> dict[str, np.ndarray]:
        return {k: round_to(v, self.start_dtype) for k, v in init_weights(spec).items()}

    def _save(self, name: str, arrays: dict[str, np.ndarray]) -> str:
        np.savez(os.path.join(self.dir, name + ".npz"), **arrays)
        return name + ".npz"

    def weights(self, spec: Spec, layout: str) -> str:
        """The spec's start in ``layout``: the Megatron start unless the init differs."""
        mg = self.pair.megatron
        if spec.random_init and (
            spec.init_std != mg.init_std or spec.output_init_std != mg.output_init_std
        ):
            canon = self._init(spec)
        else:
            canon = self.start_mg
        key = (json.dumps([spec.init_std, spec.output_init_std, canon is self.start_mg]), layout)
        if key not in self.weight_files:
            name = f"w{len(self.weight_files)}-{layout}"
            self.weight_files[key] = self._save(name, to_layout(canon, spec, layout))
        return self.weight_files[key]

    def run(self, rid: str, spec: Spec, layout: str, modes: list[str], check: bool) -> Run:
        return Run(
            id=rid,
            spec=spec,
            layout=layout,
            weights=self.weights(spec, layout),
            steps=self.steps,
            modes=modes,
            save_grads=rid == "mg",
            check_grads="grads-mg.npz" if check else "",
            canonical_weights="start-mg.npz" if check else "",
        )

    def worker(self, framework: str) -> Worker:
        if framework not in self.workers:
            self.workers[framework] = Worker(framework, self.dir)
        return self.workers[framework]

    def spawn(self, framework: str, runs: list[Run]) -> dict[str, RunResult]:
        return self.collect(framework, self.send(framework, runs))

    def send(self, framework: str, runs: list[Run]) -> int:
        self.say(f"{framework}: {', '.join(r.id for r in runs)} ({self.steps} steps each)")
        return self.worker(framework).send(Job(device=self.device, runs=runs))

    def collect(self, framework: str, n: int) -> dict[str, RunResult]:
        res = self.worker(framework).wait(n, timeout=540)
        if res.error:
            if "was requested but" in res.error:
                raise ProbeUnavailable(res.error.split(": ", 1)[-1])
            raise RuntimeError(f"the {framework} process failed: {res.error}")
        self.devices[framework] = res.device
        self.timings.append(
            f"{framework}: {res.seconds:.1f} s ("
            + ", ".join(f"{r.id} {r.seconds:.1f}" for r in res.runs)
            + ")"
        )
        out = _by_id(res)
        for rid, r in out.items():
            if r.error and not r.error.startswith("MindSpore"):
                raise RuntimeError(f"{framework} run {rid} failed: {r.error}")
        return out

    def upd(self, fw: str, rid: str) -> str:
        return os.path.join(self.dir, f"update-{fw}-{rid}.npz")

    def go(self, findings: list[Any]) -> ProbeResult:
        self.workers: dict[str, Worker] = {}
        failed = True
        try:
            result = self._go(findings)
            failed = False
            return result
        finally:
            # after a failure the MindSpore worker may be mid-job (it starts at once)
            for w in self.workers.values():
                w.close(now=failed)

    def _go(self, findings: list[Any]) -> ProbeResult:
        t0 = time.perf_counter()
        self.devices: dict[str, str] = {}
        self.timings: list[str] = []
        mf, mg = self.pair.mindformers, self.pair.megatron
        floor_spec = mg.model_copy(update={"hidden_dropout": 0.0, "attention_dropout": 0.0})
        if mg != floor_spec:
            self.notes.append(
                "the floor and the residual run with dropout off on both sides: random masks "
                "cannot match across frameworks"
            )
        knobs = self.plan(findings)
        cross = self.fw.get("mindspore", False)
        ms_why = ""
        if cross:
            from cfglint.evidence.probe.spec import DTYPES

            # MindSpore runs the MindFormers spec and the floor (the Megatron spec)
            bf = [
                f
                for f in Spec.model_fields
                if "bfloat16" in (getattr(mf, f), getattr(floor_spec, f))
            ]
            if bf and self.device in ("auto", "cpu", "cuda"):
                ms_why = f"MindSpore on CPU has no bfloat16 matmul/softmax ({', '.join(bf)})"
                cross = False
            del DTYPES
            from cfglint.evidence.probe.moe import mindspore_cannot

            moe_why = mindspore_cannot(mf) or mindspore_cannot(floor_spec)
            if cross and moe_why:
                ms_why, cross = moe_why, False
        elif not self.fw.get("mindspore", False):
            ms_why = f"mindspore is not installed ({INSTALL_HINT})"
        if not cross:
            self.notes.append(
                f"cross-framework part skipped: {ms_why}; both specs ran in torch, and the floor "
                "is torch against itself with the other parameter layout"
            )
        ms_job = 0
        res_guess: Spec | None = None
        if cross:
            # MindSpore's part needs nothing from torch's: it goes first and runs beside it.
            # The residual is guessed as every knob confirmed (the usual case); a wrong
            # guess costs one more run below
            ms_runs = [
                self.run("floor-x", floor_spec, self.mf_dialect, ["cfg", "zero", "probe"], True),
                self.run("mf", mf, self.mf_dialect, ["cfg", "zero", "probe"], True),
            ]
            res_guess = residual_spec(mf, mg, {f for _c, fields in knobs for f in fields})
            if res_guess not in (floor_spec, without_dropout(mf)):
                ms_runs.append(self.run("res", res_guess, self.mf_dialect, ["probe"], False))
            ms_job = self.send("mindspore", ms_runs)
        # torch: the Megatron side, the floor partner, the MindFormers spec, one run per knob
        runs = [self.run("mg", mg, "megatron", ["cfg", "zero", "probe"], True)]
        if floor_spec != mg:
            runs.append(self.run("floor-t", floor_spec, "megatron", ["cfg", "zero", "probe"], True))
        runs.append(self.run("mf-t", mf, self.mf_dialect, ["probe", "cfg", "zero"], True))
        if not cross:
            runs.append(
                self.run(
                    "floor-x", floor_spec, "mindformers-legacy", ["cfg", "zero", "probe"], True
                )
            )
        seen: dict[tuple[str, ...], str] = {}
        for _c, fields in knobs:
            if fields in seen:
                continue
            rid = f"knob-{len(seen)}"
            seen[fields] = rid
            runs.append(
                self.run(
                    rid, mf.with_knobs(mg, list(fields)), self.mf_dialect, [knob_mode(fields)], True
                )
            )
        t = self.spawn("torch", runs)
        floor_ref = t["floor-t"] if "floor-t" in t else t["mg"]
        floor_ref_id = "floor-t" if "floor-t" in t else "mg"
        # confirmations (one framework: the knob's effect alone)
        base = t["mf-t"]
        ref_loss = base.curves["probe"].loss[0]
        confirmed: set[str] = set()
        pending: list[tuple[Confirmation, str]] = []
        for c, fields in knobs:
            rid = seen[fields]
            mode = knob_mode(fields)
            eff = compare(t[rid], base, mode, (self.upd("torch", rid), self.upd("torch", "mf-t")))
            c.effect = {m: float(eff[m]) for m in METRICS if m in eff}
            c.by_weight = eff["local_norms_rel"]
            c.curve = t[rid].curves[mode].loss
            pending.append((c, rid))
        # the floor: the same semantics twice (two frameworks, or torch in two layouts)
        if cross:
            m = self.collect("mindspore", ms_job)
            floor_other, fw_other, mf_run = m["floor-x"], "mindspore", m["mf"]
        else:
            floor_other, fw_other, mf_run = t["floor-x"], "torch", t["mf-t"]
        floor: dict[str, float] = {m_: 0.0 for m_ in METRICS}
        for mode in ("cfg", "zero", "probe"):
            f = compare(
                floor_other,
                floor_ref,
                mode,
                (self.upd(fw_other, "floor-x"), self.upd("torch", floor_ref_id)),
            )
            for m_ in METRICS:
                if m_ in f:
                    floor[m_] = max(floor[m_], float(f[m_]))
        eff_floor = effective_floor(floor, ref_loss)
        confirmations: list[Confirmation] = []
        for c, _rid in pending:
            x, which = multiple(c.effect, eff_floor)
            c.floor_multiple = round(x, 1)
            at = " at the configured learning rates" if "lr" in c.knobs else ""
            if x >= CONFIRM_MULTIPLE:
                c.verdict = "confirmed"
                c.measure = which
                c.reason = f"{x:.3g}x the floor on the {which}{at}"
                confirmed.update(f for f in c.knobs)
            else:
                c.verdict = "no measurable effect"
                c.measure = which
                c.reason = (
                    f"at most {x:.3g}x the floor (on the {which}{at}), below the "
                    f"{CONFIRM_MULTIPLE:g}x bar"
                )
            confirmations.append(c)
        # the gap as configured
        gap = compare(
            mf_run,
            t["mg"],
            "cfg",
            (
                self.upd(fw_other if cross else "torch", "mf" if cross else "mf-t"),
                self.upd("torch", "mg"),
            ),
        )
        gap_lr0 = compare(mf_run, t["mg"], "zero")
        # residual: every confirmed knob aligned, dropout off on both sides
        res_spec = residual_spec(mf, mg, confirmed)
        res_fw = "mindspore" if cross else "torch"
        # a spec already run on that side needs no second compile
        done = {floor_spec: floor_other}
        if mf == without_dropout(mf):
            done[mf] = mf_run
        if cross and res_guess is not None and "res" in m:
            done[res_guess] = m["res"]
        if res_spec in done:
            res_run = done[res_spec]
        else:
            res_run = self.spawn(
                res_fw, [self.run("res", res_spec, self.mf_dialect, ["probe"], False)]
            )["res"]
        resid = compare(res_run, floor_ref, "probe")
        rx, rwhich = multiple(resid, eff_floor)
        residual = {
            "mean_loss_abs": resid["mean_loss_abs"],
            "floor_multiple": round(resid["mean_loss_abs"] / eff_floor["mean_loss_abs"], 1),
            "local_norm_rel": resid["local_norm_rel"],
            "worst_weight": resid["worst_weight"],
            "aligned": sorted(confirmed),
        }
        left = unnamed(res_spec, floor_spec)
        residual["unnamed"] = {
            f: [_plain(getattr(res_spec, f)), _plain(getattr(mg, f))] for f in left
        }
        if rx >= CONFIRM_MULTIPLE:
            still = (
                "; the two specs still differ in "
                + ", ".join(f"{f} {a}->{b}" for f, (a, b) in residual["unnamed"].items())
                if left
                else ""
            )
            residual["verdict"] = (
                f"{rx:.0f}x the floor on the {rwhich} after aligning every "
                f"confirmed knob: a cause the lint did not name (worst weight "
                f"{resid['worst_weight']}{still})"
            )
        else:
            residual["verdict"] = "near the floor: the confirmed findings explain the gap"
        ok = {
            "first_loss": std.first_loss_ok(gap["first_loss_abs"], gap["first_loss_rel"]),
            "mean_loss": std.mean_loss_ok(gap["mean_loss_abs"], gap["mean_loss_rel"]),
            "global_norm": std.global_norm_ok(gap["global_norm_rel"]),
        }
        standard = {k: "pass" if v else "fail" for k, v in ok.items()}
        curves = {
            "megatron": t["mg"].curves["cfg"].loss,
            "mindformers": mf_run.curves["cfg"].loss,
            "megatron@probe-lr": t["mg"].curves["probe"].loss,
            "mindformers@probe-lr": t["mf-t"].curves["probe"].loss,
        }
        for c in confirmations:
            if c.verdict == "confirmed":
                at = "aligned@cfg" if "lr" in c.knobs else "aligned"
                curves[f"{at} {c.row}"] = c.curve
        self.devices.setdefault("mindspore", "skipped")
        return ProbeResult(
            device=self.devices,
            steps=self.steps,
            floor={k: float(f"{v:.3g}") for k, v in floor.items()},
            gap={k: (float(f"{v:.3g}") if isinstance(v, float) else v) for k, v in gap.items()},
            gap_lr0={
                k: (float(f"{v:.3g}") if isinstance(v, float) else v) for k, v in gap_lr0.items()
            },
            standard=standard,
            confirmations=confirmations + self.unprobed,
            residual={
                k: (float(f"{v:.3g}") if isinstance(v, float) else v) for k, v in residual.items()
            },
            lr={
                "configured": {
                    "mindformers": list(mf.lr[: self.steps]),
                    "megatron": list(mg.lr[: self.steps]),
                },
                "probe": PROBE_LR,
                "note": f"confirmations run at a constant lr of {PROBE_LR:g} so a knob shows "
                f"within {self.steps} steps; the optimizer check pushes the same step-1 gradients "
                "through both optimizers once",
            },
            notes=self.notes,
            not_probed=[g.model_dump() for g in self.pair.gaps],
            cross_framework=cross,
            curves=curves,
            local_norms={"megatron": t["mg"].local_norms, "mindformers": mf_run.local_norms},
            side_runs={"megatron": (t["mg"], mg), "mindformers": (mf_run, mf, fw_other)},
            seconds=round(time.perf_counter() - t0, 1),
            timings=self.timings,
        )

    def plan(self, findings: list[Any]) -> list[tuple[Confirmation, tuple[str, ...]]]:
        """Which findings the probe can express, and with which spec fields."""
        mf, mg = self.pair.mindformers, self.pair.megatron
        gap_why = {g.field: f"{g.side}: {g.reason}" for g in self.pair.gaps}
        for g in self.pair.gaps:  # a field taken with another side's gap says that gap
            for f in COMPANIONS.get(g.field, ()):
                gap_why.setdefault(f, f"{g.side}: {g.reason}")
        limits = self.pair.limits
        out: list[tuple[Confirmation, tuple[str, ...]]] = []
        self.unprobed: list[Confirmation] = []
        for f in findings:
            row = f.row
            fields = RULE_FIELDS.get(f.rule, ROW_FIELDS.get(row))
            c = Confirmation(rule=f.rule, row=row, verdict="not probed")
            if fields is None:
                if f.rule in RULE_WHY:
                    c.reason = RULE_WHY[f.rule]
                elif row in SHAPE_ROWS:
                    c.reason = "changes the weights' shapes; the probe runs one shared shape"
                elif row == "structure.fusion":
                    c.reason = (
                        "fused kernels are not run by the probe (the same unfused math on both "
                        "sides)"
                    )
                else:
                    c.reason = SECTION_WHY.get(row.split(".")[0], "not a numeric the probe models")
                self.unprobed.append(c)
                continue
            differ = tuple(x for x in fields if getattr(mf, x) != getattr(mg, x))
            # a field that is the same math once the others are aligned is not the knob
            # (MOE014: softmax before/after top-k once both renormalize)
            differ = tuple(
                x
                for x in differ
                if x not in same_math(mf.with_knobs(mg, [y for y in differ if y != x]), mg)
            )
            if row == "weight.init_method_std" and not mg.random_init:
                c.reason = (
                    "both sides start from identical weights (a checkpoint is loaded, or "
                    "whether one is loaded is not known)"
                )
                self.unprobed.append(c)
                continue
            if not differ:
                why = list(dict.fromkeys(gap_why[x] for x in fields if x in gap_why))
                small = list(dict.fromkeys(self.pair.limits[x] for x in fields if x in limits))
                if why:
                    c.reason = "cannot be expressed: " + "; ".join(why)
                elif small:
                    c.reason = "the difference needs more than the probe's size: " + "; ".join(
                        small
                    )
                elif len(f.values) == 1 and next(iter(f.values)) in ("mindformers", "megatron"):
                    # a recommendation on one side's value, not a difference between them
                    c.reason = (
                        f"a recommendation for the {next(iter(f.values))} side's value; the "
                        "two sides agree on it"
                    )
                else:
                    c.reason = "the two specs agree on this knob at the probe's size"
                self.unprobed.append(c)
                continue
            c.knobs = {x: [_plain(getattr(mf, x)), _plain(getattr(mg, x))] for x in differ}
            out.append((c, differ))
        return out


def same_math(mf: Spec, mg: Spec) -> list[str]:
    """Fields that differ only in how a framework lays out the same math: the residual
    aligns them, since at float32 (or bfloat16) rounding they would show as a cause no
    configuration can name. MoE: the implementation layout when no position-based drop
    makes the token order matter; softmax before or after top-k when both sides then
    renormalize the k weights (a softmax over the top-k logits is the full softmax
    renormalized over them)."""
    from cfglint.evidence.probe.moe import same_math_fields

    return same_math_fields(mf, mg)


def _plain(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_plain(x) for x in v[:3]] + (["..."] if len(v) > 3 else [])
    return v


# the source scan's weight-decay policies (check/builtins/source.py) as spec scopes
WD_POLICY = {"decay_all": "all", "default": "matrices"}


def wd_scope_from(findings: list[Any]) -> dict[str, str]:
    """Which parameters each side decays, from the source scan's grouping finding."""
    out: dict[str, str] = {}
    for f in findings:
        if f.row == "source.weight_decay_grouping":
            for side, policy in f.values.items():
                if isinstance(policy, str) and policy in WD_POLICY:
                    out[side] = WD_POLICY[policy]
    return out


def mf_dialect(cfg: Config) -> str:
    return "mindformers-mcore" if cfg.kind == "mindformers-mcore" else "mindformers-legacy"


def probe(
    mf: Config,
    mg: Config,
    findings: list[Any],
    steps: int = 10,
    device: str = "auto",
    data: np.ndarray | None = None,
    frameworks: dict[str, bool] | None = None,
    progress: Callable[[str], None] | None = None,
    keep_dir: str | None = None,
) -> ProbeResult:
    """Run the probe. Raises :class:`ProbeUnavailable` (one line) when torch is missing or
    a requested device is absent."""
    fw = frameworks if frameworks is not None else available()
    if not fw.get("torch"):
        raise ProbeUnavailable(f"the runtime probe needs torch and mindspore: {INSTALL_HINT}")
    if device == "npu" and not fw.get("mindspore"):
        raise ProbeUnavailable(f"--device npu needs mindspore: {INSTALL_HINT}")
    if steps < 3:
        raise ValueError("--steps must be at least 3 (a beta2 mismatch cannot show earlier)")
    pair = pair_specs(mf, mg, max(steps, 3), wd_scope_from(findings))
    say = progress or (lambda _msg: None)
    with tempfile.TemporaryDirectory(prefix="cfglint-probe-") as tmp:
        job_dir = keep_dir or tmp
        if keep_dir:  # a kept folder is for debugging: start it empty of old jobs
            import shutil

            shutil.rmtree(keep_dir, ignore_errors=True)
        os.makedirs(job_dir, exist_ok=True)
        p = Probe(pair, steps, device, data, mf_dialect(mf), job_dir, fw, say)
        if data is not None:
            p.notes.append(
                f"tokens: {steps} batches from the dataset's first {data.size} tokens "
                f"(ids folded into the probe's vocabulary of {pair.megatron.vocab})"
            )
        return p.go(findings)
