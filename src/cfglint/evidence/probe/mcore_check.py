"""Agreement check: our torch model of Megatron's semantics against megatron-core's own
GPTModel (``megatron-core==0.16.1``, CPU), on identical weights and tokens.

Run as ``python -m cfglint.evidence.probe.mcore_check OUT.json [VARIANT]`` (see VARIANTS):
step-1 losses and the per-weight gradient norms of both implementations. Used by
tests/evidence/test_probe_mcore.py; never by the lint or the probe itself.

Shims megatron-core needs on a CPU-only machine with one process (issue 8): gloo with a
``HashStore`` at world size 1, ``torch.cuda.current_device`` answering the CPU, the CPU RNG
tracker (``inference_rng_tracker``), an explicit causal mask, the local (non-TE) layer spec,
and the fusions off (rope, gradient accumulation, persistent layer norm, masked softmax,
bias-dropout). MoE also needs ``moe_utils.te_general_gemm = None`` and no-op CUDA streams.
"""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")

import numpy as np
import torch
import torch.nn.functional as F

from cfglint.evidence.probe.spec import Spec
from cfglint.evidence.probe.torch_side import Model
from cfglint.evidence.probe.weights import from_layout, gated, init_weights, to_layout, tokens

# MoE: one dense layer then one MoE layer (the probe's shrink), 8 experts top-2, with the
# routing knobs the probe confirms switched on so they are checked against megatron-core:
# pre-softmax + renormalized top-k (MindSpeed-LLM's --norm-topk-prob is not in
# megatron-core: plain pre-softmax here), aux loss and z-loss, a capacity with each drop
# policy, shared experts behind a gate
_MOE = dict(
    heads=4,
    groups=2,
    layers=2,
    moe_experts=8,
    moe_dense=1,
    moe_ffn=24,
    moe_topk=2,
    output_init_std=0.01,  # 0.02 / sqrt(2 x 2 layers), megatron-core's own scaling
)
VARIANTS = {
    "dense": Spec(heads=4, groups=4, norm_eps=1e-5, init_std=0.02, output_init_std=0.01),
    "gqa": Spec(heads=8, groups=2, norm_eps=1e-6, rope_theta=500000.0, init_std=0.02),
    # dropless, softmax over the chosen logits, aux loss + z-loss, gated shared experts
    "moe-alltoall": Spec(
        **_MOE,
        moe_aux="aux_loss",
        moe_aux_coeff=0.01,
        moe_z_coeff=0.001,
        moe_shared_ffn=48,
        moe_shared_gate=True,
    ),
    # capacity 1.0 dropping by probability, pre-softmax without renormalization, scaled,
    # sequence-level aux loss
    "moe-allgather": Spec(
        **_MOE,
        moe_pre_softmax=True,
        moe_norm_topk=False,
        moe_topk_scale=2.5,
        moe_capacity=1.0,
        moe_drop="probs",
        moe_aux="seq_aux_loss",
        moe_aux_coeff=0.01,
    ),
    # sigmoid scores, capacity 1.0 dropping by position
    "moe-position": Spec(
        **_MOE,
        moe_score="sigmoid",
        moe_capacity=1.0,
        moe_drop="position",
    ),
    # group-limited routing: 4 groups of 2 experts, the best group kept, each group scored by
    # the sum of its top 2 logits (softmax without pre-softmax) or sigmoid scores (at top-2,
    # megatron-core's topk // group_topk is 2 with one group kept; with two kept it is 1, a
    # maximum, which never masks a top-2 expert)
    "moe-groups": Spec(**_MOE, moe_groups=4, moe_group_topk=1, moe_group_top=2),
    "moe-groups-sigmoid": Spec(
        **_MOE, moe_score="sigmoid", moe_groups=4, moe_group_topk=1, moe_group_top=2
    ),
}
# structure: LayerNorm with biases, linear and QKV biases, q/k norms, tied embeddings, and
# each non-SwiGLU activation Megatron's flags give (GeLU by default, --squared-relu,
# --quick-geglu)
_STRUCT = dict(
    norm="LayerNorm", linear_bias=True, qkv_bias=True, qk_norm=True, tied=True, init_std=0.02
)
VARIANTS.update(
    {
        "structure-gelu": Spec(**_STRUCT, activation="gelu"),
        "structure-squared-relu": Spec(**_STRUCT, activation="squared-relu"),
        "structure-quick-geglu": Spec(**_STRUCT, activation="quick-geglu"),
    }
)
DISPATCHER = {
    "moe-alltoall": "alltoall",
    "moe-allgather": "allgather",
    "moe-position": "alltoall",
    "moe-groups": "alltoall",
    "moe-groups-sigmoid": "alltoall",
}


