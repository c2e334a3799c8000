"""MoE structure of a MindFormers config: the legacy ``moe_config`` and the mcore fields."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.balancing import NO_LOSS, device_loss
from cfglint.normalize.mindformers.defaults import Component
from cfglint.normalize.mindformers.view import MFView, as_int
from cfglint.normalize.moe_groups import limit, no_grouping, score, score_value, settle_max


def read_moe(view: MFView, cfg: Config) -> None:
    e = cfg.moe
    if view.mcore:
        _moe_mcore(view, cfg)
        return
    mc = view.comp("MoEConfig", "moe_config")
    if view.node("moe_config") is None:
        e.num_experts = Value.default(
            None, "moe_config.expert_num", "MindFormers (no moe_config: dense)"
        )
        return
    e.num_experts = view.key("moe_config.expert_num", mc, kind="int")
    cfg.is_moe = (
        e.num_experts.known and isinstance(e.num_experts.value, int) and e.num_experts.value > 1
    )
    e.router_topk = view.key("moe_config.num_experts_chosen", mc, kind="int")
    cf = view.key("moe_config.capacity_factor", mc, kind="float")
    if cf.known and isinstance(cf.value, (int, float)) and cf.value <= 0:
        cf = cf.model_copy(
            update={"value": None, "detail": cf.detail or "capacity_factor <= 0 means dropless"}
        )
    e.capacity_factor = cf
    _legacy_aux_loss(view, cfg)
    _legacy_extra_balancing(view, cfg)
    _legacy_drops(view, cfg, mc)
    _gmm_is_dropless(view, cfg, mc)
    _legacy_expert_sizes(view, cfg, mc)
    _legacy_router(view, cfg, mc)
    _legacy_groups(view, cfg)


def _legacy_drops(view: MFView, cfg: Config, mc: Component | None) -> None:
    """z-loss, token dropping and the router's kernel settings of moe_config."""
    e = cfg.moe
    e.z_loss_coeff = view.key("moe_config.z_loss_factor", mc, kind="float")
    if cfg.model_class in _DROPS_EXTRA_LOSS and e.z_loss_coeff.known:
        e.z_loss_coeff = Value.derived(
            0.0,
            "moe_config.z_loss_factor",
            "MoEV2 without return_extra_loss drops the z-loss with the aux loss",
            [e.z_loss_coeff],
        )
    e.enable_sdrop = view.key("moe_config.enable_sdrop", mc, kind="bool")
    # legacy TopkRouterV2 (modules/transformer/moe.py @ 31a92de4): with enable_sdrop the
    # capacity keeps tokens in order (Megatron's "position"); without it the slots are filled
    # k-major, every token's first choice before any second choice (lines 1551-1553), which
    # is neither of Megatron's policies
    e.token_drop_policy = (
        Value.derived(
            "position" if e.enable_sdrop.value else "kmajor",
            "moe_config.enable_sdrop",
            "enable_sdrop: slots kept in token order"
            if e.enable_sdrop.value
            else "no enable_sdrop: TopkRouterV2 fills expert slots k-major (every token's "
            "first choice before any second choice, each in token order)",
            [e.enable_sdrop],
        )
        if e.enable_sdrop.known and not e.enable_sdrop.yaml11_string
        else None
    )
    e.router_dtype = view.key("moe_config.router_dense_type", mc, kind="dtype")
    e.use_fused_ops_topkrouter = view.key("moe_config.use_fused_ops_topkrouter", mc, kind="bool")
    e.shared_expert_gate = view.key("moe_config.use_shared_expert_gating", mc, kind="bool")
    e.num_shared_experts = view.key("moe_config.shared_expert_num", mc, kind="int")


