"""The MindSpore process: a spec's training step with MindFormers' semantics.

Run as ``python -m cfglint.evidence.probe.ms_side JOBDIR``. MindFormers' legacy Llama
(mindformers/models/llama/llama_transformer.py, llama_layer.py): ``wq/wk/wv`` projections,
rotate-half rope on the query and key heads, key/value heads repeated per group, scores
scaled by 1/sqrt(head_dim), softmax in ``softmax_compute_type``, ``wo``; the FFN is
``w2(silu(w1 x) * w3 x)``; RMSNorm computed in ``layernorm_compute_type``. The optimizer is
MindFormers' AdamW family written out by hand: with bias correction (mindformers/core/optim/
adamw.py) or without it (mindspore/nn/optim/adam.py, AdamWeightDecay: next_m / (sqrt(next_v)
+ eps) + weight_decay * param, no 1 - beta^t terms); clipping is ``ops.clip_by_global_norm``'s
formula.

MindSpore 2.10 on CPU (measured, see issue 8): the fused ``ops.rms_norm``/``layer_norm``/
``rotary_position_embedding``/``flash_attention_score`` fail and bf16 matmul/softmax fail, so
norms, rope and attention are written from plain ops and a bf16 spec is refused (the runner
then says so); in-place ``add_/mul_`` do not mutate there, so updates go through
``ops.assign``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time

import mindspore as ms
import numpy as np
from mindspore import nn, ops

from cfglint.evidence.probe.devices import DeviceMissing, half_matmul, mindspore_device
from cfglint.evidence.probe.moe_ms import moe_layer
from cfglint.evidence.probe.protocol import (
    CHECK_LR,
    Curve,
    Job,
    Run,
    RunResult,
    SideResult,
    job_timeout,
    load_npz,
    lr_for,
    main_guard,
    save_npz,
    wait_for,
)
from cfglint.evidence.probe.spec import Spec
from cfglint.evidence.probe.weights import (
    conform,
    expert_weights,
    from_layout,
    gated,
    head_dim,
    is_moe_layer,
    is_norm_param,
    layer_names,
    shared_expert_weights,
    to_layout,
)

DT = {"float32": ms.float32, "float16": ms.float16, "bfloat16": ms.bfloat16}


def unsupported(spec: Spec, device: str) -> str:
    """Why this spec cannot run in MindSpore on ``device`` ("" when it can)."""
    from cfglint.evidence.probe.moe import mindspore_cannot

    why = mindspore_cannot(spec)
    if why:
        return f"MindSpore: {why}"
    if not half_matmul("mindspore", device):
        for f in (
            "compute_dtype",
            "softmax_dtype",
            "norm_dtype",
            "rotary_dtype",
            "embedding_dtype",
            "embedding_output_dtype",
            "residual_dtype",
            "loss_dtype",
            "param_dtype",
            "norm_param_dtype",
        ):
            if getattr(spec, f) == "bfloat16":
                return f"MindSpore {ms.__version__} on CPU has no bfloat16 matmul/softmax ({f})"
    return ""


def _ascend() -> bool:
    try:
        ms.set_device("Ascend")
        ms.Tensor(np.ones(1, np.float32)) + 1
    except Exception:
        return False
    return True


def pick_device(want: str) -> str:
    """MindSpore's device_target (evidence/probe/devices.py): Ascend for an NPU, and for
    ``auto`` where one answers; else the CPU."""
    ascend = want in ("auto", "npu") and _ascend()
    try:
        return mindspore_device(want, ascend)
    except DeviceMissing as exc:
        raise RuntimeError(str(exc)) from None


def emb_name_of(layout: str) -> str:
    if layout == "mindformers-legacy":
        return "model.tok_embeddings.embedding_weight"
    return "embedding.word_embeddings.weight"


def storage_dtype(spec: Spec, layout: str, name: str) -> str:
    if name == emb_name_of(layout):
        return spec.embedding_dtype
    return spec.norm_param_dtype if is_norm_param(name) else spec.param_dtype


def weights_key(spec: Spec, arrays: dict[str, np.ndarray], layout: str) -> tuple:
    """What the weights are: names, shapes and storage dtypes (not their values)."""
    return (
        layout,
        tuple((k, arrays[k].shape, storage_dtype(spec, layout, k)) for k in sorted(arrays)),
    )


class Model:
    def __init__(
        self,
        spec: Spec,
        arrays: dict[str, np.ndarray],
        layout: str,
        params: ms.ParameterTuple | None = None,
    ):
        self.spec, self.layout = spec, layout
        self.names = sorted(arrays)
        self.emb_name = emb_name_of(layout)
        # each weight in its storage dtype (MindFormers: param_init_type, the embedding in
        # embedding_init_type); the forward casts it to the compute dtype where it is used.
        # ``params``: the same weights already held by an earlier model (see compiled())
        self.params = params or ms.ParameterTuple(
            ms.Parameter(self.stored(k, arrays[k]), name=k.replace(".", "_")) for k in self.names
        )
        self.idx = {k: i for i, k in enumerate(self.names)}
        hd = head_dim(spec)
        rot = int(hd * spec.rotary_percent)
        rot -= rot % 2
        self.rot = rot
        inv = 1.0 / (spec.rope_theta ** (np.arange(0, rot, 2, dtype=np.float64) / rot))
        freqs = np.outer(np.arange(spec.seq, dtype=np.float64), inv)
        emb = np.concatenate([freqs, freqs], axis=-1)
        self.cos = ms.Tensor(np.cos(emb).astype(np.float32))
        self.sin = ms.Tensor(np.sin(emb).astype(np.float32))
        mask = np.triu(np.ones((spec.seq, spec.seq), np.float32), 1) * -1e9
        self.mask = ms.Tensor(mask)

    def stored(self, name: str, value: np.ndarray) -> ms.Tensor:
        dt = storage_dtype(self.spec, self.layout, name)
        return ms.Tensor(value.astype(np.float32)).astype(DT[dt])

    def p(self, name: str) -> ms.Parameter | None:
        i = self.idx.get(name)
        return None if i is None else self.params[i]

    def w(self, name: str):
        return self.p(name).astype(DT[self.spec.compute_dtype])

    def dtype(self, name: str):
        return DT[name]

    def expert(self, n: dict[str, str], e: int):
        return expert_weights(self.w, self.layout, self.spec, n, e)

    def shared(self, n: dict[str, str]):
        return shared_expert_weights(self.w, self.layout, self.spec, n)

    def norm(self, x, weight: str, bias: str):
        s = self.spec
        dt = DT[s.norm_dtype]
        xf = x.astype(dt)
        wt = self.p(weight).astype(dt)
        if s.norm == "RMSNorm":
            y = xf * ops.rsqrt(ops.mean(xf * xf, -1, keep_dims=True) + s.norm_eps) * wt
        else:
            mu = ops.mean(xf, -1, keep_dims=True)
            var = ops.mean((xf - mu) * (xf - mu), -1, keep_dims=True)
            y = (xf - mu) * ops.rsqrt(var + s.norm_eps) * wt
            b = self.p(bias)
            if b is not None:
                y = y + b.astype(dt)
        return y.astype(DT[s.compute_dtype])

    def linear(self, x, weight: str, bias: str | None = None):
        y = ops.matmul(x, self.w(weight).T)
        if bias is not None and self.p(bias) is not None:
            y = y + self.w(bias)
        return y

    def rope(self, x):
        if self.rot == 0:
            return x
        dt = DT[self.spec.rotary_dtype]
        hd = x.shape[-1]
        xr = x[..., : self.rot].astype(dt)
        cos = self.cos.astype(dt).reshape(1, self.spec.seq, 1, self.rot)
        sin = self.sin.astype(dt).reshape(1, self.spec.seq, 1, self.rot)
        half = self.rot // 2
        rotated = ops.cat([-xr[..., half:], xr[..., :half]], axis=-1)
        out = (xr * cos + rotated * sin).astype(x.dtype)
        if self.rot < hd:
            out = ops.cat([out, x[..., self.rot :]], axis=-1)
        return out

    @staticmethod
    def dropout(x, p: float):
        return x if p <= 0 else ops.dropout(x, p=p, training=True)

    def act(self, x):
        a = self.spec.activation
        if a in ("swiglu", "silu"):
            return ops.silu(x)
        if a in ("gelu", "geglu"):
            return ops.gelu(x, approximate="none")
        if a == "quick-geglu":
            return x * ops.sigmoid(1.702 * x)
        if a == "relu":
            return ops.relu(x)
        return ops.relu(x) ** 2

    def attention(self, x, n: dict[str, str]):
        s = self.spec
        b, sq, _ = x.shape
        hd, g = head_dim(s), s.groups
        r = s.heads // g
        if "qkv" in n:
            mixed = self.linear(x, n["qkv"], n["qkvb"]).reshape(b, sq, g, (r + 2) * hd)
            q = mixed[..., : r * hd].reshape(b, sq, s.heads, hd)
            k = mixed[..., r * hd : (r + 1) * hd]
            v = mixed[..., (r + 1) * hd :]
        else:
            q = self.linear(x, n["wq"], n["bq"]).reshape(b, sq, s.heads, hd)
            k = self.linear(x, n["wk"], n["bk"]).reshape(b, sq, g, hd)
            v = self.linear(x, n["wv"], n["bv"]).reshape(b, sq, g, hd)
        if s.qk_norm:
            q, k = self.norm(q, n["qn"], n["qnb"]), self.norm(k, n["kn"], n["knb"])
        q, k = self.rope(q), self.rope(k)
        if r > 1:
            k = ops.repeat_interleave(k, r, axis=2)
            v = ops.repeat_interleave(v, r, axis=2)
        q, k, v = (ops.transpose(t, (0, 2, 1, 3)) for t in (q, k, v))
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) / math.sqrt(hd)
        sd = DT[s.softmax_dtype]
        scores = scores.astype(ms.float32) + self.mask
        probs = ops.softmax(scores.astype(sd), axis=-1).astype(DT[s.compute_dtype])
        probs = self.dropout(probs, s.attention_dropout)
        ctx = ops.transpose(ops.matmul(probs, v), (0, 2, 1, 3)).reshape(b, sq, s.heads * hd)
        return self.linear(ctx, n["o"], n["ob"])

    def mlp(self, x, n: dict[str, str]):
        if "fc1" in n:
            h = self.linear(x, n["fc1"], n["fc1b"])
            if gated(self.spec):
                f = self.spec.ffn
                h = self.act(h[..., :f]) * h[..., f:]
            else:
                h = self.act(h)
        else:
            h = self.act(self.linear(x, n["w1"], n["w1b"]))
            if gated(self.spec):
                h = h * self.linear(x, n["w3"], n["w3b"])
        return self.linear(h, n["w2"], n["w2b"])

    def loss(self, inp, labels):
        s = self.spec
        legacy = self.layout == "mindformers-legacy"
        table = self.p(self.emb_name)
        rd = DT[s.residual_dtype]
        # the lookup reads the table in its storage dtype; the rows are then cast
        # (legacy: llama.py:392, mcore: language_model_embedding.py:158 @ f52743c)
        h = ops.gather(table, inp, 0)
        first = None  # what layer 0's norm reads when the rows are not cast (see Spec)
        if s.embedding_output_dtype is not None:
            first = self.dropout(h.astype(DT[s.embedding_output_dtype]), s.hidden_dropout)
            h = first.astype(rd)
        else:
            h = self.dropout(h.astype(rd), s.hidden_dropout)
        extra = ops.zeros((), ms.float32)
        for i in range(s.layers):
            n = layer_names(self.layout, i)
            x = first if i == 0 and first is not None else h
            a = self.attention(self.norm(x, n["n1"], n["n1b"]), n)
            h = h + self.dropout(a, s.hidden_dropout).astype(rd)
            if is_moe_layer(s, i):
                m, x = moe_layer(self, self.norm(h, n["n2"], n["n2b"]), i)
                extra = extra + x
            else:
                m = self.mlp(self.norm(h, n["n2"], n["n2b"]), n)
            h = h + self.dropout(m, s.hidden_dropout).astype(rd)
        fn = "model.norm_out." if legacy else "decoder.final_layernorm."
        h = self.norm(h, fn + "weight", fn + "bias")
        out_w = table if s.tied else self.p("lm_head.weight" if legacy else "output_layer.weight")
        logits = ops.matmul(h, out_w.astype(DT[s.compute_dtype]).T)
        logits = logits.astype(DT[s.loss_dtype]).reshape(-1, s.vocab)
        lm = ops.cross_entropy(logits.astype(ms.float32), labels.reshape(-1))
        if s.moe_experts:
            # MoE: the gradient flows from LM + aux/z losses; the printed loss is the spec's
            return lm + extra, (lm + extra if s.moe_logged_aux else lm)
        return lm


def decays(name: str, shape: tuple[int, ...], spec: Spec) -> bool:
    # MindFormers' default decay filter: no decay for norm weights and biases (the 1-D
    # parameters here); "all" is the AdamWeightDecay behaviour of decaying everything
    # whose name lacks 'beta'/'gamma'
    return spec.wd_scope == "all" or not (name.endswith(".bias") or len(shape) == 1)


class Adam(nn.Cell):
    """The optimizer as one compiled cell: moments are Parameters, updates go through
    ``ops.assign`` (in-place tensor methods do not mutate on MindSpore CPU), gradients come
    in as a mutable tuple, and the spec's numbers (lr, bias-correction terms, betas, eps,
    each weight's decay, the clip value and formula) as a mutable tuple of scalars: one
    compile serves every spec over the same weights. Which weights have a float32 master
    is structural (a cell per pattern; all-float32 weights have none)."""

    def __init__(self, params, has_master: tuple[bool, ...]) -> None:
        super().__init__()
        self.params = params
        f32 = ms.float32

        def state(prefix: str) -> ms.ParameterTuple:
            # float32 moments whatever the weight dtype (mindformers/core/optim/adamw.py:180)
            return ms.ParameterTuple(
                ms.Parameter(ops.zeros(p.shape, f32), name=f"{prefix}_{p.name}") for p in params
            )

        self.m = state("m")
        self.v = state("v")
        # float32 masters of half-precision weights, for a spec that has them (Megatron's
        # run as the floor): MindFormers keeps none
        self.has_master = has_master
        self.master = state("master")
        self.n = len(params)
        self.t = 0

    def configure(self, spec: Spec, names: list[str]) -> None:
        """This spec's numbers, as the compiled graph's inputs."""
        self.spec = spec
        self.wd = tuple(
            spec.weight_decay if decays(n, tuple(p.shape), spec) else 0.0
            for n, p in zip(names, self.params, strict=True)
        )
        # 1 - beta computed in double, as torch's ``alpha=1 - beta`` is
        self.hyper = (
            spec.beta1,
            1 - spec.beta1,
            spec.beta2,
            1 - spec.beta2,
            spec.eps,
            spec.clip_grad,
            1.0 if spec.clip_formula == "mindspore" else 0.0,
        )

    def reset(self) -> None:
        for m, v, w, p in zip(self.m, self.v, self.master, self.params, strict=True):
            ops.assign(m, ops.zeros_like(m))
            ops.assign(v, ops.zeros_like(v))
            ops.assign(w, p.astype(ms.float32))
        self.t = 0

    def weight(self, i: int) -> np.ndarray:
        """The float32 weight the optimizer keeps (the master copy when there is one)."""
        w = self.master[i] if self.has_master[i] else self.params[i]
        if w.dtype == ms.bfloat16:  # numpy has no bfloat16
            w = w.astype(ms.float32)
        return w.asnumpy().astype(np.float32)  # a copy: asnumpy may share the buffer

    @ms.jit
    def construct(self, grads, hyper, wds):
        lr, bc1, bc2, b1, c1, b2, c2 = (
            hyper[0],
            hyper[1],
            hyper[2],
            hyper[3],
            hyper[4],
            hyper[5],
            hyper[6],
        )
        eps, clip, ms_clip = hyper[7], hyper[8], hyper[9]
        sq = ()
        for g in grads:
            sq = (*sq, ops.norm(g.astype(ms.float32)))
        gnorm = ops.norm(ops.stack(sq))
        one = ops.ones((), ms.float32)
        # ops.clip_by_global_norm: clip / max(norm, clip); Megatron: clip / (norm + 1e-6)
        # when that is below 1; no clipping at clip 0
        coeff = ops.where(
            ms_clip > 0,
            clip / ops.maximum(gnorm, clip),
            ops.minimum(clip / (gnorm + 1e-6), one),
        )
        coeff = ops.where(clip > 0, coeff, one)
        for i in range(self.n):
            g = grads[i].astype(ms.float32) * coeff
            m = self.m[i] * b1 + g * c1
            v = self.v[i] * b2 + g * g * c2
            ops.assign(self.m[i], m)
            ops.assign(self.v[i], v)
            upd = (m / bc1) / (ops.sqrt(v / bc2) + eps)
            p = self.params[i]
            # MindFormers' AdamW: the weight in float32, updated, assigned back in its own
            # dtype (adamw.py:44,64); with a master copy the master is updated instead
            w = self.master[i] if self.has_master[i] else p.astype(ms.float32)
            new = w - lr * (upd + wds[i] * w)
            if self.has_master[i]:
                ops.assign(self.master[i], new)
            ops.assign(p, new.astype(p.dtype))
        return gnorm

    def step(self, grads, lr: float) -> float:
        s = self.spec
        self.t += 1
        bc1 = 1 - s.beta1**self.t if s.bias_correction else 1.0
        bc2 = 1 - s.beta2**self.t if s.bias_correction else 1.0
        f32 = ms.float32
        hyper = ms.mutable(tuple(ms.Tensor(x, f32) for x in (lr, bc1, bc2, *self.hyper)))
        wds = ms.mutable(tuple(ms.Tensor(x, f32) for x in self.wd))
        return float(self(ms.mutable(tuple(grads)), hyper, wds).asnumpy())


class Net(nn.Cell):
    def __init__(self, model: Model) -> None:
        super().__init__()
        self.model = model
        self.params = model.params

    def construct(self, inp, labels):
        return self.model.loss(inp, labels)


# spec fields the forward and backward graph does not read (the optimizer cell takes them
# as inputs, the weights arrive by assignment)
NOT_IN_FORWARD = frozenset(
    {
        "bias_correction",
        "beta1",
        "beta2",
        "eps",
        "weight_decay",
        "wd_scope",
        "clip_grad",
        "clip_formula",
        "lr",
        "seed",
        "random_init",
        "init_std",
        "output_init_std",
        "fp32_master",
    }
)
# compiled graphs kept for the worker's life: one weight set and optimizer cell per
# (layout, names, shapes, dtypes); one forward/backward graph per forward-relevant spec
_WEIGHTS: dict[tuple, tuple[ms.ParameterTuple, dict[tuple[bool, ...], Adam]]] = {}
_GRAD_FNS: dict[tuple, tuple[Model, object]] = {}


def compiled(spec: Spec, arrays: dict[str, np.ndarray], layout: str) -> tuple[Model, Adam, object]:
    """The model, optimizer cell and jitted forward/backward for this spec, reusing graphs
    an earlier run compiled: the floor, the gap and the residual often differ only in
    optimizer numbers or initial weights, and a compile costs seconds, a step milliseconds.
    A spec with dropout gets its own graph (its masks must start from the seed)."""
    wkey = weights_key(spec, arrays, layout)
    if wkey not in _WEIGHTS:
        _WEIGHTS[wkey] = (Model(spec, arrays, layout).params, {})
    params, opts = _WEIGHTS[wkey]
    has_master = tuple(spec.fp32_master and p.dtype != ms.float32 for p in params)
    if has_master not in opts:
        opts[has_master] = Adam(params, has_master)
    opt = opts[has_master]
    opt.configure(spec, sorted(arrays))
    fkey = (wkey, json.dumps(spec.model_dump(exclude=set(NOT_IN_FORWARD)), sort_keys=True))
    dropout = spec.hidden_dropout > 0 or spec.attention_dropout > 0
    if fkey in _GRAD_FNS and not dropout:
        # the forward fields are equal; nothing in the graph reads the others
        model, grad_fn = _GRAD_FNS[fkey]
        return model, opt, grad_fn
    model = Model(spec, arrays, layout, params)
    moe = spec.moe_experts > 0  # the net returns (loss to differentiate, printed loss)
    grad_fn = ms.jit(ms.value_and_grad(Net(model), grad_position=None, weights=params, has_aux=moe))
    if not dropout:
        _GRAD_FNS[fkey] = (model, grad_fn)
    return model, opt, grad_fn


def run_one(run: Run, job_dir: str, tokens: np.ndarray) -> RunResult:
    t0 = time.perf_counter()
    spec = run.spec
    arrays = load_npz(os.path.join(job_dir, run.weights))
    res = RunResult(id=run.id)
    # every mode restarts from the same weights and zero moments
    model, opt, grad_fn = compiled(spec, arrays, run.layout)
    moe = spec.moe_experts > 0  # the net returns (loss to differentiate, printed loss)
    for mode in run.modes:
        ms.set_seed(spec.seed)
        for k, p in zip(model.names, model.params, strict=True):
            ops.assign(p, model.stored(k, arrays[k]))
        opt.reset()
        losses, norms = [], []
        for step in range(1, run.steps + 1):
            tok = tokens[step - 1]
            inp = ms.Tensor(tok[:, :-1].astype(np.int32))
            lab = ms.Tensor(tok[:, 1:].astype(np.int32))
            loss, grads = grad_fn(inp, lab)
            if moe:
                loss = loss[1][0] if isinstance(loss[1], tuple) else loss[1]
            if step == 1 and mode == run.modes[0]:
                g_np = {
                    k: (g.astype(ms.float32) if g.dtype == ms.bfloat16 else g)
                    .asnumpy()
                    .astype(np.float32)
                    for k, g in zip(model.names, grads, strict=True)
                }
                canon = from_layout(g_np, spec, run.layout)
                res.local_norms = {k: float(np.linalg.norm(v)) for k, v in canon.items()}
                if run.save_grads:
                    save_npz(os.path.join(job_dir, f"grads-ms-{run.id}.npz"), canon)
            gnorm = opt.step(grads, lr_for(run, mode, step))
            if os.environ.get("CFGLINT_PROBE_DEBUG"):
                print(run.id, mode, step, f"{time.perf_counter() - t0:.2f}", file=sys.stderr)
            losses.append(float(loss.asnumpy()))
            norms.append(gnorm)
        res.curves[mode] = Curve(loss=losses, grad_norm=norms)
    if run.check_grads:
        res.update = optimizer_check(run, job_dir, model, opt)
    res.seconds = time.perf_counter() - t0
    return res


def optimizer_check(run: Run, job_dir: str, model: Model, opt: Adam) -> dict[str, float]:
    """The shared step-1 gradients through this spec's optimizer once, from the shared
    start (the compiled cells of the run are reused: no second compile)."""
    spec = run.spec
    # torch's, written beside us once its runs have trained
    wait_for(os.path.join(job_dir, run.check_grads), job_dir, job_timeout(run.steps))
    # the shared gradients where this spec has the weight, zero where only it has one
    grads_c = conform(load_npz(os.path.join(job_dir, run.check_grads)), spec)
    start_c = load_npz(os.path.join(job_dir, run.canonical_weights))
    start = to_layout(start_c, spec, run.layout)
    grads = to_layout(grads_c, spec, run.layout)
    for k, p in zip(model.names, model.params, strict=True):
        ops.assign(p, model.stored(k, start[k]))
    opt.reset()
    before = [opt.weight(i) for i in range(len(model.names))]
    opt.step(
        tuple(
            model.stored(k, grads[k]).astype(p.dtype)
            for k, p in zip(model.names, model.params, strict=True)
        ),
        CHECK_LR,
    )
    upd = {k: opt.weight(i) - before[i] for i, k in enumerate(model.names)}
    canon = from_layout(upd, spec, run.layout)
    save_npz(os.path.join(job_dir, f"update-mindspore-{run.id}.npz"), canon)
    return {k: float(np.linalg.norm(v)) for k, v in canon.items()}


_STARTED: list[str] = []


def main(job_dir: str, job: Job) -> SideResult:
    if not _STARTED:  # MindSpore's device and context are set once per process
        _STARTED.append(pick_device(job.device))
        if _STARTED[0] == "CPU":  # pick_device has already set up an Ascend device
            ms.set_device("CPU")
            # MindSpore's CPU kernels use 25 threads by default: on a small, shared machine
            # they contend with each other and with torch (measured: half the CPU time and
            # a tenth of the optimizer step with one thread, load 4-6 on 2 cores)
            threads = int(os.environ.get("CFGLINT_PROBE_THREADS", "1"))
            ms.device_context.cpu.op_tuning.threads_num(threads)
        ms.set_context(mode=ms.PYNATIVE_MODE)
        ms.set_deterministic(True)
    device = _STARTED[0]
    tokens = np.load(os.path.join(job_dir, job.tokens))
    out = SideResult(framework="mindspore", device=device.lower())
    for run in job.runs:
        why = unsupported(run.spec, device)
        if why:
            out.runs.append(RunResult(id=run.id, error=why))
            continue
        try:
            out.runs.append(run_one(run, job_dir, tokens))
        except Exception as exc:  # one run failing must not hide the others
            out.runs.append(RunResult(id=run.id, error=f"{type(exc).__name__}: {exc}"))
    return out


if __name__ == "__main__":
    main_guard("mindspore", main)
