"""The numerics of one side as a small typed spec, built from a normalized Config.

A spec holds only what changes the numbers of a training step, already shrunk to the probe's
size. Every knob that cannot be read from the side's config (unknown, or a value the probe
has no model of) is taken from the other side instead and recorded as a :class:`Gap` so the
report can say "not probed" with the reason: the probe never guesses a value.

No framework is imported here: this module is safe for the plain lint.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cfglint.evidence.probe.moe import moe_values, probe_ffn, shrink_groups, shrink_moe
from cfglint.model.config import Config

Dtype = Literal["float32", "bfloat16", "float16"]
DTYPES = ("float32", "bfloat16", "float16")
# the probe's activations: gated (SiLU, GeLU, quick GeLU times an "up" projection) and
# plain. Megatron spells them as flags (--swiglu, --squared-relu, --quick-geglu, GeLU when
# none is given: megatron/training/arguments.py core_transformer_config_from_args @
# core_v0.16.1); MindFormers as hidden_act names
ACTIVATIONS = ("swiglu", "geglu", "quick-geglu", "gelu", "silu", "relu", "squared-relu")
GATED = ("swiglu", "geglu", "quick-geglu")
# every spelling the normalizers pass on (Megatron's flag names, MindFormers' hidden_act
# values) -> the probe's name
ACTIVATION_SPELLINGS = {
    **{a: a for a in ACTIVATIONS},
    **{a.replace("-", "_"): a for a in ACTIVATIONS},
    "fusedswiglu": "swiglu",
    "swish": "silu",
    "relu2": "squared-relu",
    "squaredrelu": "squared-relu",
    "quick_gelu_glu": "quick-geglu",
}

# the probe's size: small enough for 2 shared CPU cores, big enough for GQA and rope
HIDDEN = 64
LAYERS = 2
VOCAB = 128
SEQ = 32
BATCH = 4
MAX_STEPS = 50
# with --log-dir the probe writes training logs for `cfglint logs`, whose causes need a long
# run to show (fixtures/runs); the model stays the probe's tiny one
MAX_LOG_STEPS = 1000


class Spec(BaseModel):
    """One side's training-step numerics at the probe's size."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # shapes (shared by both sides: identical weights need identical shapes)
    hidden: int = HIDDEN
    layers: int = LAYERS
    heads: int = 4
    groups: int = 4
    ffn: int = 172
    vocab: int = VOCAB
    seq: int = SEQ
    batch: int = BATCH
    # structure
    norm: Literal["RMSNorm", "LayerNorm"] = "RMSNorm"
    norm_eps: float = 1e-5
    activation: str = "swiglu"
    rope_theta: float = 10000.0
    rotary_percent: float = 1.0
    qkv_bias: bool = False
    linear_bias: bool = False
    tied: bool = False
    qk_norm: bool = False
    hidden_dropout: float = 0.0
    attention_dropout: float = 0.0
    # precision: the dtype each part of the step is computed in
    compute_dtype: Dtype = "float32"
    softmax_dtype: Dtype = "float32"
    norm_dtype: Dtype = "float32"
    rotary_dtype: Dtype = "float32"
    residual_dtype: Dtype = "float32"
    loss_dtype: Dtype = "float32"
    # storage: the dtype the weights are kept in (the forward reads them from there; an
    # optimizer without a float32 master copy writes its update back rounded to it)
    param_dtype: Dtype = "float32"
    # the embedding table's storage dtype; the lookup reads it, and its output is cast to
    # the residual dtype (MindFormers: llama.py LlamaModel.construct casts to compute_dtype)
    embedding_dtype: Dtype = "float32"
    # the dtype the looked-up rows have where the first layer's norm reads them; the
    # residual stream gets them cast to residual_dtype. None: cast straight to the residual
    # dtype (Megatron: its half table's rows, or embeddings.float() under
    # --fp32-residual-connection). MindFormers: compute_dtype where the model casts the rows
    # (legacy llama.py:392), the table's dtype where it does not (glm2.py:245 feeds them to
    # input_layernorm, and glm2_transformer.py:747 casts the residual to residual_dtype)
    embedding_output_dtype: Dtype | None = None
    # an optimizer that keeps float32 master copies of half-precision weights and updates
    # those (Megatron's Float16OptimizerWithFloat16Params / DistributedOptimizer). MindSpore
    # has none: MindFormers' AdamW casts each parameter to float32, updates, and assigns the
    # result back in the parameter's dtype (mindformers/core/optim/adamw.py:44,64 @ f52743c)
    fp32_master: bool = False
    # the norms' weights' storage dtype. Legacy MindFormers creates them in
    # layernorm_compute_type whatever param_init_type says (models/llama/llama_layer.py:182
    # LlamaRMSNorm) and, on the fused kernel, uses them unrounded; its Megatron-style
    # models and Megatron keep them in params_dtype (parallel_core/training_graph/
    # transformer/norm.py:251,336 @ f52743c; Megatron: Float16Module casts every weight)
    norm_param_dtype: Dtype = "float32"
    # initial weights
    random_init: bool = True
    init_std: float = 0.02
    # the std of the layers that write into the residual stream (attention output, MLP
    # down) under random init, as the lint compares it (weight.output_init_std: Megatron's
    # init_std / sqrt(2 x num_layers) of the real config); None: the same as init_std
    output_init_std: float | None = None
    # optimizer
    bias_correction: bool = True
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    # "matrices": biases and 1-D weights are not decayed; "all": every parameter is
    wd_scope: Literal["matrices", "all"] = "matrices"
    clip_grad: float = 0.0
    # "megatron": g * max/(norm + 1e-6) when that is < 1; "mindspore": g * max/max(norm, max)
    clip_formula: Literal["megatron", "mindspore"] = "megatron"
    lr: tuple[float, ...] = (3e-4,)  # per step, the last repeats
    seed: int = 1234
    # MoE (``moe_experts`` 0: dense). Layers ``moe_dense`` and above are MoE layers; the
    # routing fields are the side's effective semantics (evidence/probe/moe.py says where
    # each comes from in the frameworks' source)
    moe_experts: int = 0
    moe_dense: int = 0
    moe_ffn: int = 0
    moe_shared_ffn: int = 0
    moe_topk: int = 1
    moe_score: Literal["softmax", "sigmoid"] = "softmax"
    # softmax over all experts before top-k (else Megatron's top-k on the logits, then a
    # softmax over the k chosen)
    moe_pre_softmax: bool = False
    moe_norm_topk: bool = True  # the chosen weights are renormalized to sum to 1
    moe_topk_scale: float = 1.0
    moe_capacity: float = 0.0  # 0: dropless
    # which tokens an expert over capacity keeps: "probs" (highest weight), "position"
    # (earliest tokens), "kmajor" (MindFormers without sdrop: every token's first choice
    # before any second choice, then by position)
    moe_drop: Literal["probs", "position", "kmajor"] = "probs"
    # renormalize over the experts that kept the token (MindFormers' TopkRouterV2 up to
    # 31a92de4; the release data/ records renormalizes before the drop: moe.py:1192 @ f52743c)
    moe_norm_after_drop: bool = False
    moe_aux: Literal["none", "aux_loss", "seq_aux_loss", "global_aux_loss"] = "none"
    moe_aux_coeff: float = 0.0
    moe_z_coeff: float = 0.0
    moe_router_dtype: Dtype = "float32"
    moe_shared_gate: bool = False
    moe_logged_aux: bool = False  # the printed loss includes the aux and z losses
    # group-limited routing at the probe's size (0 groups: none): the experts split into
    # ``moe_groups`` equal groups, each scored by the sum of its ``moe_group_top`` best
    # selection scores (1: its maximum), and only the ``moe_group_topk`` best groups' experts
    # can be chosen. The selection scores are what the top-k ranks: logits for Megatron's
    # softmax without pre-softmax, else the probabilities (evidence/probe/moe.py)
    moe_groups: int = 0
    moe_group_topk: int = 0
    moe_group_top: int = 1
    # how the framework lays the math out, which matters only at the last bit or with a
    # position-based drop: "megatron": tokens sequence-major ([s, b] flattened), weights
    # applied to the activation before fc2, shared gate in the compute dtype;
    # "mindformers": tokens batch-major, weights applied to each expert's output, shared
    # gate in the router dtype
    moe_impl: Literal["megatron", "mindformers"] = "megatron"

    def lr_at(self, step: int) -> float:
        """Learning rate of 1-based optimizer step ``step``."""
        return self.lr[min(step, len(self.lr)) - 1]

    def with_knobs(self, other: Spec, fields: list[str]) -> Spec:
        return self.model_copy(update={f: getattr(other, f) for f in fields})

    def diff(self, other: Spec) -> list[str]:
        return [f for f in type(self).model_fields if getattr(self, f) != getattr(other, f)]