def _legacy_expert_sizes(view: MFView, cfg: Config, mc: Component | None) -> None:
    e = cfg.moe
    moe_ffn = view.node("moe_config.moe_intermediate_size")
    if moe_ffn is not None and cfg.model_class not in _DROPS_EXTRA_LOSS:
        e.expert_ffn_size = view.key("moe_config.moe_intermediate_size", mc, kind="int")
    elif cfg.structure.ffn_hidden_size is None:  # no single FFN size (Swin's stages)
        e.expert_ffn_size = None
    else:
        # LlamaForCausalLM's experts are LlamaFeedForward(intermediate_size=...) of the
        # model (llama_layer.py:661-663, llama_transformer.py:750-763 @ 31a92de4):
        # moe_config.moe_intermediate_size is read only by DeepSeek-style models
        e.expert_ffn_size = Value.derived(
            cfg.structure.ffn_hidden_size.value,
            "expert FFN size",
            "experts use the model's intermediate size"
            + (
                f" ({cfg.model_class} does not read moe_config.moe_intermediate_size)"
                if moe_ffn is not None
                else ""
            ),
            [cfg.structure.ffn_hidden_size],
        )
    if e.num_shared_experts.known and e.expert_ffn_size is not None and e.expert_ffn_size.known:
        e.shared_expert_ffn_size = Value.derived(
            (as_int(e.num_shared_experts) or 0) * (as_int(e.expert_ffn_size) or 0),
            "shared expert FFN size",
            "shared_expert_num x expert FFN size",
            [e.num_shared_experts, e.expert_ffn_size],
        )


def _legacy_router(view: MFView, cfg: Config, mc: Component | None) -> None:
    """How the legacy router scores, normalizes and places the experts."""
    e = cfg.moe
    e.router_pre_softmax = Value.default(
        True,
        "moe_config.routing_policy",
        "MindFormers MoEConfig (softmax over all experts before top-k)",
    )
    e.norm_topk_prob = _normalized(view.key("moe_config.norm_topk_prob", mc, kind="bool"), e)
    e.topk_scaling_factor = view.key("moe_config.routed_scaling_factor", mc, kind="float")
    sig = view.key("moe_config.use_gating_sigmoid", mc, kind="bool")
    e.score_function = (
        sig.model_copy(update={"value": "sigmoid" if sig.value else "softmax"})
        if sig.known
        else sig
    )
    e.expert_bias = view.key("moe_config.balance_via_topk_bias", mc, kind="bool")
    e.expert_bias_update_rate = Value.unknown(
        "moe_config.topk_bias_update_rate",
        "the legacy router's bias moves at TopkBiasBalanceCallback's own topk_bias_update_rate "
        "(core/callback/callback.py:2926, 2980 @ mindformers-2.1.0.whl), which cfglint does "
        "not read",
    )
    if cfg.model_class in _COUNTS_DENSE_LAYERS:
        fk = view.key("moe_config.first_k_dense_replace", mc)
        if fk.known and isinstance(fk.value, bool):
            fk = fk.model_copy(update={"value": int(fk.value)})
        e.first_k_dense = fk
    else:
        # LlamaForCausalLM-style models build every layer as MoE when expert_num > 1
        # (llama_transformer.py LLamaDecodeLayer, mindformers @ 31a92de4 lines 764-781);
        # MoEConfig.first_k_dense_replace (a boolean there) is not read by them
        e.first_k_dense = Value.default(
            0,
            "moe_config.first_k_dense_replace",
            f"{cfg.model_class or 'MindFormers'} (every layer is MoE; first_k_dense_replace "
            "is only read by DeepSeek-style models)",
        )


# topk_method values for which TopkRouterV2 groups the experts (moe.py:1151 @ f52743c)
_GROUPED_METHODS = ("group_limited_greedy", "noaux_tc")


