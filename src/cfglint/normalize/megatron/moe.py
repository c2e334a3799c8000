"""MoE structure of a Megatron / MindSpeed-LLM run."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.balancing import NO_LOSS, device_loss
from cfglint.normalize.megatron.common import DTYPE, cfg_compute_dtype
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.moe_groups import NONE, limit, no_grouping, score, score_value, settle_max


def read_moe(m: MegatronInput, cfg: Config) -> None:
    e = cfg.moe
    e.num_experts = m.arg("num_experts")
    cfg.is_moe = bool(e.num_experts.value)
    e.router_topk = m.arg("moe_router_topk")
    e.capacity_factor = m.arg("moe_expert_capacity_factor")
    e.aux_loss_coeff = _first(m.arg("moe_aux_loss_coeff"))
    z = m.arg("moe_z_loss_coeff")
    if z.known and z.value is None:
        z = z.model_copy(update={"value": 0.0, "detail": z.detail + " (no z-loss)"})
    e.z_loss_coeff = z
    e.token_drop_policy = m.arg("moe_token_drop_policy")
    e.pad_to_capacity = m.arg("moe_pad_expert_input_to_capacity")
    e.router_dtype = _router_dtype(m)
    _expert_sizes(m, cfg)
    _router_scores(m, cfg)
    e.expert_bias = m.arg("moe_router_enable_expert_bias")
    e.expert_bias_update_rate = m.arg("moe_router_bias_update_rate")
    e.first_k_dense = _first_k_dense(m)
    _group_limited_greedy(m, cfg)
    _group_routing(m, cfg)
    # after the group routing, which reads the routing type itself
    _effective_balancing(m, cfg)
    _extra_balancing(m, cfg)


def _router_dtype(m: MegatronInput) -> Value:
    """The router's dtype: --moe-router-dtype, else float32 under --router-gating-in-fp32,
    else the compute dtype."""
    rd = m.arg("moe_router_dtype")
    if rd.known and rd.value is None and m.arg("router_gating_in_fp32").value:
        rd = m.arg("router_gating_in_fp32").model_copy(update={"value": "float32"})
    elif rd.known and rd.value is None:
        rd = rd.model_copy(
            update={
                "value": cfg_compute_dtype(m),
                "detail": rd.detail + " (router runs in the compute dtype)",
            }
        )
    elif rd.known:
        rd = rd.model_copy(update={"value": DTYPE.get(str(rd.value), rd.value)})
    return rd


def _expert_sizes(m: MegatronInput, cfg: Config) -> None:
    """Shared experts (gate, count, FFN size) and the routed experts' FFN size."""
    e = cfg.moe
    e.shared_expert_gate = (
        m.arg("moe_shared_expert_gate")
        if "moe_shared_expert_gate" in m.table.by_dest
        else m.arg("shared_expert_gate")
    )
    e.num_shared_experts = (
        m.arg("n_shared_experts") if "n_shared_experts" in m.table.by_dest else None
    )
    sh = m.arg("moe_shared_expert_intermediate_size")
    n_sh = e.num_shared_experts
    if sh.known and sh.value is None and n_sh is not None and n_sh.known and n_sh.value:
        sh = Value.derived(None, "--n-shared-experts", "", [n_sh])  # filled after expert size
    elif sh.known and sh.value is None:
        sh = sh.model_copy(update={"value": 0, "detail": sh.detail + " (no shared experts)"})
    e.shared_expert_ffn_size = sh
    eff = m.arg("moe_ffn_hidden_size")
    if eff.known and eff.value is None and cfg.is_moe:
        eff = Value.derived(
            cfg.structure.ffn_hidden_size.value,
            "--moe-ffn-hidden-size",
            "defaults to the dense FFN size",
            [cfg.structure.ffn_hidden_size],
        )
    e.expert_ffn_size = eff
    if (
        e.shared_expert_ffn_size is not None
        and e.shared_expert_ffn_size.knob == "--n-shared-experts"
    ):
        n = e.num_shared_experts.value  # type: ignore[union-attr]
        e.shared_expert_ffn_size = Value.derived(
            n * (eff.value or 0) if eff.known else None,
            "--n-shared-experts",
            "MindSpeed-LLM: n_shared_experts x expert FFN size",
            [e.num_shared_experts, eff],
        )


