"""The torch process: a spec's training step with Megatron-LM's semantics.

Run as ``python -m cfglint.evidence.probe.torch_side JOBDIR``. Any spec runs here (the
Megatron side, and the MindFormers side when a knob's effect is isolated in one framework).
Where the math follows Megatron (megatron/core, release 0.16):

* attention: fused ``linear_qkv`` split per query group (transformer/attention.py),
  scores scaled by 1/sqrt(head_dim), causal mask, softmax, attention dropout, then
  ``linear_proj`` (transformer/dot_product_attention.py);
* rope: rotate-half form on the first ``rotary_percent`` of each head
  (models/common/embeddings/rope_utils.py, _apply_rotary_pos_emb_bshd);
* MLP: ``linear_fc1`` -> glu(chunk 2: act(gate) * up) -> ``linear_fc2`` (transformer/mlp.py);
* hidden dropout before each residual add (transformer/transformer_layer.py);
* loss: cross entropy averaged over tokens; gradient clipping by global norm
  (optimizer/clip_grads.py); AdamW with bias correction (torch.optim.AdamW / apex FusedAdam),
  no weight decay on biases and 1-D parameters (optimizer/__init__.py, _get_param_groups).
"""

from __future__ import annotations

import importlib.util
import math
import os
import time

import numpy as np

