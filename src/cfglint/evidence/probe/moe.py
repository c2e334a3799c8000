"""MoE routing in the probe's spec: what each side's config makes the router do, and how
the MoE shapes shrink. No framework and no numpy: safe for the plain lint.

Each side's fields are its *effective* semantics, read from the frameworks' source:

Megatron (megatron-core 0.16.1, ``megatron/core/transformer/moe/``):

* router.py:675-697 ``gating``: logits = input @ router weight in ``--moe-router-dtype``
  (fp32/fp64), else in the input dtype;
* moe_utils.py:608-748 ``topk_routing_with_score_function``: softmax without
  ``--moe-router-pre-softmax`` takes top-k of the logits, then a softmax over the k (the
  weights sum to 1); with it, softmax over all experts, then top-k (no renormalization);
  sigmoid: top-k of sigmoid scores, renormalized when k > 1; then ``* scaling_factor``;
* moe_utils.py:790-864 ``apply_router_token_dropping``: capacity
  ``ceil(tokens * k / experts * factor)`` (moe_utils.py:193); policy ``probs`` keeps an
  expert's highest weights, ``position`` its earliest tokens; dropped weights are zeroed,
  the others are not renormalized;
* router.py:264-356, moe_utils.py:46-133: aux_loss ``E * coeff / (k T^2) * sum_i P_i n_i``
  from a full softmax and its own top-k map; seq_aux_loss the same per sequence, averaged;
  global_aux_loss with token counts averaged over the micro-batches of a step (one here,
  so it equals aux_loss); z-loss ``coeff * mean(logsumexp(logits)^2)`` (moe_utils.py:136);
* both losses reach the gradient through ``MoEAuxLossAutoScaler`` (moe_utils.py:236) and
  are logged apart from the LM loss: the printed loss excludes them;
* shared_experts.py:128-131: the shared experts' output times ``sigmoid(x @ gate_weight)``.
* moe_utils.py:515-570 ``group_limited_topk`` (with ``--moe-router-group-topk``): each
  group of experts scored by the sum of its top (topk // group_topk) selection scores (the
  logits for softmax without pre-softmax), the other groups' experts masked to -inf.

MindFormers legacy (``mindformers/modules/transformer/moe.py`` @ f52743c, the master that
``data/mindformers.yaml`` records; MoEV2 with TopkRouterV2, which LlamaForCausalLM and the
research DeepSeek classes build for ``expert_num > 1``):

* Router (lines 518-579): the input cast to ``router_dense_type``, a bias-free Dense;
* TopkRouterV2.construct (1141-1195): softmax over all experts, or a sigmoid with
  ``use_gating_sigmoid`` (901-902), then top-k; the k weights renormalized when
  ``norm_topk_prob`` and k > 1 (eps 1e-9, 1390-1394), then always multiplied by
  ``routed_scaling_factor`` (1195), both before any drop;
* group-limited routing with topk_method group_limited_greedy (a group's maximum) or
  noaux_tc (its top-2 sum) over the probabilities (1151-1174); masked experts score 0.0,
  below every kept probability;
* capacity ``min(ceil(k N f / E), N)`` (calculate_expert_capacity_v2, 245-252); without
  ``enable_sdrop`` the slots are filled k-major (every token's first choice before any
  second choice, _maskout_overflowed_tokens_sort_kdrop 1242-1305), with it token-major
  (= Megatron's ``position``, 1307-1367); a dropped slot's weight is zeroed and the kept
  ones are not renormalized. (Up to MindFormers 31a92de4 the renormalization came after
  the drop and replaced the scaling; commit 6f00934d, 2025-02-28, moved it.)
* LLamaDecodeLayer builds MoEV2 without ``return_extra_loss`` (models/llama/
  llama_transformer.py:949-953), so MoEV2.construct (moe.py:490-516) drops the router's
  aux and z losses: neither reaches the loss, whatever aux_loss_types says;
* LlamaFeedForwardWithMoE (models/llama/llama_layer.py:721-836): shared experts times
  ``sigmoid(Dense(x in router_dense_type))`` with ``use_shared_expert_gating``.

MindFormers mcore (``mindformers/parallel_core/training_graph/transformer/moe/`` @ 477621fd):

* router.py:259-296: softmax or sigmoid over all experts, top-k, renormalized when
  ``norm_topk_prob`` and k > 1, then always ``* moe_router_topk_scaling_factor``;
* router.py:307-357: group-limited routing for more than one group, a group scored by the
  sum of its top (topk // group_topk) probabilities;
* token_dispatcher.py has no capacity: dropless whatever the capacity factor says;
* router.py:388-425: the aux loss ``coeff * E * sum_i P_i f_i`` over the step's tokens;
  wrapper.py:430-432 adds it to the LM loss, so the printed ``loss`` includes it; with
  ``print_separate_loss`` (on unless the config turns it off, base_trainer.py:733) the log
  also prints ``lm_loss`` (core/callback/callback.py:605-611), the number that compares
  with Megatron's.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cfglint.model.config import Config

# the probe's MoE size: top-k and experts shrink keeping their ratio, capped for 2 CPU cores
MAX_TOPK = 2
MAX_EXPERTS = 8
MAX_DENSE = 2
HIDDEN = 64
# The widest FFN the probe builds, as a multiple of its hidden size. Real models run 2.5x to
# 8x (expert FFNs less); a config beyond this keeps the probe small instead of following it
# (issue 32: FFN 1e8 allocated 3.9 GB, 1e12 asked for 7 TiB).
MAX_FFN_RATIO = 16


def probe_ffn(ffn: int, hidden: int, notes: list[str], what: str = "ffn_hidden_size") -> int:
    """The probe's FFN width for a config's ``ffn`` at ``hidden``: the same ratio to the
    probe's hidden size, at most MAX_FFN_RATIO (said in ``notes`` when capped). Integers
    are compared before any division, so a 400-digit value cannot overflow a float."""
    if ffn > hidden * MAX_FFN_RATIO:
        notes.append(
            f"{what} is more than {MAX_FFN_RATIO}x the hidden size ({hidden}): the probe "
            f"uses {MAX_FFN_RATIO}x"
        )
        ffn = hidden * MAX_FFN_RATIO
    return max(8, 2 * round(HIDDEN * ffn / hidden / 2))


LOSS_TYPES = ("aux_loss", "seq_aux_loss", "global_aux_loss", "none")
# MindFormers' mcore load-balancing types: at the probe's size (one micro-batch of one
# data-parallel rank, no sequence parallelism) each is the micro-batch aux loss; what
# makes them differ from it needs more (mindformers/parallel_core/training_graph/
# transformer/moe/router.py @ 477621fd)
MCORE_AUX_AT_PROBE_SIZE = {
    "sub_seq_aux_loss": "",
    "seq_aux_loss": (
        "seq_aux_loss averages the expert loads f_i over the sequence-parallel ranks "
        "(router.py:403-406); on the probe's one device it is the micro-batch aux loss"
    ),
    "gbs_aux_loss": (
        "gbs_aux_loss counts the expert loads f_i over every micro-batch of the step "
        "and every data-parallel rank (router.py:408-420, fi_accu reset each step by "
        "wrapper.py:573-580); the probe runs one micro-batch on one device, where it is "
        "the micro-batch aux loss"
    ),
}
# MindFormers' legacy model classes whose decoder layer returns the router's extra loss
# (research/deepseek2/deepseek2_transformer.py:539); their loss is not modelled here
_LEGACY_EXTRA_LOSS = ("DeepseekV2Config", "DeepseekV3Config")


def _val(cfg: Config, dotted: str) -> Any:
    v = cfg.get(dotted)
    return v.value if v is not None and v.known and not v.yaml11_string else None


def _pos_int(cfg: Config | None, dotted: str) -> int | None:
    if cfg is None:
        return None
    v = _val(cfg, dotted)
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def probe_topk(k: int) -> int:
    return min(k, MAX_TOPK)


def moe_values(cfg: Config, r: Any) -> dict[str, Any]:
    """The routing fields of one MoE side (shape fields come from :func:`shrink_moe`).
    ``r`` is spec._Reader: a value it cannot read becomes a Gap with the reason."""
    out: dict[str, Any] = {}
    mg = cfg.side == "megatron"
    legacy = cfg.kind == "mindformers-legacy"
    _topk_values(cfg, r, out, legacy)
    _order_values(r, out, mg)
    _capacity_values(cfg, r, out, mg, legacy)
    _aux_values(cfg, r, out, mg, legacy)
    if not mg and not legacy:
        # the LM loss is what Megatron prints; MindFormers mcore prints it beside `loss`
        # (LM + aux) with print_separate_loss, else only the sum
        sep = r.flag("moe_logged_aux", "moe.separate_lm_loss")
        if sep is not None:
            out["moe_logged_aux"] = not sep
    else:
        out["moe_logged_aux"] = False
    out["moe_impl"] = "megatron" if mg else "mindformers"
    rd = r.dtype("moe_router_dtype", "moe.router_dtype")
    if rd is not None:
        out["moe_router_dtype"] = rd
    gate = r.flag("moe_shared_gate", "moe.shared_expert_gate", absent=False)
    if gate is not None:
        out["moe_shared_gate"] = gate
    _group_values(r, out)
    eb = r.flag("moe_expert_bias", "moe.expert_bias", absent=False)
    if eb:
        # the bias changes the choice from step 2 on: its update is not modelled
        r.miss("moe_topk", "the load-based expert bias (aux-loss-free balancing) is not modelled")
    return out


def _topk_values(cfg: Config, r: Any, out: dict[str, Any], legacy: bool) -> None:
    """How many experts each token takes, and the router's score function."""
    k = _pos_int(cfg, "moe.router_topk")
    if k is None:
        r.miss("moe_topk", "the number of experts per token is unknown")
    else:
        out["moe_topk"] = probe_topk(k)
    score, why = r.raw("moe.score_function")
    if why and legacy and cfg.get("moe.score_function") is not None:
        score, why = "softmax", ""  # TopkRouterV2 takes a softmax; use_gating_sigmoid unset
    if why:
        r.miss("moe_score", why)
    elif score in ("softmax", "sigmoid"):
        out["moe_score"] = score
    else:
        r.miss("moe_score", f"router score function {score!r} is not modelled")