class Gap(BaseModel):
    """A knob one side's config does not let the probe express."""

    field: str
    side: str
    reason: str


# a knob the probe cannot express takes the other side's value together with the fields
# that only mean something beside it (an aux-loss type without its weight is a guess)
COMPANIONS: dict[str, tuple[str, ...]] = {
    "moe_aux_coeff": ("moe_aux",),
    "moe_groups": ("moe_group_topk", "moe_group_top"),
}


class SpecPair(BaseModel):
    mindformers: Spec
    megatron: Spec
    gaps: list[Gap] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    # shape knobs that differ between the sides (the probe runs one shared shape)
    shape_diffs: dict[str, tuple[Any, Any]] = Field(default_factory=dict)
    # spec field -> why a real difference there cannot show at the probe's size (one
    # micro-batch on one device), for the confirmation's "not probed" line
    limits: dict[str, str] = Field(default_factory=dict)


# -- reading values ---------------------------------------------------------------------
class _Reader:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.gaps: list[Gap] = []
        self.limits: dict[str, str] = {}
        self.rope_variants: list[str] = []  # RoPE variants the probe does not model
        self.mla = False

    def raw(self, dotted: str) -> tuple[Any, str]:
        """(value, "") or (None, why)."""
        try:
            v = self.cfg.get(dotted)
        except KeyError:
            return None, f"{dotted} is not part of the normalized model"
        if v is None:
            return None, f"{self.cfg.side} has no such setting ({dotted})"
        if not v.known:
            return None, f"{v.knob or dotted} is unknown: {v.detail}"
        if v.yaml11_string:
            return None, (
                f"{v.knob or dotted} is the string {v.value!r} under PyYAML (YAML 1.1); "
                "what the framework does with a string here is not modelled"
            )
        return v.value, ""

    def miss(self, field: str, why: str) -> None:
        self.gaps.append(Gap(field=field, side=self.cfg.side, reason=why))

    def limit(self, field: str, why: str) -> None:
        """The side's value is expressed, but what makes it differ from the other side's
        needs more than the probe's one micro-batch on one device."""
        self.limits[field] = f"{self.cfg.side}: {why}"

    def num(self, field: str, dotted: str, lo: float | None = None) -> float | None:
        v, why = self.raw(dotted)
        if why:
            self.miss(field, why)
            return None
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            self.miss(field, f"{dotted} = {v!r} is not a finite number")
            return None
        if lo is not None and v < lo:
            self.miss(field, f"{dotted} = {v!r} is below {lo}")
            return None
        return float(v)

    def flag(self, field: str, dotted: str, absent: bool | None = None) -> bool | None:
        v, why = self.raw(dotted)
        if why:
            if absent is not None and self.cfg.get(dotted) is None:
                return absent  # the framework has no such knob: it is simply off
            self.miss(field, why)
            return None
        if not isinstance(v, bool):
            self.miss(field, f"{dotted} = {v!r} is not true/false")
            return None
        return v

    def dtype(self, field: str, dotted: str) -> str | None:
        v, why = self.raw(dotted)
        if why:
            self.miss(field, why)
            return None
        if v not in DTYPES:
            self.miss(field, f"{dotted} = {v!r} is not one of {', '.join(DTYPES)}")
            return None
        return str(v)