def _legacy_groups(view: MFView, cfg: Config) -> None:
    """Group-limited routing of the legacy MoE (normalize/moe_groups.py).

    Only TopkRouterV2 reads topk_method (every read is in that class, mindformers/modules/
    transformer/moe.py:893 and 1151-1180 @ f52743c; TopkRouter V1, lines 591-828, has no
    groups). For group_limited_greedy or noaux_tc it reshapes the scores (softmax or
    sigmoid, plus the expert bias with balance_via_topk_bias) into n_group groups, scores a
    group by its maximum (group_limited_greedy) or its top-2 sum (noaux_tc, lines
    1160-1164), keeps the topk_group best (1165-1168) and zeroes the other groups' experts
    before the top-k (1169-1174). Any other topk_method ("greedy", the MoEConfig default,
    line 136) is a plain top-k over all experts."""
    e, mc = cfg.moe, view.comp("MoEConfig", "moe_config")
    knob = "moe_config.topk_method"
    method = view.key(knob, mc)
    policy = view.key("moe_config.routing_policy", mc)
    v2 = (policy.known and policy.value == "TopkRouterV2") or cfg.model_class in _V2_ROUTER_CLASSES
    moev3 = _moev3_inputs(view, cfg, mc)
    if moev3:
        # LlamaFeedForwardWithMoE builds MoEV3 for use_gmm (llama_layer.py:775-789 @ f52743c),
        # whose _topk is a plain top-k (moev3.py:372-385): topk_method is not read
        e.group_limit = no_grouping(
            knob,
            "use_gmm with shared experts routes through MoEV3, whose top-k is over all "
            "experts (topk_method is not read)",
            moev3,
        )
    elif not v2:
        e.group_limit = no_grouping(
            knob,
            "the legacy TopkRouter (V1) has no group-limited routing (only TopkRouterV2 "
            "reads topk_method)",
            [policy],
        )
    elif not method.known:
        e.group_limit = method
    elif method.value not in _GROUPED_METHODS:
        e.group_limit = no_grouping(
            knob,
            f"topk_method {method.value}: TopkRouterV2 takes a plain top-k over all experts "
            "(it groups only for group_limited_greedy / noaux_tc)",
            [method],
        )
    else:
        groups = view.key("moe_config.n_group", mc, kind="int")
        kept = view.key("moe_config.topk_group", mc, kind="int")
        missing = [v.knob for v in (groups, kept) if v.known and v.value is None]
        if missing:
            e.group_limit = Value.unknown(
                knob,
                f"topk_method {method.value} needs {' and '.join(missing)}: TopkRouterV2 "
                "fails without it (moe.py:1158, 1165)",
            )
        else:
            e.group_limit = limit(groups, kept, knob, f"TopkRouterV2 {method.value}", e.num_experts)
    grouped = method.known and method.value in _GROUPED_METHODS
    e.group_score = score_value(
        e.group_limit,
        score(2 if method.value == "noaux_tc" else 1),
        "group score",
        "noaux_tc: each group's top-2 sum (moe.py:1160-1162)"
        if method.value == "noaux_tc"
        else "group_limited_greedy: each group's maximum (moe.py:1164)",
        [method] if grouped else [],
    )
    e.group_limit, e.group_score = settle_max(e.group_limit, e.group_score, e.router_topk)