def _order_values(r: Any, out: dict[str, Any], mg: bool) -> None:
    """Softmax before or after top-k, top-k renormalization and scaling."""
    kk = out.get("moe_topk", 2)
    if mg:
        pre = r.flag("moe_pre_softmax", "moe.router_pre_softmax")
        if out.get("moe_score") == "sigmoid":
            pre = True  # moe_utils.py:723-731: sigmoid scores before top-k, whatever the flag
        if pre is not None:
            out["moe_pre_softmax"] = pre
        norm = r.flag("moe_norm_topk", "moe.norm_topk_prob")
        if out.get("moe_score") == "sigmoid":
            norm = kk > 1  # moe_utils.py:738: sigmoid weights renormalized when k > 1
        if norm is not None:
            out["moe_norm_topk"] = norm
    else:
        # scores over all experts, top-k, renormalized before any drop (legacy moe.py:
        # 1192-1193 @ f52743c; mcore router.py:259-296)
        out["moe_pre_softmax"] = True
        norm = r.flag("moe_norm_topk", "moe.norm_topk_prob")
        if norm is not None:
            out["moe_norm_topk"] = bool(norm and kk > 1)
            out["moe_norm_after_drop"] = False
    scale = r.num("moe_topk_scale", "moe.topk_scaling_factor", lo=0.0)
    if scale is not None:
        # applied after the renormalization on every side (legacy moe.py:1195 @ f52743c)
        out["moe_topk_scale"] = scale if scale > 0 else 1.0