def _lr_curve(cfg: Config, steps: int) -> tuple[tuple[float, ...] | None, str]:
    """The first ``steps`` learning rates of the side's schedule, or why not."""
    from cfglint.evidence import lr
    from cfglint.evidence.lr.bridge import schedule_of

    errors = (ValueError, KeyError, TypeError, ZeroDivisionError)
    try:
        s = schedule_of(cfg)
        curve = lr.curve(s, steps)
    except errors as exc:
        # the training length is left to run time (MindFormers total_steps -1): the first
        # steps are still decided when they come out the same whatever the length (a
        # constant schedule, no warmup, lr_end equal to the learning rate)
        try:
            firsts = {
                tuple(lr.curve(schedule_of(cfg, total), steps))
                for total in (steps, 1000 * steps, 10**6)
            }
        except errors:
            firsts = set()
        if len(firsts) != 1:
            return None, f"the lr schedule cannot be built: {exc}"
        curve = list(firsts.pop())
    if not curve:
        return None, "the lr schedule is empty"
    return tuple(float(x) for x in curve[:steps]), ""


def _put(out: dict[str, Any], field: str, value: Any) -> None:
    if value is not None:
        out[field] = value


def _rope_values(cfg: Config, r: _Reader, out: dict[str, Any]) -> None:
    """RoPE's base and rotary fraction; its variants the probe does not model are noted."""
    pos, why = r.raw("structure.position_embedding_type")
    if why:
        r.miss("rope_theta", why)
    elif pos != "rope":
        r.miss("rope_theta", f"position embedding {pos!r} is not modelled (rope only)")
    else:
        _put(out, "rope_theta", r.num("rope_theta", "structure.rope_theta", lo=1.0))
        scaling, why = r.raw("structure.rope_scaling")
        if not why and scaling not in (None, "none"):
            r.rope_variants.append(f"{cfg.side} scales the RoPE frequencies ({scaling})")
        inter, why = r.raw("structure.rope_interleaved")
        if not why and inter is True:
            r.rope_variants.append(f"{cfg.side} rotates adjacent pairs (interleaved RoPE)")
        pct = r.num("rotary_percent", "structure.rotary_percent", lo=0.0)
        if pct is not None and 0.0 < pct <= 1.0:
            out["rotary_percent"] = pct
        elif pct is not None:
            r.miss("rotary_percent", f"rotary percent {pct} is outside (0, 1]")


