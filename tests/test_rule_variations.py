"""Issue #3 "Done when": the aligned fixture pairs are clean, and one-knob variations of them
each produce the expected checklist row, located on the changed line (or saying it is a
default).

The pairs (never modified here; every case edits a copy):
  dense  fixtures/pairs/llama2_dense  MindFormers legacy LlamaConfig vs Megatron-LM bash arrays
  moe    fixtures/pairs/qwen3_moe     MindFormers mcore (use_legacy: False) vs MindSpeed-LLM blocks
Each case names the file it edits (mf: the MindFormers YAML, mg: the Megatron / MindSpeed-LLM
script, launch: the msrun script given with --launch), the edit, the rule and row expected,
the side of the finding's primary location and, in `also`, the other rules the same knob
legitimately moves (each explained). Three tests read every case: `test_fires` (the rule, its
row, the exit code, "default" wording for deletions, no unexpected rules), `test_values`
(both sides' values for compare rules) and `test_located` (the edited line is pointed at;
deletions point at no line that no longer holds the setting). A known cfglint bug is an
entry in `bugs` ({aspect: reason}) and turns that aspect into a strict xfail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cfglint.check.rulebook import load_rules
from variations import (
    Applied,
    Delete,
    Edit,
    Pair,
    Replace,
    apply_edit,
    brief,
    copy_pair,
    run_cli,
    same_values,
)

MF, MG = "mindformers", "megatron"
MG_DEFAULT = ("default of Megatron-LM", "default of MindSpeed-LLM")
MF_DEFAULT = ("default of MindFormers",)


# -- edit shorthands ----------------------------------------------------------------------------
def dense_flag(flag: str) -> Replace:
    """A new line in the dense Megatron script's TRAINING_ARGS array."""
    return Replace("    --bf16\n", f"    --bf16\n    {flag}\n")


def dense_parallel_flag(flag: str) -> Replace:
    """A new line in the dense Megatron script's MODEL_PARALLEL_ARGS array."""
    anchor = "--pipeline-model-parallel-size 1\n"
    return Replace(anchor, f"{anchor}    {flag}\n")


def ms_gpt_flag(flag: str) -> Replace:
    """A new line in the MindSpeed-LLM script's GPT_ARGS block."""
    return Replace("    --swiglu \\\n", f"    --swiglu \\\n    {flag} \\\n")


def ms_moe_flag(flag: str) -> Replace:
    """A new line in the MindSpeed-LLM script's MOE_ARGS block."""
    return Replace("    --norm-topk-prob \\\n", f"    --norm-topk-prob \\\n    {flag} \\\n")


def mcore_key(line: str) -> Replace:
    """A new key at the end of the MoE YAML's model_config (mcore dialect)."""
    return Replace("    moe_aux_loss_coeff: 0.0\n", f"    moe_aux_loss_coeff: 0.0\n    {line}\n")


@dataclass(frozen=True)
class Case:
    id: str
    pair: str  # "dense" | "moe"
    role: str  # "mf" | "mg" | "launch": the file the knob is in
    edit: Edit
    rule: str | None  # expected rule id; None: no finding at all
    row: str = ""
    side: str | None = None  # side of the expected finding's first location (None: unchecked)
    profile: str = "default"
    base: str | None = None
    also: tuple[str, ...] = ()  # companions: other rules this knob legitimately fires
    says: tuple[str, ...] = ()  # the message contains one of these
    values: dict[str, Any] | None = None  # the expected finding's `values`, exactly
    on_edit: bool | None = None  # a location on the edited line; default: unless a deletion
    within: str | None = None  # role of the file the first location must be in
    bugs: dict[str, str] = field(default_factory=dict)  # aspect -> reason: strict xfail

    @property
    def deletes(self) -> bool:
        return isinstance(self.edit, Delete)

    @property
    def must_locate_edit(self) -> bool:
        return (not self.deletes) if self.on_edit is None else self.on_edit


C = Case
R, D = Replace, Delete

# -- bases: aligned variants of a pair that make a knob reachable -------------------------------
# Each base is checked to be clean (default profile) by test_base_is_clean.
# fmt: off
BASES: dict[str, tuple[str, tuple[tuple[str, Edit], ...]]] = {
    # shared experts on both sides (MOE010 only compares the gate when shared experts exist)
    "shared": ("moe", (
        ("mf", mcore_key("shared_expert_num: 1")),
        ("mg", ms_moe_flag("--moe-shared-expert-intermediate-size 768")),
    )),
    # a capacity limit on both sides (the drop policy only matters with one)
    "capacity": ("moe", (
        ("mf", mcore_key("capacity_factor: 1.0")),
        ("mg", ms_moe_flag("--moe-expert-capacity-factor 1.0")),
    )),
    # aux loss on, with the same balancing type (MOE017 only runs with a non-zero factor)
    "aux": ("moe", (
        ("mf", Replace("moe_aux_loss_coeff: 0.0",
                       'moe_aux_loss_coeff: 0.01\n    moe_router_load_balancing_type: "aux_loss"')),
        ("mg", Replace("--moe-aux-loss-coeff 0 ", "--moe-aux-loss-coeff 0.01 ")),
    )),
    # SFT on both sides (the prompt-template note only applies to SFT)
    "sft": ("moe", (
        ("mf", Replace("run_mode: 'train'", "run_mode: 'finetune'")),
        ("mg", Replace("    --npu-deterministic\n",
                       "    --npu-deterministic \\\n    --is-instruction-dataset\n")),
    )),
    # unfused attention on both sides, softmax in float32 (with flash attention the kernel
    # fixes the softmax dtype, so softmax_compute_type is moot)
    "noflash": ("dense", (
        ("mf", Replace("use_flash_attention: True", "use_flash_attention: False")),
        ("mg", Replace("--attention-backend flash",
                       "--attention-backend unfused\n    --attention-softmax-in-fp32")),
    )),
    # TP=2 on two devices on both sides (sequence parallelism needs TP > 1)
    "tp2": ("dense", (
        ("mf", Replace("use_parallel: False", "use_parallel: True")),
        ("mf", Replace("model_parallel: 1", "model_parallel: 2")),
        ("launch", Replace("--worker_num=1 --local_worker_num=1",
                           "--worker_num=2 --local_worker_num=2")),
        ("mg", Replace("GPUS_PER_NODE=1", "GPUS_PER_NODE=2")),
        ("mg", Replace("--tensor-model-parallel-size 1", "--tensor-model-parallel-size 2")),
    )),
    # neither side loads a checkpoint (the init-std rule only matters for random init)
    "random_init": ("dense", (
        ("mf", Delete("load_checkpoint:")),
        ("mg", Delete("--load $CHECKPOINT_PATH")),
    )),
}
# fmt: on