def _capacity_values(cfg: Config, r: Any, out: dict[str, Any], mg: bool, legacy: bool) -> None:
    """The expert capacity and which tokens a full expert drops."""
    cf_v = cfg.get("moe.capacity_factor")
    if not mg and not legacy:
        out["moe_capacity"] = 0.0  # mcore token dispatcher: dropless
    elif cf_v is None or (cf_v.known and cf_v.value is None):
        out["moe_capacity"] = 0.0
    else:
        cf = r.num("moe_capacity", "moe.capacity_factor", lo=0.0)
        if cf is not None:
            out["moe_capacity"] = cf
    if out.get("moe_capacity", 0.0) > 0:
        if legacy:
            sd = r.flag("moe_drop", "moe.enable_sdrop")
            if sd is not None:
                out["moe_drop"] = "position" if sd else "kmajor"
        else:
            pol, why = r.raw("moe.token_drop_policy")
            if why:
                r.miss("moe_drop", why)
            elif pol in ("probs", "position"):
                out["moe_drop"] = pol
            else:
                r.miss("moe_drop", f"token drop policy {pol!r} is not modelled")


def _aux_values(cfg: Config, r: Any, out: dict[str, Any], mg: bool, legacy: bool) -> None:
    """The auxiliary (load-balancing) and z losses."""
    if legacy:
        if cfg.model_class in _LEGACY_EXTRA_LOSS:
            r.miss(
                "moe_aux_coeff",
                f"{cfg.model_class}'s extra losses (research/deepseek2) are not modelled",
            )
        else:
            # llama_transformer.py:775-779 builds MoEV2 without return_extra_loss
            out["moe_aux"], out["moe_aux_coeff"], out["moe_z_coeff"] = "none", 0.0, 0.0
    else:
        coeff = r.num("moe_aux_coeff", "moe.aux_loss_coeff", lo=0.0)
        lb, why = r.raw("moe.load_balancing_type")
        # the file's spelling (the normalizer reads gbs_aux_loss as Megatron's
        # global_aux_loss, normalize/mindformers/moe.py Spelled)
        typ = str(getattr(lb, "written", lb)) if not why else ""
        if not mg and typ in MCORE_AUX_AT_PROBE_SIZE:
            # MindFormers' mcore router (router.py:388-425 @ 477621fd) computes every
            # supported type as coeff * E * sum_i P_i f_i; they differ only in which tokens
            # f_i is counted over
            if typ != "sub_seq_aux_loss" and coeff:
                r.limit("moe_aux", MCORE_AUX_AT_PROBE_SIZE[typ])
            typ = "aux_loss"
        elif typ == "sub_seq_aux_loss":
            typ = "aux_loss"
        if why:
            r.miss("moe_aux_coeff", why)
        elif typ not in LOSS_TYPES or (not mg and typ not in ("aux_loss", "none")):
            r.miss("moe_aux_coeff", f"load balancing {lb} is not modelled")
        elif coeff is not None:
            out["moe_aux"] = typ if coeff > 0 else "none"
            out["moe_aux_coeff"] = coeff if typ != "none" else 0.0
        z = r.num("moe_z_coeff", "moe.z_loss_coeff", lo=0.0)
        if z is not None and z > 0 and not mg:
            r.miss("moe_z_coeff", "MindFormers' mcore z-loss is not modelled")
        elif z is not None:
            out["moe_z_coeff"] = z