def _structure_values(cfg: Config, r: _Reader, out: dict[str, Any]) -> None:
    norm, why = r.raw("structure.normalization")
    if why:
        r.miss("norm", why)
    elif norm in ("RMSNorm", "LayerNorm"):
        out["norm"] = norm
    else:
        r.miss("norm", f"normalization {norm!r} is not modelled (RMSNorm, LayerNorm)")
    _put(out, "norm_eps", r.num("norm_eps", "structure.norm_epsilon", lo=0.0))
    act, why = r.raw("structure.activation")
    if why:
        r.miss("activation", why)
    elif isinstance(act, str) and act.lower() in ACTIVATION_SPELLINGS:
        out["activation"] = ACTIVATION_SPELLINGS[act.lower()]
    else:
        r.miss("activation", f"activation {act!r} is not modelled ({', '.join(ACTIVATIONS)})")
    _rope_values(cfg, r, out)
    _put(out, "qkv_bias", r.flag("qkv_bias", "structure.add_qkv_bias", absent=False))
    _put(out, "linear_bias", r.flag("linear_bias", "structure.add_bias_linear", absent=False))
    _put(out, "tied", r.flag("tied", "structure.tied_embeddings", absent=False))
    mla, why = r.raw("structure.multi_latent_attention")
    if not why and mla is True:
        # DeepSeek's MLA projects queries and keys-values through low-rank latents, and
        # its qk norm (--qk-layernorm; MindFormers' lq_norm / lkv_norm) normalizes those
        # latents, not each head's query and key as the probe's attention would
        r.mla = True
        r.miss(
            "qk_norm", "multi-latent attention is not modelled (its q/k norms act on the latents)"
        )
    else:
        _put(out, "qk_norm", r.flag("qk_norm", "structure.qk_norm", absent=False))
    for field, dotted in (
        ("hidden_dropout", "structure.hidden_dropout"),
        ("attention_dropout", "structure.attention_dropout"),
    ):
        p = r.num(field, dotted, lo=0.0)
        if p is not None and p < 1.0:
            out[field] = p
        elif p is not None:
            r.miss(field, f"{dotted} = {p} is not a probability below 1")


