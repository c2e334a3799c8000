"""The one normalized model both sides land in.

Field names are framework-neutral. Units and spellings are canonical so that rules can
compare the two sides without knowing either framework:

- dtypes: ``"float32"``, ``"bfloat16"``, ``"float16"``
- normalization: ``"LayerNorm"`` or ``"RMSNorm"``
- optimizer type: ``"adamw"`` (Megatron ``adam`` is decoupled AdamW), ``"sgd"``, ...
- lr decay style: ``"constant"``, ``"linear"``, ``"cosine"``, ``"inverse-square-root"``,
  ``"WSD"``, ``"polynomial"``, ``"cosine-restarts"``
- ``clip_grad`` is the max global norm, ``0.0`` when clipping is off
- every field is a :class:`~cfglint.model.values.Value` (or ``None`` when the framework has no
  such knob at all, which is different from "not set": not set resolves to a default)
"""

# Field annotations are evaluated here, not kept as strings (no `from __future__ import
# annotations`): pydantic turns each string into a typing.ForwardRef, which Python 3.11
# compiles one by one at import (tests/model/test_model_schemas.py).
from functools import cache
from operator import attrgetter
from typing import Any, Literal, get_origin

from pydantic import ConfigDict, Field

from cfglint.model.trusted import TrustedModel
from cfglint.model.values import Loc, Value

Side = Literal["mindformers", "megatron"]
V = Value | None


class _Section(TrustedModel):
    # Our normalizers fill sections field by field; nothing validates them during a lint, so
    # the validator is built only if something asks for it (start-up time, see bench/).
    model_config = ConfigDict(extra="forbid", defer_build=True)

    def items(self) -> list[tuple[str, Value]]:
        return [(k, v) for k, v in self.__dict__.items() if isinstance(v, Value)]

    def __setattr__(self, name: str, value: Any) -> None:
        # normalizers fill sections field by field (~330 sets a pair lint): a field is set
        # exactly as pydantic's handler for a plain field sets it (no section is frozen or
        # validates assignment, and no descriptor bears a field's name), without its two
        # Python calls and the handler worked out per class and name; anything else is
        # pydantic's to refuse
        if name in type(self).__pydantic_fields__:
            self.__dict__[name] = value
            self.__pydantic_fields_set__.add(name)
        else:
            super().__setattr__(name, value)


class Structure(_Section):
    num_layers: V = None
    num_heads: V = None
    hidden_size: V = None
    ffn_hidden_size: V = None
    num_query_groups: V = None
    head_dim: V = None
    normalization: V = None
    norm_epsilon: V = None
    hidden_dropout: V = None
    attention_dropout: V = None
    recompute: V = None
    use_flash_attention: V = None
    fused_rope: V = None
    fused_norm: V = None
    fused_swiglu: V = None
    fused_qkv: V = None
    vocab_size: V = None
    padded_vocab_size: V = None
    seq_length: V = None
    max_position_embeddings: V = None
    position_embedding_type: V = None
    rope_theta: V = None
    rotary_percent: V = None
    # "none", or "llama3(factor=8, low=1, high=4, original=8192)", "yarn(...)", "linear(...)",
    # "ntk(...)": the RoPE frequency rescaling, canonical on both sides
    rope_scaling: V = None
    # YaRN only: "cos/sin x1.13863, softmax scale x1", the magnitudes its mscale /
    # mscale_all_dim give, where each framework applies them (normalize/rope.py)
    yarn_mscale: V = None
    # True: rotate interleaved pairs (GLM, Megatron --rotary-interleaved); False: the two halves
    rope_interleaved: V = None
    tied_embeddings: V = None
    # "plain" (a linear output layer) or "row-normalized" (Baichuan2's NormHead divides each
    # vocabulary row by its L2 norm in every training forward pass)
    output_head: V = None
    add_bias_linear: V = None
    add_qkv_bias: V = None
    # a bias on the attention output projection: with add_bias_linear, or alone (MindSpeed-LLM
    # --add-dense-bias; InternLM's has_bias, which biases the four attention projections only)
    add_dense_bias: V = None
    activation: V = None
    qk_norm: V = None
    # multi-latent attention (DeepSeek's MLA): queries and keys-values through low-rank
    # latents; qk_norm then means the norms of those latents
    multi_latent_attention: V = None
    # MLA's dimensions, set only on a side that builds MLA: the query latent's rank (0: the
    # queries are not compressed, as None or 0 say in every framework), the key-value
    # latent's rank, the q/k head size without rotary ("nope"), its rotary part, the value
    # head size (normalize/mla.py)
    mla_q_lora_rank: V = None
    mla_kv_lora_rank: V = None
    mla_qk_head_dim: V = None
    mla_qk_pos_emb_head_dim: V = None
    mla_v_head_dim: V = None
    # DeepSeek-V4's manifold-constrained hyper-connections (mHC): on/off and the number of
    # residual streams each layer mixes (normalize/dsv4.py)
    hyper_connections: V = None
    hc_streams: V = None
    # DeepSeek's sparse-attention indexer (DSA, and V4's CSA indexer): on/off, then its heads,
    # head size, the keys each query keeps, and the weight of its loss (set only where it is on)
    dsa_indexer: V = None
    indexer_heads: V = None
    indexer_head_dim: V = None
    indexer_topk: V = None
    indexer_loss_coeff: V = None
    # DeepSeek-V4's compressed sparse attention (CSA, per-layer compress ratios): on/off only;
    # the ratios themselves are not compared (normalize/dsv4.py CSA_RATIOS_NOT_COMPARED)
    csa_compression: V = None