def _mcore_groups(view: MFView, cfg: Config) -> None:
    """Group-limited routing of the mcore router (normalize/moe_groups.py).

    TransformerConfig.moe_router_num_groups / moe_router_group_topk (transformer_config.py:
    248, 267 @ 477621fd; the HF-style n_group / topk_group are renamed onto them,
    transformer_config_utils.py:342-343 @ f52743c). The training router groups only for more
    than one group (training_graph/transformer/moe/router.py:247-249) and scores a group by
    the sum of its top (moe_router_topk // moe_router_group_topk) scores plus the expert bias
    when it is on (router.py:331-338), on the softmax or sigmoid probabilities. A
    moe_router_group_topk without moe_router_num_groups is refused (transformer_config.py:
    565-568); MFModelConfig.topk_method (mf_model_config.py:293) is not read by the
    training router."""
    e = cfg.moe
    f = view.mcore_field
    groups = f("moe_router_num_groups", "int")
    kept = f("moe_router_group_topk", "int")
    knob = groups.knob
    if not groups.known:
        e.group_limit = groups
    elif kept.known and kept.value and not groups.value:
        e.group_limit = Value.unknown(
            knob,
            "moe_router_group_topk without moe_router_num_groups: MindFormers refuses the "
            "configuration (transformer_config.py:565-568)",
        )
    elif not (isinstance(groups.value, int) and groups.value > 1):
        e.group_limit = no_grouping(
            knob,
            "moe_router_num_groups unset or 1: the router groups only for more than one group "
            "(router.py:249)",
            [groups],
        )
    elif not kept.known:
        e.group_limit = kept
    elif not kept.value:
        e.group_limit = Value.unknown(
            knob,
            "moe_router_num_groups without moe_router_group_topk: the router divides the "
            "top-k by it (router.py:336) and fails",
        )
    else:
        topk = e.router_topk
        if topk.known and isinstance(topk.value, int) and topk.value % kept.value:
            e.group_limit = Value.unknown(
                knob,
                f"moe_router_topk {topk.value} is not divisible by moe_router_group_topk "
                f"{kept.value}: MindFormers refuses the configuration "
                "(transformer_config.py:579-583)",
            )
        else:
            e.group_limit = limit(
                groups, kept, knob, "MindFormers mcore group-limited routing", e.num_experts
            )
    topk = e.router_topk
    top = (
        topk.value // kept.value
        if topk is not None
        and topk.known
        and isinstance(topk.value, int)
        and kept.known
        and isinstance(kept.value, int)
        and kept.value > 0
        else 0
    )
    e.group_score = score_value(
        e.group_limit,
        score(top),
        "group score",
        f"the sum of each group's top {top} (topk // group_topk) scores (router.py:336-338)",
        [v for v in (topk, kept) if v is not None],
    )
    e.group_limit, e.group_score = settle_max(e.group_limit, e.group_score, e.router_topk)


# Legacy model classes whose layers read first_k_dense_replace as a count of leading
# dense layers (research/deepseek2, research/deepseek3: layer_id < first_k_dense_replace).
_COUNTS_DENSE_LAYERS = ("DeepseekV2Config", "DeepseekV3Config")
# Legacy model classes whose decoder layer builds MoEV2 without return_extra_loss, so the
# router's aux and z losses never reach the loss: LLamaDecodeLayer (models/llama/
# llama_transformer.py:775-779 @ 31a92de4, the same at 15218ea4, 1d7cbefc, e1916045) and
# MoEV2.construct returning the extra loss only with return_extra_loss (modules/
# transformer/moe.py:858-862)
_DROPS_EXTRA_LOSS = ("LlamaConfig",)
# Where each release does that: (commit, LLamaDecodeLayer's MoEV2(...) call in
# models/llama/llama_transformer.py, MoEV2.construct's return_extra_loss branch in
# modules/transformer/moe.py), read at each commit of data/versions.yaml and in each wheel.
_EXTRA_LOSS_LINES = {
    "v1.3.0": ("debac6a9", "657-661", "767-770"),
    "v1.3.2": ("024279c2", "680-684", "767-770"),
    "v1.5.0": ("06e1af77", "961-965", "887-890"),
    "v1.6.0": ("68fa8494", "949-953", "893-896"),
    "v1.7.0": ("8ccc49b3", "949-953", "512-515"),
    "master": ("f52743ca", "949-953", "512-515"),
    # the same lines in the package index's wheels
    "v1.8.0": ("mindformers-1.8.0.whl", "949-953", "512-515"),
    "v1.9.0": ("mindformers-1.9.0.whl", "949-953", "512-515"),
    "v2.0.0": ("mindformers-2.0.0.whl", "949-953", "512-515"),
    "v2.1.0": ("mindformers-2.1.0.whl", "949-953", "512-515"),
}
# Legacy model classes that build MoEV2 (TopkRouterV2) for expert_num > 1: their aux loss
# comes only from aux_loss_types / aux_loss_factors (moe.py TopkRouterV2: aux_loss_config;
# MoEV2 refuses any routing_policy but TopkRouterV2).
_V2_ROUTER_CLASSES = ("LlamaConfig", "InternLM2Config", "DeepseekV2Config", "DeepseekV3Config")