def _precision_values(cfg: Config, r: _Reader, out: dict[str, Any]) -> None:
    compute = r.dtype("compute_dtype", "precision.compute_dtype")
    _put(out, "compute_dtype", compute)
    for field, dotted in (
        ("softmax_dtype", "precision.softmax_dtype"),
        ("norm_dtype", "precision.layernorm_dtype"),
        ("rotary_dtype", "precision.rotary_dtype"),
        ("residual_dtype", "precision.residual_dtype"),
        ("loss_dtype", "precision.loss_dtype"),
        ("param_dtype", "weight.param_dtype"),
    ):
        _put(out, field, r.dtype(field, dotted))
    # the embedding table's storage dtype. Legacy MindFormers: embedding_init_type, else
    # param_init_type (llama.py:180 LlamaEmbedding(param_init_type=embedding_init_type),
    # llama_config.py:218-221). MindFormers' Megatron-style models create it through
    # init_method in params_dtype (parallel_core/transformer_config.py:556,
    # tensor_parallel/layers.py:107); their weight.embedding_dtype is the lookup's output
    # dtype, so the storage dtype is weight.param_dtype. Megatron: params_dtype, which is
    # bf16 under --bf16 (megatron/training/arguments.py:713 @ core_v0.16.1).
    legacy = cfg.side != "megatron" and cfg.kind != "mindformers-mcore"
    norm_store = out.get("norm_dtype") if legacy else out.get("param_dtype")
    if norm_store is not None:
        out["norm_param_dtype"] = norm_store
    if cfg.kind == "mindformers-mcore":
        if "param_dtype" in out:
            out["embedding_dtype"] = out["param_dtype"]
        else:
            r.miss("embedding_dtype", "params_dtype is not known (the table is kept in it)")
    else:
        _put(out, "embedding_dtype", r.dtype("embedding_dtype", "weight.embedding_dtype"))
    if cfg.side != "megatron":
        # read only where the class's code was read (mindformers_knobs: embedding_cast);
        # elsewhere None, the rows cast to the residual dtype
        eo, why = r.raw("precision.embedding_output_dtype")
        if not why and eo in DTYPES and eo != out.get("residual_dtype"):
            out["embedding_output_dtype"] = eo
    # Megatron wraps the optimizer of a bf16/fp16 model in Float16OptimizerWithFloat16Params
    # (or the distributed optimizer), which keeps float32 main params and updates those
    # (megatron/core/optimizer/__init__.py:419-461, optimizer.py:674 main_param =
    # param.detach().clone().float(); distrib_optimizer.py:399 @ core_v0.16.1).
    out["fp32_master"] = cfg.side == "megatron" and any(
        out.get(f) in ("bfloat16", "float16") for f in ("param_dtype", "embedding_dtype")
    )


def _weight_values(r: _Reader, out: dict[str, Any]) -> None:
    # weights: a checkpoint on either side means identical loaded weights (see pair_specs)
    ckpt, why = r.raw("weight.load_checkpoint")
    if why:
        r.miss("random_init", f"whether a checkpoint is loaded is not known ({why})")
    else:
        out["random_init"] = not bool(ckpt)
    _put(out, "init_std", r.num("init_std", "weight.init_method_std", lo=0.0))
    # the normalizers derive it: Megatron and MindFormers' Megatron-style models divide by
    # sqrt(2 x num_layers), legacy MindFormers does not (normalize/*/precision.py). The real
    # layer count's value is kept at the probe's size, so the two sides differ exactly when
    # the lint says they do.
    _put(out, "output_init_std", r.num("output_init_std", "weight.output_init_std", lo=0.0))