def _router_scores(m: MegatronInput, cfg: Config) -> None:
    """How the router scores, normalizes and scales its top-k choice."""
    e = cfg.moe
    e.load_balancing_type = _first(m.arg("moe_router_load_balancing_type"))
    e.router_pre_softmax = m.arg("moe_router_pre_softmax")
    e.score_function = m.arg("moe_router_score_function")
    e.norm_topk_prob = (
        _softmax_topk_normalized(m, e.load_balancing_type)
        or _sigmoid_normalized(m, e.score_function, e.router_topk)
        or _normalized(m, e.router_pre_softmax)
    )
    if _is_softmax_topk(m, e.load_balancing_type):
        e.router_pre_softmax = Value.derived(
            True,
            "--moe-router-load-balancing-type",
            "softmax_topk takes the softmax over all experts before the top-k "
            "(--moe-router-pre-softmax is not read)",
            [e.load_balancing_type],
        )
    sf = m.arg("moe_router_topk_scaling_factor")
    if sf.known and sf.value is None:
        sf = sf.model_copy(update={"value": 1.0, "detail": sf.detail + " (no scaling)"})
    e.topk_scaling_factor = sf


def _first_k_dense(m: MegatronInput) -> Value:
    if (
        "first_k_dense_replace" in m.table.by_dest
        and m.arg("first_k_dense_replace").value is not None
    ):
        fk = m.arg("first_k_dense_replace")
        if fk.known and isinstance(fk.value, int) and fk.value < 0:
            # layer n is MoE when n-1 >= first_k_dense_replace: -1 leaves no dense layer
            # (mindspeed_llm/core/transformer/transformer_block.py:163 @ c77308a1)
            fk = Value.derived(
                0, fk.knob, f"{fk.value} leaves every layer MoE (no leading dense layer)", [fk]
            )
        return fk
    return _dense_prefix(m.arg("moe_layer_freq"))


# routing types whose router adds no load-balancing loss, whatever --moe-aux-loss-coeff
# says: Megatron core computes the aux loss only in aux_loss_load_balancing /
# seq_aux_loss_load_balancing (router.py routing(), core_v0.12.1 lines 393-399; core_v0.19.0
# the same dispatch); "none" is a plain top-k, sinkhorn balances by routing, not by a loss.
# MindSpeed-LLM's softmax_topk is a softmax, a top-k and nothing else (mindspeed_llm/core/
# transformer/moe/router.py:567-584 @ c77308a1, :488-494 @ v2.1.0 3186197).
_NO_BALANCING_LOSS = ("none", "softmax_topk", "sinkhorn")
# what a router adds when its weight is positive; weight 0 leaves no balancing at all
_LOSS_TYPES = ("aux_loss", "seq_aux_loss", "global_aux_loss", "pai_megatron_aux_loss")


def _effective_balancing(m: MegatronInput, cfg: Config) -> None:
    """The balancing loss that really reaches the gradients: weight 0 for a routing type
    that adds none, and the type "none" when no loss is added (a loss type with weight 0),
    so that a side without any balancing loss compares against one with it (MOE017)."""
    e = cfg.moe
    lb, coeff = e.load_balancing_type, e.aux_loss_coeff
    if not cfg.is_moe or lb is None or not lb.known:
        return
    lb = e.load_balancing_type = _mindspeed_loss_type(m, lb)
    if lb.value in _NO_BALANCING_LOSS and coeff is not None and coeff.known and coeff.value:
        e.aux_loss_coeff = Value.derived(
            0.0,
            coeff.knob or "--moe-aux-loss-coeff",
            f"the {lb.value} routing type adds no load-balancing loss "
            f"({coeff.knob or '--moe-aux-loss-coeff'} is not read)",
            [lb, coeff],
        )
        coeff = e.aux_loss_coeff
    if lb.value == "sinkhorn" or coeff is None or not coeff.known:
        return
    if lb.value in _NO_BALANCING_LOSS or (lb.value in _LOSS_TYPES and not coeff.value):
        e.load_balancing_type = Value.derived(
            "none",
            lb.knob or "--moe-router-load-balancing-type",
            f"no load-balancing loss reaches the loss ({lb.value}"
            + (", weight 0)" if lb.value in _LOSS_TYPES else ")"),
            [lb, coeff],
        )


