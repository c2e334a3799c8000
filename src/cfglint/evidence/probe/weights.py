"""One set of seeded initial weights, and its mapping into each side's parameter layout.

Canonical names follow MindFormers' legacy Llama (``layers.0.attention.wq``): they are what
reports show. Layouts:

* ``megatron``: ``decoder.layers.N.self_attention.linear_qkv.weight`` holds, for each query
  group in turn, that group's query heads, then its key head, then its value head
  (megatron/core/transformer/attention.py, SelfAttention.get_query_key_value_tensors: the
  output is viewed as [.., num_query_groups, (heads_per_group + 2) * head_dim] and split);
  ``mlp.linear_fc1.weight`` is [gate; up] for gated activations (megatron/core/transformer/
  mlp.py, glu: torch.chunk(x, 2, dim=-1) -> act(x[0]) * x[1]).
* ``mindformers-legacy``: ``model.layers.N.attention.wq/wk/wv/wo``, ``feed_forward.w1`` (gate),
  ``w3`` (up), ``w2`` (down), ``model.tok_embeddings.embedding_weight``, ``model.norm_out``,
  ``lm_head`` (mindformers/models/llama/llama.py, llama_transformer.py, llama_layer.py).
* ``mindformers-mcore``: MindFormers' Megatron-style models, which keep Megatron's names
  and fused layouts (mindformers/parallel_core/...).

numpy only: imported by both framework processes and by the runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from cfglint.evidence.probe.spec import GATED

if TYPE_CHECKING:
    from cfglint.evidence.probe.spec import Spec

DIALECTS = ("megatron", "mindformers-legacy", "mindformers-mcore")
Arrays = dict[str, np.ndarray]


def expert_weights(w: Any, layout: str, spec: Spec, n: dict[str, str], e: int) -> tuple:
    """Expert ``e``'s (gate, up or None, down) weights as [out, in], read through ``w`` (a
    side's name -> tensor accessor; torch and MindSpore tensors both have ``.T``) from the
    layout's names ``n`` (moe_prefixes)."""
    f, h = spec.moe_ffn, spec.hidden
    if layout == "mindformers-legacy":
        w3 = w(n["ffn"] + "w3.weight")[e] if gated(spec) else None
        return w(n["ffn"] + "w1.weight")[e], w3, w(n["ffn"] + "w2.weight")[e]
    if layout == "megatron":
        q = f"{n['experts']}local_experts.{e}."
        fc1 = w(q + "linear_fc1.weight")
        w1, w3 = (fc1[:f], fc1[f:]) if gated(spec) else (fc1, None)
        return w1, w3, w(q + "linear_fc2.weight")
    blk = w(n["experts"] + "weight1")[e * h : (e + 1) * h].T
    w1, w3 = (blk[:f], blk[f:]) if gated(spec) else (blk, None)
    return w1, w3, w(n["experts"] + "weight2")[e * f : (e + 1) * f].T


def shared_expert_weights(w: Any, layout: str, spec: Spec, n: dict[str, str]) -> tuple:
    """The shared experts' (gate, up or None, down) weights, as expert_weights."""
    fs = spec.moe_shared_ffn
    if layout == "mindformers-legacy":
        w3 = w(n["shared"] + "w3.weight") if gated(spec) else None
        return w(n["shared"] + "w1.weight"), w3, w(n["shared"] + "w2.weight")
    fc1 = w(n["shared"] + "linear_fc1.weight")
    w1, w3 = (fc1[:fs], fc1[fs:]) if gated(spec) else (fc1, None)
    return w1, w3, w(n["shared"] + "linear_fc2.weight")


def gated(spec: Spec) -> bool:
    return spec.activation in GATED


def head_dim(spec: Spec) -> int:
    return spec.hidden // spec.heads


