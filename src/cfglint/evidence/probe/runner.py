"""The runtime probe: specs from both configs, each side's own weights from one shared
start, one process per framework, noise floor, gap, per-knob confirmations, residual, the
cross-framework check in float32 and the migration-standard verdicts.

The lint calls :func:`probe` with its two normalized configs and its findings. Nothing here
imports a framework; each side runs as ``python -m cfglint.evidence.probe.<side>``.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from cfglint import INSTALL_PROBE
from cfglint.evidence.probe.devices import DeviceMissing, half_matmul, preflight
from cfglint.evidence.probe.measure import (
    CONFIRM_MULTIPLE,
    F32_EPS,
    METRICS,
    compare,
    effective_floor,
    multiple,
    round_to,
)
from cfglint.evidence.probe.plan import Confirmation, plain, plan, same_math
from cfglint.evidence.probe.protocol import PROBE_LR, Job, Run, RunResult, job_timeout
from cfglint.evidence.probe.spec import (
    DTYPES,
    MAX_LOG_STEPS,
    MAX_STEPS,
    Spec,
    SpecPair,
    pair_specs,
)
from cfglint.evidence.probe.weights import (
    canonical_shapes,
    conform,
    init_weights,
    structure_key,
    to_layout,
    tokens,
)
from cfglint.evidence.probe.worker import Worker
from cfglint.model import standard as std
from cfglint.model.config import Config
from cfglint.model.errors import InputError

__all__ = ["CONFIRM_MULTIPLE", "F32_EPS", "Confirmation", "Probe", "ProbeResult", "probe"]


class ProbeUnavailable(Exception):
    """A framework or device the probe needs is missing: one line, exit 2."""


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
    # a half-precision pair's cross-framework comparison run in float32 where the other
    # framework has no half-precision kernels on the device
    cross_float32: dict[str, Any] = Field(default_factory=dict)
    # per measurement: which runs it compares, each with its framework, device and dtype
    measurements: list[dict[str, Any]] = Field(default_factory=list)
    seconds: float = 0.0
    timings: list[str] = Field(default_factory=list)
    # for the plot and the text report; kept out of JSON
    curves: dict[str, list[float]] = Field(default_factory=dict, exclude=True)
    local_norms: dict[str, dict[str, float]] = Field(default_factory=dict, exclude=True)
    # per-step curves and lr of both sides, for --log-dir (evidence/probe/textlog.py)
    side_runs: dict[str, Any] = Field(default_factory=dict, exclude=True)


def available() -> dict[str, bool]:
    return {name: importlib.util.find_spec(name) is not None for name in ("torch", "mindspore")}


def knob_mode(fields: tuple[str, ...]) -> str:
    """The curve a knob is judged on: the probe's constant learning rate shows most knobs
    within a few steps, but it is the same on both sides, so a learning-rate knob (the
    schedule's first steps) can only show on the configured learning rates."""
    return "cfg" if "lr" in fields else "probe"


def without_dropout(spec: Spec) -> Spec:
    return spec.model_copy(update={"hidden_dropout": 0.0, "attention_dropout": 0.0})


HALF_FIELDS = tuple(f for f in Spec.model_fields if f.endswith("_dtype"))


def has_half(*specs: Spec) -> bool:
    return any(getattr(s, f) in ("bfloat16", "float16") for s in specs for f in HALF_FIELDS)


def as_float32(spec: Spec) -> Spec:
    """The spec with every part computed and kept in float32: what is left of it is
    everything that is not a dtype knob."""
    update: dict[str, Any] = {f: "float32" for f in HALF_FIELDS if getattr(spec, f) in DTYPES}
    update.update(embedding_output_dtype=None, fp32_master=False)
    return spec.model_copy(update=update)


def dtype_of(spec: Spec) -> str:
    """One word for a spec's precision: its compute dtype, and its weights' where other."""
    if spec.param_dtype == spec.compute_dtype:
        return spec.compute_dtype
    return f"{spec.compute_dtype} compute, {spec.param_dtype} weights"


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


def unnamed(res: Spec, ref: Spec, named: set[str] | None = None) -> list[str]:
    """The fields the residual run still differs in from the floor's spec that no finding
    named: what is left for the residual to find. Init fields do not count when both start
    from one checkpoint, nor the schedule (the residual runs at the probe's constant
    learning rate)."""
    skip = set(NEGLIGIBLE) | {"seed", "lr"} | set(named or ())
    if not (res.random_init and ref.random_init):
        skip |= {"init_std", "output_init_std"}
    return [f for f in res.diff(ref) if f not in skip]


def start_dtype(*specs: Spec) -> str:
    """The narrowest dtype any of the specs keeps weights in."""
    kept = {getattr(s, f) for s in specs for f in ("param_dtype", "embedding_dtype")}
    return next((d for d in ("bfloat16", "float16") if d in kept), "float32")


def lr_scale(mf: Spec, mg: Spec, steps: int) -> float:
    """How much both schedules are scaled so a learning-rate knob can show within the
    probe's steps: to a peak of the probe's learning rate, keeping the sides' ratio.
    1 when the configured schedules already reach it."""
    peak = max(max(s.lr[:steps]) for s in (mf, mg))
    return PROBE_LR / peak if 0 < peak < PROBE_LR else 1.0


def _g3(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (float(f"{v:.3g}") if isinstance(v, float) else v) for k, v in d.items()}


def standard(gap: dict[str, Any]) -> dict[str, str]:
    """The migration standard's verdicts on the gap as configured (model/standard.py)."""
    ok = {
        "first_loss": std.first_loss_ok(gap["first_loss_abs"], gap["first_loss_rel"]),
        "mean_loss": std.mean_loss_ok(gap["mean_loss_abs"], gap["mean_loss_rel"]),
        "global_norm": std.global_norm_ok(gap["global_norm_rel"]),
    }
    return {k: "pass" if v else "fail" for k, v in ok.items()}


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
        # a start both sides hold exactly: when either keeps weights in half precision,
        # the draw is rounded to it (Megatron creates its weights in params_dtype,
        # tensor_parallel/layers.py:241; a loaded checkpoint's own precision cannot be told)
        self.start_dtype = start_dtype(mf, mg)
        self.start_mg = self._init(mg)
        self.files: dict[tuple[str, ...], str] = {}
        self.workers: dict[str, Worker] = {}
        self.sent: dict[str, int] = {}  # runs in the job last sent on each channel
        self.devices: dict[str, str] = {}
        self.timings: list[str] = []
        self.measurements: list[dict[str, Any]] = []

    def _init(self, spec: Spec) -> dict[str, np.ndarray]:
        return {k: round_to(v, self.start_dtype) for k, v in init_weights(spec).items()}

    def _save(self, key: tuple[str, ...], make: Callable[[], dict[str, np.ndarray]]) -> str:
        if key not in self.files:
            name = f"w{len(self.files)}.npz"
            np.savez(os.path.join(self.dir, name), **make())
            self.files[key] = name
        return self.files[key]

    def start(self, spec: Spec) -> dict[str, np.ndarray]:
        """The spec's own parameter set at the start (canonical names): Megatron's start
        wherever the spec has the same weight, unless its init differs; a weight only this
        spec has (a bias, an output layer, an up projection, a q/k norm) from its own
        draw. Each side trains exactly its own parameters."""
        mg = self.pair.megatron
        own_init = spec.random_init and (
            spec.init_std != mg.init_std or spec.output_init_std != mg.output_init_std
        )
        base = self._init(spec) if own_init else self.start_mg
        if canonical_shapes(spec).keys() == base.keys():
            return base
        return conform(base, spec, self._init(spec))

    def weights(self, spec: Spec, layout: str) -> str:
        key = (str(spec.init_std), str(spec.output_init_std), structure_key(spec), layout)
        return self._save(key, lambda: to_layout(self.start(spec), spec, layout))

    def check_start(self, spec: Spec) -> str:
        """The optimizer check's start: Megatron's start for every spec (the same weights
        through both optimizers), conformed to the spec's own parameter set."""
        key = ("check", structure_key(spec))
        return self._save(key, lambda: conform(self.start_mg, spec, self._init(spec)))

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
            canonical_weights=self.check_start(spec) if check else "",
        )

    # -- processes ------------------------------------------------------------------
    def worker(self, channel: str) -> Worker:
        """The process answering on ``channel``: ``torch``, ``mindspore`` and a second
        MindSpore process ``mindspore-2`` that compiles the other spec's graphs beside it."""
        if channel not in self.workers:
            framework = channel.split("-")[0]
            self.workers[channel] = Worker(framework, self.dir, channel)
        return self.workers[channel]

    def spawn(self, framework: str, runs: list[Run]) -> dict[str, RunResult]:
        return self.collect(framework, self.send(framework, runs))

    def send(self, framework: str, runs: list[Run]) -> int:
        self.say(f"{framework}: {', '.join(r.id for r in runs)} ({self.steps} steps each)")
        self.sent[framework] = len(runs)
        return self.worker(framework).send(Job(device=self.device, runs=runs))

    def collect(self, channel: str, n: int) -> dict[str, RunResult]:
        res = self.worker(channel).wait(
            n, timeout=job_timeout(self.steps, self.sent.get(channel, 1))
        )
        framework = res.framework
        if res.error:
            if "was requested but" in res.error:
                raise ProbeUnavailable(res.error.split(": ", 1)[-1])
            raise RuntimeError(f"the {framework} process failed: {res.error}")
        self.devices[framework] = res.device
        self.timings.append(
            f"{channel}: {res.seconds:.1f} s, {res.cpu_seconds:.1f} s CPU in the process ("
            + ", ".join(f"{r.id} {r.seconds:.1f}" for r in res.runs)
            + ")"
        )
        out = {r.id: r for r in res.runs}
        for rid, r in out.items():
            if r.error and not r.error.startswith("MindSpore"):
                raise RuntimeError(f"{framework} run {rid} failed: {r.error}")
        return out

    def upd(self, fw: str, rid: str) -> str:
        return os.path.join(self.dir, f"update-{fw}-{rid}.npz")

    def go(self, findings: list[Any]) -> ProbeResult:
        failed = True
        try:
            result = self._go(findings)
            failed = False
            return result
        finally:
            # after a failure the MindSpore worker may be mid-job (it starts at once)
            for w in self.workers.values():
                w.close(now=failed)

    # -- phases ---------------------------------------------------------------------
    def _go(self, findings: list[Any]) -> ProbeResult:
        t0 = time.perf_counter()
        mg = self.pair.megatron
        self.floor_spec = without_dropout(mg)
        if mg != self.floor_spec:
            self.notes.append(
                "the floor and the residual run with dropout off on both sides: random masks "
                "cannot match across frameworks"
            )
        self.knobs, self.unprobed = plan(self.pair, findings)
        self.named = {f for _c, fields in self.knobs for f in fields}
        self._choose_frameworks()
        ms_jobs = self._start_mindspore()
        t = self.spawn("torch", self._torch_runs())
        m = {rid: r for ch, n in ms_jobs for rid, r in self.collect(ch, n).items()}
        self._floor(t, m)
        confirmations = self._judge(t)
        gap, gap_lr0 = self._gap(t)
        residual = self._residual(m)
        cross32 = self._cross_float32(t, m)
        return self._result(t, gap, gap_lr0, confirmations, residual, cross32, t0)

    def _choose_frameworks(self) -> None:
        """Whether MindSpore runs the pair as configured (``cross``) and, where it cannot
        compute the pair's half precision on the device, the pair in float32 (``cross32``)."""
        mf = self.pair.mindformers
        self.cross = self.cross32 = False
        if not self.fw.get("mindspore", False):
            why = f"mindspore is not installed ({INSTALL_PROBE})"
        else:
            from cfglint.evidence.probe.moe import mindspore_cannot

            ms_dev = "npu" if self.device == "npu" else "cpu"
            why = mindspore_cannot(mf) or mindspore_cannot(self.floor_spec)
            # float16 runs on MindSpore's CPU kernels; bfloat16 does not
            bf16 = any(
                getattr(s, f) == "bfloat16" for s in (mf, self.floor_spec) for f in HALF_FIELDS
            )
            if not why and bf16 and not half_matmul("mindspore", ms_dev):
                why = "MindSpore on CPU has no bfloat16 matmul/softmax"
                self.cross32 = True
            self.cross = not why
        if not self.cross:
            more = (
                "; the cross-framework comparison ran in float32 instead (see cross_float32)"
                if self.cross32
                else ""
            )
            self.notes.append(
                f"cross-framework part skipped: {why}; both specs ran in torch, and the floor "
                f"is torch against itself with the other parameter layout{more}"
            )

    def _start_mindspore(self) -> list[tuple[str, int]]:
        """MindSpore's part needs nothing from torch's: it goes first and runs beside it,
        in two processes (the floor's graphs in one, the MindFormers spec's in the other).
        The residual is guessed as every knob confirmed (the usual case), run where the
        floor's graph can serve it; a wrong guess costs one more run later."""
        mf, mg = self.pair.mindformers, self.pair.megatron
        all3 = ["cfg", "zero", "probe"]
        first: list[Run] = []
        second: list[Run] = []
        self.res_guess: Spec | None = None
        if self.cross:
            first.append(self.run("floor-x", self.floor_spec, self.mf_dialect, all3, True))
            second.append(self.run("mf", mf, self.mf_dialect, all3, True))
            self.res_guess = residual_spec(mf, mg, self.named)
            if self.res_guess not in (self.floor_spec, without_dropout(mf)):
                first.append(self.run("res", self.res_guess, self.mf_dialect, ["probe"], False))
        elif self.cross32:
            f32 = as_float32(self.floor_spec)
            first.append(self.run("floor-x32", f32, self.mf_dialect, all3, True))
            mf32 = without_dropout(as_float32(mf))
            second.append(self.run("mf32", mf32, self.mf_dialect, ["probe"], False))
        jobs = []
        for channel, runs in (("mindspore", first), ("mindspore-2", second)):
            if runs:
                jobs.append((channel, self.send(channel, runs)))
        return jobs

    def _lr_view(self, spec: Spec) -> Spec:
        """A learning-rate knob is judged where it can show: in float32 (a half-precision
        floor hides a small step), both schedules scaled to the probe's learning rate."""
        s = as_float32(spec) if self.lr_f32 else spec
        return s.model_copy(update={"lr": tuple(x * self.lr_factor for x in spec.lr)})

    def _torch_runs(self) -> list[Run]:
        """The Megatron side, the floor partner, the MindFormers spec, one run per knob."""
        mf, mg = self.pair.mindformers, self.pair.megatron
        all3 = ["cfg", "zero", "probe"]
        runs = [self.run("mg", mg, "megatron", all3, True)]
        if self.floor_spec != mg:
            runs.append(self.run("floor-t", self.floor_spec, "megatron", all3, True))
        runs.append(self.run("mf-t", mf, self.mf_dialect, ["probe", "cfg", "zero"], True))
        if not self.cross:
            runs.append(self.run("floor-x", self.floor_spec, "mindformers-legacy", all3, True))
        self.rid: dict[tuple[str, ...], str] = {}
        lr_knobs = any("lr" in fields for _c, fields in self.knobs)
        self.lr_f32 = lr_knobs and has_half(mf, mg)
        self.lr_factor = lr_scale(mf, mg, self.steps) if lr_knobs else 1.0
        if self.lr_f32 or self.cross32:
            f32 = as_float32(self.floor_spec)
            runs.append(self.run("floor32", f32, "megatron", all3, True))
            if not self.cross32:
                runs.append(self.run("floor32-x", f32, "mindformers-legacy", all3, True))
            if self.cross32:
                runs.append(
                    self.run(
                        "mf32-t", without_dropout(as_float32(mf)), self.mf_dialect, ["probe"], False
                    )
                )
        if lr_knobs and (self.lr_f32 or self.lr_factor != 1.0):
            runs.append(self.run("lr-base", self._lr_view(mf), self.mf_dialect, ["cfg"], True))
        for _c, fields in self.knobs:
            if fields in self.rid:
                continue
            rid = self.rid[fields] = f"knob-{len(self.rid)}"
            spec = mf.with_knobs(mg, list(fields))
            if "lr" in fields and "lr-base" in {r.id for r in runs}:
                spec = self._lr_view(spec)
            runs.append(self.run(rid, spec, self.mf_dialect, [knob_mode(fields)], True))
        return runs

    def _ran(self, framework: str, spec: Spec, side: str) -> dict[str, str]:
        dev = self.devices.get(framework, self.device)
        return {"side": side, "framework": framework, "device": dev, "dtype": dtype_of(spec)}

    def _measured(self, what: str, *runs: dict[str, str]) -> list[dict[str, str]]:
        self.measurements.append({"measure": what, "runs": list(runs)})
        return list(runs)

    def _floor_of(self, a: RunResult, fa: str, ida: str, b: RunResult, idb: str) -> dict:
        floor: dict[str, float] = {m_: 0.0 for m_ in METRICS}
        for mode in ("cfg", "zero", "probe"):
            if mode not in a.curves or mode not in b.curves:
                continue
            f = compare(a, b, mode, (self.upd(fa, ida), self.upd("torch", idb)))
            for m_ in METRICS:
                if m_ in f:
                    floor[m_] = max(floor[m_], float(f[m_]))
        return floor

    def _floor(self, t: dict[str, RunResult], m: dict[str, RunResult]) -> None:
        """The floor: the same semantics twice (two frameworks, or torch in two layouts)."""
        self.ref_id = "floor-t" if "floor-t" in t else "mg"
        self.floor_ref = t[self.ref_id]
        if self.cross:
            self.floor_other, self.fw_other, self.mf_run = m["floor-x"], "mindspore", m["mf"]
        else:
            self.floor_other, self.fw_other, self.mf_run = t["floor-x"], "torch", t["mf-t"]
        self.floor = self._floor_of(
            self.floor_other, self.fw_other, "floor-x", self.floor_ref, self.ref_id
        )
        self._measured(
            "floor",
            self._ran(self.fw_other, self.floor_spec, "megatron spec"),
            self._ran("torch", self.floor_spec, "megatron spec"),
        )
        self.ref_loss = t["mf-t"].curves["probe"].loss[0]
        self.eff_floor = effective_floor(self.floor, self.ref_loss)
        self.floor32: dict[str, float] = {}
        if "floor32" in t:
            other, fw, oid = (
                (m["floor-x32"], "mindspore", "floor-x32")
                if self.cross32
                else (
                    t["floor32-x"],
                    "torch",
                    "floor32-x",
                )
            )
            self.floor32 = self._floor_of(other, fw, oid, t["floor32"], "floor32")

    def _judge(self, t: dict[str, RunResult]) -> list[Confirmation]:
        """Each knob's effect alone, in one framework, as a multiple of the floor."""
        mf = self.pair.mindformers
        confirmed: set[str] = set()
        out: list[Confirmation] = []
        for c, fields in self.knobs:
            rid = self.rid[fields]
            mode = knob_mode(fields)
            lr_view = "lr" in fields and "lr-base" in t
            base_id = "lr-base" if lr_view else "mf-t"
            eff = compare(
                t[rid], t[base_id], mode, (self.upd("torch", rid), self.upd("torch", base_id))
            )
            c.effect = {m_: float(eff[m_]) for m_ in METRICS if m_ in eff}
            c.by_weight = eff["local_norms_rel"]
            c.curve = t[rid].curves[mode].loss
            spec = self._lr_view(mf) if lr_view else mf
            c.ran = self._measured(
                f"confirmation {c.rule}",
                self._ran("torch", spec, "mindformers spec, knob aligned"),
                self._ran("torch", spec, "mindformers spec"),
            )
            floor = self.eff_floor
            if "lr" in fields and self.lr_f32 and self.floor32:
                floor = effective_floor(self.floor32, self.ref_loss)
            self._verdict(c, floor, "lr" in fields)
            if c.verdict == "confirmed":
                confirmed.update(c.knobs)
            out.append(c)
        self.confirmed = confirmed
        return out

    def _verdict(self, c: Confirmation, floor: dict[str, float], lr: bool) -> None:
        x, which = multiple(c.effect, floor)
        c.floor_multiple = round(x, 1)
        c.measure = which
        at = ""
        if lr:
            at = " at the configured learning rates"
            why = []
            if self.lr_factor != 1.0:
                at = f" with both schedules scaled by {self.lr_factor:.3g}x"
                why.append(
                    f"at the configured rates a step is too small to show in {self.steps} steps"
                )
            if self.lr_f32:
                at += " in float32"
                why.append("bfloat16 rounding would hide it")
            if why:
                at += f" ({'; '.join(why)})"
        if x >= CONFIRM_MULTIPLE:
            c.verdict = "confirmed"
            c.reason = f"{x:.3g}x the floor on the {which}{at}"
            return
        c.verdict = "below the floor at this lr" if lr else "no measurable effect"
        c.reason = (
            f"at most {x:.3g}x the floor (on the {which}{at}), below the {CONFIRM_MULTIPLE:g}x bar"
        )
        if lr:
            c.reason += (
                "; a learning-rate difference grows with the steps: the real run's curves "
                "(--loss-log) can still show it"
            )

    def _gap(self, t: dict[str, RunResult]) -> tuple[dict, dict]:
        mf, mg = self.pair.mindformers, self.pair.megatron
        fw = self.fw_other if self.cross else "torch"
        gap = compare(
            self.mf_run,
            t["mg"],
            "cfg",
            (self.upd(fw, "mf" if self.cross else "mf-t"), self.upd("torch", "mg")),
        )
        self._measured(
            "gap", self._ran(fw, mf, "mindformers spec"), self._ran("torch", mg, "megatron spec")
        )
        return gap, compare(self.mf_run, t["mg"], "zero")

    def _residual(self, m: dict[str, RunResult]) -> dict[str, Any]:
        """Every confirmed knob aligned, dropout off on both sides: what is left."""
        mf, mg = self.pair.mindformers, self.pair.megatron
        res_spec = residual_spec(mf, mg, self.confirmed)
        res_fw = "mindspore" if self.cross else "torch"
        # a spec already run on that side needs no second compile
        done = {self.floor_spec: self.floor_other}
        if mf == without_dropout(mf):
            done[mf] = self.mf_run
        if self.cross and self.res_guess is not None and "res" in m:
            done[self.res_guess] = m["res"]
        if res_spec in done:
            res_run = done[res_spec]
        else:
            run = self.run("res", res_spec, self.mf_dialect, ["probe"], False)
            res_run = self.spawn(res_fw, [run])["res"]
        self._measured(
            "residual",
            self._ran(res_fw, res_spec, "mindformers spec, confirmed knobs aligned"),
            self._ran("torch", self.floor_spec, "megatron spec"),
        )
        resid = compare(res_run, self.floor_ref, "probe")
        rx, rwhich = multiple(resid, self.eff_floor)
        out: dict[str, Any] = {
            "mean_loss_abs": resid["mean_loss_abs"],
            "floor_multiple": round(resid["mean_loss_abs"] / self.eff_floor["mean_loss_abs"], 1),
            "local_norm_rel": resid["local_norm_rel"],
            "worst_weight": resid["worst_weight"],
            "aligned": sorted(self.confirmed),
        }
        left = unnamed(res_spec, self.floor_spec, self.named)
        named_left = [f for f in unnamed(res_spec, self.floor_spec) if f not in left]
        out["unnamed"] = {f: [plain(getattr(res_spec, f)), plain(getattr(mg, f))] for f in left}
        out["named_unconfirmed"] = sorted(named_left)
        out["verdict"] = self._residual_verdict(rx, rwhich, resid, out, named_left)
        return _g3(out)

    @staticmethod
    def _residual_verdict(
        rx: float, rwhich: str, resid: dict, out: dict, named_left: list[str]
    ) -> str:
        if rx < CONFIRM_MULTIPLE:
            return "near the floor: the confirmed findings explain the gap"
        head = f"{rx:.0f}x the floor on the {rwhich} after aligning every confirmed knob"
        if out["unnamed"]:
            still = ", ".join(f"{f} {a}->{b}" for f, (a, b) in out["unnamed"].items())
            return (
                f"{head}: a cause the lint did not name (worst weight "
                f"{resid['worst_weight']}; the two specs still differ in {still})"
            )
        if named_left:
            return (
                f"{head}: the knobs findings named but the probe did not confirm one by one "
                f"are still different ({', '.join(named_left)}); together they can show"
            )
        return f"{head}: a cause the lint did not name (worst weight {resid['worst_weight']})"

    def _cross_float32(self, t: dict[str, RunResult], m: dict[str, RunResult]) -> dict[str, Any]:
        """A half-precision pair where MindSpore has no half-precision kernels: MindSpore
        and torch on the same float32 specs (the Megatron spec: the floor; the MindFormers
        spec: whether the two implementations agree on it)."""
        if not self.cross32:
            return {}
        mf = without_dropout(as_float32(self.pair.mindformers))
        f32 = as_float32(self.floor_spec)
        impl = compare(m["mf32"], t["mf32-t"], "probe")
        floor = effective_floor(self.floor32, t["mf32-t"].curves["probe"].loss[0])
        x, which = multiple(impl, floor)
        self._measured(
            "cross_float32 floor",
            self._ran("mindspore", f32, "megatron spec"),
            self._ran("torch", f32, "megatron spec"),
        )
        self._measured(
            "cross_float32 mindformers spec",
            self._ran("mindspore", mf, "mindformers spec"),
            self._ran("torch", mf, "mindformers spec"),
        )
        verdict = (
            f"MindSpore and torch agree on the MindFormers spec in float32 ({x:.3g}x the "
            "float32 floor)"
            if x < CONFIRM_MULTIPLE
            else f"MindSpore and torch differ on the MindFormers spec in float32: {x:.3g}x the "
            f"float32 floor on the {which}, a framework difference no knob names"
        )
        return {
            "floor": _g3(self.floor32),
            "mindformers_spec": _g3({k: v for k, v in impl.items() if k in METRICS}),
            "floor_multiple": round(x, 1),
            "verdict": verdict,
            "why": "MindSpore has no bfloat16 matmul/softmax on CPU: the half-precision pair "
            "ran torch against torch, and the cross-framework part in float32 (every knob but "
            "the dtypes)",
        }

    def _result(
        self,
        t: dict[str, RunResult],
        gap: dict,
        gap_lr0: dict,
        confirmations: list[Confirmation],
        residual: dict,
        cross32: dict,
        t0: float,
    ) -> ProbeResult:
        mf, mg = self.pair.mindformers, self.pair.megatron
        curves = {
            "megatron": t["mg"].curves["cfg"].loss,
            "mindformers": self.mf_run.curves["cfg"].loss,
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
            floor={k: float(f"{v:.3g}") for k, v in self.floor.items()},
            gap=_g3(gap),
            gap_lr0=_g3(gap_lr0),
            standard=standard(gap),
            confirmations=confirmations + self.unprobed,
            residual=residual,
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
            cross_framework=self.cross,
            cross_float32=cross32,
            measurements=self.measurements,
            curves=curves,
            local_norms={"megatron": t["mg"].local_norms, "mindformers": self.mf_run.local_norms},
            side_runs={
                "megatron": (t["mg"], mg),
                "mindformers": (self.mf_run, mf, self.fw_other),
            },
            seconds=round(time.perf_counter() - t0, 1),
            timings=self.timings,
        )


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