class Moe(_Section):
    num_experts: V = None
    router_topk: V = None
    capacity_factor: V = None
    aux_loss_coeff: V = None
    # router z-loss weight (0 or none: off)
    z_loss_coeff: V = None
    enable_sdrop: V = None
    token_drop_policy: V = None
    pad_to_capacity: V = None
    router_dtype: V = None
    use_fused_ops_topkrouter: V = None
    shared_expert_gate: V = None
    num_shared_experts: V = None
    shared_expert_ffn_size: V = None
    expert_ffn_size: V = None
    router_pre_softmax: V = None
    norm_topk_prob: V = None
    topk_scaling_factor: V = None
    score_function: V = None
    load_balancing_type: V = None
    # DeepSeek-V2's device-level and communication balancing losses: "none", or the loss in
    # words with its weight ("0.05 x group scores x group loads over 8 expert groups"); the
    # two frameworks define the communication loss differently (normalize/balancing.py)
    device_balancing: V = None
    comm_balancing: V = None
    expert_bias: V = None
    # how far each step moves an expert's bias: sign(load error) x this rate on both sides
    expert_bias_update_rate: V = None
    first_k_dense: V = None
    # group-limited routing: "K of N groups kept" or "no grouping" (every expert can be
    # chosen), and how a group is scored ("max", "sum of top M"); see normalize/moe_groups.py
    group_limit: V = None
    group_score: V = None
    # whether the training log prints the LM loss apart from the aux losses (MindFormers
    # mcore: print_separate_loss; its `loss` column is the LM loss plus the aux loss)
    separate_lm_loss: V = None


class Optimizer(_Section):
    type: V = None
    eps: V = None
    beta1: V = None
    beta2: V = None
    weight_decay: V = None
    wd_to_qk_layernorm: V = None
    lr: V = None
    min_lr: V = None
    lr_decay_style: V = None
    lr_warmup_steps: V = None
    # warmup as a fraction of the decay length: compared when a step count needs the dataset
    lr_warmup_fraction: V = None
    lr_warmup_init: V = None
    lr_decay_steps: V = None
    # schedule-specific extras (power, num_cycles, WSD decay steps, ...), keyed by name
    lr_extra: dict[str, Value] = Field(default_factory=dict)
    train_steps: V = None
    # an upper bound on the run length where only that is known: MindFormers' HF loader
    # keeps at most n rows after a `take n` handler (mindformers: normalize/.../optimizer.py)
    train_steps_bound: V = None
    # MindFormers: what total_steps -1 is computed from at run time (epochs, sink_mode,
    # sink_size, drop_remainder, repeat, full_batch), for a length taken from the dataset
    length_terms: dict[str, Value] = Field(default_factory=dict)
    clip_grad: V = None
    global_batch_size: V = None
    micro_batch_size: V = None
    # why the optimizer cannot be built, so the job stops before its first step (a PyYAML
    # string where MindFormers' optimizer checks for a float); None when it can be built
    build_error: V = None