def canonical_shapes(spec: Spec) -> dict[str, tuple[int, ...]]:
    h, hd, f = spec.hidden, head_dim(spec), spec.ffn
    out: dict[str, tuple[int, ...]] = {"tok_embeddings": (spec.vocab, h)}
    ln_bias = spec.norm == "LayerNorm"
    for i in range(spec.layers):
        p = f"layers.{i}."
        out[p + "attention_norm"] = (h,)
        if ln_bias:
            out[p + "attention_norm.bias"] = (h,)
        out[p + "attention.wq"] = (spec.heads * hd, h)
        out[p + "attention.wk"] = (spec.groups * hd, h)
        out[p + "attention.wv"] = (spec.groups * hd, h)
        if spec.qkv_bias:
            out[p + "attention.wq.bias"] = (spec.heads * hd,)
            out[p + "attention.wk.bias"] = (spec.groups * hd,)
            out[p + "attention.wv.bias"] = (spec.groups * hd,)
        if spec.qk_norm:
            out[p + "attention.q_norm"] = (hd,)
            out[p + "attention.k_norm"] = (hd,)
            if ln_bias:  # Megatron's q/k layernorm is the model's norm, with its bias
                out[p + "attention.q_norm.bias"] = (hd,)
                out[p + "attention.k_norm.bias"] = (hd,)
        out[p + "attention.wo"] = (h, spec.heads * hd)
        if spec.linear_bias:
            out[p + "attention.wo.bias"] = (h,)
        out[p + "ffn_norm"] = (h,)
        if ln_bias:
            out[p + "ffn_norm.bias"] = (h,)
        if is_moe_layer(spec, i):
            out.update(moe_shapes(spec, i))
            continue
        out[p + "feed_forward.w1"] = (f, h)
        if gated(spec):
            out[p + "feed_forward.w3"] = (f, h)
        out[p + "feed_forward.w2"] = (h, f)
        if spec.linear_bias:
            out[p + "feed_forward.w1.bias"] = (f,)
            if gated(spec):
                out[p + "feed_forward.w3.bias"] = (f,)
            out[p + "feed_forward.w2.bias"] = (h,)
    out["norm_out"] = (h,)
    if ln_bias:
        out["norm_out.bias"] = (h,)
    if not spec.tied:
        out["lm_head"] = (spec.vocab, h)
    return out


def conform(arrays: Arrays, spec: Spec, fill: Arrays | None = None) -> Arrays:
    """``arrays`` (canonical names) as ``spec``'s own parameter set: the arrays its
    structure has (biases, a separate output layer, the up projection, q/k norms, norm
    biases) come from ``arrays`` where they are there with the right shape, else from
    ``fill`` (zeros without it); arrays the spec has no place for are dropped. Each side
    then trains exactly its own parameters, from a start shared wherever both have one."""
    out: Arrays = {}
    for name, shape in canonical_shapes(spec).items():
        v = arrays.get(name)
        if v is None or v.shape != shape:
            v = fill[name] if fill is not None else np.zeros(shape, np.float32)
        out[name] = v
    return out


def structure_key(spec: Spec) -> str:
    """What distinguishes one parameter set from another: names and shapes."""
    return ";".join(f"{k}{list(v)}" for k, v in canonical_shapes(spec).items())


def is_moe_layer(spec: Spec, i: int) -> bool:
    return spec.moe_experts > 0 and i >= spec.moe_dense


def moe_shapes(spec: Spec, i: int) -> dict[str, tuple[int, ...]]:
    """Canonical MoE parameters of layer ``i``: the router, each expert's w1 (gate) / w3
    (up) / w2 (down), the shared experts as one MLP and their sigmoid gate."""
    h, f, fs = spec.hidden, spec.moe_ffn, spec.moe_shared_ffn
    p = f"layers.{i}.feed_forward."
    out: dict[str, tuple[int, ...]] = {p + "router": (spec.moe_experts, h)}
    for e in range(spec.moe_experts):
        out[f"{p}experts.{e}.w1"] = (f, h)
        if gated(spec):
            out[f"{p}experts.{e}.w3"] = (f, h)
        out[f"{p}experts.{e}.w2"] = (h, f)
    if fs:
        out[p + "shared.w1"] = (fs, h)
        if gated(spec):
            out[p + "shared.w3"] = (fs, h)
        out[p + "shared.w2"] = (h, fs)
        if spec.moe_shared_gate:
            out[p + "shared_gate"] = (1, h)
    return out


