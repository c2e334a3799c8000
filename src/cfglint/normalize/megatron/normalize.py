"""Megatron arguments -> the normalized model, post-processed the way Megatron does it.

Facts follow ``validate_args``, ``core_transformer_config_from_args`` and
``TransformerConfig.__post_init__`` of the release in the argument table (see
``data/megatron_lm_*.yaml``); MindSpeed-LLM's deviations are noted where they apply.
"""

from __future__ import annotations

import math
from typing import Any

from cfglint.model.config import Config
from cfglint.model.values import Value
from cfglint.normalize.megatron.input import GPU_ENV, NPU_ENV, MegatronInput

DTYPE = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "fp64": "float64"}


def _const(value: Any, knob: str, why: str) -> Value:
    """A fixed property of Megatron's implementation, not a setting."""
    # no knob: nothing to "set", so messages do not say "not set in <file>"
    return Value(value=value, origin="default", knob="", detail=why, raw=knob)  # type: ignore[arg-type]


def _int(v: Value | None) -> int | None:
    """The value when it is a usable positive integer, else None (unknown, absent, wrong)."""
    if v is None or not v.known or isinstance(v.value, bool) or not isinstance(v.value, int):
        return None
    return v.value if v.value > 0 else None


def normalize_megatron(m: MegatronInput) -> Config:
    cfg = Config(
        side="megatron",
        path=m.path,
        kind=m.kind,
        defaults_from=m.table.label,
        env=dict(m.env),
        unknown=list(m.unknown),
        files=[m.path],
        launch_script=m.path if m.kind.endswith("script") else "",
    )
    cfg.warnings.extend(m.warnings)
    _parallel(m, cfg)
    _structure(m, cfg)
    _moe(m, cfg)
    _optimizer(m, cfg)
    _precision(m, cfg)
    _other(m, cfg)
    _launch(m, cfg)
    return cfg


def _parallel(m: MegatronInput, cfg: Config) -> None:
    p = cfg.parallel
    p.tensor_parallel = m.arg("tensor_model_parallel_size")
    p.pipeline_parallel = m.arg("pipeline_model_parallel_size")
    p.context_parallel = m.arg("context_parallel_size")
    p.expert_parallel = m.arg("expert_model_parallel_size")
    p.distributed_optimizer = m.arg("use_distributed_optimizer")
    sp = m.arg("sequence_parallel")
    tp = p.tensor_parallel
    if sp.value and tp.known and tp.value == 1 and not m.final:
        sp = Value.derived(
            False,
            "--sequence-parallel",
            "switched off by Megatron because tensor parallel size is 1",
            [sp, tp],
        )
    p.sequence_parallel = sp
    vpp = m.arg("num_layers_per_virtual_pipeline_stage")
    if not vpp.value and "num_virtual_stages_per_pipeline_rank" in m.table.by_dest:
        vpp = m.arg("num_virtual_stages_per_pipeline_rank")
    p.virtual_pipeline = vpp
    p.world_size = _world_size(m)
    if m.final and m.given("data_parallel_size"):
        p.data_parallel = m.arg("data_parallel_size")
    elif p.world_size is not None and p.world_size.known:
        ws, tpv = p.world_size, p.tensor_parallel
        pp, cp = p.pipeline_parallel, p.context_parallel
        sizes = (tpv, pp, cp)
        if (
            all(x.known and isinstance(x.value, int) and x.value > 0 for x in sizes)
            and ws.value % (tpv.value * pp.value * cp.value) != 0
        ):
            p.data_parallel = Value.unknown(
                "data_parallel",
                f"world size {ws.value} is not divisible by TP x PP x CP "
                f"({tpv.value} x {pp.value} x {cp.value}); Megatron refuses to start",
            )
        elif all(x.known and isinstance(x.value, int) and x.value > 0 for x in sizes):
            p.data_parallel = Value.derived(
                ws.value // (tpv.value * pp.value * cp.value),
                "data_parallel",
                "derived as world size / (TP x PP x CP)",
                [ws, tpv, pp, cp],
            )
        else:
            p.data_parallel = Value.derived(None, "data_parallel", "", [ws, tpv, pp, cp])
    else:
        p.data_parallel = Value.unknown(
            "data_parallel", "the device count is not known (no launcher arguments)"
        )
    p.micro_batch_interleave = None