MODEL_KNOBS = ("structure.hidden_size", "structure.num_layers", "structure.num_heads")


# A dense transformer holds about 12 * layers * hidden**2 parameters. Beyond 1e13 (five
# times the largest models trained, counting every expert) no job starts: the weights
# alone would be 20 TB in bf16.
MAX_PARAMS = 1e13


def _set_int(cfg: Config, dotted: str) -> int | None:
    v = cfg.get(dotted)
    if v is None or not v.known or isinstance(v.value, bool) or not isinstance(v.value, int):
        return None
    return int(v.value)


def check_startable(cfg: Config) -> None:
    """A config its framework refuses, or that no machine could hold, is said to be such
    (one line) instead of being probed at the probe's own shapes as if it ran (issue 32:
    hidden 1e6, heads 0 and seq_length 0 all ran)."""
    why = _not_positive(cfg) or _heads_refused(cfg) or _too_large(cfg)
    if why is not None:
        raise InputError(cfg.path, f"the probe does not run this {cfg.side} config: {why}")


def _not_positive(cfg: Config) -> str | None:
    for dotted in (
        "structure.hidden_size",
        "structure.num_heads",
        "structure.num_layers",
        "structure.seq_length",
    ):
        value = _set_int(cfg, dotted)
        if value is not None and value <= 0:
            return f"{dotted.split('.')[-1]} is {value}: the job cannot build a model or a batch"
    return None