class Weight(_Section):
    param_dtype: V = None
    embedding_dtype: V = None
    grad_reduce_dtype: V = None
    init_method_std: V = None
    # the std of the layers that write into the residual stream (attention output, MLP down)
    # under random init: Megatron divides init_method_std by sqrt(2 x num_layers)
    output_init_std: V = None
    load_checkpoint: V = None


class Precision(_Section):
    compute_dtype: V = None
    layernorm_dtype: V = None
    softmax_dtype: V = None
    rotary_dtype: V = None
    residual_dtype: V = None
    loss_dtype: V = None
    # the dtype the looked-up embedding rows enter the first layer in (a float32 table whose
    # rows are cast to compute_dtype matches Megatron's half-precision copy of a float32 master)
    embedding_output_dtype: V = None
    cross_entropy_fusion: V = None
    precision_mode: V = None
    # the loss scaler, canonical on both sides (normalize/loss_scale.py): "none", "fixed N",
    # or "dynamic from N, xF after W clean steps, /F after each overflow | H overflows"
    loss_scale: V = None


class Parallel(_Section):
    data_parallel: V = None
    tensor_parallel: V = None
    pipeline_parallel: V = None
    context_parallel: V = None
    expert_parallel: V = None
    sequence_parallel: V = None
    distributed_optimizer: V = None
    # whether the optimizer state really is split: the switch above, but False with one
    # data-parallel rank (one shard) and unknown with an unknown data-parallel size
    sharded_optimizer: V = None
    micro_batch_interleave: V = None
    virtual_pipeline: V = None
    micro_batch_num: V = None
    world_size: V = None
    # why the layout cannot run on the device count the script yields ("" when it can)
    layout_problem: V = None


class Other(_Section):
    enable_graph_kernel: V = None
    graph_kernel_flags: V = None
    bos_token_id: V = None
    eos_token_id: V = None
    pad_token_id: V = None
    eod_token_id: V = None
    data_path: V = None
    tokenizer_path: V = None
    prompt_template: V = None
    training_stage: V = None  # "pretrain" or "sft"
    # what the model does at the document ends inside a packed sample: "none", or the parts
    # of BOUNDARY_PARTS that apply, joined with "; "
    document_boundaries: V = None
    framework_version: V = None


class Determinism(_Section):
    seed: V = None
    # whether the framework really seeds its global RNGs with `seed` (MindFormers skips it
    # in semi-auto parallel runs)
    seed_applied: V = None
    deterministic: V = None
    # the seed that orders the training samples (Megatron: --seed through the dataset builder)
    data_seed: V = None
    # whether the training samples are read in a shuffled order (False: in the file's order)
    data_shuffle: V = None
    # which code draws that order (normalize/shufflers.py): equal seeds give equal orders
    # only through the same shuffler
    shuffler: V = None


class Launch(_Section):
    """What the launch script starts: launcher, entry script, device count."""

    launcher: V = None
    device: V = None  # "npu" or "gpu": what the launch script targets
    entry_script: V = None
    nproc_per_node: V = None
    nnodes: V = None