def _world_size(m: MegatronInput) -> Value | None:
    if m.final:
        return m.arg("world_size") if m.given("world_size") else None
    la = m.launcher_args
    launcher = m.launcher.value if m.launcher is not None else None
    if launcher is None:
        return None
    if launcher == "msrun":
        if "worker_num" in la:
            return _int_value(la["worker_num"], "--worker_num")
        return Value.unknown("--worker_num", "msrun without --worker_num")
    if launcher in ("python", "python3"):
        return Value.derived(
            1, "world size", "a plain python launch runs one process", [m.launcher]
        )
    per = la.get("nproc_per_node") or la.get("num_gpus")
    nodes = la.get("nnodes") or la.get("num_nodes")
    per_v = (
        _int_value(per, "--nproc_per_node")
        if per
        else Value.default(1, "--nproc_per_node", f"{launcher} (one process per node)")
    )
    nodes_v = _int_value(nodes, "--nnodes") if nodes else Value.default(1, "--nnodes", launcher)
    if per_v.known and nodes_v.known:
        return Value.derived(
            per_v.value * nodes_v.value,
            "world size",
            "derived as nproc_per_node x nnodes",
            [per_v, nodes_v],
        )
    return Value.derived(None, "world size", "", [per_v, nodes_v])


def _int_value(v: Value, knob: str) -> Value:
    if not v.known:
        return v
    try:
        return v.model_copy(update={"value": int(str(v.value)), "knob": knob})
    except ValueError:
        return Value.unknown(
            knob, f"{v.value!r} is not a fixed number (elastic range?)", loc=v.loc, via=v.via
        )