def _moev3_inputs(view: MFView, cfg: Config, mc: object) -> list[Value]:
    """[use_gmm, shared_expert_num] when the legacy layers route through MoEV3, else [].
    Legacy Llama and DeepSeek layers with shared experts build LlamaFeedForwardWithMoE,
    whose routed experts are MoEV3 when use_gmm is on (models/llama/llama_layer.py:785-786,
    llama_transformer.py:944-967, research/deepseek3/deepseek2_model.py:1063-1071 @ v1.5.0)."""
    gmm = view.key("moe_config.use_gmm", mc, kind="bool")  # type: ignore[arg-type]
    shared = cfg.moe.num_shared_experts
    if not (gmm.known and gmm.value is True and shared is not None and shared.known):
        return []
    if not (isinstance(shared.value, int) and shared.value > 0):
        return []
    return [gmm, shared]


def _gmm_is_dropless(view: MFView, cfg: Config, mc: object) -> None:
    """MoEV3 (modules/transformer/moev3.py) has no expert capacity: every token reaches its
    experts, whatever capacity_factor says."""
    moev3 = _moev3_inputs(view, cfg, mc)
    if not moev3:
        return
    cfg.moe.capacity_factor = Value.derived(
        None,
        "moe_config.use_gmm",
        "use_gmm with shared experts routes through MoEV3, which has no expert capacity "
        "(dropless); capacity_factor is not read",
        moev3,
    )
    cfg.moe.token_drop_policy = None


def _legacy_aux_loss(view: MFView, cfg: Config) -> None:
    """Which load-balancing loss the legacy router really adds, and its weight.

    MoE (TopkRouterV1) multiplies the router's balance loss by ``aux_loss_factor``
    (mindformers/modules/transformer/moe.py MoE.construct, v1.5.0 line 625). MoEV2 with
    TopkRouterV2, which LlamaForCausalLM-style models build, reads only
    ``dict(zip(aux_loss_types, aux_loss_factors))``: the "expert" entry is the balance loss;
    ``aux_loss_factor`` is stored but never used (v1.5.0 lines 1328 and 1571)."""
    e, mc = cfg.moe, view.comp("MoEConfig", "moe_config")
    if cfg.model_class in _DROPS_EXTRA_LOSS:
        rel = view.release_label
        commit, layer, moe = _EXTRA_LOSS_LINES.get(rel, _EXTRA_LOSS_LINES["master"])
        rel = rel if rel in _EXTRA_LOSS_LINES else "master"
        why = (
            f"{cfg.model_class}: LlamaForCausalLM builds MoEV2 without return_extra_loss "
            f"(llama_transformer.py:{layer}), so the router's aux loss never reaches the loss "
            f"whatever aux_loss_types / aux_loss_factor say (moe.py:{moe}; MindFormers {rel} "
            f"{commit})"
        )
        written = [
            view.value(n, k)
            for k in ("moe_config.aux_loss_types", "moe_config.aux_loss_factors")
            if (n := view.node(k)) is not None
        ]
        e.aux_loss_coeff = (
            Value.derived(0.0, "moe_config.aux_loss_types", why, written)
            if written
            else Value.default(0.0, "moe_config.aux_loss_types", why)
        )
        e.load_balancing_type = e.aux_loss_coeff.model_copy(update={"value": "none"})
        return
    policy = view.key("moe_config.routing_policy", mc)
    v2 = (policy.known and policy.value == "TopkRouterV2") or cfg.model_class in _V2_ROUTER_CLASSES
    types = view.node("moe_config.aux_loss_types")
    if not v2:
        e.aux_loss_coeff = view.key("moe_config.aux_loss_factor", mc, kind="float")
        e.load_balancing_type = Value.default(
            "aux_loss",
            "moe_config.aux_loss_types",
            "MindFormers MoE with TopkRouterV1 (one aux loss)",
        )
        return
    names = types.plain() if types is not None else None
    if not isinstance(names, list) or "expert" not in names:
        why = (
            "MindFormers TopkRouterV2 adds a balance loss only for an 'expert' entry of "
            "aux_loss_types; "
            + ("none is set" if not names else f"aux_loss_types is {names}")
            + " (aux_loss_factor is not read by this router)"
        )
        if types is not None:
            e.aux_loss_coeff = Value.derived(
                0.0,
                "moe_config.aux_loss_types",
                why,
                [view.value(types, "moe_config.aux_loss_types")],
            )
        else:
            e.aux_loss_coeff = Value.default(0.0, "moe_config.aux_loss_types", why)
        e.load_balancing_type = e.aux_loss_coeff.model_copy(update={"value": "none"})
        return
    idx = names.index("expert")
    factors = view.node("moe_config.aux_loss_factors")
    if factors is None or not factors.is_seq or idx >= len(factors.value):
        e.aux_loss_coeff = Value.unknown(
            "moe_config.aux_loss_factors", "aux_loss_types has 'expert' but no matching factor"
        )
    else:
        e.aux_loss_coeff = view.value(
            factors.value[idx], f"moe_config.aux_loss_factors[{idx}]", "float"
        )
    # "device" and "comm" entries are losses of their own (_legacy_extra_balancing)
    e.load_balancing_type = view.value(types, "moe_config.aux_loss_types").model_copy(
        update={"value": "aux_loss"}
    )


