"""One MoE layer in torch, with the spec's routing semantics (evidence/probe/moe.py lists
where each comes from). With a Megatron spec this is megatron-core 0.16.1's TopKRouter and
SequentialMLP, step by step (file:line in megatron/core/transformer/moe/); the MindFormers
variants (renormalization after the drop, k-major slots, weights on the expert output)
follow MindFormers' TopkRouterV2 and MoEV2 so a knob's effect can be isolated in torch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from cfglint.evidence.probe.moe import capacity
from cfglint.evidence.probe.weights import gated, moe_prefixes


def route(spec, logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """[T, E] logits -> (weights [T, E], routing map [T, E] bool)."""
    s = spec
    k = s.moe_topk
    if s.moe_score == "softmax":
        if s.moe_pre_softmax:  # moe_utils.py:717-719
            scores = torch.softmax(logits, dim=-1, dtype=torch.float32).type_as(logits)
            probs, idx = torch.topk(scores, k=k, dim=1)
        else:  # moe_utils.py:720-722: top-k of the logits, softmax over those k
            top, idx = torch.topk(logits, k=k, dim=1)
            probs = torch.softmax(top, dim=-1, dtype=torch.float32).type_as(logits)
    else:  # moe_utils.py:723-731
        scores = torch.sigmoid(logits.float()).type_as(logits)
        probs, idx = torch.topk(scores, k=k, dim=1)
    if (
        s.moe_norm_topk
        and not s.moe_norm_after_drop
        and (s.moe_pre_softmax or s.moe_score != "softmax")
    ):
        # Megatron sigmoid (moe_utils.py:731) and MindSpeed-LLM --norm-topk-prob; MindFormers
        # mcore router.py:290-293 (eps 1e-20)
        probs = probs / (probs.sum(dim=-1, keepdim=True) + 1e-20)
    if s.moe_topk_scale != 1.0:  # moe_utils.py:735-736
        probs = probs * s.moe_topk_scale
    t = logits.shape[0]
    rows = torch.arange(t).unsqueeze(1)
    weights = torch.zeros_like(logits)
    weights = weights.index_put((rows, idx), probs)
    rmap = torch.zeros_like(logits, dtype=torch.bool).index_put(
        (rows, idx), torch.ones_like(idx, dtype=torch.bool)
    )
    if s.moe_capacity > 0:
        weights, rmap = drop(spec, weights, rmap, idx)
    if s.moe_norm_after_drop:
        # MindFormers TopkRouterV2 up to 31a92de4 (moe.py:1593-1598, 1693-1697): the kept
        # experts' weights renormalized, eps 1e-9 (since 6f00934d it renormalizes before the
        # drop; no config of the current release sets this)
        weights = weights / (weights.sum(dim=-1, keepdim=True) + 1e-9)
    return weights, rmap


def drop(spec, weights: torch.Tensor, rmap: torch.Tensor, idx: torch.Tensor):
    s = spec
    t, e = weights.shape
    cap = capacity(t, s.moe_topk, e, s.moe_capacity)
    if cap >= t:
        return weights, rmap
    if s.moe_drop == "probs":  # moe_utils.py:839-841
        _, keep = torch.topk(weights, k=cap, dim=0, sorted=False)
        mask = torch.zeros_like(weights).scatter(0, keep, 1).bool()
    elif s.moe_drop == "position" and s.moe_impl == "megatron":  # moe_utils.py:842-846
        _, keep = torch.topk(rmap.int(), k=cap, dim=0, sorted=False)
        mask = torch.zeros_like(weights).scatter(0, keep, 1).bool()
    else:
        # MindFormers: a running count per expert over the slots in order, token-major with
        # sdrop (moe.py:1619-1628), k-major without it (1551-1560); a slot past the
        # capacity is dropped
        order = idx if s.moe_drop == "position" else idx.t()
        onehot = F.one_hot(order.reshape(-1), e)  # [slots, E] in fill order
        pos = torch.cumsum(onehot, dim=0) * onehot
        kept = (pos > 0) & (pos <= cap)
        kept_slot = kept.any(dim=-1).reshape(order.shape)
        kept_slot = kept_slot if s.moe_drop == "position" else kept_slot.t()
        mask = torch.zeros_like(rmap).scatter(1, idx, kept_slot)
    # moe_utils.py:853-862 (padding to capacity adds zero-weight slots: no change in value)
    rmap = rmap & mask
    return weights * rmap, rmap


def aux_losses(spec, logits: torch.Tensor, seq: int, batch: int) -> torch.Tensor:
    """The aux and z losses that reach the gradient (router.py:548-636)."""
    s = spec
    e, k = s.moe_experts, s.moe_topk
    total = logits.new_zeros((), dtype=torch.float32)
    if s.moe_z_coeff > 0:  # moe_utils.py:136-165
        total = total + torch.mean(torch.square(torch.logsumexp(logits, dim=-1))) * s.moe_z_coeff
    if s.moe_aux == "none" or s.moe_aux_coeff <= 0:
        return total
    # moe_utils.py:750-797: scores from a full softmax (or normalized sigmoid), own top-k map
    if s.moe_score == "softmax":
        scores = torch.softmax(logits, dim=-1, dtype=torch.float32)
    else:
        scores = torch.sigmoid(logits)
        scores = scores / (scores.sum(dim=-1, keepdim=True) + 1e-20)
    _, top = torch.topk(scores, k=k, dim=1)
    rmap = torch.zeros_like(logits).int().scatter(1, top, 1)
    if s.moe_aux == "seq_aux_loss":
        # router.py:303-354: [s, b*E] so each sequence balances on its own, then / b; the
        # tokens must be sequence-major as Megatron's [s, b] are
        sc = scores.reshape(seq, -1)
        rm = rmap.reshape(seq, -1)
        return (
            total
            + (torch.sum(sc.sum(dim=0) * rm.sum(dim=0)) * (e * s.moe_aux_coeff / (k * seq * seq)))
            / batch
        )
    t = logits.shape[0]
    # aux_loss; global_aux_loss averages the counts over the step's micro-batches: one here
    return total + torch.sum(scores.sum(dim=0) * rmap.sum(dim=0)) * (
        e * s.moe_aux_coeff / (k * t * t)
    )


def moe_layer(model, x: torch.Tensor, i: int) -> tuple[torch.Tensor, torch.Tensor]:
    """x [b, s, h] (compute dtype) -> (output [b, s, h], extra loss)."""
    s = model.spec
    b, sq, h = x.shape
    megatron = s.moe_impl == "megatron"
    # Megatron's hidden states are [s, b, h]: its tokens are sequence-major
    xt = (x.transpose(0, 1) if megatron else x).reshape(-1, h)
    n = moe_prefixes(model.layout, i, bool(s.moe_shared_ffn))
    rd = model.dtype(s.moe_router_dtype)
    logits = xt.to(rd) @ model.p[n["router"]].to(rd).t()  # moe_utils.py:1160-1262
    weights, rmap = route(s, logits)
    extra = aux_losses(s, logits, sq, b)
    out = torch.zeros_like(xt)
    cd = x.dtype
    for e in range(s.moe_experts):
        tok = torch.nonzero(rmap[:, e], as_tuple=False).squeeze(-1)
        if tok.numel() == 0:
            continue
        w1, w3, w2 = model.expert(n, e)
        xe = xt[tok]
        pe = weights[tok, e].to(cd).unsqueeze(-1)
        hid = model.act(xe @ w1.t())
        if gated(s):
            hid = hid * (xe @ w3.t())
        if megatron:  # noqa: SIM108  mlp.py:167-169, 232-234: the weight scales the activation
            y = (hid * pe) @ w2.t()
        else:  # MindFormers moe.py:1415-1424: the weight scales each expert's output
            y = (hid @ w2.t()) * pe
        out = out.index_add(0, tok, y)
    if s.moe_shared_ffn:
        w1, w3, w2 = model.shared(n)
        hid = model.act(xt @ w1.t())
        if gated(s):
            hid = hid * (xt @ w3.t())
        sh = hid @ w2.t()
        if s.moe_shared_gate:
            gw = model.p[n["gate"]]
            gd = cd if megatron else rd  # shared_experts.py:128-131 / llama_layer.py:695
            sh = sh * torch.sigmoid(xt.to(gd) @ gw.to(gd).t()).to(cd)
        out = out + sh
    out = out.reshape(sq, b, h).transpose(0, 1) if megatron else out.reshape(b, sq, h)
    return out, extra