class _NoStream:
    """Stands in for a CUDA stream and event: the alltoall dispatcher and the shared-expert
    overlap record, wait on and synchronize streams; on CPU there is nothing to order.
    One instance, so the dispatcher sees "the current stream" and takes no side-stream path
    (token_dispatcher.py:871)."""

    def wait_stream(self, *a) -> None:
        pass

    def record_event(self, *a) -> _NoStream:
        return self

    def synchronize(self) -> None:
        pass

    def wait(self, *a) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a) -> None:
        return None


def _shims() -> None:
    import contextlib

    import torch.distributed as dist

    torch.cuda.current_device = lambda: torch.device("cpu")  # type: ignore[assignment]
    # MoE (issue 8): the router's gating GEMM goes to Transformer Engine when it is
    # importable; the streams are CUDA-only
    from megatron.core.transformer.moe import moe_utils

    moe_utils.te_general_gemm = None
    stream = _NoStream()
    torch.cuda.Stream = lambda *a, **k: stream  # type: ignore[assignment,misc]
    torch.cuda.current_stream = lambda *a, **k: stream  # type: ignore[assignment]
    torch.cuda.stream = lambda *a, **k: contextlib.nullcontext()  # type: ignore[assignment]
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    from megatron.core import parallel_state
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed

    parallel_state.initialize_model_parallel(1, 1)
    model_parallel_cuda_manual_seed(1234, inference_rng_tracker=True)


def _moe_args(spec: Spec, variant: str) -> dict:
    if spec.moe_experts == 0:
        return {}
    return dict(
        num_moe_experts=spec.moe_experts,
        moe_layer_freq=[0] * spec.moe_dense + [1] * (spec.layers - spec.moe_dense),
        moe_ffn_hidden_size=spec.moe_ffn,
        moe_router_topk=spec.moe_topk,
        # megatron-core scores a group by its top (topk // group_topk) scores: the variants
        # set moe_group_top to match
        moe_router_num_groups=spec.moe_groups or None,
        moe_router_group_topk=spec.moe_group_topk or None,
        moe_router_pre_softmax=spec.moe_pre_softmax,
        moe_router_score_function=spec.moe_score,
        moe_router_topk_scaling_factor=spec.moe_topk_scale if spec.moe_topk_scale != 1.0 else None,
        moe_router_load_balancing_type=spec.moe_aux if spec.moe_aux != "none" else "none",
        moe_aux_loss_coeff=spec.moe_aux_coeff,
        moe_z_loss_coeff=spec.moe_z_coeff or None,
        moe_expert_capacity_factor=spec.moe_capacity or None,
        moe_token_drop_policy=spec.moe_drop,
        moe_router_dtype="fp32",
        moe_token_dispatcher_type=DISPATCHER[variant],
        moe_shared_expert_intermediate_size=spec.moe_shared_ffn or None,
        moe_shared_expert_gate=spec.moe_shared_gate,
        moe_grouped_gemm=False,
        moe_permute_fusion=False,
        moe_router_fusion=False,
    )


def _activation(spec: Spec):
    """megatron-core's activation function for the spec (arguments.py
    core_transformer_config_from_args @ core_v0.16.1)."""
    from megatron.core.activations import squared_relu
    from megatron.core.fusions.fused_bias_geglu import quick_gelu

    return {
        "swiglu": F.silu,
        "silu": F.silu,
        "squared-relu": squared_relu,
        "quick-geglu": quick_gelu,
    }.get(spec.activation, F.gelu)