def is_norm(name: str) -> bool:
    return name.endswith(("_norm", "norm_out"))


def is_norm_param(name: str) -> bool:
    """A norm's weight or bias, in any layout (``attention_norm``, ``norm_out``,
    ``input_layernorm``, ``final_layernorm``, ``q_layernorm`` ...)."""
    return "norm" in name


def init_weights(spec: Spec, seed: int | None = None) -> Arrays:
    """Seeded normal init with the spec's std (Megatron's output-layer scaling when the
    spec says so); norms start at one, biases at zero. The draw order is fixed, so two
    specs with different stds get the same directions, scaled."""
    rng = np.random.default_rng(spec.seed if seed is None else seed)
    out_std = spec.output_init_std
    arrays: Arrays = {}
    for name, shape in canonical_shapes(spec).items():
        if is_norm(name):
            arrays[name] = np.ones(shape, np.float32)
        elif name.endswith(".bias"):
            arrays[name] = np.zeros(shape, np.float32)
        else:
            z = rng.standard_normal(shape, dtype=np.float64)
            std = spec.init_std
            if out_std is not None and name.endswith(("attention.wo", ".w2")):
                std = out_std
            arrays[name] = (z * std).astype(np.float32)
    return arrays


# -- layouts ----------------------------------------------------------------------------
def layer_names(layout: str, i: int) -> dict[str, str]:
    """Full names of layer ``i``'s parameters in ``layout``, by short role: norms (n1, n2),
    attention (wq/wk/wv or fused qkv, q/k norms qn/kn, output o), MLP (w1 gate / w3 up or
    fused fc1, down projection w2); a trailing ``b`` is the bias. Both framework sides read
    their parameters through this one table."""
    if layout == "mindformers-legacy":
        p = f"model.layers.{i}."
        return {
            "n1": p + "attention_norm.weight",
            "n1b": p + "attention_norm.bias",
            "n2": p + "ffn_norm.weight",
            "n2b": p + "ffn_norm.bias",
            "wq": p + "attention.wq.weight",
            "wk": p + "attention.wk.weight",
            "wv": p + "attention.wv.weight",
            "bq": p + "attention.wq.bias",
            "bk": p + "attention.wk.bias",
            "bv": p + "attention.wv.bias",
            "qn": p + "attention.q_norm.weight",
            "kn": p + "attention.k_norm.weight",
            "qnb": p + "attention.q_norm.bias",
            "knb": p + "attention.k_norm.bias",
            "o": p + "attention.wo.weight",
            "ob": p + "attention.wo.bias",
            "w1": p + "feed_forward.w1.weight",
            "w1b": p + "feed_forward.w1.bias",
            "w3": p + "feed_forward.w3.weight",
            "w3b": p + "feed_forward.w3.bias",
            "w2": p + "feed_forward.w2.weight",
            "w2b": p + "feed_forward.w2.bias",
        }
    p = f"decoder.layers.{i}."
    return {
        "n1": p + "input_layernorm.weight",
        "n1b": p + "input_layernorm.bias",
        "n2": p + "pre_mlp_layernorm.weight",
        "n2b": p + "pre_mlp_layernorm.bias",
        "qkv": p + "self_attention.linear_qkv.weight",
        "qkvb": p + "self_attention.linear_qkv.bias",
        "qn": p + "self_attention.q_layernorm.weight",
        "kn": p + "self_attention.k_layernorm.weight",
        "qnb": p + "self_attention.q_layernorm.bias",
        "knb": p + "self_attention.k_layernorm.bias",
        "o": p + "self_attention.linear_proj.weight",
        "ob": p + "self_attention.linear_proj.bias",
        "fc1": p + "mlp.linear_fc1.weight",
        "fc1b": p + "mlp.linear_fc1.bias",
        "w2": p + "mlp.linear_fc2.weight",
        "w2b": p + "mlp.linear_fc2.bias",
    }