_KEPT = re.compile(r"^(\d+) of (\d+) groups kept$")
_SUMMED = re.compile(r"^sum of top (\d+)( logits)?$")


def _group_values(r: Any, out: dict[str, Any]) -> None:
    """The side's group-limited routing at full size (normalize/moe_groups.py); shrunk to
    the probe's experts by :func:`shrink_groups` once the shapes are known. Whether the
    groups are scored on logits or probabilities is the side's selection scores, which
    moe_pre_softmax / moe_score already say."""
    lim, why = r.raw("moe.group_limit")
    if why:
        r.miss("moe_groups", why)
        return
    if lim == "no grouping":
        out["moe_groups"], out["moe_group_topk"], out["moe_group_top"] = 0, 0, 1
        return
    m = _KEPT.match(str(lim))
    if m is None:
        r.miss("moe_groups", f"group-limited routing {lim!r} is not modelled")
        return
    sc, why = r.raw("moe.group_score")
    top = 1 if sc == "max" else (int(g.group(1)) if (g := _SUMMED.match(str(sc))) else 0)
    if why or top < 1:
        r.miss("moe_groups", why or f"group score {sc!r} is not modelled")
        return
    out["moe_groups"], out["moe_group_topk"], out["moe_group_top"] = (
        int(m.group(2)),
        int(m.group(1)),
        top,
    )


