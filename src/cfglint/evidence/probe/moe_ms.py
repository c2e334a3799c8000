"""One MoE layer in MindSpore with the spec's routing semantics: the same steps as
moe_torch.py (which is checked against megatron-core), written for ``ms.jit``.

MindFormers computes its experts on dispatched slots (moe.py MoEV2: dispatch, ffn,
combine); here every expert runs on every token and is weighted by the token's routing
weight, which is zero for an expert that did not get the token (or dropped it). The
weighted sum is the same value: 0 * y adds nothing and passes no gradient. Static shapes
keep the graph compiling once.
"""

from __future__ import annotations

import mindspore as ms
from mindspore import ops

from cfglint.evidence.probe.moe import capacity
from cfglint.evidence.probe.weights import gated, moe_prefixes


def _onehot(idx, depth: int):
    return ops.one_hot(idx, depth, ms.Tensor(1.0, ms.float32), ms.Tensor(0.0, ms.float32))


def group_limited(spec, scores):
    """The selection scores with the experts outside each token's best groups at -inf
    (moe_torch.group_limited)."""
    s = spec
    if not s.moe_groups:
        return scores
    t, e = scores.shape
    size = e // s.moe_groups
    grouped = scores.reshape(t, s.moe_groups, size)
    gscore = ops.sum(ops.topk(grouped, s.moe_group_top)[0], -1)  # [T, G]
    gidx = ops.topk(gscore, s.moe_group_topk)[1]
    gmask = None
    for j in range(s.moe_group_topk):
        oh = _onehot(gidx[:, j], s.moe_groups)
        gmask = oh if gmask is None else gmask + oh
    mask = ops.repeat_interleave(gmask, size, 1) > 0  # [T, E]
    return ops.where(mask, scores, ops.full_like(scores, float("-inf")))


def route(spec, logits):
    """[T, E] logits -> (weights [T, E], routing map [T, E] as 0/1 float)."""
    s = spec
    k, e = s.moe_topk, s.moe_experts
    dt = logits.dtype
    if s.moe_score == "softmax":
        if s.moe_pre_softmax:
            scores = ops.softmax(logits.astype(ms.float32), axis=-1).astype(dt)
            probs, idx = ops.topk(group_limited(s, scores), k)
        else:
            top, idx = ops.topk(group_limited(s, logits), k)
            probs = ops.softmax(top.astype(ms.float32), axis=-1).astype(dt)
    else:
        scores = ops.sigmoid(logits.astype(ms.float32)).astype(dt)
        probs, idx = ops.topk(group_limited(s, scores), k)
    if (
        s.moe_norm_topk
        and not s.moe_norm_after_drop
        and (s.moe_pre_softmax or s.moe_score != "softmax")
    ):
        probs = probs / (ops.sum(probs, -1, keepdim=True) + 1e-20)
    if s.moe_topk_scale != 1.0:
        probs = probs * s.moe_topk_scale
    weights = None
    rmap = None
    for j in range(k):
        oh = _onehot(idx[:, j], e)
        w = oh * probs[:, j : j + 1].astype(ms.float32)
        weights = w if weights is None else weights + w
        rmap = oh if rmap is None else rmap + oh
    weights = weights.astype(dt)
    if s.moe_capacity > 0:
        weights, rmap = drop(spec, weights, rmap, idx)
    if s.moe_norm_after_drop:
        weights = weights / (ops.sum(weights, -1, keepdim=True) + 1e-9)
    return weights, rmap


