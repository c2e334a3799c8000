"""What cfglint knows about framework APIs, by fully qualified name.

Each table says what a call does to randomness, dropout or weight decay, so the scanner can
recognise it without importing anything. Framework entry functions are modelled rather
than followed: their real bodies go through many layers and nested functions. The models
below were read from the projects' sources:

- Megatron-LM ``megatron/training/initialize.py``: ``initialize_megatron`` ->
  ``finish_mpu_init`` -> ``_set_random_seed(args.seed, ...)``, which calls ``random.seed``,
  ``np.random.seed``, ``torch.manual_seed`` and (when a GPU is present)
  ``tensor_parallel.model_parallel_cuda_manual_seed`` with ``seed + 100 * pp_rank``
  (checked at core_v0.13.0 and core_v0.19.0). ``pretrain`` calls ``initialize_megatron``.
  ``torch.use_deterministic_algorithms(True)`` only with ``--deterministic-mode``
  (``arguments.py`` at core_v0.13.0, ``training/determinism.py`` at core_v0.19.0).
- MindSpeed-LLM ``mindspeed_llm/training/initialize.py``: its ``initialize_megatron``
  calls Megatron's ``_set_random_seed(args.seed, ...)``; ``pretrain`` goes through it.
- MindFormers ``mindformers/trainer/trainer.py`` (v1.3.0 .. v1.7.0): ``Trainer.__init__``
  calls ``mindspore.common.set_seed(config.seed)`` and ``np.random.seed(config.seed)``,
  only when ``config.seed`` is non-zero and the parallel mode is not (semi_)auto_parallel;
  Python's ``random`` is not seeded. ``build_context`` turns deterministic computing on
  only with ``train_precision_sync: True`` (v1.3.0 ``set_ms_context(deterministic="ON")``)
  or a ``context.deterministic`` setting. ``mindformers.trainer.utils.set_seed`` seeds
  ``random``, numpy and MindSpore.
- Hugging Face ``transformers.trainer_utils.set_seed(seed, deterministic=False)``: random,
  numpy, torch, cuda (and npu/xpu/... when present); ``deterministic=True`` adds
  ``torch.use_deterministic_algorithms(True)``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

# -- seeding and determinism ----------------------------------------------------------

# qualified name -> (effect kind, positional index of the seed, keyword name of the seed)
SEED_CALLS: dict[str, tuple[str, int, str]] = {
    "random.seed": ("random", 0, "a"),
    "numpy.random.seed": ("numpy", 0, "seed"),
    "torch.manual_seed": ("torch", 0, "seed"),
    "torch.random.manual_seed": ("torch", 0, "seed"),
    "torch.cuda.manual_seed": ("cuda", 0, "seed"),
    "torch.cuda.manual_seed_all": ("cuda", 0, "seed"),
    "torch.cuda.random.manual_seed": ("cuda", 0, "seed"),
    "torch.cuda.random.manual_seed_all": ("cuda", 0, "seed"),
    "torch_npu.npu.manual_seed": ("npu", 0, "seed"),
    "torch_npu.npu.manual_seed_all": ("npu", 0, "seed"),
    "torch.npu.manual_seed": ("npu", 0, "seed"),
    "torch.npu.manual_seed_all": ("npu", 0, "seed"),
    "mindspore.set_seed": ("mindspore", 0, "seed"),
    "mindspore.common.set_seed": ("mindspore", 0, "seed"),
    "mindspore.common.seed.set_seed": ("mindspore", 0, "seed"),
}

# qualified name -> (effect kind, positional index of the switch, keyword of the switch)
DETERMINISTIC_CALLS: dict[str, tuple[str, int, str]] = {
    "torch.use_deterministic_algorithms": ("torch_deterministic", 0, "mode"),
    "torch.set_deterministic": ("torch_deterministic", 0, "d"),  # torch 1.7 spelling
    # MindSpore 2.5+: mindspore.set_deterministic(bool) (python/mindspore/device_manager.py)
    "mindspore.set_deterministic": ("mindspore_deterministic", 0, "deterministic"),
}

# set_context(deterministic="ON"/"OFF"): MindSpore 2.x and the older context module
SET_CONTEXT = frozenset({"mindspore.set_context", "mindspore.context.set_context"})

ATTR_SWITCHES: dict[str, str] = {
    "torch.backends.cudnn.deterministic": "cudnn_deterministic",
    "torch.backends.cudnn.benchmark": "cudnn_benchmark",
}

ENV_SETTERS = frozenset({"os.environ.setdefault", "os.putenv"})


@dataclass(frozen=True)
class FrameworkInit:
    """A framework function whose seeding is modelled instead of followed."""

    kinds: tuple[str, ...]
    # where the seed comes from: ("arg", index, keyword) or ("config", knob)
    seed: tuple
    deterministic: str | None = None  # effect kind switched by a config flag
    needs_nonzero_seed: bool = False
    conditional: bool = False
    note: str = ""
    # the call itself switches determinism when this keyword is a literal True
    deterministic_kw: tuple[int, str] | None = None
    deterministic_note: str = ""


_MEGATRON_INIT = FrameworkInit(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("config", "--seed"),
    deterministic="torch_deterministic",
    note="Megatron's _set_random_seed (seed + 100 * pipeline rank)",
    deterministic_note="Megatron calls torch.use_deterministic_algorithms(True) only with "
    "--deterministic-mode",
)
_MEGATRON_SET_SEED = FrameworkInit(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("arg", 0, "seed_"),
    note="Megatron's _set_random_seed (seed + 100 * pipeline rank)",
)
_MINDFORMERS_TRAINER = FrameworkInit(
    kinds=("numpy", "mindspore"),
    seed=("config", "seed"),
    needs_nonzero_seed=True,
    conditional=True,
    note="MindFormers Trainer seeds numpy and MindSpore only for a non-zero seed and "
    "outside semi_auto_parallel/auto_parallel",
)
_MINDFORMERS_CONTEXT = FrameworkInit(
    kinds=(),
    seed=(),
    deterministic="mindspore_deterministic",
    deterministic_note="MindFormers build_context turns deterministic computing on only "
    "with train_precision_sync: True (or context.deterministic: ON)",
)
_MINDFORMERS_SET_SEED = FrameworkInit(
    kinds=("random", "numpy", "mindspore"),
    seed=("arg", 0, "seed"),
    note="mindformers.trainer.utils.set_seed",
)
_HF_SET_SEED = FrameworkInit(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("arg", 0, "seed"),
    deterministic_kw=(1, "deterministic"),
    note="transformers.set_seed",
)

FRAMEWORK_INITS: dict[str, FrameworkInit] = {
    "megatron.training.initialize.initialize_megatron": _MEGATRON_INIT,
    "megatron.training.initialize_megatron": _MEGATRON_INIT,
    "megatron.initialize.initialize_megatron": _MEGATRON_INIT,  # pre-core layout
    "megatron.training.pretrain": _MEGATRON_INIT,
    "megatron.training.training.pretrain": _MEGATRON_INIT,
    "megatron.training.initialize._set_random_seed": _MEGATRON_SET_SEED,
    "megatron.initialize._set_random_seed": _MEGATRON_SET_SEED,
    "mindspeed_llm.training.pretrain": _MEGATRON_INIT,
    "mindspeed_llm.training.training.pretrain": _MEGATRON_INIT,
    "mindspeed_llm.training.initialize.initialize_megatron": _MEGATRON_INIT,
    "mindspeed_llm.training.initialize_megatron": _MEGATRON_INIT,
    "mindformers.Trainer": _MINDFORMERS_TRAINER,
    "mindformers.trainer.Trainer": _MINDFORMERS_TRAINER,
    "mindformers.trainer.trainer.Trainer": _MINDFORMERS_TRAINER,
    "mindformers.core.context.build_context": _MINDFORMERS_CONTEXT,
    "mindformers.core.build_context": _MINDFORMERS_CONTEXT,
    "mindformers.build_context": _MINDFORMERS_CONTEXT,
    "mindformers.trainer.utils.set_seed": _MINDFORMERS_SET_SEED,
    "transformers.set_seed": _HF_SET_SEED,
    "transformers.trainer_utils.set_seed": _HF_SET_SEED,
}

# -- dropout --------------------------------------------------------------------------
# How each API takes its probability:
#   module    Dropout(p=0.5): first positional or p=
#   func      dropout(input, p=0.5, training=True)
#   torchfn   torch.dropout(input, p, train): no defaults
#   ms_keep   mindspore.nn.Dropout(keep_prob=0.5, p=None): first positional is keep_prob
#   ms_prim   mindspore.ops.Dropout(keep_prob=0.5)
DROPOUT_APIS: dict[str, str] = {
    **{
        f"torch.nn.{n}": "module"
        for n in (
            "Dropout",
            "Dropout1d",
            "Dropout2d",
            "Dropout3d",
            "AlphaDropout",
            "FeatureAlphaDropout",
        )
    },
    **{
        f"torch.nn.functional.{n}": "func"
        for n in (
            "dropout",
            "dropout1d",
            "dropout2d",
            "dropout3d",
            "alpha_dropout",
            "feature_alpha_dropout",
        )
    },
    "torch.dropout": "torchfn",
    "torch.alpha_dropout": "torchfn",
    "torch.feature_dropout": "torchfn",
    "mindspore.nn.Dropout": "ms_keep",
    "mindspore.nn.Dropout1d": "module",
    "mindspore.nn.Dropout2d": "module",
    "mindspore.nn.Dropout3d": "module",
    "mindspore.ops.dropout": "func",
    "mindspore.ops.dropout1d": "func",
    "mindspore.ops.dropout2d": "func",
    "mindspore.ops.dropout3d": "func",
    "mindspore.ops.Dropout": "ms_prim",
    "mindspore.mint.nn.Dropout": "module",
    "mindspore.mint.nn.functional.dropout": "func",
}

# -- optimizers -----------------------------------------------------------------------

OPTIMIZER_NAMES = frozenset(
    {
        "Adam",
        "AdamW",
        "SGD",
        "RMSprop",
        "Adagrad",
        "Adadelta",
        "Adamax",
        "NAdam",
        "RAdam",
        "Lamb",
        "LAMB",
        "Lion",
        "Adafactor",
        "FusedAdam",
        "FusedLAMB",
        "FusedSGD",
        "DistributedFusedAdam",
        "AdamWeightDecay",
        "FusedAdamWeightDecay",
        "Momentum",
        "LARS",
        "Muon",
        "AdamW8bit",
        "Adam8bit",
        "PagedAdamW",
        "PagedAdamW8bit",
        "CPUAdam",
        "DeepSpeedCPUAdam",
        "PmaAdamW",
        "FusedPmaAdamW",
        "Came",
    }
)

# weight_decay when the call does not pass one (only where read from the docs/sources)
OPTIMIZER_WD_DEFAULT: dict[str, float] = {
    "torch.optim.AdamW": 0.01,
    "torch.optim.Adam": 0.0,
    "torch.optim.SGD": 0.0,
    "mindspore.nn.AdamWeightDecay": 0.0,
    "mindspore.nn.Adam": 0.0,
}

# Roots that tell which framework a file belongs to.
TORCH_ROOTS = frozenset(
    {
        "torch",
        "torch_npu",
        "megatron",
        "mindspeed_llm",
        "mindspeed",
        "transformers",
        "apex",
        "deepspeed",
        "accelerate",
        "bitsandbytes",
    }
)
MINDSPORE_ROOTS = frozenset({"mindspore", "mindformers", "msadapter"})

# Package folders whose own optimizer code implements the framework defaults modelled in
# the checks; their internal optimizer construction is not a user's grouping policy.
FRAMEWORK_PACKAGES = frozenset(
    {
        "megatron",
        "mindformers",
        "mindspeed_llm",
        "mindspeed",
        "mindspore",
    }
)

# Parameter-listing calls: their result holds every parameter.
ALL_PARAMS_METHODS = frozenset(
    {
        "parameters",
        "trainable_params",
        "get_parameters",
        "named_parameters",
    }
)

# Imports that never lead into scanned training code: the standard library and the big
# frameworks themselves (modelled above, never followed). A training repo may well have
# its own `random.py` or `utils.py`; `import random` must not resolve to it.
EXTERNAL_ROOTS = frozenset(sys.stdlib_module_names) | frozenset(
    {
        "torch",
        "torch_npu",
        "numpy",
        "mindspore",
        "transformers",
        "apex",
        "deepspeed",
        "accelerate",
        "scipy",
        "pandas",
        "tqdm",
        "einops",
        "safetensors",
        "datasets",
        "tokenizers",
        "sentencepiece",
        "triton",
        "transformer_engine",
        "flash_attn",
    }
)