def _optimizer_values(cfg: Config, r: _Reader, out: dict[str, Any], steps: int) -> None:
    typ, why = r.raw("optimizer.type")
    if why:
        r.miss("bias_correction", why)
    elif typ == "adamw":
        out["bias_correction"] = True
    elif typ == "adamw-no-bias-correction":
        out["bias_correction"] = False
    else:
        r.miss(
            "bias_correction",
            f"optimizer {typ!r} is not modelled (AdamW with or without bias correction)",
        )
    _put(out, "beta1", r.num("beta1", "optimizer.beta1", lo=0.0))
    _put(out, "beta2", r.num("beta2", "optimizer.beta2", lo=0.0))
    _put(out, "eps", r.num("eps", "optimizer.eps", lo=0.0))
    _put(out, "weight_decay", r.num("weight_decay", "optimizer.weight_decay", lo=0.0))
    _put(out, "clip_grad", r.num("clip_grad", "optimizer.clip_grad", lo=0.0))
    # Megatron clip_grad_norm_fp32: coeff = max_norm / (total_norm + 1e-6), applied when < 1
    # (megatron/core/optimizer/clip_grads.py). MindSpore ops.clip_by_global_norm:
    # g * clip_norm / max(global_norm, clip_norm) (mindspore/ops/function/clip_func.py).
    out["clip_formula"] = "megatron" if cfg.side == "megatron" else "mindspore"
    curve, why = _lr_curve(cfg, steps)
    if curve is not None:
        out["lr"] = curve
    else:
        r.miss("lr", why)