def _legacy_extra_balancing(view: MFView, cfg: Config) -> None:
    """The "device" and "comm" entries of aux_loss_types (TopkRouterV2.construct, moe.py:
    1577-1593 @ fd4deebc): each added when its factor is non-zero. The device loss is
    DeepSeek-V2's over moe_config.expert_group_size groups (the form MindSpeed-LLM computes
    too); the comm loss here is the device loss over expert-parallel ranks: the expert
    choices that land on each rank (_comm_load_balancing, :1861-1888), not the number of
    tokens that reach it as in DeepSeek-V2 and MindSpeed-LLM."""
    e = cfg.moe
    lb = e.load_balancing_type
    dropped = (
        lb is not None and lb.known and lb.value == NO_LOSS and cfg.model_class in _DROPS_EXTRA_LOSS
    )
    names_node = view.node("moe_config.aux_loss_types")
    names = names_node.plain() if names_node is not None else None
    factors = view.node("moe_config.aux_loss_factors")
    for field, entry in (("device_balancing", "device"), ("comm_balancing", "comm")):
        knob = "moe_config.aux_loss_types"
        if dropped or not isinstance(names, list) or entry not in names:
            why = lb.detail if dropped and lb is not None else f"no {entry!r} in aux_loss_types"
            setattr(e, field, Value.default(NO_LOSS, knob, why))
            continue
        idx = names.index(entry)
        if factors is None or not factors.is_seq or idx >= len(factors.value):
            setattr(e, field, Value.unknown(knob, f"{entry!r} has no matching aux_loss_factors"))
            continue
        w = view.value(factors.value[idx], f"moe_config.aux_loss_factors[{idx}]", "float")
        setattr(e, field, _extra_form(view, cfg, entry, w))