def _mg_names(i: int) -> dict[str, str]:
    p = f"decoder.layers.{i}."
    return {
        "attention_norm": p + "input_layernorm.weight",
        "attention_norm.bias": p + "input_layernorm.bias",
        "attention.q_norm": p + "self_attention.q_layernorm.weight",
        "attention.k_norm": p + "self_attention.k_layernorm.weight",
        "attention.q_norm.bias": p + "self_attention.q_layernorm.bias",
        "attention.k_norm.bias": p + "self_attention.k_layernorm.bias",
        "attention.wo": p + "self_attention.linear_proj.weight",
        "attention.wo.bias": p + "self_attention.linear_proj.bias",
        "ffn_norm": p + "pre_mlp_layernorm.weight",
        "ffn_norm.bias": p + "pre_mlp_layernorm.bias",
        "feed_forward.w2": p + "mlp.linear_fc2.weight",
        "feed_forward.w2.bias": p + "mlp.linear_fc2.bias",
    }


def _legacy_name(name: str) -> str:
    if name == "tok_embeddings":
        return "model.tok_embeddings.embedding_weight"
    if name == "lm_head":
        return "lm_head.weight"
    if name.endswith(".bias"):
        return "model." + name
    return "model." + name + ".weight"


def _qkv_fuse(q: np.ndarray, k: np.ndarray, v: np.ndarray, spec: Spec) -> np.ndarray:
    hd, g = head_dim(spec), spec.groups
    r = spec.heads // g
    tail = q.shape[1:]
    qg = q.reshape(g, r * hd, *tail)
    kg = k.reshape(g, hd, *tail)
    vg = v.reshape(g, hd, *tail)
    return np.concatenate([qg, kg, vg], axis=1).reshape(g * (r + 2) * hd, *tail)