def _heads_refused(cfg: Config) -> str | None:
    """Megatron's validate_args (megatron/training/arguments.py): with --kv-channels unset,
    ``assert args.hidden_size % args.num_attention_heads == 0``."""
    hidden = _set_int(cfg, "structure.hidden_size")
    heads = _set_int(cfg, "structure.num_heads")
    kv = cfg.get("structure.head_dim")
    kv_given = kv is not None and kv.known and kv.origin.value == "file"
    if cfg.side != "megatron" or kv_given or not (hidden and heads and hidden > 0 and heads > 0):
        return None
    if hidden % heads == 0:
        return None
    return (
        f"hidden_size {hidden} is not a multiple of num_attention_heads {heads} (and "
        "--kv-channels is not given): Megatron's argument check refuses it"
    )


def _too_large(cfg: Config) -> str | None:
    hidden = _set_int(cfg, "structure.hidden_size") or 0
    layers = _set_int(cfg, "structure.num_layers") or 0
    params = 12 * min(layers, 10**6) * float(min(hidden, 10**100)) ** 2
    if params <= MAX_PARAMS:
        return None
    return (
        f"hidden_size {hidden} with {layers} layers is about {params:.1e} parameters "
        f"(over {MAX_PARAMS:.0e}): no job can start with it"
    )