# fmt: off
CASES: list[Case] = [
    # ---- structure ---------------------------------------------------------------------------
    C("STR001-num-layers", "dense", "mf", R("num_layers: 2", "num_layers: 4"),
      "STR001", "structure.num_layers", MF, values={MF: 4, MG: 2}),
    C("STR001-layers-via-shell-default", "moe", "mg",
      R("NUM_LAYERS=${NUM_LAYERS:-2}", "NUM_LAYERS=${NUM_LAYERS:-4}"),
      "STR001", "structure.num_layers", MF, values={MF: 2, MG: 4}),
    C("ALN001-four-layers", "dense", "mg", R("--num-layers 2", "--num-layers 4"),
      "ALN001", "alignment.small_model", MG, profile="align",
      also=("STR001",)),  # the two models now differ too
    C("STR002-num-heads", "moe", "mf", R("num_attention_heads: 32", "num_attention_heads: 16"),
      "STR002", "structure.num_heads", MF, values={MF: 16, MG: 32}),
    C("STR003-hidden-size", "moe", "mf", R("hidden_size: 2048", "hidden_size: 4096"),
      "STR003", "structure.hidden_size", MF, values={MF: 4096, MG: 2048}),
    C("STR004-ffn-size", "dense", "mg", R("--ffn-hidden-size 11008", "--ffn-hidden-size 11264"),
      "STR004", "structure.intermediate_size", MF, values={MF: 11008, MG: 11264}),
    C("STR005-kv-heads", "moe", "mf", R("num_key_value_heads: 4", "num_key_value_heads: 8"),
      "STR005", "structure.n_kv_heads", MF, values={MF: 8, MG: 4}),
    C("STR007-default-normalization", "dense", "mg", D("--normalization RMSNorm"),
      "STR007", "structure.normalization", says=MG_DEFAULT,
      values={MF: "RMSNorm", MG: "LayerNorm"}),
    C("STR008-norm-eps", "dense", "mg", R("--norm-epsilon 1e-5", "--norm-epsilon 1e-6"),
      "STR008", "structure.norm_epsilon", MF, values={MF: 1e-5, MG: 1e-6}),
    C("STR008-yaml11-string-eps", "moe", "mf", R("rms_norm_eps: 1.e-6", "rms_norm_eps: 1e-6"),
      "STR008", "structure.norm_epsilon", MF, says=("as the string '1e-6'",),
      values={MF: "1e-6", MG: 1e-6}),
    C("STR009-default-hidden-dropout", "dense", "mg", D("--hidden-dropout 0.0"),
      "STR009", "structure.dropout", says=MG_DEFAULT, values={MF: 0.0, MG: 0.1},
      also=("STR012",)),  # Megatron's default 0.1 is also "dropout on" (recommend, note)
    C("ALN006-default-hidden-dropout", "dense", "mg", D("--hidden-dropout 0.0"),
      "ALN006", "alignment.no_randomness", MG, profile="align", says=MG_DEFAULT,
      also=("STR009",)),  # the two sides now differ as well
    C("STR009-mf-hidden-dropout", "moe", "mf", R("hidden_dropout: 0.0", "hidden_dropout: 0.1"),
      "STR009", "structure.dropout", MF, values={MF: 0.1, MG: 0.0},
      also=("STR012",)),  # dropout on (recommend, note)
    C("STR010-attention-dropout", "dense", "mg",
      R("--attention-dropout 0.0", "--attention-dropout 0.1"),
      "STR010", "structure.dropout", MG, values={MF: 0.0, MG: 0.1}),
    C("ALN007-attention-dropout", "dense", "mg",
      R("--attention-dropout 0.0", "--attention-dropout 0.1"),
      "ALN007", "alignment.no_randomness", MG, profile="align",
      also=("STR010",)),  # the two sides now differ as well
    C("STR013-flash-attention", "dense", "mf",
      R("use_flash_attention: True", "use_flash_attention: False"),
      "STR013", "structure.fusion", MF, values={MF: False, MG: True}),
    C("STR014-rope-fusion", "moe", "mg", ms_gpt_flag("--use-fused-rotary-pos-emb"),
      "STR014", "structure.fusion", MG, values={MF: False, MG: True}),
    C("STR015-default-rmsnorm-fusion", "moe", "mg", D("--use-fused-rmsnorm"),
      "STR015", "structure.fusion", says=MG_DEFAULT, values={MF: True, MG: False}),
    C("STR016-swiglu-fusion", "moe", "mf", mcore_key("use_fused_swiglu: True"),
      "STR016", "structure.fusion", MF, values={MF: True, MG: False}),
    C("STR017-qkv-concat", "dense", "mf", R("qkv_concat: True", "qkv_concat: False"),
      "STR017", "structure.fusion", MF, values={MF: False, MG: True}),
    C("STR018-vocab-padding", "dense", "mg",
      R("--make-vocab-size-divisible-by 1", "--make-vocab-size-divisible-by 512"),
      "STR018", "structure.vocab_size", MF, values={MF: 32000, MG: 32256}),  # 32000 -> 63 x 512
    C("STR018-vocab-size", "moe", "mf", R("vocab_size: 151936", "vocab_size: 152064"),
      "STR018", "structure.vocab_size", MF, values={MF: 152064, MG: 151936}),
    C("STR019-seq-length", "dense", "mg", R("--seq-length 4096", "--seq-length 2048"),
      "STR019", "structure.seq_length", MF, values={MF: 4096, MG: 2048}),
    C("STR020-default-position-embedding", "dense", "mg", D("--position-embedding-type rope"),
      "STR020", "structure.position_embedding", says=MG_DEFAULT,
      values={MF: "rope", MG: "learned_absolute"}),
    C("STR021-rope-theta", "dense", "mg", R("--rotary-base 10000", "--rotary-base 500000"),
      "STR021", "structure.position_embedding", MF, values={MF: 10000.0, MG: 500000}),
    C("STR022-rotary-percent", "moe", "mg", ms_gpt_flag("--rotary-percent 0.5"),
      "STR022", "structure.position_embedding", MG, values={MF: 1.0, MG: 0.5}),
    C("STR022-rotary-percent-legacy", "dense", "mg", dense_flag("--rotary-percent 0.5"),
      "STR022", "structure.position_embedding", MG, values={MF: 1.0, MG: 0.5}),
    C("STR023-default-tied-embeddings", "dense", "mg",
      D("--untie-embeddings-and-output-weights"),
      "STR023", "structure.tied_embeddings", says=MG_DEFAULT, values={MF: False, MG: True}),
    C("STR023-tie-word-embeddings", "moe", "mf",
      R("tie_word_embeddings: False", "tie_word_embeddings: True"),
      "STR023", "structure.tied_embeddings", MF, values={MF: True, MG: False}),
    C("STR024-default-linear-bias", "dense", "mg", D("--disable-bias-linear"),
      "STR024", "structure.linear_bias", says=MG_DEFAULT, values={MF: False, MG: True},
      also=("STR025",    # Megatron's QKV bias follows add_bias_linear
            "PRC006")),  # biases present: check the bias-add precision (note)
    C("STR024-add-bias-linear", "moe", "mf", R("add_bias_linear: False", "add_bias_linear: True"),
      "STR024", "structure.linear_bias", MF, values={MF: True, MG: False}),
    C("STR025-qkv-bias", "dense", "mg", dense_flag("--add-qkv-bias"),
      "STR025", "structure.linear_bias", MG, values={MF: False, MG: True},
      also=("PRC006",)),  # biases present: check the bias-add precision (note)
    C("STR026-default-activation", "dense", "mg", D("--swiglu"),  # --ffn-hidden-size is explicit
      "STR026", "structure.activation", says=("default of Megatron-LM", "--swiglu not set"),
      values={MF: "swiglu", MG: "gelu"}),
    C("STR026-hidden-act", "moe", "mf", R("hidden_act: 'silu'", "hidden_act: 'gelu'"),
      "STR026", "structure.activation", MF, values={MF: "geglu", MG: "swiglu"}),
    C("STR027-default-qk-norm", "moe", "mg", D("--qk-layernorm"),
      "STR027", "structure.qk_norm", says=MG_DEFAULT, values={MF: True, MG: False},
      also=("OTH010",)),  # the script names Qwen3-30B-A3B, which has q/k norm

    # ---- MoE ---------------------------------------------------------------------------------
    C("MOE001-expert-num", "moe", "mf", R("num_experts: 128", "num_experts: 64"),
      "MOE001", "moe.expert_num", MF, values={MF: 64, MG: 128}),
    C("MOE002-topk", "moe", "mf", R("num_experts_per_tok: 8", "num_experts_per_tok: 4"),
      "MOE002", "moe.num_experts_chosen", MF, values={MF: 4, MG: 8}),
    C("MOE002-default-topk", "moe", "mg", D("--moe-router-topk 8"),
      "MOE002", "moe.num_experts_chosen", MF, says=MG_DEFAULT, values={MF: 8, MG: 2},
      also=("OTH010",)),  # the script names Qwen3-30B-A3B, which routes to 8 experts
    C("MOE003-capacity-factor", "moe", "mf", mcore_key("capacity_factor: 1.1"),
      "MOE003", "moe.capacity_factor", MF, values={MF: 1.1, MG: None}),
    C("MOE003-mg-capacity-factor", "moe", "mg", ms_moe_flag("--moe-expert-capacity-factor 1.0"),
      "MOE003", "moe.capacity_factor", MG, values={MF: None, MG: 1.0}),
    C("MOE003-capacity-differs", "moe", "mg",
      R("--moe-expert-capacity-factor 1.0", "--moe-expert-capacity-factor 1.5"),
      "MOE003", "moe.capacity_factor", MF, base="capacity", values={MF: 1.0, MG: 1.5}),
    C("MOE004-aux-loss-0.05", "moe", "mf", R("moe_aux_loss_coeff: 0.0", "moe_aux_loss_coeff: 0.05"),
      "MOE004", "moe.aux_loss_factor", MF,
      also=("MOE020",)),  # the loss weight now differs (0.05 vs 0); with a weight on one side
    # only, the balancing type (MOE017) is not compared (issue 10)
    C("MOE004-mg-aux-loss-0.05", "moe", "mg",
      R("--moe-aux-loss-coeff 0 ", "--moe-aux-loss-coeff 0.05 "),
      "MOE004", "moe.aux_loss_factor", MG,
      also=("MOE020",)),  # as above
    C("MOE005-aux-loss-on-align", "moe", "mg",
      R("--moe-aux-loss-coeff 0 ", "--moe-aux-loss-coeff 0.001 "),
      "MOE005", "moe.aux_loss_factor", MG, profile="align",
      also=("MOE020",)),  # as above
    C("MOE006-drop-policy", "moe", "mg", ms_moe_flag("--moe-token-drop-policy position"),
      "MOE006", "moe.enable_sdrop", MG, base="capacity", values={MF: "probs", MG: "position"}),
    C("MOE006-enable-sdrop", "moe", "mf", mcore_key("enable_sdrop: True"),
      "MOE006", "moe.enable_sdrop", MF, base="capacity", values={MF: "position", MG: "probs"},
      also=("MOE007",)),  # and Megatron does not pad expert inputs to capacity
    C("MOE007-sdrop-without-pad", "moe", "mf", mcore_key("enable_sdrop: True"),
      "MOE007", "moe.enable_sdrop", MG, on_edit=True),
    C("MOE007-token-drop-policy-key", "moe", "mf", mcore_key("moe_token_drop_policy: position"),
      "MOE007", "moe.enable_sdrop", MG, on_edit=False),
    C("MOE008-router-dtype", "moe", "mf",
      R('router_dense_type: "float32"', 'router_dense_type: "bfloat16"'),
      "MOE008", "moe.router_dense_type", MF),
    C("MOE008-default-router-dtype", "moe", "mg", D("--moe-router-dtype fp32"),
      "MOE008", "moe.router_dense_type", MG, says=MG_DEFAULT),
    C("MOE009-fused-topk-router-align", "moe", "mf", mcore_key("enable_sdrop: True"),
      "MOE009", "moe.use_fused_ops_topkrouter", MF, profile="align", on_edit=False,
      also=("MOE007",)),  # sdrop without Megatron padding to capacity
    C("MOE010-shared-gate", "moe", "mf", mcore_key("use_shared_expert_gating: True"),
      "MOE010", "moe.use_shared_expert_gating", MF, base="shared", values={MF: True, MG: False}),
    C("MOE010-mg-shared-gate", "moe", "mg", ms_moe_flag("--shared-expert-gate"),
      "MOE010", "moe.use_shared_expert_gating", MG, base="shared",
      values={MF: False, MG: True}),
    C("MOE011-shared-experts", "moe", "mf", mcore_key("shared_expert_num: 1"),
      "MOE011", "moe.shared_experts", MF, values={MF: 768, MG: 0}),
    C("MOE011-mg-shared-experts", "moe", "mg",
      ms_moe_flag("--moe-shared-expert-intermediate-size 768"),
      "MOE011", "moe.shared_experts", MF, values={MF: 0, MG: 768}),  # MF's derived 0 comes first
    C("MOE011-shared-size", "moe", "mg",
      R("--moe-shared-expert-intermediate-size 768", "--moe-shared-expert-intermediate-size 1536"),
      "MOE011", "moe.shared_experts", MF, base="shared", values={MF: 768, MG: 1536}),
    C("MOE012-expert-ffn", "moe", "mf",
      R("moe_intermediate_size: 768", "moe_intermediate_size: 1536"),
      "MOE012", "moe.expert_ffn_size", MF, values={MF: 1536, MG: 768}),
    # issue 10: MOE013 (softmax before top-k) is folded into MOE014. MindFormers' router always
    # takes the softmax over all experts (it does not read moe_router_pre_softmax), and a
    # softmax over all then renormalized equals Megatron's softmax over the top k: what
    # differs is only whether the chosen weights sum to 1.
    C("MOE013-pre-softmax-ignored", "moe", "mf",
      R("moe_router_pre_softmax: False", "moe_router_pre_softmax: True"), None),
    C("MOE014-mg-pre-softmax-unnormalized", "moe", "mg",
      R("--norm-topk-prob", "--moe-router-pre-softmax"),
      "MOE014", "moe.router_scoring", MF, values={MF: True, MG: False}),
    C("MOE014-norm-topk-prob", "moe", "mf", R("norm_topk_prob: True", "norm_topk_prob: False"),
      "MOE014", "moe.router_scoring", MF, values={MF: False, MG: True}),
    # without --moe-router-pre-softmax the softmax over the chosen k sums to 1 whatever
    # --norm-topk-prob says (issue 10: the old expectation was a false difference)
    C("MOE014-norm-topk-prob-moot-without-pre-softmax", "moe", "mg", D("--norm-topk-prob"), None),
    C("MOE015-topk-scaling", "moe", "mf", mcore_key("routed_scaling_factor: 2.5"),
      "MOE015", "moe.router_scoring", MF, values={MF: 2.5, MG: 1.0}),
    C("MOE016-score-function-sigmoid", "moe", "mg",
      ms_moe_flag("--moe-router-score-function sigmoid"),
      "MOE016", "moe.router_scoring", MG, values={MF: "softmax", MG: "sigmoid"}),
    C("MOE016-use-gating-sigmoid", "moe", "mf", mcore_key("use_gating_sigmoid: True"),
      "MOE016", "moe.router_scoring", MF, values={MF: "sigmoid", MG: "softmax"}),
    C("MOE017-balancing-type", "moe", "mg",
      R("--moe-router-load-balancing-type aux_loss",
        "--moe-router-load-balancing-type seq_aux_loss"),
      "MOE017", "moe.load_balancing", MF, base="aux", values={MF: "aux_loss", MG: "seq_aux_loss"}),
    C("MOE017-default-balancing-type", "moe", "mf", D("moe_router_load_balancing_type"),
      "MOE017", "moe.load_balancing", MG, base="aux", says=MF_DEFAULT,
      values={MF: "sub_seq_aux_loss", MG: "aux_loss"}),
    C("MOE018-expert-bias", "moe", "mg", ms_moe_flag("--moe-router-enable-expert-bias"),
      "MOE018", "moe.load_balancing", MG, values={MF: False, MG: True}),
    C("MOE018-balance-via-topk-bias", "moe", "mf", mcore_key("balance_via_topk_bias: True"),
      "MOE018", "moe.load_balancing", MF, values={MF: True, MG: False}),
    C("MOE019-first-k-dense", "moe", "mf", mcore_key("first_k_dense_replace: 1"),
      "MOE019", "moe.dense_layers", MF, values={MF: 1, MG: 0}),
    C("MOE019-mg-first-k-dense", "moe", "mg", ms_moe_flag("--first-k-dense-replace 1"),
      "MOE019", "moe.dense_layers", MG, values={MF: 0, MG: 1},
      also=("OTH010",)),  # the script names Qwen3-30B-A3B, which has no dense layers

    # ---- optimizer -----------------------------------------------------------------------------
    C("OPT001-no-bias-correction", "dense", "mf",
      R("  type: AdamW\n  betas: [0.9, 0.95]",
        "  type: FP32StateAdamWeightDecay\n  beta1: 0.9\n  beta2: 0.95"),
      "OPT001", "optimizer.type", MF, values={MF: "adamw-no-bias-correction", MG: "adamw"}),
    C("OPT001-sgd", "dense", "mg", dense_flag("--optimizer sgd"),
      "OPT001", "optimizer.type", MF, values={MF: "adamw", MG: "sgd"}),
    C("OPT002-eps", "dense", "mg", R("--adam-eps 1e-8", "--adam-eps 1e-6"),
      "OPT002", "optimizer.eps", MF, values={MF: 1e-8, MG: 1e-6},
      also=("OPT003",)),  # 1e-6 is not the recommended 1e-8 (note)
    C("OPT002-yaml11-string-eps", "dense", "mf", R("eps: 1.e-8", "eps: 1e-8"),
      "OPT002", "optimizer.eps", MF, says=("as the string '1e-8'",),
      values={MF: "1e-8", MG: 1e-8}),  # reported once per row: OPT003 stays silent
    C("ALN005-yaml11-string-eps", "dense", "mf", R("eps: 1.e-8", "eps: 1e-8"),
      "ALN005", "alignment.adam_eps", MF, profile="align", says=("as the string '1e-8'",),
      also=("OPT002",)),  # the compare rule reports the string too
    C("ALN005-eps", "dense", "mg", R("--adam-eps 1e-8", "--adam-eps 1e-6"),
      "ALN005", "alignment.adam_eps", MG, profile="align",
      also=("OPT002",)),  # the two sides now differ as well
    C("OPT004-beta1", "dense", "mf", R("betas: [0.9, 0.95]", "betas: [0.8, 0.95]"),
      "OPT004", "optimizer.beta1", MF, values={MF: 0.8, MG: 0.9},
      also=("OPT005",)),  # 0.8 is not the recommended 0.9 (note)
    C("OPT006-default-beta2", "dense", "mg", D("--adam-beta2 0.95"),
      "OPT006", "optimizer.beta2", MF, says=MG_DEFAULT, values={MF: 0.95, MG: 0.999},
      also=("OPT007",)),  # Megatron's 0.999 is not the recommended 0.95 (note)
    C("OPT006-beta2", "dense", "mf", R("betas: [0.9, 0.95]", "betas: [0.9, 0.999]"),
      "OPT006", "optimizer.beta2", MF, values={MF: 0.999, MG: 0.95},
      also=("OPT007",)),  # 0.999 is not the recommended 0.95 (note)
    C("OPT008-default-weight-decay", "dense", "mg", D("--weight-decay 0.1"),
      "OPT008", "optimizer.weight_decay", MF, says=MG_DEFAULT, values={MF: 0.1, MG: 0.01}),
    C("OPT008-mf-default-weight-decay", "dense", "mf", D("weight_decay: 0.1"),
      "OPT008", "optimizer.weight_decay", MG, says=MF_DEFAULT, values={MF: 0.0, MG: 0.1}),
    C("OPT009-wd-to-qk-layernorm", "moe", "mg", ms_gpt_flag("--apply-wd-to-qk-layernorm"),
      "OPT009", "optimizer.weight_decay", MG, values={MF: False, MG: True}),
    C("OPT010-cosine-lr", "dense", "mf",
      R("type: ConstantWarmUpLR", "type: CosineWithWarmUpLR\n  lr_end: 1.e-6"),
      "OPT010", "optimizer.lr", MF, says=("first differ by more than 1% at step 69",)),
    C("ALN003-cosine-lr-align", "dense", "mg",
      R("--lr-decay-style constant", "--lr-decay-style cosine"),
      "ALN003", "alignment.constant_lr", MG, profile="align",
      also=("OPT010",)),  # the learning-rate curves now differ
    C("OPT011-warmup-ratio", "dense", "mf", R("warmup_steps: 0", "warmup_ratio: 0.01"),
      "OPT011", "optimizer.lr_warmup", MF, values={MF: 10, MG: 0},
      also=("OPT010",)),  # the learning-rate curves now differ from step 1
    C("ALN004-warmup-ratio-align", "dense", "mf", R("warmup_steps: 0", "warmup_ratio: 0.01"),
      "ALN004", "alignment.no_warmup", MF, profile="align",
      also=("OPT010", "OPT011")),  # as above
    C("OPT011-warmup-iters", "dense", "mg", R("--lr-warmup-iters 0", "--lr-warmup-iters 10"),
      "OPT011", "optimizer.lr_warmup", MF, values={MF: 0, MG: 10},
      also=("OPT010",)),  # the learning-rate curves now differ from step 1
    C("OPT012-use-clip-grad-false", "dense", "mf",
      R("use_clip_grad: True", "use_clip_grad: False"),
      "OPT012", "optimizer.clip_grad", MF, values={MF: 0.0, MG: 1.0},
      also=("OPT013",)),  # no clipping is not the recommended 1.0 (note)
    C("OPT012-mf-default-clip", "dense", "mf", D("use_clip_grad: True"),
      "OPT012", "optimizer.clip_grad", MG, says=MF_DEFAULT, values={MF: 0.0, MG: 1.0},
      also=("OPT013",)),  # as above
    C("OPT012-clip-grad", "dense", "mg", R("--clip-grad 1.0", "--clip-grad 0.5"),
      "OPT012", "optimizer.clip_grad", MF, values={MF: 1.0, MG: 0.5},
      also=("OPT013",)),  # 0.5 is not the recommended 1.0 (note)
    C("OPT014-global-batch", "dense", "mg", R("--global-batch-size 4", "--global-batch-size 8"),
      "OPT014", "optimizer.global_batch_size", MF, values={MF: 4, MG: 8}),
    C("OPT014-mf-batch-size", "dense", "mf", R("batch_size: 4", "batch_size: 2"),
      "OPT014", "optimizer.global_batch_size", MF, values={MF: 2, MG: 4}),
    C("OPT016-train-iters", "dense", "mg", R("--train-iters 1000", "--train-iters 2000"),
      "OPT016", "optimizer.train_steps", MF, values={MF: 1000, MG: 2000}),

    # ---- weights -------------------------------------------------------------------------------
    C("WGT001-param-init-fp16", "dense", "mf",
      R('param_init_type: "float32"', 'param_init_type: "float16"'),
      "WGT001", "weight.param_init_type", MF, values={MF: "float16", MG: "float32"},
      also=("WGT002",)),  # half-precision weights (recommend)
    C("WGT002-params-dtype-bf16", "moe", "mf",
      R('params_dtype: "float32"', 'params_dtype: "bfloat16"'),
      "WGT002", "weight.param_init_type", MF,
      also=("WGT001",)),  # gradients are now reduced in bfloat16 too
    C("WGT003-init-std", "dense", "mf", R("init_method_std: 0.02", "init_method_std: 0.01"),
      "WGT003", "weight.init_method_std", MF, base="random_init", values={MF: 0.01, MG: 0.02}),
    C("ALN011-mg-no-load", "dense", "mg", D("--load $CHECKPOINT_PATH"),
      "ALN011", "alignment.same_weights", MF, says=("Megatron starts from random",)),
    C("ALN011-mf-no-load", "dense", "mf", D("load_checkpoint:"),
      "ALN011", "alignment.same_weights", MG, profile="align",
      says=("MindFormers starts from random",)),

    # ---- precision -----------------------------------------------------------------------------
    C("PRC001-compute-fp16", "dense", "mf",
      R('compute_dtype: "bfloat16"', 'compute_dtype: "float16"'),
      "PRC001", "precision.compute_dtype", MF, values={MF: "float16", MG: "bfloat16"},
      also=("PRC007",)),  # legacy residual adds run in compute_dtype
    C("PRC002-layernorm-bf16", "dense", "mf",
      R('layernorm_compute_type: "float32"', 'layernorm_compute_type: "bfloat16"'),
      "PRC002", "precision.layernorm_compute_type", MF, values={MF: "bfloat16", MG: "float32"}),
    C("PRC003-softmax-fp16", "dense", "mf",
      R('softmax_compute_type: "float32"', 'softmax_compute_type: "float16"'),
      "PRC003", "precision.softmax_compute_type", MF, base="noflash",
      values={MF: "float16", MG: "float32"}),
    C("PRC003-default-softmax", "dense", "mg", D("--attention-softmax-in-fp32"),
      "PRC003", "precision.softmax_compute_type", MF, base="noflash", says=MG_DEFAULT,
      values={MF: "float32", MG: "bfloat16"}),
    C("PRC004-rotary-bf16", "dense", "mf", R('rotary_dtype: "float32"', 'rotary_dtype: "bfloat16"'),
      "PRC004", "precision.rotary_dtype", MF, values={MF: "bfloat16", MG: "float32"}),
    C("PRC005-embedding-fp32", "dense", "mf",  # the guide's case study
      R('embedding_init_type: "bfloat16"', 'embedding_init_type: "float32"'),
      "PRC005", "precision.weight_compute", MF, values={MF: "float32", MG: "bfloat16"}),
    C("PRC006-qkv-bias", "moe", "mf", mcore_key("add_qkv_bias: True"),
      "PRC006", "precision.bias_add", MF,
      also=("STR025",)),  # Megatron has no QKV bias
    C("PRC007-fp32-residual", "dense", "mg", dense_flag("--fp32-residual-connection"),
      "PRC007", "precision.residual_add", MF, values={MF: "bfloat16", MG: "float32"}),
    C("PRC007-mf-residual-dtype", "dense", "mf",
      R('    rotary_dtype: "float32"\n',
        '    rotary_dtype: "float32"\n    residual_dtype: "float32"\n'),
      "PRC007", "precision.residual_add", MF, values={MF: "float32", MG: "bfloat16"}),
    C("PRC007-mcore-fp32-residual", "moe", "mf", mcore_key("fp32_residual_connection: True"),
      "PRC007", "precision.residual_add", MF, values={MF: "float32", MG: "bfloat16"}),
    C("PRC007-mcore-compute-fp16", "moe", "mf",
      R('compute_dtype: "bfloat16"', 'compute_dtype: "float16"'),
      "PRC007", "precision.residual_add", MF, values={MF: "float16", MG: "bfloat16"},
      also=("PRC001",    # the compute dtype differs
            "PRC005"), ),  # mcore casts the embedding output to compute_dtype
    C("PRC009-cross-entropy-fusion", "dense", "mg", dense_flag("--cross-entropy-loss-fusion"),
      "PRC009", "precision.loss", MG),
    C("PRC010-precision-mode", "dense", "mf",
      R('precision_mode: "must_keep_origin_dtype"', 'precision_mode: "allow_fp32_to_fp16"'),
      "PRC010", "precision.high_precision_mode", MF),
    # issue 10: unset, MindSpore's default depends on the chip (must_keep_origin_dtype on
    # Atlas A2 and later): not decided from the file, so no advice (-v says why)
    C("PRC010-default-precision-mode-undecided", "dense", "mf",
      D('precision_mode: "must_keep_origin_dtype"'), None),

    # ---- parallel ------------------------------------------------------------------------------
    C("PAR001-two-processes", "dense", "mg",
      R("--nproc_per_node $GPUS_PER_NODE", "--nproc_per_node 2"),
      "PAR001", "parallel.data_parallel", MF, values={MF: 1, MG: 2},
      also=("PAR010",    # the device counts differ
            "OPT015")),  # global batch 4 is not a multiple of micro batch 4 x DP 2
    C("PAR002-tp2", "dense", "mg",
      R("--tensor-model-parallel-size 1", "--tensor-model-parallel-size 2"),
      "PAR002", "parallel.model_parallel", MF, values={MF: 1, MG: 2},
      also=("PAR012",)),  # one device cannot hold TP 2 (Megatron's DP is then unknown)
    C("ALN008-tp2-align", "dense", "mg",
      R("--tensor-model-parallel-size 1", "--tensor-model-parallel-size 2"),
      "ALN008", "alignment.parallel_off", MG, profile="align",
      also=("PAR002", "PAR012")),  # as above
    C("PAR002-tp-via-shell-variable", "moe", "mg", R("TP=1", "TP=2"),
      "PAR002", "parallel.model_parallel", MF, values={MF: 1, MG: 2},
      also=("PAR012",)),  # as above
    C("PAR003-pp2", "dense", "mg",
      R("--pipeline-model-parallel-size 1", "--pipeline-model-parallel-size 2"),
      "PAR003", "parallel.pipeline_stage", MF, values={MF: 1, MG: 2},
      also=("PAR012",)),  # one device cannot hold PP 2
    C("ALN009-pp2-align", "dense", "mg",
      R("--pipeline-model-parallel-size 1", "--pipeline-model-parallel-size 2"),
      "ALN009", "alignment.parallel_off", MG, profile="align",
      also=("PAR003", "PAR012")),  # as above
    C("PAR004-sequence-parallel", "dense", "mg", dense_parallel_flag("--sequence-parallel"),
      "PAR004", "parallel.use_seq_parallel", MF, base="tp2", values={MF: False, MG: True}),
    C("PAR004-mf-sequence-parallel", "dense", "mf",
      R("use_seq_parallel: False", "use_seq_parallel: True"),
      "PAR004", "parallel.use_seq_parallel", MF, base="tp2", values={MF: True, MG: False}),
    C("ALN010-sequence-parallel-align", "dense", "mf",
      R("use_seq_parallel: False", "use_seq_parallel: True"),
      "ALN010", "alignment.parallel_off", MF, base="tp2", profile="align",
      also=("PAR004",            # the two sides differ
            "ALN008", "ALN002")),  # the tp2 base itself: TP 2 on two devices while aligning
    C("PAR005-distributed-optimizer", "dense", "mg",
      dense_parallel_flag("--use-distributed-optimizer"),
      "PAR005", "parallel.enable_parallel_optimizer", MG, profile="align",
      also=("PAR014",)),  # optimizer state now sharded on one side only (issue 10)
    C("PAR005-mf-parallel-optimizer", "dense", "mf",
      R("enable_parallel_optimizer: False", "enable_parallel_optimizer: True"),
      "PAR005", "parallel.enable_parallel_optimizer", MF, profile="align",
      also=("PAR014",)),  # as above
    C("PAR006-micro-batch-interleave", "dense", "mf",
      R("micro_batch_interleave_num: 1", "micro_batch_interleave_num: 2"),
      "PAR006", "parallel.micro_batch_interleave_num", MF, profile="align"),
    C("PAR007-virtual-pipeline", "dense", "mg",
      dense_parallel_flag("--num-layers-per-virtual-pipeline-stage 1"),
      "PAR007", "parallel.micro_batch_interleave_num", MG, profile="align"),
    C("PAR008-expert-parallel", "moe", "mg",
      R("--expert-model-parallel-size ${EP}", "--expert-model-parallel-size 2"),
      "PAR008", "parallel.expert_parallel", MF, values={MF: 1, MG: 2},
      also=("PAR013",)),  # one device cannot place EP 2 (issue 10)
    C("PAR009-context-parallel", "dense", "mg", dense_parallel_flag("--context-parallel-size 2"),
      "PAR009", "parallel.context_parallel", MG, values={MF: 1, MG: 2},
      also=("PAR012",)),  # one device cannot hold CP 2
    C("PAR010-gpus-per-node-variable", "dense", "mg", R("GPUS_PER_NODE=1", "GPUS_PER_NODE=2"),
      "PAR010", "parallel.device_count", MF, values={MF: 1, MG: 2},
      also=("PAR001", "OPT015"),),  # DP 2 on Megatron; batch 4 is not a multiple of 4 x 2
    C("ALN002-two-devices-align", "dense", "mg",
      R("--nproc_per_node $GPUS_PER_NODE", "--nproc_per_node 2"),
      "ALN002", "alignment.small_model", MG, profile="align",
      also=("PAR010", "PAR001", "OPT015")),  # as PAR001-two-processes

    # ---- other ---------------------------------------------------------------------------------
    C("OTH005-default-overflow-mode", "dense", "launch", D("MS_ASCEND_CHECK_OVERFLOW_MODE"),
      "OTH005", "other.overflow_detection", MF, says=("not exported",), within="launch"),
    C("OTH005-saturation-mode", "dense", "launch", R("INFNAN_MODE", "SATURATION_MODE"),
      "OTH005", "other.overflow_detection", MF),
    C("OTH006-graph-kernel", "dense", "mf",
      R("enable_graph_kernel: False", "enable_graph_kernel: True"),
      "OTH006", "other.graph_kernel_fusion", MF),
    C("OTH007-finetune", "dense", "mf", R("run_mode: 'train'", "run_mode: 'finetune'"),
      "OTH007", "other.template_consistency", MF, values={MF: "sft", MG: "pretrain"}),
    C("OTH008-prompt-type", "moe", "mg",
      R("    --is-instruction-dataset\n",
        "    --is-instruction-dataset \\\n    --prompt-type qwen\n"),
      "OTH008", "other.template_consistency", MG, base="sft"),

    # ---- determinism ---------------------------------------------------------------------------
    C("DET001-seed", "dense", "mf", R("seed: 1234\noutput_dir", "seed: 42\noutput_dir"),
      "DET001", "determinism.same_seed", MF, values={MF: 42, MG: 1234}),
    C("DET001-mg-seed", "dense", "mg", R("--seed 1234", "--seed 42"),
      "DET001", "determinism.same_seed", MF, values={MF: 1234, MG: 42},
      also=("DET007",)),  # --seed also orders Megatron's dataset; MindFormers' keeps 1234
    C("DET002-seed-zero", "dense", "mf", R("seed: 1234\noutput_dir", "seed: 0\noutput_dir"),
      "DET002", "determinism.framework_seed", MF,
      also=("DET001",)),  # 0 is also a different seed from Megatron's 1234
    C("DET003-no-precision-sync", "dense", "mf", D("train_precision_sync: True"),
      "DET003", "determinism.deterministic_algorithms", MF, says=MF_DEFAULT),
    C("DET003-default-deterministic-mode", "dense", "mg", D("--deterministic-mode"),
      "DET003", "determinism.deterministic_algorithms", MG, says=MG_DEFAULT),
    C("DET003-npu-deterministic", "moe", "mg", D("--npu-deterministic"),
      "DET003", "determinism.deterministic_algorithms", MG, says=MG_DEFAULT),
    C("DET004-hccl-msrun", "dense", "launch", D("HCCL_DETERMINISTIC"),
      "DET004", "determinism.deterministic_env", MF, says=("not exported",), within="launch"),
    C("DET004-hccl-mindspeed", "moe", "mg", D("export HCCL_DETERMINISTIC"),
      "DET004", "determinism.deterministic_env", MG, says=("not exported",), within="mg"),
    C("DET005-ascend-launch-blocking", "dense", "launch", D("ASCEND_LAUNCH_BLOCKING"),
      "DET005", "determinism.deterministic_env", MF, says=("not exported",), within="launch"),
    C("DET006-cublas-workspace", "dense", "mg", D("CUBLAS_WORKSPACE_CONFIG"),
      "DET006", "determinism.deterministic_env", MG, says=("not exported",), within="mg"),

    # ---- regressions: knobs that must NOT produce a finding -----------------------------------
    # Megatron switches --sequence-parallel off when TP is 1 (post-processing of the args)
    C("PAR004-sp-off-with-tp1", "dense", "mg", dense_parallel_flag("--sequence-parallel"), None),
    C("ALN010-sp-off-with-tp1-align", "dense", "mg", dense_parallel_flag("--sequence-parallel"),
      None, profile="align"),
    # 32000 is already a multiple of 128, so the default padding changes nothing
    C("STR018-vocab-pads-to-itself", "dense", "mg", D("--make-vocab-size-divisible-by 1"), None),
    # with flash attention the kernel computes softmax in float32 whatever the YAML says
    C("PRC003-softmax-moot-with-flash", "dense", "mf",
      R('softmax_compute_type: "float32"', 'softmax_compute_type: "float16"'), None),
]
# fmt: on