def _qkv_split(w: np.ndarray, spec: Spec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    hd, g = head_dim(spec), spec.groups
    r = spec.heads // g
    tail = w.shape[1:]
    per = w.reshape(g, (r + 2) * hd, *tail)
    q = per[:, : r * hd].reshape(g * r * hd, *tail)
    k = per[:, r * hd : (r + 1) * hd].reshape(g * hd, *tail)
    v = per[:, (r + 1) * hd :].reshape(g * hd, *tail)
    return q, k, v


# -- MoE layouts ------------------------------------------------------------------------
def moe_keys(spec: Spec) -> set[str]:
    return {k for i in range(spec.layers) if is_moe_layer(spec, i) for k in moe_shapes(spec, i)}


def moe_prefixes(dialect: str, i: int, shared: bool) -> dict[str, str]:
    """Where layer ``i``'s MoE parameters live in ``dialect``.

    * megatron (local spec, SequentialMLP): ``mlp.router.weight``,
      ``mlp.experts.local_experts.E.linear_fc1/linear_fc2.weight`` (fc1 = [gate; up]),
      ``mlp.shared_experts.linear_fc1/linear_fc2.weight`` and ``.gate_weight``
      (megatron/core/transformer/moe/{router.py,experts.py,shared_experts.py:57});
    * mindformers-legacy: ``feed_forward.router.dense.weight`` [E, h] and the stacked
      ``feed_forward.ffn.w1/w3/w2.weight`` [E, out, in] of MoEV2 (modules/transformer/
      moe.py:928 Dense; modules/layers.py:453-465 Linear with expert_num, transpose_b);
      with shared experts under ``feed_forward.routed_experts.``, beside
      ``feed_forward.shared_experts.w1/w3/w2.weight`` and ``feed_forward.
      shared_experts_gate.weight`` [1, h] (models/llama/llama_layer.py:660-690);
    * mindformers-mcore: ``mlp.router.weight``, grouped ``mlp.experts.weight1``
      [E*h, 2f] (per expert [gate | up] along the last axis, swiglu splits it in halves) and
      ``weight2`` [E*f, h] (parallel_core/training_graph/transformer/moe/ffn.py:82-87,
      177-181), shared experts as Megatron's, their gate ``shared_experts_gate.weight``
      (shared_experts.py:66-70)."""
    if dialect == "mindformers-legacy":
        p = f"model.layers.{i}.feed_forward."
        r = p + ("routed_experts." if shared else "")
        return {
            "router": r + "router.dense.weight",
            "ffn": r + "ffn.",
            "shared": p + "shared_experts.",
            "gate": p + "shared_experts_gate.weight",
        }
    p = f"decoder.layers.{i}.mlp."
    return {
        "router": p + "router.weight",
        "experts": p + "experts.",
        "shared": p + "shared_experts.",
        "gate": p
        + (
            "shared_experts.gate_weight"
            if dialect == "megatron"
            else "shared_experts.shared_experts_gate.weight"
        ),
    }


def moe_to_layout(arrays: Arrays, spec: Spec, dialect: str) -> Arrays:
    out: Arrays = {}
    for i in range(spec.layers):
        if not is_moe_layer(spec, i):
            continue
        c = f"layers.{i}.feed_forward."
        n = moe_prefixes(dialect, i, bool(spec.moe_shared_ffn))
        out[n["router"]] = arrays[c + "router"]
        ex = [
            (
                arrays[f"{c}experts.{e}.w1"],
                arrays.get(f"{c}experts.{e}.w3"),
                arrays[f"{c}experts.{e}.w2"],
            )
            for e in range(spec.moe_experts)
        ]
        out.update(_experts_to_layout(ex, n, dialect, gated(spec)))
        if spec.moe_shared_ffn:
            out.update(_shared_to_layout(arrays, c, n, dialect, gated(spec)))
            if spec.moe_shared_gate:
                out[n["gate"]] = arrays[c + "shared_gate"]
    return out


def _experts_to_layout(ex: list[Any], n: dict[str, str], dialect: str, g: bool) -> Arrays:
    """One layer's routed experts ((w1, w3, w2) each) as the dialect stores them."""
    out: Arrays = {}
    if dialect == "mindformers-legacy":
        out[n["ffn"] + "w1.weight"] = np.stack([w1 for w1, _, _ in ex])
        if g:
            out[n["ffn"] + "w3.weight"] = np.stack([w3 for _, w3, _ in ex])
        out[n["ffn"] + "w2.weight"] = np.stack([w2 for _, _, w2 in ex])
    elif dialect == "megatron":
        for e, (w1, w3, w2) in enumerate(ex):
            q = f"{n['experts']}local_experts.{e}."
            out[q + "linear_fc1.weight"] = np.concatenate([w1, w3]) if g else w1
            out[q + "linear_fc2.weight"] = w2
    else:
        out[n["experts"] + "weight1"] = np.concatenate(
            [np.concatenate([w1, w3]).T if g else w1.T for w1, w3, _ in ex]
        )
        out[n["experts"] + "weight2"] = np.concatenate([w2.T for _, _, w2 in ex])
    return out


def _shared_to_layout(arrays: Arrays, c: str, n: dict[str, str], dialect: str, g: bool) -> Arrays:
    """One layer's shared expert as the dialect stores it."""
    s1, s3, s2 = (arrays.get(c + f"shared.{w}") for w in ("w1", "w3", "w2"))
    out: Arrays = {}
    if dialect == "mindformers-legacy":
        out[n["shared"] + "w1.weight"] = s1
        if g:
            out[n["shared"] + "w3.weight"] = s3
        out[n["shared"] + "w2.weight"] = s2
    else:
        out[n["shared"] + "linear_fc1.weight"] = np.concatenate([s1, s3]) if g else s1
        out[n["shared"] + "linear_fc2.weight"] = s2
    return out


def moe_from_layout(arrays: Arrays, spec: Spec, dialect: str) -> Arrays:
    out: Arrays = {}
    g, f, h = gated(spec), spec.moe_ffn, spec.hidden
    for i in range(spec.layers):
        if not is_moe_layer(spec, i):
            continue
        c = f"layers.{i}.feed_forward."
        n = moe_prefixes(dialect, i, bool(spec.moe_shared_ffn))
        if n["router"] in arrays:
            out[c + "router"] = arrays[n["router"]]
        for e in range(spec.moe_experts):
            q = f"{c}experts.{e}."
            if dialect == "mindformers-legacy":
                w1 = arrays[n["ffn"] + "w1.weight"][e]
                w3 = arrays[n["ffn"] + "w3.weight"][e] if g else None
                w2 = arrays[n["ffn"] + "w2.weight"][e]
            elif dialect == "megatron":
                fc1 = arrays[f"{n['experts']}local_experts.{e}.linear_fc1.weight"]
                w1, w3 = (fc1[:f], fc1[f:]) if g else (fc1, None)
                w2 = arrays[f"{n['experts']}local_experts.{e}.linear_fc2.weight"]
            else:
                blk = arrays[n["experts"] + "weight1"][e * h : (e + 1) * h].T
                w1, w3 = (blk[:f], blk[f:]) if g else (blk, None)
                w2 = arrays[n["experts"] + "weight2"][e * f : (e + 1) * f].T
            out[q + "w1"], out[q + "w2"] = w1, w2
            if w3 is not None:
                out[q + "w3"] = w3
        if spec.moe_shared_ffn:
            fs = spec.moe_shared_ffn
            if dialect == "mindformers-legacy":
                out[c + "shared.w1"] = arrays[n["shared"] + "w1.weight"]
                if g:
                    out[c + "shared.w3"] = arrays[n["shared"] + "w3.weight"]
                out[c + "shared.w2"] = arrays[n["shared"] + "w2.weight"]
            else:
                fc1 = arrays[n["shared"] + "linear_fc1.weight"]
                out[c + "shared.w1"] = fc1[:fs] if g else fc1
                if g:
                    out[c + "shared.w3"] = fc1[fs:]
                out[c + "shared.w2"] = arrays[n["shared"] + "linear_fc2.weight"]
            if spec.moe_shared_gate:
                out[c + "shared_gate"] = arrays[n["gate"]]
    return {k: np.ascontiguousarray(v) for k, v in out.items()}


def to_layout(arrays: Arrays, spec: Spec, dialect: str) -> Arrays:
    """Canonical arrays -> the dialect's parameter names and fused layouts."""
    moe = moe_keys(spec)
    if dialect == "mindformers-legacy":
        out = {_legacy_name(k): v for k, v in arrays.items() if k not in moe}
        out.update(moe_to_layout(arrays, spec, dialect))
        return out
    if dialect not in ("megatron", "mindformers-mcore"):
        raise ValueError(f"unknown layout {dialect!r}")
    out = {"embedding.word_embeddings.weight": arrays["tok_embeddings"]}
    out.update(moe_to_layout(arrays, spec, dialect))
    for i in range(spec.layers):
        p = f"layers.{i}."
        names = _mg_names(i)
        qkv = f"decoder.layers.{i}.self_attention.linear_qkv."
        out[qkv + "weight"] = _qkv_fuse(
            arrays[p + "attention.wq"], arrays[p + "attention.wk"], arrays[p + "attention.wv"], spec
        )
        if p + "attention.wq.bias" in arrays:
            out[qkv + "bias"] = _qkv_fuse(
                arrays[p + "attention.wq.bias"],
                arrays[p + "attention.wk.bias"],
                arrays[p + "attention.wv.bias"],
                spec,
            )
        fc1 = f"decoder.layers.{i}.mlp.linear_fc1."
        for suffix, key in (("", "weight"), (".bias", "bias")):
            w1 = arrays.get(p + "feed_forward.w1" + suffix)
            if w1 is None:
                continue
            w3 = arrays.get(p + "feed_forward.w3" + suffix)
            out[fc1 + key] = np.concatenate([w1, w3]) if w3 is not None else w1
        for short, full in names.items():
            if p + short in arrays:
                out[full] = arrays[p + short]
    out["decoder.final_layernorm.weight"] = arrays["norm_out"]
    if "norm_out.bias" in arrays:
        out["decoder.final_layernorm.bias"] = arrays["norm_out.bias"]
    if "lm_head" in arrays:
        out["output_layer.weight"] = arrays["lm_head"]
    return out


def from_layout(arrays: Arrays, spec: Spec, dialect: str) -> Arrays:
    """The inverse of :func:`to_layout` (also maps gradients back to canonical names)."""
    want = canonical_shapes(spec)
    moe = moe_keys(spec)
    if dialect == "mindformers-legacy":
        back = {_legacy_name(k): k for k in want if k not in moe}
        out = {back[k]: v for k, v in arrays.items() if k in back}
        out.update(moe_from_layout(arrays, spec, dialect))
        return out
    if dialect not in ("megatron", "mindformers-mcore"):
        raise ValueError(f"unknown layout {dialect!r}")
    out = {"tok_embeddings": arrays["embedding.word_embeddings.weight"]}
    out.update(moe_from_layout(arrays, spec, dialect))
    f = spec.ffn
    for i in range(spec.layers):
        p = f"layers.{i}."
        qkv = f"decoder.layers.{i}.self_attention.linear_qkv."
        q, k, v = _qkv_split(arrays[qkv + "weight"], spec)
        out[p + "attention.wq"], out[p + "attention.wk"], out[p + "attention.wv"] = q, k, v
        if qkv + "bias" in arrays:
            q, k, v = _qkv_split(arrays[qkv + "bias"], spec)
            out[p + "attention.wq.bias"] = q
            out[p + "attention.wk.bias"] = k
            out[p + "attention.wv.bias"] = v
        fc1 = f"decoder.layers.{i}.mlp.linear_fc1."
        for suffix, key in (("", "weight"), (".bias", "bias")):
            w = arrays.get(fc1 + key)
            if w is None:
                continue
            if gated(spec):
                out[p + "feed_forward.w1" + suffix] = w[:f]
                out[p + "feed_forward.w3" + suffix] = w[f:]
            else:
                out[p + "feed_forward.w1" + suffix] = w
        for short, full in _mg_names(i).items():
            if full in arrays:
                out[p + short] = arrays[full]
    out["norm_out"] = arrays["decoder.final_layernorm.weight"]
    if "decoder.final_layernorm.bias" in arrays:
        out["norm_out.bias"] = arrays["decoder.final_layernorm.bias"]
    if "output_layer.weight" in arrays:
        out["lm_head"] = arrays["output_layer.weight"]
    return out


def decays(name: str, spec: Spec) -> bool:
    """Whether weight decay reaches this canonical parameter. ``matrices``: Megatron's
    default grouping (megatron/core/optimizer/__init__.py, _get_param_groups: no decay for
    biases and 1-D parameters) and MindFormers' default decay filter (no decay for
    layernorm weights and biases)."""
    if spec.wd_scope == "all":
        return True
    return not (name.endswith(".bias") or is_norm(name))


def tokens(spec: Spec, steps: int, data: np.ndarray | None = None) -> np.ndarray:
    """[steps, batch, seq + 1] token ids: seeded synthetic, or windows of a real dataset."""
    n = spec.batch * (spec.seq + 1)
    if data is not None and data.size >= n:
        need = steps * n
        reps = -(-need // data.size)
        flat = np.tile(data.astype(np.int64) % spec.vocab, reps)[:need]
        return flat.reshape(steps, spec.batch, spec.seq + 1)
    # Zipf-like frequencies (p ~ 1/rank), as in text: frequent tokens repeat within a batch,
    # which is where an embedding gradient accumulated in bfloat16 loses precision
    rng = np.random.default_rng(spec.seed + 1)
    p = 1.0 / np.arange(1, spec.vocab + 1)
    return rng.choice(spec.vocab, size=(steps, spec.batch, spec.seq + 1), p=p / p.sum())