def side_values(cfg: Config, steps: int = MAX_STEPS) -> tuple[dict[str, Any], _Reader]:
    """Every spec field this side's config decides (shape fields excluded), and the reader
    holding what it could not express (gaps), its limits and notes."""
    r = _Reader(cfg)
    out: dict[str, Any] = {}
    _structure_values(cfg, r, out)
    _precision_values(cfg, r, out)
    _weight_values(r, out)
    _optimizer_values(cfg, r, out, steps)
    seed, _ = r.raw("determinism.seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        out["seed"] = seed
    if cfg.is_moe:
        out.update(moe_values(cfg, r))
    return out, r


# -- shrinking --------------------------------------------------------------------------
def _int(cfg: Config | None, dotted: str) -> int | None:
    if cfg is None:
        return None
    v = cfg.get(dotted)
    if v is None or not v.known or isinstance(v.value, bool) or not isinstance(v.value, int):
        return None
    return v.value if v.value > 0 else None


def shrink_shapes(
    mf: Config | None, mg: Config | None
) -> tuple[dict[str, int], dict[str, tuple[Any, Any]], list[str]]:
    """The shared probe shapes, keeping the head ratio (query heads per group) and the
    ffn/hidden ratio. Shape knobs that differ between the sides come back separately:
    identical weights need one shape, so the probe cannot express such a difference."""
    notes: list[str] = []
    diffs: dict[str, tuple[Any, Any]] = {}
    for dotted in (
        "structure.num_layers",
        "structure.hidden_size",
        "structure.num_heads",
        "structure.num_query_groups",
        "structure.ffn_hidden_size",
    ):
        a, b = _int(mf, dotted), _int(mg, dotted)
        if a is not None and b is not None and a != b:
            diffs[dotted] = (a, b)
    ref = mg if mg is not None else mf
    heads = _int(ref, "structure.num_heads") or _int(mf, "structure.num_heads")
    groups = _int(ref, "structure.num_query_groups") or _int(mf, "structure.num_query_groups")
    ratio = heads // groups if heads and groups and heads % groups == 0 else 1
    if not (heads and groups):
        notes.append("heads or query groups unknown: the probe uses 4 heads, 4 groups")
    n_heads = max(4, min(ratio, 8))
    n_groups = max(1, n_heads // ratio)
    if ratio > 8:
        notes.append(f"{ratio} query heads per group shrunk to 8 (hidden {HIDDEN})")
    hidden = _int(ref, "structure.hidden_size") or _int(mf, "structure.hidden_size")
    ffn = _int(ref, "structure.ffn_hidden_size") or _int(mf, "structure.ffn_hidden_size")
    if hidden and ffn:
        n_ffn = probe_ffn(ffn, hidden, notes)
    else:
        n_ffn = 4 * HIDDEN
        notes.append("ffn hidden size unknown: the probe uses 4 x hidden")
    moe_shapes, moe_diffs, moe_notes = shrink_moe(mf, mg, hidden)
    diffs.update(moe_diffs)
    notes.extend(moe_notes)
    shapes = {
        "hidden": HIDDEN,
        "layers": moe_shapes.pop("layers", LAYERS),
        "heads": n_heads,
        "groups": n_groups,
        "ffn": n_ffn,
        "vocab": VOCAB,
        "seq": SEQ,
        "batch": BATCH,
        **moe_shapes,
    }
    return shapes, diffs, notes


def pair_specs(
    mf: Config, mg: Config, steps: int = MAX_STEPS, wd_scope: dict[str, str] | None = None
) -> SpecPair:
    """Both sides' specs at one shared shape. A knob one side cannot express takes the
    other side's value (aligned) and is listed in ``gaps``; unknown on both: Spec default.
    ``wd_scope``: which parameters weight decay reaches per side, when the source scan
    says ("all" or "matrices"); otherwise each framework's default grouping."""
    shapes, diffs, notes = shrink_shapes(mf, mg)
    a, ra = side_values(mf, steps)
    b, rb = side_values(mg, steps)
    gaps_a, gaps_b = ra.gaps, rb.gaps
    for side, d in (("mindformers", a), ("megatron", b)):
        scope = (wd_scope or {}).get(side)
        if scope in ("all", "matrices"):
            d["wd_scope"] = scope
    for gaps, mine, other in ((gaps_a, a, b), (gaps_b, b, a)):
        for g in gaps:
            for f in (g.field, *COMPANIONS.get(g.field, ())):
                if f in other:
                    mine[f] = other[f]
    mla = [s for s, rd in (("mindformers", ra), ("megatron", rb)) if rd.mla]
    if mla:
        notes.append(
            f"multi-latent attention ({', '.join(mla)}) is not modelled: the probe runs "
            "standard attention with the same head counts on both sides"
        )
    variants = ra.rope_variants + rb.rope_variants
    if variants:
        notes.append(
            "RoPE scaling and interleaving are not modelled: both sides run plain "
            "rotate-half RoPE with their theta, so neither the gap nor the residual includes "
            f"them ({'; '.join(variants)})"
        )
    # identical loaded weights when either side starts from a checkpoint. Where a side's
    # checkpoint is unknown (a fine-tuning recipe's empty or placeholder path), starting both
    # from identical weights claims nothing: a random start would turn every init difference
    # into a cause that the run may never have.
    if any(g.field == "random_init" for g in gaps_a + gaps_b):
        a["random_init"] = b["random_init"] = False
        notes.append(
            "whether a checkpoint is loaded is not known on one side: both sides start from "
            "identical weights, so initialization differences are not measured"
        )
    elif not (a.get("random_init", True) and b.get("random_init", True)):
        a["random_init"] = b["random_init"] = False
        notes.append("a checkpoint is loaded: both sides start from identical weights")
    # one seed for data and weights: the seed difference itself is a determinism row
    a["seed"] = b.get("seed", a.get("seed", 1234))
    b["seed"] = a["seed"]
    for d in (a, b):
        if "lr" in d:
            continue
        other = b if d is a else a
        d["lr"] = other.get("lr", (3e-4,))
    for d in (a, b):
        shrink_groups(d, shapes.get("moe_experts", 0), notes)
    return SpecPair(
        mindformers=Spec(**shapes, **a),
        megatron=Spec(**shapes, **b),
        gaps=gaps_a + gaps_b,
        notes=notes,
        shape_diffs=diffs,
        limits={**rb.limits, **ra.limits},
    )
