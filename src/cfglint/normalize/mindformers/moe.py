"""MoE structure of a MindFormers config: the legacy ``moe_config`` and the mcore fields."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.mindformers.view import MFView, as_int


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
    types = view.node("moe_config.aux_loss_types")
    if types is not None and types.plain():
        factors = view.node("moe_config.aux_loss_factors")
        e.aux_loss_coeff = (
            view.value(factors, "moe_config.aux_loss_factors")
            if factors is not None
            else view.key("moe_config.aux_loss_factor", mc, kind="float")
        )
        if e.aux_loss_coeff.known and isinstance(e.aux_loss_coeff.value, list):
            e.aux_loss_coeff = e.aux_loss_coeff.model_copy(
                update={
                    "value": sum(x for x in e.aux_loss_coeff.value if isinstance(x, (int, float)))
                }
            )
        e.load_balancing_type = view.value(types, "moe_config.aux_loss_types")
    else:
        e.aux_loss_coeff = view.key("moe_config.aux_loss_factor", mc, kind="float")
        e.load_balancing_type = Value.default(
            "aux_loss", "moe_config.aux_loss_types", "MindFormers MoEConfig (one global aux loss)"
        )
    e.enable_sdrop = view.key("moe_config.enable_sdrop", mc, kind="bool")
    e.token_drop_policy = (
        e.enable_sdrop.model_copy(update={"value": "position" if e.enable_sdrop.value else "probs"})
        if e.enable_sdrop.known
        else None
    )
    e.router_dtype = view.key("moe_config.router_dense_type", mc, kind="dtype")
    e.use_fused_ops_topkrouter = view.key("moe_config.use_fused_ops_topkrouter", mc, kind="bool")
    e.shared_expert_gate = view.key("moe_config.use_shared_expert_gating", mc, kind="bool")
    e.num_shared_experts = view.key("moe_config.shared_expert_num", mc, kind="int")
    e.expert_ffn_size = (
        view.key("moe_config.moe_intermediate_size", mc, kind="int")
        if view.node("moe_config.moe_intermediate_size") is not None
        else Value.derived(
            cfg.structure.ffn_hidden_size.value,
            "expert FFN size",
            "experts use the model's intermediate size",
            [cfg.structure.ffn_hidden_size],
        )
    )
    if e.num_shared_experts.known and e.expert_ffn_size.known:
        e.shared_expert_ffn_size = Value.derived(
            (as_int(e.num_shared_experts) or 0) * (as_int(e.expert_ffn_size) or 0),
            "shared expert FFN size",
            "shared_expert_num x expert FFN size",
            [e.num_shared_experts, e.expert_ffn_size],
        )
    e.router_pre_softmax = Value.default(
        True,
        "moe_config.routing_policy",
        "MindFormers MoEConfig (softmax over all experts before top-k)",
    )
    e.norm_topk_prob = view.key("moe_config.norm_topk_prob", mc, kind="bool")
    e.topk_scaling_factor = view.key("moe_config.routed_scaling_factor", mc, kind="float")
    sig = view.key("moe_config.use_gating_sigmoid", mc, kind="bool")
    e.score_function = (
        sig.model_copy(update={"value": "sigmoid" if sig.value else "softmax"})
        if sig.known
        else sig
    )
    e.expert_bias = view.key("moe_config.balance_via_topk_bias", mc, kind="bool")
    fk = view.key("moe_config.first_k_dense_replace", mc)
    if fk.known and isinstance(fk.value, bool):
        fk = fk.model_copy(update={"value": int(fk.value)})
    e.first_k_dense = fk


def _moe_mcore(view: MFView, cfg: Config) -> None:
    e = cfg.moe
    f = view.mcore_field
    e.num_experts = f("num_moe_experts", "int")
    cfg.is_moe = (
        e.num_experts.known and isinstance(e.num_experts.value, int) and e.num_experts.value > 1
    )
    e.router_topk = f("moe_router_topk", "int")
    e.capacity_factor = f("moe_expert_capacity_factor", "float")
    e.aux_loss_coeff = f("moe_aux_loss_coeff", "float")
    dropped = view.node(f"{view.model_path}.router_aux_loss_coef")
    if dropped is not None and cfg.model_class == "Qwen3MoeConfig":
        view.warnings.append(
            f"{dropped.path}:{dropped.line}: Qwen3MoeConfig drops "
            "router_aux_loss_coef; only moe_aux_loss_coeff sets the aux-loss weight"
        )
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
    e.router_pre_softmax = f("moe_router_pre_softmax", "bool")
    e.norm_topk_prob = f("norm_topk_prob", "bool")
    sf = f("moe_router_topk_scaling_factor", "float")
    if sf.known and sf.value is None:
        sf = sf.model_copy(update={"value": 1.0, "detail": sf.detail + " (no scaling)"})
    e.topk_scaling_factor = sf
    e.score_function = f("moe_router_score_function")
    lb = f("moe_router_load_balancing_type")
    # MindFormers' name for Megatron's global-batch auxiliary loss
    if lb.known and lb.value == "gbs_aux_loss":
        lb = lb.model_copy(update={"value": "global_aux_loss", "raw": "gbs_aux_loss"})
    e.load_balancing_type = lb
    e.expert_bias = f("moe_router_enable_expert_bias", "bool")
    fk = f("first_k_dense_replace", "int")
    if fk.known and fk.value is None:
        fk = fk.model_copy(update={"value": 0, "detail": fk.detail + " (every layer is MoE)"})
    e.first_k_dense = fk