# MindSpeed-LLM routing types whose router adds a balancing loss of its own (c77308a1):
# "none" adds the sequence-wise loss with --seq-aux (router.py:627-632, apply_seq_aux_loss
# :437-490, weighted by --moe-aux-loss-coeff, nothing at weight 0); group_limited_greedy adds
# the micro-batch loss, or the sequence-wise one with --seq-aux (router.py:78-108).
_MSL_LOSS_OF_ROUTING = {
    "none": (None, "seq_aux_loss"),
    "group_limited_greedy": ("aux_loss", "seq_aux_loss"),
}


def _mindspeed_loss_type(m: MegatronInput, lb: Value) -> Value:
    """The balancing loss a MindSpeed-LLM routing type adds, under Megatron's name."""
    if "seq_aux" not in m.table.by_dest or lb.value not in _MSL_LOSS_OF_ROUTING:
        return lb
    seq = m.arg("seq_aux")
    plain, with_seq = _MSL_LOSS_OF_ROUTING[str(lb.value)]
    loss = with_seq if seq.known and seq.value else plain
    if loss is None or not seq.known:
        return lb
    how = "per sequence (--seq-aux)" if loss == with_seq else "per micro-batch (no --seq-aux)"
    return Value.derived(
        loss,
        lb.knob or "--moe-router-load-balancing-type",
        f"MindSpeed-LLM's {lb.value} routing adds the load-balancing loss {how}",
        [lb, seq],
    )


def _is_softmax_topk(m: MegatronInput, lb: Value | None) -> bool:
    return (
        m.kind.startswith("mindspeed")
        and lb is not None
        and lb.known
        and lb.value == "softmax_topk"
    )


def _softmax_topk_normalized(m: MegatronInput, lb: Value | None) -> Value | None:
    """MindSpeed-LLM's softmax_topk routing keeps the full-softmax probabilities of the
    chosen experts, divided by their sum only with --norm-topk-prob (router.py:567-580 @
    c77308a1); --moe-router-pre-softmax is not read there."""
    if not _is_softmax_topk(m, lb):
        return None
    flag = m.arg("norm_topk_prob") if "norm_topk_prob" in m.table.by_dest else None
    if flag is not None and flag.known and flag.value:
        return flag
    return Value.derived(
        False,
        "--moe-router-load-balancing-type",
        "softmax_topk keeps the full-softmax probabilities of the chosen experts"
        + (" (no --norm-topk-prob)" if flag is not None else ""),
        [lb] + ([flag] if flag is not None else []),  # type: ignore[list-item]
    )


# MindSpeed-LLM's group_limited_greedy router (group_limited_greedy_topKgating,
# mindspeed_llm/core/transformer/moe/router.py:35-68 @ c77308a1, the same lines at v2.1.0
# 3186197, v2.2.0, v2.3.0 and v26.1.0): softmax over all experts (:39), top-k of the kept
# groups, divided by the sum only when top-k > 1 and --norm-topk-prob (:57-59); otherwise the
# weights are multiplied by the scaling factor (:60-61; v2.1.0 reads --routed-scaling-factor,
# later releases --moe-router-topk-scaling-factor): normalized weights are never scaled.
_GLG = "group_limited_greedy"
_GLG_WHERE = "mindspeed_llm/core/transformer/moe/router.py:39-61 @ c77308a1"