# -- running a case (once per session) ---------------------------------------------------------
@dataclass
class Outcome:
    rc: int
    report: dict[str, Any]
    applied: Applied
    pair: Pair  # the edited copies, as given on the command line
    role: str

    @property
    def edited(self) -> Path:
        return self.pair.path(self.role)

    @property
    def findings(self) -> list[dict[str, Any]]:
        return self.report["findings"]


_OUTCOMES: dict[str, Outcome] = {}


def outcome(case: Case, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    if case.id not in _OUTCOMES:
        pair = copy_pair(case.pair, tmp_path_factory.mktemp(case.id.lower()))
        if case.base is not None:
            base_pair, edits = BASES[case.base]
            assert base_pair == case.pair, f"base {case.base} is for the {base_pair} pair"
            for role, edit in edits:
                apply_edit(pair.path(role), edit)
        applied = apply_edit(pair.path(case.role), case.edit)
        rc, report = run_cli(pair.argv(case.profile))
        _OUTCOMES[case.id] = Outcome(rc, report, applied, pair, case.role)
    return _OUTCOMES[case.id]


RULES = {r.id: r for r in load_rules()}


def expected(case: Case, out: Outcome) -> list[dict[str, Any]]:
    return [f for f in out.findings if f["rule"] == case.rule]


def params(aspect: str, cases: list[Case]) -> list[Any]:
    out = []
    for c in cases:
        reason = c.bugs.get(aspect) or c.bugs.get("fires")
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


# -- the aligned pairs ----------------------------------------------------------------------------
@pytest.mark.parametrize("profile", ["default", "align"])
@pytest.mark.parametrize("pair_name", ["dense", "moe"])
def test_aligned_pair_is_clean(pair_name: str, profile: str, tmp_path: Path) -> None:
    pair = copy_pair(pair_name, tmp_path)
    rc, report = run_cli(pair.argv(profile))
    assert report["findings"] == [], f"aligned {pair_name} pair:{brief(report['findings'])}"
    assert report["errors"] == []
    assert rc == 0


@pytest.mark.parametrize("base", sorted(BASES))
def test_base_is_clean(base: str, tmp_path: Path) -> None:
    pair_name, edits = BASES[base]
    pair = copy_pair(pair_name, tmp_path)
    for role, edit in edits:
        apply_edit(pair.path(role), edit)
    rc, report = run_cli(pair.argv("default"))
    assert report["findings"] == [], f"base {base}:{brief(report['findings'])}"
    assert rc == 0


# -- one-knob variations -------------------------------------------------------------------------
@pytest.mark.parametrize("case", params("fires", CASES))
def test_fires(case: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = outcome(case, tmp_path_factory)
    assert out.report["errors"] == []
    got = brief(out.findings)
    if case.rule is None:
        assert out.findings == [], f"expected no finding:{got}"
        assert out.rc == 0
        return
    mine = expected(case, out)
    assert mine, f"{case.rule} ({case.row}) did not fire:{got}"
    for f in mine:
        assert f["row"] == case.row
        yaml11 = "as the string" in f["message"]  # promoted to error whatever the rule says
        assert f["severity"] == ("error" if yaml11 else RULES[case.rule].severity)
    others = {f["rule"] for f in out.findings} - {f["rule"] for f in mine}
    assert others == set(case.also), f"companions differ from {sorted(case.also)}:{got}"
    if case.deletes:
        assert case.says, "a deletion case must say which default wording to expect"
    if case.says:
        assert any(s in f["message"] for f in mine for s in case.says), (
            f"no message says {case.says}:{got}"
        )
    failing = any(f["severity"] in ("error", "warning") for f in out.findings)
    assert out.rc == (1 if failing else 0)


VALUE_CASES = [c for c in CASES if c.values is not None]


@pytest.mark.parametrize("case", params("values", VALUE_CASES))
def test_values(case: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = outcome(case, tmp_path_factory)
    mine = expected(case, out)
    assert mine, f"{case.rule} ({case.row}) did not fire:{brief(out.findings)}"
    assert len(mine) == 1, f"one finding expected:{brief(mine)}"
    values = mine[0]["values"]
    if RULES[case.rule].kind == "compare":
        assert set(values) == {MF, MG}, f"a compare finding carries both sides: {values}"
    assert same_values(values, case.values), f"values {values}, expected {case.values}"


LOCATED_CASES = [c for c in CASES if c.rule is not None]


@pytest.mark.parametrize("case", params("located", LOCATED_CASES))
def test_located(case: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = outcome(case, tmp_path_factory)
    mine = expected(case, out)
    assert mine, f"{case.rule} ({case.row}) did not fire:{brief(out.findings)}"
    edited = str(out.edited)
    n_lines = len(out.edited.read_text(encoding="utf-8").splitlines())
    for f in mine:
        for loc in f["locations"]:
            if loc["path"] == edited:
                assert 1 <= loc["line"] <= n_lines, f"{loc} is outside {out.edited.name}"
                assert loc["line"] not in out.applied.removed, (
                    f"{loc} points at a line that no longer holds the deleted setting"
                )
    if case.side is not None:
        sides = {f["locations"][0]["side"] for f in mine if f["locations"]}
        assert case.side in sides, f"primary location side {sides}, expected {case.side}"
    if case.within is not None:
        want = str(out.pair.path(case.within))
        firsts = [f["locations"][0]["path"] for f in mine if f["locations"]]
        assert want in firsts, f"first location in {firsts}, expected {want}"
    if case.must_locate_edit:
        changed = set(out.applied.changed)
        hits = [
            loc
            for f in mine
            for loc in f["locations"]
            if loc["path"] == edited and loc["line"] in changed
        ]
        assert hits, (
            f"no location on the edited line(s) {sorted(changed)} of "
            f"{out.edited.name}:{brief(mine)}"
        )


# -- coverage of the checklist rows -----------------------------------------------------------
def test_every_compare_and_recommend_row_has_a_variation() -> None:
    rows = {r.row for r in RULES.values() if r.kind in ("compare", "recommend")}
    covered = {c.row for c in CASES if c.rule is not None}
    assert rows - covered == set(), f"rows without a variation: {sorted(rows - covered)}"


def test_case_table_is_consistent() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    for c in CASES:
        assert re.match(r"^[A-Z]{3}([0-9]{3})?-[a-z0-9.-]+$", c.id), c.id
        assert c.role in ("mf", "mg", "launch"), c.id
        if c.rule is not None:
            assert c.rule in RULES, f"{c.id}: no rule {c.rule}"
            assert RULES[c.rule].row == c.row, f"{c.id}: {c.rule} is on {RULES[c.rule].row}"
            assert c.id.startswith(c.rule), f"{c.id} should be named after {c.rule}"
        for companion in c.also:
            assert companion in RULES, f"{c.id}: no companion rule {companion}"
        assert set(c.bugs) <= {"fires", "values", "located"}, c.id