def drop(spec, weights, rmap, idx):
    s = spec
    t, e = weights.shape
    cap = capacity(t, s.moe_topk, e, s.moe_capacity)
    if cap >= t:
        return weights, rmap
    if s.moe_drop == "probs":
        _, keep = ops.topk(weights.T, cap)  # [E, cap]: each expert's highest weights
        mask = None
        for j in range(cap):
            oh = _onehot(keep[:, j], t)  # [E, T]
            mask = oh if mask is None else mask + oh
        mask = mask.T
    else:
        # MindFormers' slot filling: token-major (sdrop) or k-major, a running count per
        # expert, slots past the capacity dropped (moe.py:1551-1560, 1619-1628)
        order = idx if s.moe_drop == "position" else idx.T
        oh = _onehot(order.reshape(-1), e)
        pos = ops.cumsum(oh, 0) * oh
        kept = ops.sum(((pos > 0) & (pos <= cap)).astype(ms.float32), -1)
        kept = kept.reshape(order.shape)
        kept = kept if s.moe_drop == "position" else kept.T  # [T, k]
        mask = None
        for j in range(s.moe_topk):
            m = _onehot(idx[:, j], e) * kept[:, j : j + 1]
            mask = m if mask is None else mask + m
    rmap = rmap * mask
    return weights * rmap.astype(weights.dtype), rmap


def aux_losses(spec, logits, seq: int, batch: int):
    s = spec
    e, k = s.moe_experts, s.moe_topk
    total = ops.zeros((), ms.float32)
    if s.moe_z_coeff > 0:
        lse = ops.logsumexp(logits.astype(ms.float32), -1)
        total = total + ops.mean(lse * lse) * s.moe_z_coeff
    if s.moe_aux == "none" or s.moe_aux_coeff <= 0:
        return total
    if s.moe_score == "softmax":
        scores = ops.softmax(logits.astype(ms.float32), axis=-1)
    else:
        scores = ops.sigmoid(logits.astype(ms.float32))
        scores = scores / (ops.sum(scores, -1, keepdim=True) + 1e-20)
    _, top = ops.topk(scores, k)
    rmap = None
    for j in range(k):
        oh = _onehot(top[:, j], e)
        rmap = oh if rmap is None else rmap + oh
    if s.moe_aux == "seq_aux_loss":
        sc = scores.reshape(seq, -1)
        rm = rmap.reshape(seq, -1)
        coeff = e * s.moe_aux_coeff / (k * seq * seq)
        return total + ops.sum(ops.sum(sc, 0) * ops.sum(rm, 0)) * coeff / batch
    t = logits.shape[0]
    return total + ops.sum(ops.sum(scores, 0) * ops.sum(rmap, 0)) * (
        e * s.moe_aux_coeff / (k * t * t)
    )


def moe_layer(model, x, i: int):
    """x [b, s, h] (compute dtype) -> (output [b, s, h], extra loss)."""
    s = model.spec
    b, sq, h = x.shape
    megatron = s.moe_impl == "megatron"
    xt = (ops.transpose(x, (1, 0, 2)) if megatron else x).reshape(-1, h)
    n = moe_prefixes(model.layout, i, bool(s.moe_shared_ffn))
    rd = model.dtype(s.moe_router_dtype)
    logits = ops.matmul(xt.astype(rd), model.p(n["router"]).astype(rd).T)
    weights, _ = route(s, logits)
    extra = aux_losses(s, logits, sq, b)
    cd = x.dtype
    out = None
    for e in range(s.moe_experts):
        w1, w3, w2 = model.expert(n, e)
        pe = weights[:, e : e + 1].astype(cd)
        hid = model.act(ops.matmul(xt, w1.T))
        if gated(s):
            hid = hid * ops.matmul(xt, w3.T)
        y = ops.matmul(hid * pe, w2.T) if megatron else ops.matmul(hid, w2.T) * pe
        out = y if out is None else out + y
    if s.moe_shared_ffn:
        w1, w3, w2 = model.shared(n)
        hid = model.act(ops.matmul(xt, w1.T))
        if gated(s):
            hid = hid * ops.matmul(xt, w3.T)
        sh = ops.matmul(hid, w2.T)
        if s.moe_shared_gate:
            gd = cd if megatron else rd
            g = ops.sigmoid(ops.matmul(xt.astype(gd), model.p(n["gate"]).astype(gd).T))
            sh = sh * g.astype(cd)
        out = out + sh
    if megatron:  # noqa: SIM108
        out = ops.transpose(out.reshape(sq, b, h), (1, 0, 2))
    else:
        out = out.reshape(b, sq, h)
    return out, extra