def _group_limited_greedy(m: MegatronInput, cfg: Config) -> None:
    e, lb = cfg.moe, cfg.moe.load_balancing_type
    if not (m.kind.startswith("mindspeed") and lb is not None and lb.known and lb.value == _GLG):
        return
    e.router_pre_softmax = Value.derived(
        True,
        lb.knob or "--moe-router-load-balancing-type",
        f"{_GLG} takes the softmax over all experts before the top-k "
        f"(--moe-router-pre-softmax is not read; {_GLG_WHERE})",
        [lb],
    )
    flag = m.arg("norm_topk_prob") if "norm_topk_prob" in m.table.by_dest else None
    topk = e.router_topk
    if flag is None or not flag.known or topk is None or not topk.known:
        e.norm_topk_prob = Value.unknown("--norm-topk-prob", f"{_GLG}: needs top-k and the flag")
        return
    norm = bool(flag.value) and isinstance(topk.value, int) and topk.value > 1
    why = (
        "divides the chosen weights by their sum (top-k > 1 and --norm-topk-prob)"
        if norm
        else "keeps the full-softmax probabilities of the chosen experts"
        + (" (top-1)" if flag.value else " (no --norm-topk-prob)")
    )
    e.norm_topk_prob = Value.derived(norm, "--norm-topk-prob", f"{_GLG} {why}", [lb, flag, topk])
    if "routed_scaling_factor" in m.table.by_dest:  # v2.1.0 reads its own flag
        e.topk_scaling_factor = m.arg("routed_scaling_factor")
    if norm:
        sf = e.topk_scaling_factor
        e.topk_scaling_factor = Value.derived(
            1.0,
            (sf.knob if sf is not None else None) or "--moe-router-topk-scaling-factor",
            f"{_GLG} scales only weights it does not normalize ({_GLG_WHERE}): not read",
            [lb] + ([sf] if sf is not None else []),
        )


def _glg_groups(m: MegatronInput, n: Value) -> Value:
    """The expert groups of MindSpeed-LLM's group_limited_greedy router: --moe-router-num-groups
    (its deprecated spelling --n-group, the only one at v2.1.0), else one per expert-parallel
    rank (router.py:404-408 @ c77308a1, :363 @ v2.1.0 3186197)."""
    if n.known and n.value:
        return n
    for dest in ("deprecated_n_group", "n_group"):
        if dest in m.table.by_dest and m.arg(dest).known and m.arg(dest).value:
            return m.arg(dest)
    ep = m.arg("expert_model_parallel_size")
    return Value.derived(
        ep.value,
        "--expert-model-parallel-size",
        "MindSpeed-LLM group_limited_greedy: one group per expert-parallel rank "
        "without --moe-router-num-groups",
        [ep],
    )


def _extra_balancing(m: MegatronInput, cfg: Config) -> None:
    """DeepSeek-V2's device-level and communication balancing losses. MindSpeed-LLM adds them
    only in its group_limited_greedy router, each when its weight is positive (router.py:116-
    196 @ c77308a1; :123, :163 @ v2.1.0): the device loss sums the mean scores of each expert
    group against its mean load, the same quantity as MindFormers' "device" loss; the
    communication loss counts the tokens that reach each group (any of its experts chosen),
    scaled by group top-k / groups. Megatron core has neither."""
    e = cfg.moe
    if not cfg.is_moe:
        return
    # the routing type as written: _effective_balancing renamed it after the loss it adds
    lb = _first(m.arg("moe_router_load_balancing_type"))
    msl = "moe_device_level_aux_loss_coeff" in m.table.by_dest
    glg = msl and lb is not None and lb.known and lb.value == _GLG
    for field, dest, what in (
        ("device_balancing", "moe_device_level_aux_loss_coeff", "device-level"),
        ("comm_balancing", "moe_comm_aux_loss_coeff", "communication"),
    ):
        if not msl:
            setattr(e, field, Value.default(NO_LOSS, dest, "Megatron core adds no such loss"))
            continue
        w = m.arg(dest)
        setattr(e, field, _extra_loss(m, w, what, glg, lb))


def _extra_loss(m: MegatronInput, w: Value, what: str, glg: bool, lb: Value | None) -> Value:
    if not w.known:
        return w
    if not w.value or not glg:
        why = (
            f"weight {w.value}: no {what} loss"
            if not w.value
            else f"the {lb.value if lb is not None else '?'} routing type does not read it "
            f"(only group_limited_greedy adds a {what} loss)"
        )
        return Value.derived(NO_LOSS, w.knob, why, [w] + ([lb] if lb is not None else []))
    groups = _glg_groups(m, m.arg("moe_router_num_groups"))
    if not groups.known:
        return groups
    if what == "device-level":
        form = device_loss(w.value, groups.value)
    else:
        form = f"{w.value} x tokens reaching each of {groups.value} expert groups"
    return Value.derived(
        form, w.knob, "MindSpeed-LLM group_limited_greedy (router.py:116-196)", [w, groups]
    )