def _extra_form(view: MFView, cfg: Config, entry: str, w: Value) -> Value:
    if not w.known or not w.value:
        return w if not w.known else Value.derived(NO_LOSS, w.knob, "weight 0", [w])
    if entry == "device":
        g = view.key(
            "moe_config.expert_group_size", view.comp("MoEConfig", "moe_config"), kind="int"
        )
        if not g.known:
            return g
        return Value.derived(
            device_loss(w.value, g.value),
            w.knob,
            "MindFormers TopkRouterV2 device loss (moe.py:1831-1859)",
            [w, g],
        )
    ep = cfg.parallel.expert_parallel
    if ep is None or not ep.known:
        return Value.unknown(w.knob, "the comm loss groups the experts by expert_parallel, unknown")
    return Value.derived(
        f"{w.value} x expert choices on each of {ep.value} expert-parallel ranks",
        w.knob,
        "MindFormers TopkRouterV2 comm loss (moe.py:1861-1888)",
        [w, ep],
    )


def _normalized(flag: Value, e: object) -> Value:
    """Whether the chosen experts' weights sum to 1. MindFormers always takes a softmax over
    all experts before top-k (legacy TopkRouterV2; mcore router.py routing() at
    mindformers @ 477621fd and HEAD, which does not read moe_router_pre_softmax), then
    renormalizes the top-k only when norm_topk_prob is set and more than one expert is
    chosen. That is the canonical form compared with Megatron's."""
    topk = getattr(e, "router_topk", None)
    if not flag.known or topk is None or not topk.known:
        return flag
    if isinstance(topk.value, int) and topk.value <= 1 and flag.value:
        return Value.derived(
            False,
            flag.knob,
            "with one expert per token MindFormers does not renormalize (the weight is the "
            "softmax probability)",
            [flag, topk],
        )
    return flag


class Spelled(str):
    """A canonical value that prints the way the file spells it: compares as the canonical
    name, reads as "gbs_aux_loss (global_aux_loss)" in messages."""

    written: str

    def __new__(cls, canonical: str, written: str) -> Spelled:
        obj = super().__new__(cls, canonical)
        obj.written = written
        return obj

    def __str__(self) -> str:
        return f"{self.written} (Megatron's {str.__str__(self)})"


def _moe_mcore(view: MFView, cfg: Config) -> None:
    e = cfg.moe
    f = view.mcore_field
    e.num_experts = f("num_moe_experts", "int")
    cfg.is_moe = (
        e.num_experts.known and isinstance(e.num_experts.value, int) and e.num_experts.value > 1
    )
    e.router_topk = f("moe_router_topk", "int")
    for field in ("device_balancing", "comm_balancing"):
        # the mcore router computes only the expert-level loss (aux_loss_config's "expert":
        # parallel_core/training_graph/transformer/moe/router.py:133, 206 @ fd4deebc)
        setattr(
            e, field, Value.default(NO_LOSS, "aux_loss_types", "the mcore router has no such loss")
        )
    e.capacity_factor = f("moe_expert_capacity_factor", "float")
    e.aux_loss_coeff = f("moe_aux_loss_coeff", "float")
    z = f("moe_z_loss_coeff", "float")
    if z.known and z.value is None:
        z = z.model_copy(update={"value": 0.0, "detail": z.detail + " (no z-loss)"})
    e.z_loss_coeff = z
    # the mcore wrapper's `loss` is lm_loss + aux_loss (wrapper.py:430-432 @ 477621fd); with
    # print_separate_loss the log also prints lm_loss (callback.py:605-611), which the
    # trainer turns on unless the config says otherwise (base_trainer.py:733)
    sep = view.node("print_separate_loss")
    e.separate_lm_loss = (
        view.value(sep, "print_separate_loss", "bool")
        if sep is not None
        else Value.default(
            True, knob="print_separate_loss", source="MindFormers BaseTrainer (base_trainer.py:733)"
        )
    )
    dropped = view.node(f"{view.model_path}.router_aux_loss_coef")
    if dropped is not None and cfg.model_class == "Qwen3MoeConfig":
        view.warnings.append(
            f"{dropped.path}:{dropped.line}: Qwen3MoeConfig drops "
            "router_aux_loss_coef; only moe_aux_loss_coeff sets the aux-loss weight"
        )
    _mcore_experts(view, cfg)
    _mcore_router(view, cfg)
    _mcore_groups(view, cfg)