from cfglint.evidence.probe.devices import DeviceMissing, torch_device
from cfglint.evidence.probe.protocol import (
    CHECK_LR,
    Curve,
    Job,
    Run,
    RunResult,
    SideResult,
    load_npz,
    lr_for,
    main_guard,
    save_npz,
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

os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
import torch
import torch.nn.functional as F

DT = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def pick_device(want: str) -> str:
    """The device for ``want`` (evidence/probe/devices.py): CUDA, Ascend through torch_npu
    (importing it registers ``torch.npu``), or the CPU."""
    npu = False
    if want in ("auto", "npu") and importlib.util.find_spec("torch_npu") is not None:
        import torch_npu  # noqa: F401

        npu = bool(torch.npu.is_available())  # type: ignore[attr-defined]
    try:
        return torch_device(want, cuda=torch.cuda.is_available(), npu=npu)
    except DeviceMissing as exc:
        raise RuntimeError(str(exc)) from None


class Model:
    def __init__(self, spec: Spec, arrays: dict[str, np.ndarray], layout: str, device: str):
        self.spec, self.layout, self.device = spec, layout, device
        self.emb_name = self.emb_name_of(layout)
        # each weight in its storage dtype (a half-precision leaf gets a half-precision
        # grad, as Megatron's bf16 params do before main_grad.add_)
        self.p = {
            k: torch.tensor(v, dtype=torch.float32, device=device)
            .to(store_dtype(k, spec, self.emb_name))
            .requires_grad_(True)
            for k, v in arrays.items()
        }
        hd = head_dim(spec)
        rot = int(hd * spec.rotary_percent)
        rot -= rot % 2
        self.rot = rot
        inv = 1.0 / (spec.rope_theta ** (torch.arange(0, rot, 2, dtype=torch.float64) / rot))
        pos = torch.arange(spec.seq, dtype=torch.float64)
        freqs = torch.outer(pos, inv)
        emb = torch.cat([freqs, freqs], dim=-1)  # [s, rot]
        self.cos = emb.cos().float().to(device)
        self.sin = emb.sin().float().to(device)

    @staticmethod
    def emb_name_of(layout: str) -> str:
        if layout in ("megatron", "mindformers-mcore"):
            return "embedding.word_embeddings.weight"
        return "model.tok_embeddings.embedding_weight"

    # -- pieces ---------------------------------------------------------------------
    def dtype(self, name: str) -> torch.dtype:
        return DT[name]

    def expert(self, n: dict[str, str], e: int) -> tuple[torch.Tensor, ...]:
        return expert_weights(self.w, self.layout, self.spec, n, e)

    def shared(self, n: dict[str, str]) -> tuple[torch.Tensor, ...]:
        return shared_expert_weights(self.w, self.layout, self.spec, n)

    def w(self, name: str) -> torch.Tensor:
        return self.p[name].to(DT[self.spec.compute_dtype])

    def norm(self, x: torch.Tensor, weight: str, bias: str | None = None) -> torch.Tensor:
        s = self.spec
        xf = x.to(DT[s.norm_dtype])
        wt = self.p[weight].to(DT[s.norm_dtype])
        if s.norm == "RMSNorm":
            y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + s.norm_eps) * wt
        else:
            b = self.p[bias].to(DT[s.norm_dtype]) if bias and bias in self.p else None
            y = F.layer_norm(xf, (xf.shape[-1],), wt, b, s.norm_eps)
        return y.to(DT[s.compute_dtype])

    def linear(self, x: torch.Tensor, weight: str, bias: str | None = None) -> torch.Tensor:
        y = x @ self.w(weight).t()
        if bias is not None and bias in self.p:
            y = y + self.w(bias)
        return y

    def rope(self, x: torch.Tensor) -> torch.Tensor:
        # x: [b, s, n, hd]
        if self.rot == 0:
            return x
        dt = DT[self.spec.rotary_dtype]
        xr, xp = x[..., : self.rot].to(dt), x[..., self.rot :]
        cos = self.cos.to(dt)[None, :, None, :]
        sin = self.sin.to(dt)[None, :, None, :]
        x1, x2 = xr.chunk(2, dim=-1)
        rotated = torch.cat([-x2, x1], dim=-1)
        out = (xr * cos + rotated * sin).to(x.dtype)
        return torch.cat([out, xp], dim=-1) if xp.shape[-1] else out

    def dropout(self, x: torch.Tensor, p: float, gen: torch.Generator) -> torch.Tensor:
        if p <= 0:
            return x
        keep = torch.rand(x.shape, generator=gen, device=x.device) >= p
        return x * keep.to(x.dtype) / (1.0 - p)

    def qkv(self, x: torch.Tensor, n: dict[str, str]) -> tuple[torch.Tensor, ...]:
        s = self.spec
        b, sq, _ = x.shape
        hd, g = head_dim(s), s.groups
        r = s.heads // g
        if "qkv" in n:
            mixed = self.linear(x, n["qkv"], n["qkvb"])
            mixed = mixed.view(b, sq, g, (r + 2) * hd)
            q, k, v = torch.split(mixed, [r * hd, hd, hd], dim=-1)
            q = q.reshape(b, sq, g * r, hd)
        else:
            q = self.linear(x, n["wq"], n["bq"]).view(b, sq, s.heads, hd)
            k = self.linear(x, n["wk"], n["bk"]).view(b, sq, g, hd)
            v = self.linear(x, n["wv"], n["bv"]).view(b, sq, g, hd)
        return q, k, v

    def act(self, x: torch.Tensor) -> torch.Tensor:
        a = self.spec.activation
        if a in ("swiglu", "silu"):
            return F.silu(x)
        if a in ("gelu", "geglu"):
            return F.gelu(x)
        if a == "quick-geglu":  # megatron/core/fusions/fused_bias_geglu.py quick_gelu
            return x * torch.sigmoid(1.702 * x)
        if a == "relu":
            return F.relu(x)
        return F.relu(x) ** 2

    def mlp(self, x: torch.Tensor, n: dict[str, str]) -> torch.Tensor:
        if "fc1" in n:
            h = self.linear(x, n["fc1"], n["fc1b"])
            if gated(self.spec):
                gate, up = torch.chunk(h, 2, dim=-1)
                h = self.act(gate) * up
            else:
                h = self.act(h)
        else:
            gate = self.linear(x, n["w1"], n["w1b"])
            if gated(self.spec):
                h = self.act(gate) * self.linear(x, n["w3"], n["w3b"])
            else:
                h = self.act(gate)
        return self.linear(h, n["w2"], n["w2b"])

    def attention(self, x: torch.Tensor, i: int, n: dict[str, str], gen: torch.Generator):
        s = self.spec
        b, sq, _ = x.shape
        q, k, v = self.qkv(x, n)
        if s.qk_norm:
            q, k = self.norm(q, n["qn"], n["qnb"]), self.norm(k, n["kn"], n["knb"])
        q, k = self.rope(q), self.rope(k)
        r = s.heads // s.groups
        k = k.repeat_interleave(r, dim=2)
        v = v.repeat_interleave(r, dim=2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [b, n, s, hd]
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(head_dim(s))
        mask = torch.ones(sq, sq, dtype=torch.bool, device=x.device).triu(1)
        sd = DT[s.softmax_dtype]
        scores = scores.to(sd).masked_fill(mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1).to(DT[s.compute_dtype])
        probs = self.dropout(probs, s.attention_dropout, gen)
        ctx = (probs @ v).transpose(1, 2).reshape(b, sq, s.heads * head_dim(s))
        return self.linear(ctx, n["o"], n["ob"])

    def loss(self, tok: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        s = self.spec
        inp, labels = tok[:, :-1], tok[:, 1:]
        mg = self.layout in ("megatron", "mindformers-mcore")
        table = self.p[self.emb_name]
        if table.dtype == torch.float32:
            h = F.embedding(inp, table)
        else:
            # the lookup reads the half-precision table; its gradient is summed over the
            # repeated tokens in float32 and rounded once to the table's dtype, as torch's
            # CUDA kernel does (aten/src/ATen/native/cuda/EmbeddingBackwardKernel.cu:
            # compute_grad_weight / sum_and_scatter accumulate in acc_type<scalar_t>).
            # torch's CPU kernel would add in bf16 one token at a time: a CPU artefact.
            h = F.embedding(inp, table.float()).to(table.dtype)
        rd = DT[s.residual_dtype]
        # first: what layer 0's norm reads when the rows are not cast to the residual dtype
        first = None
        if s.embedding_output_dtype is not None:
            first = self.dropout(h.to(DT[s.embedding_output_dtype]), s.hidden_dropout, gen)
            h = first.to(rd)
        else:
            h = self.dropout(h.to(rd), s.hidden_dropout, gen)
        # MoE aux and z losses: in the gradient, in the printed loss only if the spec says
        self.extra = torch.zeros((), device=h.device)
        for i in range(s.layers):
            n = layer_names(self.layout, i)
            x = first if i == 0 and first is not None else h
            a = self.attention(self.norm(x, n["n1"], n["n1b"]), i, n, gen)
            h = h + self.dropout(a, s.hidden_dropout, gen).to(rd)
            if is_moe_layer(s, i):
                from cfglint.evidence.probe.moe_torch import moe_layer

                m, extra = moe_layer(self, self.norm(h, n["n2"], n["n2b"]), i)
                self.extra = self.extra + extra
            else:
                m = self.mlp(self.norm(h, n["n2"], n["n2b"]), n)
            h = h + self.dropout(m, s.hidden_dropout, gen).to(rd)
        fn = "decoder.final_layernorm." if mg else "model.norm_out."
        h = self.norm(h, fn + "weight", fn + "bias")
        out_w = table if s.tied else self.p["output_layer.weight" if mg else "lm_head.weight"]
        logits = h @ out_w.to(DT[s.compute_dtype]).t()
        ld = DT[s.loss_dtype]
        return F.cross_entropy(logits.to(ld).reshape(-1, s.vocab), labels.reshape(-1)).float()


def store_dtype(name: str, spec: Spec, emb_name: str) -> torch.dtype:
    if name == emb_name:
        return DT[spec.embedding_dtype]
    return DT[spec.norm_param_dtype if is_norm_param(name) else spec.param_dtype]


def decays(name: str, p: torch.Tensor, spec: Spec) -> bool:
    # Megatron: no decay for biases and 1-D parameters; MindFormers' default filter skips
    # norm weights and biases, which are exactly the 1-D parameters of these models
    return spec.wd_scope == "all" or not (name.endswith(".bias") or p.dim() == 1)


class Adam:
    """AdamW on float32 state. A half-precision weight is updated either through a float32
    master copy (``spec.fp32_master``: Megatron's main params, copied back to the model
    weight after each step, optimizer.py:774 _copy_main_params_to_model_params) or, without
    one, in float32 from the weight itself and written back rounded to its dtype
    (MindFormers' AdamW, adamw.py:44-64): an update below half a bf16 ulp is then lost."""

    def __init__(self, spec: Spec, params: dict[str, torch.Tensor]):
        self.spec = spec
        f32 = torch.float32
        self.m = {k: torch.zeros_like(v, dtype=f32) for k, v in params.items()}
        self.v = {k: torch.zeros_like(v, dtype=f32) for k, v in params.items()}
        self.master = {
            k: v.detach().float().clone()
            for k, v in params.items()
            if spec.fp32_master and v.dtype != f32
        }
        self.t = 0

    def clip(self, grads: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], float]:
        s = self.spec
        # Megatron clips the float32 main grads: per-tensor norms, then their 2-norm
        grads = {k: g.float() for k, g in grads.items()}
        norms = torch.stack([torch.linalg.vector_norm(g) for g in grads.values()])
        gnorm = float(torch.linalg.vector_norm(norms).item())
        if s.clip_grad > 0:
            if s.clip_formula == "megatron":
                c = s.clip_grad / (gnorm + 1e-6)
                if c < 1.0:
                    grads = {k: g * c for k, g in grads.items()}
            else:
                c = s.clip_grad / max(gnorm, s.clip_grad)
                grads = {k: g * c for k, g in grads.items()}
        return grads, gnorm

    def weight(self, k: str, p: torch.Tensor) -> torch.Tensor:
        """The float32 weight the optimizer updates (the master copy when there is one)."""
        return self.master[k] if k in self.master else p.detach().float()

    @torch.no_grad()
    def step(self, params: dict[str, torch.Tensor], grads: dict[str, torch.Tensor], lr: float):
        s = self.spec
        grads, gnorm = self.clip(grads)
        self.t += 1
        bc1 = 1 - s.beta1**self.t if s.bias_correction else 1.0
        bc2 = 1 - s.beta2**self.t if s.bias_correction else 1.0
        for k, p in params.items():
            g = grads[k]
            self.m[k].mul_(s.beta1).add_(g, alpha=1 - s.beta1)
            self.v[k].mul_(s.beta2).addcmul_(g, g, value=1 - s.beta2)
            upd = (self.m[k] / bc1) / ((self.v[k] / bc2).sqrt() + s.eps)
            w = self.weight(k, p)
            if decays(k, p, s):
                upd = upd + s.weight_decay * w
            new = w - lr * upd
            if k in self.master:
                self.master[k].copy_(new)
            p.copy_(new)  # rounded to the weight's dtype
        return gnorm


def run_one(run: Run, job_dir: str, tokens: np.ndarray, device: str) -> RunResult:
    t0 = time.perf_counter()
    spec = run.spec
    arrays = load_npz(os.path.join(job_dir, run.weights))
    res = RunResult(id=run.id)
    tok_all = torch.tensor(tokens[: run.steps], device=device)
    for mode in run.modes:
        model = Model(spec, arrays, run.layout, device)
        opt = Adam(spec, model.p)
        gen = torch.Generator(device=device).manual_seed(spec.seed)
        losses, norms = [], []
        for step in range(1, run.steps + 1):
            for p in model.p.values():
                p.grad = None
            loss = model.loss(tok_all[step - 1], gen)
            (loss + model.extra).backward()
            if spec.moe_logged_aux:
                loss = loss + model.extra
            # an expert no token reached has no gradient: zero, as Megatron's grad buffer
            grads = {
                k: p.grad if p.grad is not None else torch.zeros_like(p) for k, p in model.p.items()
            }
            if step == 1 and mode == run.modes[0]:
                g_np = {k: g.detach().float().cpu().numpy() for k, g in grads.items()}
                canon = from_layout(g_np, spec, run.layout)
                res.local_norms = {k: float(np.linalg.norm(v)) for k, v in canon.items()}
                if run.save_grads:
                    save_npz(os.path.join(job_dir, f"grads-{run.id}.npz"), canon)
            gnorm = opt.step(model.p, grads, lr_for(run, mode, step))
            losses.append(float(loss.item()))
            norms.append(gnorm)
        res.curves[mode] = Curve(loss=losses, grad_norm=norms)
    if run.check_grads:
        res.update = optimizer_check(run, job_dir, device)
    res.seconds = time.perf_counter() - t0
    return res


def optimizer_check(run: Run, job_dir: str, device: str) -> dict[str, float]:
    """Push the shared step-1 gradients through this spec's optimizer once; the update of
    each weight goes back to the runner (saved, compared there)."""
    spec = run.spec
    # the shared gradients where this spec has the weight, zero where only it has one
    grads_c = conform(load_npz(os.path.join(job_dir, run.check_grads)), spec)
    start_c = load_npz(os.path.join(job_dir, run.canonical_weights))
    emb = Model.emb_name_of(run.layout)
    params = {
        k: torch.tensor(v, device=device).to(store_dtype(k, spec, emb))
        for k, v in to_layout(start_c, spec, run.layout).items()
    }
    grads = {
        k: torch.tensor(v, device=device).to(params[k].dtype)
        for k, v in to_layout(grads_c, spec, run.layout).items()
    }
    opt = Adam(spec, params)
    before = {k: opt.weight(k, p).clone() for k, p in params.items()}
    opt.step(params, grads, CHECK_LR)
    # the update of the weights the optimizer keeps (float32 masters where there are)
    upd = {k: (opt.weight(k, params[k]) - before[k]).cpu().numpy() for k in params}
    canon = from_layout(upd, spec, run.layout)
    save_npz(os.path.join(job_dir, f"update-torch-{run.id}.npz"), canon)
    return {k: float(np.linalg.norm(v)) for k, v in canon.items()}


def main(job_dir: str, job: Job) -> SideResult:
    torch.set_num_threads(int(os.environ.get("CFGLINT_PROBE_THREADS", "1")))
    torch.use_deterministic_algorithms(True, warn_only=True)
    device = pick_device(job.device)
    if device == "cuda":  # float32 means float32: no TF32 matmuls on Ampere and later
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    tokens = np.load(os.path.join(job_dir, job.tokens))
    out = SideResult(framework="torch", device=device)
    for run in job.runs:
        try:
            out.runs.append(run_one(run, job_dir, tokens, device))
        except Exception as exc:  # one run failing must not hide the others
            out.runs.append(RunResult(id=run.id, error=f"{type(exc).__name__}: {exc}"))
    return out


if __name__ == "__main__":
    main_guard("torch", main)