class Config(TrustedModel):
    """One side of a migration, normalized."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    side: Side
    path: str
    kind: str  # "mindformers-legacy", "mindformers-mcore", "megatron-script", "megatron-log", ...
    defaults_from: str = ""  # "Megatron-LM core_v0.13.0", "MindFormers v1.5.0 LlamaConfig"
    # how messages name this side: "Megatron", "MindSpeed-LLM", "Megatron-LLaMA", ... ("" =
    # by the side); and the dialect with the evidence that chose it (inputs[].dialect)
    side_label: str = ""
    dialect: str = ""
    dialect_name: str = ""  # what --megatron-version calls it
    model_class: str = ""
    is_moe: bool = False
    structure: Structure = Field(default_factory=Structure.model_construct)
    moe: Moe = Field(default_factory=Moe.model_construct)
    optimizer: Optimizer = Field(default_factory=Optimizer.model_construct)
    weight: Weight = Field(default_factory=Weight.model_construct)
    precision: Precision = Field(default_factory=Precision.model_construct)
    parallel: Parallel = Field(default_factory=Parallel.model_construct)
    other: Other = Field(default_factory=Other.model_construct)
    determinism: Determinism = Field(default_factory=Determinism.model_construct)
    launch: Launch = Field(default_factory=Launch.model_construct)
    # environment variables the launch script exports (name -> value as written)
    env: dict[str, Value] = Field(default_factory=dict)
    # the launch script the environment was read from ("" when none was given)
    launch_script: str = ""
    # why a variable the launch script does not export may still be exported (a sourced
    # file that was not read); "" when the script's environment is known in full
    env_hidden: str = ""
    # fields left empty because they do not apply to this model (no RoPE with learned
    # positions, no fused SwiGLU switch in a GeLU model, no token ids in a vision encoder):
    # dotted field -> why. Rules skip an empty field; `show` prints the reason.
    not_applicable: dict[str, str] = Field(default_factory=dict)
    # flags or keys we do not know; kept, reported as warnings
    unknown: list[Value] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    # every file that contributed (base_config files, sourced launch scripts)
    files: list[str] = Field(default_factory=list)
    # where each section of ``path`` begins, (line, column): a dotted key of a YAML config
    # ("optimizer", "model.model_config"), or "" for a script's launch command. A finding
    # on a setting left to its default points there: where the setting would be written
    sections: dict[str, tuple[int, int]] = Field(default_factory=dict)

    @classmethod
    def create(cls, **fields: Any) -> "Config":
        """A new, empty config for a normalizer to fill. Built without validation: every
        value comes from our own code, and validating would only cost start-up time."""
        return cls.model_construct(**fields)

    def get(self, dotted: str) -> Value | None:
        """``cfg.get("optimizer.beta2")``; ``env.NAME`` reads the environment."""
        # a section field read before is one C call (~670 reads a pair lint, most of them
        # of a path read before): the path is checked once
        got = _GETTERS.get(dotted)
        if got is not None:
            return got(self)  # type: ignore[no-any-return]
        section, _, name = dotted.partition(".")
        if section == "env":
            return self.env.get(name)
        sec = getattr(self, section, None)
        if not isinstance(sec, _Section):
            raise KeyError(dotted)
        # the class's field table itself: ``model_fields`` is a property that makes three
        # calls to return it
        if name not in type(sec).__pydantic_fields__:
            raise KeyError(dotted)
        _GETTERS[dotted] = attrgetter(dotted)
        return getattr(sec, name)  # type: ignore[no-any-return]

    def set(self, dotted: str, value: Value | None) -> None:
        section, _, name = dotted.partition(".")
        setattr(getattr(self, section), name, value)

    @classmethod
    def field_paths(cls) -> list[str]:
        return list(_field_paths(cls))


# "section.field" -> its reader, for each path Config.get has checked (a section field is on
# every config: sections are never None and have no required field)
_GETTERS: "dict[str, attrgetter[Any]]" = {}  # (a string: not evaluated at import)

# the config's sections, in declaration order (the checklist's own sections are
# cfglint.model.findings.SECTION_ORDER: it adds alignment, source and standard, lacks launch)
SECTIONS: tuple[str, ...] = tuple(
    name
    for name, f in Config.model_fields.items()
    if isinstance(f.annotation, type) and issubclass(f.annotation, _Section)
)


@cache
def _field_paths(cls: type[Config]) -> tuple[str, ...]:
    out = []
    for section in SECTIONS:
        sec_cls = cls.model_fields[section].annotation
        for name, f in sec_cls.model_fields.items():  # type: ignore[union-attr]
            if get_origin(f.annotation) is not dict:
                out.append(f"{section}.{name}")
    return tuple(out)


__all__ = ["SECTIONS", "Config", "Loc", "Side", "Value"]