# MindSpeed-LLM routing types that never read the group flags: softmax_topk (router.py
# topk_router_routing, lines 571-588 @ c77308a1), pai_megatron_aux_loss (pai_megatron.py:23-27
# calls core topk_softmax_with_capacity without num_groups / group_topk), sparsemixer_topk
# (sparsemixer_top2); Megatron's sinkhorn takes a plain top-k of the normalized logits
# (core router.py sinkhorn_load_balancing)
_UNGROUPED = ("softmax_topk", "pai_megatron_aux_loss", "sparsemixer_topk", "sinkhorn")


def _group_routing(m: MegatronInput, cfg: Config) -> None:
    """Group-limited routing (normalize/moe_groups.py).

    Megatron core groups only when --moe-router-group-topk is set (compute_topk:
    ``if group_topk``, moe_utils.py:812 @ core_v0.19.0, :525 @ core_v0.12.1); it then needs
    --moe-router-num-groups (TransformerConfig.__post_init__ raises without it,
    transformer_config.py:2338-2347 @ core_v0.19.0). A group scores the sum of its top
    (topk // group_topk) scores (group_limited_topk, moe_utils.py:655-657 @ core_v0.19.0,
    :458-460 @ core_v0.12.1), taken on the logits for softmax without
    --moe-router-pre-softmax, on the softmax probabilities with it, on sigmoid scores plus
    the expert bias for sigmoid (moe_utils.py:842-867 @ core_v0.19.0).

    MindSpeed-LLM (c77308a1) copies the deprecated --n-group / --topk-group onto them
    (deprecated_args.py:76-85); its group_limited_greedy routing type has its own router:
    softmax, each group's maximum, --moe-router-num-groups or else the expert-parallel size
    groups (router.py:35-54, 404-409); its own topk_softmax_with_capacity, installed with
    --topk-softmax-in-fp32 (features_manager/moe/moe_router.py:124-126), and the hash router
    (--n-hash-layers) score a group by its top-2 sum whatever the top-k
    (moe_utils.py:79)."""
    e = cfg.moe
    knob = "--moe-router-group-topk"
    n, kept, msl = _group_flags(m)
    lb = e.load_balancing_type
    lbv = lb.value if lb is not None and lb.known else None
    flags = [v for v in (n, kept) if v.known and v.value]
    if lb is not None and not lb.known and flags:
        e.group_limit = Value.derived(None, knob, "", [lb])
    elif lbv in _UNGROUPED:
        why = f"the {lbv} routing type takes a plain top-k over all experts" + (
            " (--moe-router-num-groups / --moe-router-group-topk are not read)" if flags else ""
        )
        e.group_limit = no_grouping(knob, why, [lb, *flags] if lb is not None else flags)
    elif lbv == "group_limited_greedy" and msl:
        _greedy_groups(m, cfg, n, kept)
        return
    else:
        e.group_limit = _core_group_limit(m, cfg, n, kept, flags)
    e.group_score = _group_score(m, cfg, kept, msl, lbv)
    if e.group_limit is not None and e.group_score is not None:
        e.group_limit, e.group_score = settle_max(e.group_limit, e.group_score, e.router_topk)


def _group_flags(m: MegatronInput) -> tuple[Value, Value, bool]:
    """--moe-router-num-groups and --moe-router-group-topk (MindSpeed-LLM's deprecated
    --n-group / --topk-group where only they are set), and whether the parser is
    MindSpeed-LLM's."""
    n = m.arg("moe_router_num_groups")
    kept = m.arg("moe_router_group_topk")
    msl = "deprecated_n_group" in m.table.by_dest
    if msl:
        old_n, old_k = m.arg("deprecated_n_group"), m.arg("deprecated_topk_group")
        if old_n.known and old_n.value and not (n.known and n.value):
            n = old_n
        if old_k.known and old_k.value and not (kept.known and kept.value):
            kept = old_k
    return n, kept, msl


def _greedy_groups(m: MegatronInput, cfg: Config, n: Value, kept: Value) -> None:
    """MindSpeed-LLM's group_limited_greedy router: each group's maximum softmax
    probability."""
    e = cfg.moe
    knob = "--moe-router-group-topk"
    lb = e.load_balancing_type
    groups = _glg_groups(m, n)
    if not (kept.known and kept.value):
        e.group_limit = Value.unknown(
            knob, "group_limited_greedy routing needs --moe-router-group-topk (router.py:42)"
        )
    else:
        e.group_limit = limit(
            groups, kept, knob, "MindSpeed-LLM group_limited_greedy", e.num_experts
        )
    e.group_score = score_value(
        e.group_limit,
        score(1),
        "group score",
        "group_limited_greedy: each group's highest softmax probability (router.py:39-40)",
        [lb] if lb is not None else [],
    )
    e.group_limit, e.group_score = settle_max(e.group_limit, e.group_score, e.router_topk)