def _structure(m: MegatronInput, cfg: Config) -> None:
    s = cfg.structure
    s.num_layers = m.arg("num_layers")
    s.num_heads = m.arg("num_attention_heads")
    s.hidden_size = m.arg("hidden_size")
    hidden, heads = s.hidden_size, s.num_heads
    swiglu = m.arg("swiglu")
    if m.values.get("activation_func") is not None:  # --yaml-cfg spells it out
        act = m.values["activation_func"]
        swiglu = act.model_copy(update={"value": str(act.value).lower() == "swiglu"})
    ffn = m.arg("ffn_hidden_size")
    if ffn.value is None and _int(hidden):
        if swiglu.value:
            ffn = Value.derived(
                int((4 * hidden.value * 2 / 3) / 64) * 64,
                "--ffn-hidden-size",
                "Megatron default with --swiglu: 8/3 x hidden rounded down to a multiple of 64",
                [hidden, swiglu],
            )
        else:
            ffn = Value.derived(
                4 * hidden.value, "--ffn-hidden-size", "Megatron default: 4 x hidden size", [hidden]
            )
    s.ffn_hidden_size = ffn
    gqa = m.arg("group_query_attention")
    if gqa.value:
        s.num_query_groups = m.arg("num_query_groups")
    else:
        s.num_query_groups = Value.derived(
            heads.value,
            "--num-query-groups",
            "without --group-query-attention every head is its own group",
            [heads, gqa],
        )
    kv = m.arg("kv_channels")
    if kv.value is None and _int(hidden) and _int(heads):
        kv = Value.derived(
            hidden.value // heads.value,
            "--kv-channels",
            "derived as hidden size / attention heads",
            [hidden, heads],
        )
    s.head_dim = kv
    s.normalization = m.arg("normalization")
    s.norm_epsilon = m.arg("layernorm_epsilon", "norm_epsilon")
    s.hidden_dropout = m.arg("hidden_dropout")
    s.attention_dropout = m.arg("attention_dropout")
    gran = m.arg("recompute_granularity")
    s.recompute = gran.model_copy(update={"value": gran.value is not None}) if gran.known else gran
    s.use_flash_attention = _flash(m)
    s.fused_rope = _fused_rope(m)
    s.fused_norm = m.arg("use_fused_rmsnorm") if "use_fused_rmsnorm" in m.table.by_dest else None
    s.fused_swiglu = (
        m.arg("use_fused_swiglu")
        if "use_fused_swiglu" in m.table.by_dest
        else m.arg("bias_swiglu_fusion")
    )
    s.fused_qkv = _const(
        True,
        "linear_qkv",
        "Megatron's attention always projects Q, K and V with one fused linear layer (linear_qkv)",
    )
    s.vocab_size = m.arg("vocab_size")
    s.padded_vocab_size = _padded_vocab(m)
    s.seq_length = m.arg("seq_length")
    mpe = m.arg("max_position_embeddings")
    s.max_position_embeddings = mpe
    s.position_embedding_type = m.arg("position_embedding_type")
    rope = s.position_embedding_type.value in ("rope", "yarn", "mrope")
    s.rope_theta = m.arg("rotary_base") if rope else None
    s.rotary_percent = m.arg("rotary_percent") if rope else None
    untie = m.arg("untie_embeddings_and_output_weights")
    s.tied_embeddings = (
        untie.model_copy(update={"value": not untie.value}) if untie.known else untie
    )
    s.add_bias_linear = m.arg("add_bias_linear")
    qkv = m.arg("add_qkv_bias")
    if s.add_bias_linear.value and not qkv.value:
        qkv = Value.derived(
            True,
            "--add-qkv-bias",
            "Megatron turns QKV bias on whenever linear biases are on",
            [s.add_bias_linear],
        )
    s.add_qkv_bias = qkv
    if swiglu.value:
        s.activation = swiglu.model_copy(update={"value": "swiglu"})
    elif m.arg("squared_relu").value:
        s.activation = m.arg("squared_relu").model_copy(update={"value": "squared_relu"})
    else:
        s.activation = Value.default("gelu", knob="--swiglu", source=f"{m.table.label} (GeLU MLP)")
    s.qk_norm = m.arg("qk_layernorm")


def _flash(m: MegatronInput) -> Value:
    if m.kind.startswith("mindspeed") or "attention_backend" not in m.table.by_dest:
        return m.arg("use_flash_attn")
    backend = m.arg("attention_backend")
    impl = m.arg("transformer_impl")
    if not backend.known:
        return backend
    if backend.value in ("flash", "fused"):
        return Value.derived(
            True,
            "--attention-backend",
            f"--attention-backend {backend.value} is a fused attention kernel",
            [backend],
        )
    if backend.value == "auto" and impl.value == "transformer_engine":
        return Value.derived(
            True,
            "--attention-backend",
            "--attention-backend auto with Transformer Engine selects a fused "
            "(flash or cuDNN) attention kernel",
            [backend, impl],
        )
    return Value.derived(
        False,
        "--attention-backend",
        f"--attention-backend {backend.value} computes attention unfused",
        [backend, impl],
    )


def _fused_rope(m: MegatronInput) -> Value | None:
    if m.kind.startswith("mindspeed") and "use_fused_rotary_pos_emb" in m.table.by_dest:
        return m.arg("use_fused_rotary_pos_emb")
    if "apply_rope_fusion" in m.table.by_dest:
        return m.arg("apply_rope_fusion")
    return None


