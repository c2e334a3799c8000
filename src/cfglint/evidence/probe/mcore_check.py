"""Agreement check: our torch model of Megatron's semantics against megatron-core's own
GPTModel (``megatron-core==0.16.1``, CPU), on identical weights and tokens.

Run as ``python -m cfglint.evidence.probe.mcore_check OUT.json [dense|gqa]``: writes both
step-1 losses and the per-weight gradient norms of both implementations. Used by
tests/test_probe_mcore.py; never by the lint or the probe itself.

Shims megatron-core needs on a CPU-only machine with one process (issue 8): gloo with a
``HashStore`` at world size 1, ``torch.cuda.current_device`` answering the CPU, the CPU RNG
tracker (``inference_rng_tracker``), an explicit causal mask, the local (non-TE) layer spec,
and the fusions off (rope, gradient accumulation, persistent layer norm, masked softmax,
bias-dropout).
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
from cfglint.evidence.probe.weights import from_layout, init_weights, to_layout, tokens

VARIANTS = {
    "dense": Spec(heads=4, groups=4, norm_eps=1e-5, init_std=0.02, output_init_scaled=True),
    "gqa": Spec(heads=8, groups=2, norm_eps=1e-6, rope_theta=500000.0, init_std=0.02),
}


def _shims() -> None:
    import torch.distributed as dist

    torch.cuda.current_device = lambda: torch.device("cpu")  # type: ignore[assignment]
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    from megatron.core import parallel_state
    from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed

    parallel_state.initialize_model_parallel(1, 1)
    model_parallel_cuda_manual_seed(1234, inference_rng_tracker=True)


def mcore_model(spec: Spec):
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
        gated_linear_unit=spec.activation == "swiglu",
        activation_func=F.silu,
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
    )
    return GPTModel(
        config=cfg,
        transformer_layer_spec=get_gpt_layer_local_spec(normalization=spec.norm),
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

    model = mcore_model(spec)
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
    loss_mc.backward()
    g_mc = {k: p.grad.detach().numpy() for k, p in model.named_parameters() if p.grad is not None}

    ours = Model(spec, mg, "megatron", "cpu")
    loss_ours = ours.loss(tok, torch.Generator().manual_seed(0))
    loss_ours.backward()
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