def mcore_model(spec: Spec, variant: str = "dense"):
    from megatron.core.models.gpt import GPTModel
    from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
    from megatron.core.transformer.transformer_config import TransformerConfig

    cfg = TransformerConfig(
        num_layers=spec.layers,
        hidden_size=spec.hidden,
        num_attention_heads=spec.heads,
        num_query_groups=spec.groups,
        ffn_hidden_size=spec.ffn,
        normalization=spec.norm,
        layernorm_epsilon=spec.norm_eps,
        gated_linear_unit=gated(spec),
        activation_func=_activation(spec),
        qk_layernorm=spec.qk_norm,
        add_bias_linear=spec.linear_bias,
        add_qkv_bias=spec.qkv_bias,
        hidden_dropout=spec.hidden_dropout,
        attention_dropout=spec.attention_dropout,
        init_method_std=spec.init_std,
        params_dtype=torch.float32,
        use_cpu_initialization=True,
        apply_rope_fusion=False,
        gradient_accumulation_fusion=False,
        persist_layer_norm=False,
        bias_dropout_fusion=False,
        masked_softmax_fusion=False,
        bias_activation_fusion=False,
        **_moe_args(spec, variant),
    )
    if spec.moe_experts > 0:
        # dense prefix then MoE layers, from moe_layer_freq (local, non-TE modules)
        from megatron.core.models.gpt.gpt_layer_specs import get_gpt_decoder_block_spec

        layer_spec = get_gpt_decoder_block_spec(
            cfg, use_transformer_engine=False, normalization=spec.norm
        )
    else:
        layer_spec = get_gpt_layer_local_spec(normalization=spec.norm, qk_layernorm=spec.qk_norm)
    return GPTModel(
        config=cfg,
        transformer_layer_spec=layer_spec,
        vocab_size=spec.vocab,
        max_sequence_length=spec.seq,
        position_embedding_type="rope",
        rotary_percent=spec.rotary_percent,
        rotary_base=int(spec.rope_theta),
        share_embeddings_and_output_weights=spec.tied,
    )


def main(out: str, variant: str) -> None:
    torch.set_num_threads(1)
    spec = VARIANTS[variant]
    _shims()
    canon = init_weights(spec)
    mg = to_layout(canon, spec, "megatron")
    tok = torch.tensor(tokens(spec, 1)[0])
    inp, labels = tok[:, :-1], tok[:, 1:]

    model = mcore_model(spec, variant)
    state = model.state_dict()
    missing = [k for k in mg if k not in state]
    extra = [
        k
        for k, v in state.items()
        if torch.is_tensor(v) and k not in mg and not k.endswith("_extra_state")
    ]
    if missing or extra:
        raise SystemExit(f"layout mismatch: missing {missing[:4]}, unexpected {extra[:4]}")
    model.load_state_dict({k: torch.tensor(v) for k, v in mg.items()}, strict=False)
    pos = torch.arange(spec.seq).unsqueeze(0).expand(spec.batch, -1)
    mask = torch.ones(spec.seq, spec.seq, dtype=torch.bool).triu(1)[None, None]
    per_token = model(inp, pos, mask, labels=labels)
    loss_mc = per_token.float().mean()
    # the aux and z losses ride on the backward (MoEAuxLossAutoScaler, scale 1 here as with
    # one micro-batch): the value printed is the LM loss alone
    loss_mc.backward()
    g_mc = {k: p.grad.detach().numpy() for k, p in model.named_parameters() if p.grad is not None}

    ours = Model(spec, mg, "megatron", "cpu")
    loss_ours = ours.loss(tok, torch.Generator().manual_seed(0))
    (loss_ours + ours.extra).backward()
    g_ours = {k: p.grad.detach().numpy() for k, p in ours.p.items()}
    a, b = from_layout(g_ours, spec, "megatron"), from_layout(g_mc, spec, "megatron")
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(
            {
                "loss_ours": float(loss_ours),
                "loss_mcore": float(loss_mc),
                "local_norms_ours": {k: float(np.linalg.norm(v)) for k, v in a.items()},
                "local_norms_mcore": {k: float(np.linalg.norm(v)) for k, v in b.items()},
                "megatron_core": __import__("megatron.core").core.__version__,
            },
            fh,
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "dense")