def _padded_vocab(m: MegatronInput) -> Value:
    given = m.arg("padded_vocab_size")
    if given.known and given.value:
        return given
    vocab = m.arg("vocab_size")
    div = m.arg("make_vocab_size_divisible_by")
    tp = m.arg("tensor_model_parallel_size")
    if not vocab.known or vocab.value is None:
        return Value.unknown(
            "padded vocab size",
            "Megatron takes the vocabulary size from the tokenizer; give "
            "--padded-vocab-size or --vocab-size to compare it",
        )
    if m.arg("pad_vocab_size").value is False:
        return vocab
    multiple = (div.value or 1) * (tp.value or 1)
    padded = int(math.ceil(vocab.value / multiple) * multiple)
    return Value.derived(
        padded,
        "padded vocab size",
        "vocab size rounded up to make-vocab-size-divisible-by x TP",
        [vocab, div, tp],
    )


def _moe(m: MegatronInput, cfg: Config) -> None:
    e = cfg.moe
    e.num_experts = m.arg("num_experts")
    cfg.is_moe = bool(e.num_experts.value)
    e.router_topk = m.arg("moe_router_topk")
    e.capacity_factor = m.arg("moe_expert_capacity_factor")
    e.aux_loss_coeff = _first(m.arg("moe_aux_loss_coeff"))
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
    if "norm_topk_prob" in m.table.by_dest:
        e.norm_topk_prob = m.arg("norm_topk_prob")
    else:
        # Megatron's top-k router: softmax over the chosen k (normalized) unless pre-softmax
        e.norm_topk_prob = Value.derived(
            not e.router_pre_softmax.value,
            "--moe-router-pre-softmax",
            "Megatron normalizes the top-k probabilities unless --moe-router-pre-softmax",
            [e.router_pre_softmax],
        )
    sf = m.arg("moe_router_topk_scaling_factor")
    if sf.known and sf.value is None:
        sf = sf.model_copy(update={"value": 1.0, "detail": sf.detail + " (no scaling)"})
    e.topk_scaling_factor = sf
    e.score_function = m.arg("moe_router_score_function")
    e.load_balancing_type = _first(m.arg("moe_router_load_balancing_type"))
    e.expert_bias = m.arg("moe_router_enable_expert_bias")
    if (
        "first_k_dense_replace" in m.table.by_dest
        and m.arg("first_k_dense_replace").value is not None
    ):
        e.first_k_dense = m.arg("first_k_dense_replace")
    else:
        e.first_k_dense = _dense_prefix(m.arg("moe_layer_freq"))


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
    """``[0]*3+[1]*58`` or ``[0,1,1]``: lists of 0/1 joined by + with integer repeats."""
    out: list[int] = []
    for part in text.replace(" ", "").split("+"):
        body, _, times = part.partition("*")
        if not (body.startswith("[") and body.endswith("]")):
            return None
        try:
            items = [int(x) for x in body[1:-1].split(",") if x]
            n = int(times) if times else 1
        except ValueError:
            return None
        if n > 100_000:
            return None
        out.extend(items * n)
    return out


def cfg_compute_dtype(m: MegatronInput) -> str:
    if m.arg("bf16").value:
        return "bfloat16"
    if m.arg("fp16").value:
        return "float16"
    return "float32"