def shrink_groups(d: dict[str, Any], experts: int, notes: list[str]) -> None:
    """Group-limited routing at the probe's size: groups of at least 2 experts (a group of
    one is plain top-k), as many as fit up to the side's count (8 experts: 4 groups of 2),
    the kept share as close as it goes while still masking some group, and at most the
    group size summed. 8 groups keeping 4 with a top-2 sum become 4 groups of 2 keeping 2,
    scored by their sum: different full-size settings can meet at the probe's size, where
    the runner then says the specs agree."""
    g_full, k_full = d.get("moe_groups", 0), d.get("moe_group_topk", 0)
    if not g_full:
        return
    g = max((x for x in range(2, g_full + 1) if experts % x == 0 and experts // x >= 2), default=0)
    if not g:
        note = f"{experts} experts cannot form groups: group-limited routing not run"
        if note not in notes:
            notes.append(note)
        d["moe_groups"], d["moe_group_topk"], d["moe_group_top"] = 0, 0, 1
        return
    keep = min(g - 1, max(1, round(g * k_full / g_full)))
    top = min(d.get("moe_group_top", 1), experts // g)
    note = (
        f"{k_full} of {g_full} expert groups kept shrunk to {keep} of {g} "
        f"(groups of {experts // g})"
    )
    if (g, keep) != (g_full, k_full) and note not in notes:
        notes.append(note)
    d["moe_groups"], d["moe_group_topk"], d["moe_group_top"] = g, keep, top


def shrink_moe(
    mf: Config | None, mg: Config | None, hidden: int | None
) -> tuple[dict[str, int], dict[str, tuple[Any, Any]], list[str]]:
    """MoE shapes at the probe's size, shared by both sides.

    Leading dense layers stay dense (at most 2), followed by one MoE layer; with no dense
    layer the probe's 2 layers are both MoE, as in the model. The expert count keeps the
    top-k / experts ratio for top-k shrunk to at most 2, capped at 8 experts: 128 experts
    with top-8 become 8 with top-2 (a ratio of 1/4 instead of 1/16, so the capacity still
    has ~32 token slots per expert at 128 tokens a step); Mixtral's 8 with top-2 stays.
    Expert and shared-expert FFN widths keep their ratio to the hidden size."""
    notes: list[str] = []
    diffs: dict[str, tuple[Any, Any]] = {}
    moe = [c for c in (mf, mg) if c is not None and c.is_moe]
    if not moe:
        return {}, diffs, notes
    if len(moe) == 1 and mf is not None and mg is not None:
        diffs["moe.num_experts"] = (_val(mf, "moe.num_experts"), _val(mg, "moe.num_experts"))
        notes.append("only one side is MoE: the probe runs both sides dense")
        return {}, diffs, notes
    diffs.update(_shape_differences(mf, mg))
    ref = mg if mg is not None and mg.is_moe else moe[0]
    other = mf if ref is mg else mg
    n = _probe_experts(ref, other, notes)
    pd = _probe_dense(ref, notes)
    ffn = _probe_width(ref, "moe.expert_ffn_size", hidden, notes)
    if not ffn:
        ffn = 4 * HIDDEN
        notes.append("expert FFN size unknown: the probe uses 4 x hidden")
    return (
        {
            "layers": pd + 1 if pd else 2,
            "moe_experts": n,
            "moe_dense": pd,
            "moe_ffn": ffn,
            "moe_shared_ffn": _probe_width(ref, "moe.shared_expert_ffn_size", hidden, notes),
        },
        diffs,
        notes,
    )


def _shape_differences(mf: Config | None, mg: Config | None) -> dict[str, tuple[Any, Any]]:
    """The MoE shape settings both sides give, with different values."""
    diffs: dict[str, tuple[Any, Any]] = {}
    for dotted in (
        "moe.num_experts",
        "moe.first_k_dense",
        "moe.expert_ffn_size",
        "moe.shared_expert_ffn_size",
    ):
        a = _val(mf, dotted) if mf is not None else None
        b = _val(mg, dotted) if mg is not None else None
        if a is not None and b is not None and a != b:
            diffs[dotted] = (a, b)
    return diffs


def _probe_experts(ref: Config, other: Config | None, notes: list[str]) -> int:
    """The probe's expert count: the top-k / experts ratio kept for the shrunk top-k,
    capped at MAX_EXPERTS."""
    experts = _pos_int(ref, "moe.num_experts") or _pos_int(other, "moe.num_experts") or 8
    k = _pos_int(ref, "moe.router_topk") or _pos_int(other, "moe.router_topk") or 2
    pk = probe_topk(k)
    n = max(pk + 1, min(MAX_EXPERTS, round(experts * pk / k))) if experts > k else experts
    n = min(n, experts)
    if n != experts:
        notes.append(f"{experts} experts with top-{k} shrunk to {n} with top-{pk}")
    return n


def _probe_dense(ref: Config, notes: list[str]) -> int:
    """The probe's leading dense layers: the model's, at most MAX_DENSE."""
    dense_v = _val(ref, "moe.first_k_dense")
    dense = dense_v if isinstance(dense_v, int) and not isinstance(dense_v, bool) else 0
    if dense > MAX_DENSE:
        notes.append(f"{dense} leading dense layers shrunk to {MAX_DENSE}")
    return min(max(dense, 0), MAX_DENSE)


def _probe_width(ref: Config, dotted: str, hidden: int | None, notes: list[str]) -> int:
    """An FFN width at the probe's size (its ratio to the hidden size kept); 0 unknown."""
    f = _val(ref, dotted)
    if not isinstance(f, int) or isinstance(f, bool) or f <= 0 or not hidden:
        return 0
    return probe_ffn(f, hidden, notes, dotted.split(".")[-1])


def capacity(tokens: int, topk: int, experts: int, factor: float) -> int:
    """Slots per expert. Megatron: ceil(T k / E * f), no drop when it reaches T
    (moe_utils.py:193-211, 829-833); MindFormers legacy: min(ceil(k T f / E), T)
    (moe.py:252-258, mp = 1). An expert never gets more than T tokens, so both drop the
    same way."""
    return min(math.ceil(tokens * topk / experts * factor), tokens)


def mindspore_cannot(spec: Any) -> str:
    """Why a MoE spec cannot run in the MindSpore process ("" when it can)."""
    position = spec.moe_capacity > 0 and spec.moe_drop == "position"
    if spec.moe_experts and position and spec.moe_impl == "megatron":
        # moe_utils.py:842-846 keeps the tokens torch.topk returns among the equal ones of
        # the routing map: implementation-defined, and on CPU not the earliest tokens
        # (measured with torch 2.13)
        return (
            "Megatron's position drop keeps whichever tokens torch.topk returns among "
            "ties; MindSpore cannot reproduce that choice"
        )
    return ""


def _renormalizes(s: Any) -> bool:
    """Softmax scores renormalized over the chosen experts before any drop."""
    return bool(
        s.moe_score == "softmax"
        and s.moe_norm_topk
        and not (s.moe_norm_after_drop and s.moe_capacity > 0)
    )


def same_math_fields(a: Any, b: Any) -> list[str]:
    """MoE fields where ``a`` and ``b`` differ only in the order of the same math (see
    plan.same_math)."""
    if not (a.moe_experts and b.moe_experts):
        return []
    out = []
    drops = any(s.moe_capacity > 0 and s.moe_drop != "probs" for s in (a, b))
    if a.moe_impl != b.moe_impl and not drops:
        out.append("moe_impl")
    both_norm = _renormalizes(a) and _renormalizes(b)
    # groups scored by a sum rank differently on logits and on probabilities
    summed = any(s.moe_groups and s.moe_group_top > 1 for s in (a, b))
    if a.moe_pre_softmax != b.moe_pre_softmax and both_norm and not summed:
        out.append("moe_pre_softmax")
    dropless = a.moe_capacity == 0 and b.moe_capacity == 0
    if a.moe_norm_after_drop != b.moe_norm_after_drop and dropless and both_norm:
        out.append("moe_norm_after_drop")  # nothing is dropped: one renormalization
    if a.moe_logged_aux != b.moe_logged_aux and a.moe_aux == "none" and a.moe_z_coeff == 0:
        out.append("moe_logged_aux")  # nothing to print besides the LM loss
    return out