def _core_group_limit(
    m: MegatronInput, cfg: Config, n: Value, kept: Value, flags: list[Value]
) -> Value:
    """Megatron core's group limit: only with --moe-router-group-topk, which needs
    --moe-router-num-groups."""
    knob = "--moe-router-group-topk"
    if not kept.known:
        return kept
    if not kept.value:
        return no_grouping(
            knob,
            "no --moe-router-group-topk: plain top-k over all experts"
            + (" (--moe-router-num-groups alone does not group)" if flags else ""),
            [kept, *flags],
        )
    if not (n.known and n.value):
        return Value.unknown(
            "--moe-router-num-groups",
            "--moe-router-group-topk without --moe-router-num-groups: Megatron refuses the "
            "configuration (TransformerConfig.__post_init__)",
        )
    return limit(n, kept, knob, f"{m.table.label} group-limited routing", cfg.moe.num_experts)


def _group_score(
    m: MegatronInput, cfg: Config, kept: Value, msl: bool, lbv: object
) -> Value | None:
    e = cfg.moe
    lim = e.group_limit
    if lim is None or not lim.known or lim.value == NONE:
        return None if lim is None else score_value(lim, "", "group score", "", [])
    top2 = _msl_top2(m, lbv)
    if msl and top2 is not None:
        why = "MindSpeed-LLM topk_softmax_with_capacity: each group's top-2 sum (moe_utils.py:79)"
        return score_value(lim, score(2), "group score", why, top2)
    return _core_group_score(cfg, lim, kept)


def _msl_top2(m: MegatronInput, lbv: object) -> list[Value] | None:
    """The flags under which MindSpeed-LLM scores a group by its top-2 sum
    (--topk-softmax-in-fp32, or the hash router), None when neither is on."""
    fp32 = m.arg("topk_softmax_in_fp32") if "topk_softmax_in_fp32" in m.table.by_dest else None
    hashed = m.arg("n_hash_layers") if "n_hash_layers" in m.table.by_dest else None
    if (fp32 is not None and fp32.known and fp32.value) or (
        lbv == "none" and hashed is not None and hashed.known and (hashed.value or 0) >= 1
    ):
        return [v for v in (fp32, hashed) if v]
    return None


def _core_group_score(cfg: Config, lim: Value, kept: Value) -> Value:
    """Megatron core's group score: the sum of each group's top (topk // group_topk)."""
    e = cfg.moe
    topk, fn, pre = e.router_topk, e.score_function, e.router_pre_softmax
    for v in (topk, fn, pre):
        if v is None or not v.known:
            return Value.unknown("group score", "needs the top-k, score function and pre-softmax")
    if not isinstance(topk.value, int):  # type: ignore[union-attr]
        return Value.unknown("group score", f"cannot read top-k {topk.value!r}")  # type: ignore[union-attr]
    top = topk.value // kept.value  # type: ignore[union-attr]
    if top < 1:
        # topk(0): every group scores 0 and torch.topk keeps an arbitrary set of groups
        return Value.unknown(
            "group score",
            f"--moe-router-group-topk {kept.value} exceeds the top-k {topk.value}: every "  # type: ignore[union-attr]
            "group scores the sum of its top 0 scores, so which groups are kept is arbitrary",
        )
    on_logits = top > 1 and fn.value == "softmax" and not pre.value  # type: ignore[union-attr]
    return score_value(
        lim,
        score(top, on_logits),
        "group score",
        f"the sum of each group's top {top} (topk // group_topk) "
        + ("logits (softmax without --moe-router-pre-softmax)" if on_logits else "scores")
        + " (group_limited_topk)",
        [topk, kept, fn, pre],  # type: ignore[list-item]
    )