def _optimizer(m: MegatronInput, cfg: Config) -> None:
    o = cfg.optimizer
    opt = m.arg("optimizer")
    if opt.known and opt.value == "adam":
        opt = opt.model_copy(update={"value": "adamw"})  # decoupled weight decay
    o.type = opt
    o.eps = m.arg("adam_eps")
    o.beta1 = m.arg("adam_beta1")
    o.beta2 = m.arg("adam_beta2")
    o.weight_decay = m.arg("weight_decay")
    o.wd_to_qk_layernorm = (
        m.arg("apply_wd_to_qk_layernorm") if "apply_wd_to_qk_layernorm" in m.table.by_dest else None
    )
    o.lr = m.arg("lr")
    o.min_lr = m.arg("min_lr")
    o.lr_decay_style = m.arg("lr_decay_style")
    o.lr_warmup_init = m.arg("lr_warmup_init")
    o.clip_grad = m.arg("clip_grad")
    o.micro_batch_size = m.arg("micro_batch_size")
    gbs = m.arg("global_batch_size")
    dp = cfg.parallel.data_parallel
    if gbs.value is None and o.micro_batch_size.known and dp is not None:
        gbs = Value.derived(
            (o.micro_batch_size.value or 0) * (dp.value or 0) if dp.known else None,
            "--global-batch-size",
            "Megatron default: micro batch size x data parallel size",
            [o.micro_batch_size, dp],
        )
    o.global_batch_size = gbs
    iters = m.arg("train_iters")
    samples = m.arg("train_samples")
    if iters.value is None and samples.known and samples.value and gbs.known and gbs.value:
        iters = Value.derived(
            samples.value // gbs.value,
            "--train-iters",
            "derived as train samples / global batch size",
            [samples, gbs],
        )
    o.train_steps = iters
    decay = m.arg("lr_decay_iters")
    if decay.value is None and iters.known:
        decay = Value.derived(
            iters.value,
            "--lr-decay-iters",
            "Megatron default: decays over all training iterations",
            [iters],
        )
    o.lr_decay_steps = decay
    frac = m.arg("lr_warmup_fraction")
    if frac.known and frac.value is not None:
        o.lr_warmup_steps = Value.derived(
            frac.value * decay.value if decay.known and decay.value is not None else None,
            "--lr-warmup-fraction",
            "warmup = fraction x lr decay iterations",
            [frac, decay],
        )
    else:
        o.lr_warmup_steps = m.arg("lr_warmup_iters")
    extra: dict[str, Value] = {}
    for dest in (
        "lr_warmup_fraction",
        "lr_warmup_iters",
        "lr_decay_iters",
        "train_iters",
        "lr_wsd_decay_style",
        "lr_wsd_decay_iters",
        "lr_wsd_decay_samples",
        "lr_decay_samples",
        "lr_warmup_samples",
        "train_samples",
        "override_opt_param_scheduler",
        "use_checkpoint_opt_param_scheduler",
        "start_weight_decay",
        "end_weight_decay",
        "weight_decay_incr_style",
    ):
        if dest in m.table.by_dest:
            extra[dest] = m.arg(dest)
    o.lr_extra = extra


def _precision(m: MegatronInput, cfg: Config) -> None:
    pr, w = cfg.precision, cfg.weight
    bf16, fp16 = m.arg("bf16"), m.arg("fp16")
    if m.final and m.given("params_dtype"):
        pdt = m.arg("params_dtype")
        compute = pdt
    elif bf16.value:
        compute = bf16.model_copy(update={"value": "bfloat16"})
    elif fp16.value:
        compute = fp16.model_copy(update={"value": "float16"})
    else:
        compute = _const(
            "float32",
            "--bf16/--fp16",
            f"default of {m.table.label}: no --bf16 or --fp16, so everything runs in float32",
        )
    pr.compute_dtype = compute
    # Megatron keeps bf16/fp16 model weights (fp32 master copies live in the optimizer)
    w.param_dtype = compute
    w.embedding_dtype = compute
    grad_bf16 = m.arg("grad_reduce_in_bf16") if "grad_reduce_in_bf16" in m.table.by_dest else None
    if compute.value == "bfloat16" and not (grad_bf16 and grad_bf16.value):
        w.grad_reduce_dtype = Value.derived(
            "float32",
            "--accumulate-allreduce-grads-in-fp32",
            "Megatron forces fp32 gradient accumulation and all-reduce with --bf16",
            [compute],
        )
    elif grad_bf16 is not None and grad_bf16.value:
        w.grad_reduce_dtype = grad_bf16.model_copy(update={"value": "bfloat16"})
    else:
        acc = m.arg("accumulate_allreduce_grads_in_fp32")
        w.grad_reduce_dtype = acc.model_copy(
            update={
                "value": "float32" if acc.value or compute.value == "float32" else compute.value
            }
        )
    w.init_method_std = m.arg("init_method_std")
    w.load_checkpoint = m.arg("load")
    pr.layernorm_dtype = _const(
        "float32",
        "normalization",
        "Megatron's fused LayerNorm / RMSNorm kernels compute the statistics in float32",
    )
    soft = m.arg("attention_softmax_in_fp32")
    qk_scale = m.arg("apply_query_key_layer_scaling")
    if cfg.structure.use_flash_attention is not None and cfg.structure.use_flash_attention.value:
        pr.softmax_dtype = Value.derived(
            "float32",
            "--attention-softmax-in-fp32",
            "fused attention kernels keep softmax in float32",
            [cfg.structure.use_flash_attention],
        )
    elif soft.value or qk_scale.value:
        pr.softmax_dtype = (soft if soft.value else qk_scale).model_copy(
            update={"value": "float32"}
        )
    else:
        pr.softmax_dtype = soft.model_copy(update={"value": compute.value})
    pr.rotary_dtype = _const("float32", "rotary", "Megatron builds rotary frequencies in float32")
    res = m.arg("fp32_residual_connection")
    pr.residual_dtype = res.model_copy(update={"value": "float32" if res.value else compute.value})
    pr.loss_dtype = _const(
        "float32", "cross entropy", "Megatron's vocab-parallel cross entropy computes in float32"
    )
    pr.cross_entropy_fusion = m.arg("cross_entropy_loss_fusion")