def _mcore_experts(view: MFView, cfg: Config) -> None:
    """Token dropping, router kernel settings and expert sizes of the mcore fields."""
    e = cfg.moe
    f = view.mcore_field
    e.token_drop_policy = f("moe_token_drop_policy")
    e.enable_sdrop = (
        e.token_drop_policy.model_copy(update={"value": e.token_drop_policy.value == "position"})
        if e.token_drop_policy.known
        else e.token_drop_policy
    )
    e.router_dtype = f("moe_router_dtype", "dtype")
    e.use_fused_ops_topkrouter = f("use_fused_ops_topkrouter", "bool")
    e.shared_expert_gate = f("use_shared_expert_gating", "bool")
    e.num_shared_experts = f("shared_expert_num", "int")
    e.expert_ffn_size = view.mcore_raw("moe_ffn_hidden_size", "int") or Value.derived(
        cfg.structure.ffn_hidden_size.value,
        "moe_ffn_hidden_size",
        "defaults to ffn_hidden_size",
        [cfg.structure.ffn_hidden_size],
    )
    sh = view.mcore_raw("moe_shared_expert_intermediate_size", "int")
    if sh is None and e.num_shared_experts.known:
        sh = Value.derived(
            (as_int(e.num_shared_experts) or 0) * (as_int(e.expert_ffn_size) or 0),
            "moe_shared_expert_intermediate_size",
            "shared_expert_num x moe_ffn_hidden_size",
            [e.num_shared_experts, e.expert_ffn_size],
        )
    e.shared_expert_ffn_size = sh


def _mcore_router(view: MFView, cfg: Config) -> None:
    """How the mcore router scores, normalizes and balances the experts."""
    e = cfg.moe
    f = view.mcore_field
    e.router_pre_softmax = Value.default(
        True,
        "moe_router_pre_softmax",
        "MindFormers mcore router (softmax over all experts before top-k; "
        "moe_router_pre_softmax is not read by router.py routing())",
    )
    e.norm_topk_prob = _normalized(f("norm_topk_prob", "bool"), e)
    sf = f("moe_router_topk_scaling_factor", "float")
    if sf.known and sf.value is None:
        sf = sf.model_copy(update={"value": 1.0, "detail": sf.detail + " (no scaling)"})
    e.topk_scaling_factor = sf
    e.score_function = f("moe_router_score_function")
    lb = f("moe_router_load_balancing_type")
    # MindFormers' name for Megatron's global-batch auxiliary loss
    if lb.known and lb.value == "gbs_aux_loss":
        lb = lb.model_copy(update={"value": Spelled("global_aux_loss", "gbs_aux_loss")})
    coeff = e.aux_loss_coeff
    if cfg.is_moe and lb.known and lb.value != "none" and coeff.known and not coeff.value:
        # the mcore router multiplies every balancing loss by moe_aux_loss_coeff
        # (training_graph/transformer/moe/router.py:388-417 @ 477621fd): weight 0 is no
        # balancing at all, which is what a side without the loss is compared with (MOE017)
        lb = Value.derived(
            "none",
            lb.knob,
            f"no load-balancing loss reaches the loss ({lb.value}, weight 0)",
            [lb, coeff],
        )
    e.load_balancing_type = lb
    e.expert_bias = f("moe_router_enable_expert_bias", "bool")
    # the mcore model moves each expert bias by sign(err) x this rate
    # (training_graph/base_models/gpt/gpt_model.py:402, 642 @ mindformers-2.1.0.whl)
    e.expert_bias_update_rate = f("moe_router_bias_update_rate", "float")
    fk = f("first_k_dense_replace", "int")
    if fk.known and fk.value is None:
        fk = fk.model_copy(update={"value": 0, "detail": fk.detail + " (every layer is MoE)"})
    e.first_k_dense = fk
