"""MoE structure of a Megatron / MindSpeed-LLM run."""

from __future__ import annotations

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.megatron.common import DTYPE, cfg_compute_dtype
from cfglint.normalize.megatron.input import MegatronInput


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
    e.router_dtype = rd
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
    if eff.value is None and cfg.is_moe:
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
    e.router_pre_softmax = m.arg("moe_router_pre_softmax")
    e.score_function = m.arg("moe_router_score_function")
    e.norm_topk_prob = _sigmoid_normalized(m, e.score_function, e.router_topk) or _normalized(
        m, e.router_pre_softmax
    )
    sf = m.arg("moe_router_topk_scaling_factor")
    if sf.known and sf.value is None:
        sf = sf.model_copy(update={"value": 1.0, "detail": sf.detail + " (no scaling)"})
    e.topk_scaling_factor = sf
    e.load_balancing_type = _first(m.arg("moe_router_load_balancing_type"))
    e.expert_bias = m.arg("moe_router_enable_expert_bias")
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
        e.first_k_dense = fk
    else:
        e.first_k_dense = _dense_prefix(m.arg("moe_layer_freq"))


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