def check_has_model(cfg: Config) -> None:
    """A side with no model settings at all (a MindFormers YAML without ``model:``) would
    be compared as the other side's model: an input error, not a pass."""
    known = [k for k in MODEL_KNOBS if (v := cfg.get(k)) is not None and v.known]
    if not known:
        v = cfg.get(MODEL_KNOBS[0])
        why = f": {v.detail}" if v is not None and v.detail else ""
        raise InputError(
            cfg.path,
            f"the probe needs the {cfg.side} side's model (hidden size, layers, heads are "
            f"all unknown{why})",
        )


def check_request(steps: int, device: str, fw: dict[str, bool], log_run: bool = False) -> None:
    """What can be refused before any process starts (one line each). ``log_run``: the
    curves become training logs (``--log-dir``), which allows longer runs."""
    if not fw.get("torch"):
        raise ProbeUnavailable(f"the runtime probe needs torch and mindspore: {INSTALL_PROBE}")
    if device == "npu" and not fw.get("mindspore"):
        raise ProbeUnavailable(f"--device npu needs mindspore: {INSTALL_PROBE}")
    top = MAX_LOG_STEPS if log_run else MAX_STEPS
    if not 3 <= steps <= top:
        longer = "" if log_run else f", up to {MAX_LOG_STEPS} with --log-dir"
        raise ValueError(
            f"--steps must be between 3 and {top} (a beta2 mismatch shows from step 3; "
            f"the probe's size is for short runs{longer})"
        )
    try:
        preflight(device)
    except DeviceMissing as exc:
        raise ProbeUnavailable(str(exc)) from None


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
    log_run: bool = False,
) -> ProbeResult:
    """Run the probe. Raises :class:`ProbeUnavailable` (one line) when torch is missing or
    a requested device is absent, :class:`InputError` when a side has no model."""
    fw = frameworks if frameworks is not None else available()
    check_request(steps, device, fw, log_run)
    check_has_model(mf)
    check_has_model(mg)
    check_startable(mf)
    check_startable(mg)
    pair = pair_specs(mf, mg, steps, wd_scope_from(findings))
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