def _other(m: MegatronInput, cfg: Config) -> None:
    o = cfg.other
    o.data_path = m.arg("data_path")
    tok = m.arg("tokenizer_model")
    if not tok.value and "tokenizer_name_or_path" in m.table.by_dest:
        tok = m.arg("tokenizer_name_or_path")
    o.tokenizer_path = tok
    o.prompt_template = m.arg("prompt_type") if "prompt_type" in m.table.by_dest else None
    stage = None
    for dest in ("stage", "is_instruction_dataset"):
        if dest in m.table.by_dest and m.arg(dest).value:
            stage = m.arg(dest)
            break
    o.training_stage = (
        stage.model_copy(update={"value": "sft"})
        if stage is not None
        else Value.default("pretrain", "--stage", f"{m.table.label} (pretraining)")
    )
    d = cfg.determinism
    d.seed = m.arg("seed")
    d.seed_applied = Value.derived(
        True,
        "--seed",
        "Megatron seeds random, numpy, torch and CUDA with it (+100 per pipeline rank)",
        [d.seed],
    )
    det = m.arg("deterministic_mode")
    if "npu_deterministic" in m.table.by_dest and m.arg("npu_deterministic").value:
        det = m.arg("npu_deterministic")
    d.deterministic = det


def _launch(m: MegatronInput, cfg: Config) -> None:
    la = cfg.launch
    la.launcher = m.launcher
    la.entry_script = m.entry_script
    if "nproc_per_node" in m.launcher_args:
        la.nproc_per_node = m.launcher_args["nproc_per_node"]
    if "nnodes" in m.launcher_args:
        la.nnodes = m.launcher_args["nnodes"]
    la.device = _device(m)


def _device(m: MegatronInput) -> Value:
    names = list(m.env)
    if m.kind.startswith("mindspeed"):
        return _const("npu", "device", "MindSpeed-LLM runs on Ascend NPUs")
    if m.launcher is not None and m.launcher.value == "msrun":
        return _const("npu", "device", "msrun launches on Ascend NPUs")
    if any(n.startswith(NPU_ENV) for n in names):
        return _const("npu", "device", "the launch script sets Ascend environment variables")
    if any(n.startswith(GPU_ENV) for n in names):
        return _const("gpu", "device", "the launch script sets CUDA/NCCL environment variables")
    return _const("gpu", "device", "Megatron-LM runs on NVIDIA GPUs")