def _sigmoid_normalized(m: MegatronInput, score: Value, topk: Value | None) -> Value | None:
    """Megatron-LM's sigmoid router always divides the chosen scores by their sum when
    top-k > 1; --moe-router-pre-softmax only matters for softmax (moe_utils.py:852-868 @
    core_v0.19.0, :544-552 @ core_v0.12.1). MindSpeed-LLM routes through its own code
    (router.py), so it is left to :func:`_normalized`."""
    if m.kind == "mindspeed-script" or not (score.known and score.value == "sigmoid"):
        return None
    if topk is None or not topk.known or not isinstance(topk.value, int):
        return None
    return Value.derived(
        topk.value > 1,
        "--moe-router-score-function",
        "the sigmoid router divides the top-k scores by their sum"
        if topk.value > 1
        else "the sigmoid router keeps the single chosen score (top-1)",
        [score, topk],
    )


def _normalized(m: MegatronInput, pre: Value) -> Value:
    """Whether the chosen experts' weights sum to 1. Megatron's top-k router without
    --moe-router-pre-softmax takes the softmax over the k chosen logits, which is normalized
    by construction (and equals a softmax over all experts renormalized over the top k);
    with pre-softmax the weights are the full-softmax probabilities, renormalized only by
    MindSpeed-LLM's --norm-topk-prob (mindspeed_llm/core/transformer/moe/router.py:557-561
    @ c77308a1)."""
    flag = m.arg("norm_topk_prob") if "norm_topk_prob" in m.table.by_dest else None
    if not pre.known:
        return pre
    if not pre.value:
        return Value.derived(
            True,
            "--moe-router-pre-softmax",
            "without --moe-router-pre-softmax the softmax over the chosen experts sums to 1",
            [pre],
        )
    if flag is not None and flag.known and flag.value:
        return flag
    return Value.derived(
        False,
        "--moe-router-pre-softmax",
        "with --moe-router-pre-softmax the top-k weights are full-softmax probabilities"
        + (" (no --norm-topk-prob)" if flag is not None else ""),
        [pre] + ([flag] if flag is not None else []),
    )


def _first(v: Value) -> Value:
    if v.known and isinstance(v.value, list) and len(v.value) == 1:
        return v.model_copy(update={"value": v.value[0]})
    return v


def _dense_prefix(freq: Value) -> Value:
    """Leading dense layers implied by --moe-layer-freq ("[0]*3+[1]*58" or an int)."""
    if not freq.known:
        return freq
    f = freq.value
    if isinstance(f, int) or (isinstance(f, str) and f.strip().isdigit()):
        return freq.model_copy(update={"value": 0})
    if isinstance(f, str):
        pattern = _expand_layer_pattern(f)
        if pattern is None:
            return Value.unknown("--moe-layer-freq", f"cannot read pattern {f!r}", loc=freq.loc)
        n = 0
        while n < len(pattern) and pattern[n] == 0:
            n += 1
        return freq.model_copy(update={"value": n})
    if isinstance(f, list):
        n = 0
        while n < len(f) and f[n] == 0:
            n += 1
        return freq.model_copy(update={"value": n})
    return freq


def _expand_layer_pattern(text: str) -> list[int] | None:
    """The per-layer 0/1 list of a Megatron layer pattern (``[0]*3+[1]*58``,
    ``([1]*3+[0]*1)*3``, ``[0,1,1]``). Megatron runs the string through eval()
    (moe_freq_type, megatron/training/arguments.py:327 @ d98e8a6); here only its list
    arithmetic is read from the syntax tree, nothing is executed."""
    import ast

    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None

    def walk(node: ast.AST, depth: int) -> list[int] | int | None:
        if depth > 32:
            return None
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.List):
            items = [walk(e, depth + 1) for e in node.elts]
            return items if all(type(x) is int for x in items) else None  # type: ignore[return-value]
        if isinstance(node, ast.BinOp):
            a, b = walk(node.left, depth + 1), walk(node.right, depth + 1)
            if isinstance(node.op, ast.Add) and isinstance(a, list) and isinstance(b, list):
                return a + b if len(a) + len(b) <= 100_000 else None
            if isinstance(node.op, ast.Mult):
                seq, n = (a, b) if isinstance(a, list) else (b, a)
                if isinstance(seq, list) and type(n) is int and len(seq) * max(n, 0) <= 100_000:
                    return seq * n
        return None

    out = walk(tree.body, 0)
    return out if isinstance(out, list) else None
