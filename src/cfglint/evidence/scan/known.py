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

import dataclasses
import sys
from dataclasses import dataclass

from cfglint.evidence.scan.seed_helpers import LIBRARY_HELPERS

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
}  # mindspore.set_seed also seeds numpy: it is in seed_helpers.LIBRARY_HELPERS

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
    # the call always switches deterministic algorithms on
    deterministic_always: bool = False
    # calling it trains (Megatron's pretrain): the caller is a training entry point
    trains: bool = False
    source: str = ""


_MEGATRON_INIT = FrameworkInit(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("config", "--seed"),
    deterministic="torch_deterministic",
    note="Megatron's _set_random_seed (seed + 100 * pipeline rank)",
    deterministic_note="Megatron calls torch.use_deterministic_algorithms(True) only with "
    "--deterministic-mode",
)
# Megatron's pretrain: initialize_megatron, then the training loop
_MEGATRON_PRETRAIN = dataclasses.replace(_MEGATRON_INIT, trains=True)
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

FRAMEWORK_INITS: dict[str, FrameworkInit] = {
    "megatron.training.initialize.initialize_megatron": _MEGATRON_INIT,
    "megatron.training.initialize_megatron": _MEGATRON_INIT,
    "megatron.initialize.initialize_megatron": _MEGATRON_INIT,  # pre-core layout
    "megatron.training.pretrain": _MEGATRON_PRETRAIN,
    "megatron.training.training.pretrain": _MEGATRON_PRETRAIN,
    "megatron.training.initialize._set_random_seed": _MEGATRON_SET_SEED,
    "megatron.initialize._set_random_seed": _MEGATRON_SET_SEED,
    "mindspeed_llm.training.pretrain": _MEGATRON_PRETRAIN,
    "mindspeed_llm.training.training.pretrain": _MEGATRON_PRETRAIN,
    "mindspeed_llm.training.initialize.initialize_megatron": _MEGATRON_INIT,
    "mindspeed_llm.training.initialize_megatron": _MEGATRON_INIT,
    "mindformers.Trainer": _MINDFORMERS_TRAINER,
    "mindformers.trainer.Trainer": _MINDFORMERS_TRAINER,
    "mindformers.trainer.trainer.Trainer": _MINDFORMERS_TRAINER,
    "mindformers.core.context.build_context": _MINDFORMERS_CONTEXT,
    "mindformers.core.build_context": _MINDFORMERS_CONTEXT,
    "mindformers.build_context": _MINDFORMERS_CONTEXT,
}
FRAMEWORK_INITS.update(LIBRARY_HELPERS)  # type: ignore[arg-type]  # same fields

# Calls that train: seen anywhere reached from a script, they make it an entry point.
_TRAINING_SUFFIXES = (
    "Trainer.train",
    "Trainer.fit",
    "Trainer.finetune",
    "Model.train",
    "training.train_step",
)
_STEP_RECEIVERS = frozenset({"opt", "optim", "engine", "model_engine", "trainer"})
# MindSpore's functional training: gradients come from value_and_grad/grad (its backward
# pass), then `optimizer(grads)` applies them (mindcv's train_with_func.py). MindSpore
# 2.x python/mindspore/ops/composite/base.py exports both under mindspore and ops.
GRADIENT_CALLS = frozenset(
    {
        "mindspore.value_and_grad",
        "mindspore.ops.value_and_grad",
        "mindspore.grad",
        "mindspore.ops.grad",
    }
)


# A functional optimizer applied to the gradients: `optimizer(grads)` (MindSpore's
# value_and_grad style, mindcv train_with_func.py); the callee's last name, lower case.
FUNCTIONAL_OPTIMIZERS = frozenset({"optimizer", "optim", "opt"})
# In-place tensor methods that, fed a `.grad`, update parameters by hand (`p.add_(p.grad,
# alpha=-lr)`); `p -= lr * p.grad` is the augmented-assignment form. The receiver must not
# be a gradient itself: `p.grad.mul_(coef)` clips, it updates nothing.
IN_PLACE_UPDATES = frozenset({"add_", "sub_", "addcdiv_", "addcmul_", "copy_"})


def is_gradient_call(name: str) -> bool:
    """A backward pass: ``loss.backward()``, ``accelerator.backward(loss)``, MindSpore's
    ``value_and_grad``. Gradients alone train nothing (a gradient check, a kernel's
    self-test); :func:`is_training_call` is what applies them."""
    if name in GRADIENT_CALLS:
        return True
    head, _, last = name.rpartition(".")
    return bool(head) and last in ("backward", "manual_backward")


def is_training_call(name: str, nargs: int, inference: bool = False) -> bool:
    """A call that applies an update: an optimizer step or a framework training call.
    ``name``: the call as written or qualified (``optimizer.step``,
    ``transformers.Trainer.train``); ``nargs``: how many arguments it is given;
    ``inference``: the file imports a serving library (INFERENCE_ROOTS), whose engines
    have a ``step()`` that generates."""
    head, _, last = name.rpartition(".")
    if last.lower() in FUNCTIONAL_OPTIMIZERS and nargs >= 1:
        return True  # optimizer(grads), self.optimizer(grads)
    if not head:
        return False
    if inference and last == "step" and "optim" not in head.lower():
        return False  # vLLM's engine.step(): one generation step
    if last == "step":
        return _optimizer_step(head, nargs)
    if last == "train" and head.rsplit(".", 1)[-1] == "model" and nargs >= 2:
        return True  # MindSpore Model.train(epoch, dataset)
    if last in ("train", "fit") and head.rsplit(".", 1)[-1].lower().endswith("trainer"):
        return True  # self.trainer.train(): a trainer picked at run time (MindSpeed-LLM)
    init = FRAMEWORK_INITS.get(name)
    if init is not None and getattr(init, "trains", False):
        return True
    return name.endswith(_TRAINING_SUFFIXES)


def _optimizer_step(head: str, nargs: int) -> bool:
    """``<head>.step(...)`` applies an update: an optimizer's or a scaler's step, not a
    learning-rate scheduler's."""
    recv = head.rsplit(".", 1)[-1]
    low = recv.lower()
    if "sched" in low:
        return False  # opt_param_scheduler.step(): a learning-rate schedule, not a step
    if recv in OPTIMIZER_NAMES or "optim" in head.lower():
        return True  # opt = torch.optim.SGD(...); opt.step()
    if "scaler" in low and nargs >= 1:
        return True  # GradScaler: scaler.step(optimizer)
    return low in _STEP_RECEIVERS or low.endswith("optimizer")


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

# weight_decay when the call does not pass one, read from each optimizer's __init__:
# torch 2.13.0 torch/optim/{adadelta,adagrad,adam,adamax,adamw,asgd,nadam,radam,rmsprop,
# sgd,_adafactor,_muon}.py; apex (commit 6424da3b) apex/optimizers/fused_adam.py:76,
# fused_lamb.py:70, fused_sgd.py:83; DeepSpeed 0.19.6 deepspeed/ops/adam/fused_adam.py:83,
# cpu_adam.py:22, ops/lamb/fused_lamb.py:48, ops/lion/fused_lion.py:36; bitsandbytes (commit
# 2f8083bd) bitsandbytes/optim/adamw.py; MindFormers 1.6.0 mindformers/core/optim/adamw.py:154,
# fused_adamw.py:154, came.py:282. An optimizer not listed here has an *unknown* default.
_TORCH_WD = {
    "Adadelta": 0.0,
    "Adagrad": 0.0,
    "Adam": 0.0,
    "AdamW": 0.01,
    "Adamax": 0.0,
    "ASGD": 0.0,
    "NAdam": 0.0,
    "RAdam": 0.0,
    "RMSprop": 0.0,
    "SGD": 0.0,
    "Adafactor": 0.0,
    "Muon": 0.1,
}
OPTIMIZER_WD_DEFAULT: dict[str, float] = {
    **{f"torch.optim.{k}": v for k, v in _TORCH_WD.items()},
    "apex.optimizers.FusedAdam": 0.0,
    "apex.optimizers.FusedLAMB": 0.01,
    "apex.optimizers.FusedSGD": 0.0,
    "deepspeed.ops.adam.FusedAdam": 0.0,
    "deepspeed.ops.adam.DeepSpeedCPUAdam": 0.0,
    "deepspeed.ops.lamb.FusedLamb": 0.0,
    "deepspeed.ops.lion.FusedLion": 0.0,
    "bitsandbytes.optim.AdamW": 0.01,
    "bitsandbytes.optim.AdamW8bit": 0.01,
    "bitsandbytes.optim.AdamW32bit": 0.01,
    "mindspore.nn.AdamWeightDecay": 0.0,
    "mindspore.nn.Adam": 0.0,
    "mindformers.core.optim.AdamW": 0.0,
    "mindformers.core.optim.FusedAdamW": 0.0,
    "mindformers.core.optim.Came": 0.0,
}
# `torch.optim.adamw.AdamW` is the same class as `torch.optim.AdamW`
for _k, _v in _TORCH_WD.items():
    OPTIMIZER_WD_DEFAULT[f"torch.optim.{_k.lower()}.{_k}"] = _v

# Optimizer factories: (policy when filtering is on, the keyword that turns it off,
# weight_decay default). timm 1.0.29.dev0 timm/optim/_optim_factory.py:1199
# create_optimizer_v2(..., weight_decay=0.0, filter_bias_and_bn=True): with a model and a
# non-zero weight_decay it groups through param_groups_weight_decay, which skips
# `param.ndim <= 1 or name.endswith(".bias")` (timm/optim/_param_groups.py:53).
OPTIMIZER_FACTORIES: dict[str, tuple[str, str, float]] = {
    "timm.optim.create_optimizer_v2": ("exclude_1d", "filter_bias_and_bn", 0.0),
    "timm.optim._optim_factory.create_optimizer_v2": ("exclude_1d", "filter_bias_and_bn", 0.0),
}
# Parameter-group builders whose policy is known: the optimizer given their result groups
# like this.
PARAM_GROUP_FACTORIES: dict[str, str] = {
    "timm.optim.param_groups_weight_decay": "exclude_1d",
    "timm.optim._param_groups.param_groups_weight_decay": "exclude_1d",
}

# Calls to Python builtins: never followed.
BUILTIN_CALLS = frozenset(
    {
        "print",
        "len",
        "range",
        "int",
        "float",
        "str",
        "bool",
        "list",
        "dict",
        "set",
        "tuple",
        "isinstance",
        "getattr",
        "setattr",
        "hasattr",
        "super",
        "enumerate",
        "zip",
        "min",
        "max",
        "sum",
        "any",
        "all",
        "sorted",
        "open",
        "format",
        "repr",
        "type",
        "iter",
        "next",
        "map",
        "filter",
        "abs",
        "round",
    }
)

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
        "trl",  # Hugging Face TRL: PyTorch trainers (trl/trainer/base_trainer.py)
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
        # libraries whose seeding helpers are modelled (seed_helpers.py): a training
        # script's calls into them are never followed, even when their source is among
        # the scanned files (scanning Lightning's or timm's own repository)
        "lightning",
        "lightning_fabric",
        "pytorch_lightning",
        "timm",
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

# Calls that run a function handed to them, with arguments of their own in front: the
# function is followed with those bound. (index of the function argument, what is passed
# first: "receiver" = the object the method is called on.) lightning 2.6.2
# src/lightning/fabric/fabric.py Fabric.launch(function, *args, **kwargs) calls
# function(self, *args, **kwargs) (the `_wrap_and_launch` path).
LAUNCHERS: dict[str, tuple[int, str]] = {
    "lightning.Fabric.launch": (0, "receiver"),
    "lightning.fabric.Fabric.launch": (0, "receiver"),
    "lightning.fabric.fabric.Fabric.launch": (0, "receiver"),
    "lightning_fabric.Fabric.launch": (0, "receiver"),
}

# CLI dispatchers that run one function picked from a table of commands on the command
# line: a dict handed to them maps command names to the functions (jsonargparse 4.x
# CLI(components) / auto_cli; fire.Fire(component) with a dict). A dict handed to any
# other call (an activation table, a registry) is not a set of commands.
CLI_DISPATCHERS = frozenset({"jsonargparse.CLI", "jsonargparse.auto_cli", "fire.Fire", "typer.run"})
# Applications whose commands are registered by a decorator (`@app.command(name="train")`)
# and dispatched by calling the application (`app()`, llm-foundry's `llmfoundry train`):
# class -> the decorator method. typer 0.x: Typer.command names a command after the
# function, underscores as dashes, unless `name` is given.
CLI_APPS = {"typer.Typer": "command", "typer.main.Typer": "command"}

# Libraries that serve or generate with a model: a `.step()` or `.generate()` on what they
# build is inference, never a training step (vLLM's LLMEngine.step(), SGLang's engine).
INFERENCE_ROOTS = frozenset({"vllm", "sglang", "tensorrt_llm", "lmdeploy"})

# -- training engines, by the value that made them ----------------------------------------
# A library factory whose result holds objects whose `.step()` applies the update, whatever
# the variable is called (`model, _, _, _ = deepspeed.initialize(...)`; `model.step()`):
# qualified name -> positions of the returned tuple that hold such an object (None: the
# result itself). deepspeed v0.19.5 deepspeed/__init__.py:93 initialize, :261-267 returns
# (engine, engine.optimizer, training_dataloader, lr_scheduler).
ENGINE_FACTORIES: dict[str, tuple[int, ...] | None] = {
    "deepspeed.initialize": (0, 1),
}
# Factories that hand back what they were given, wrapped, in the same order: an optimizer
# handed in comes back an optimizer (accelerate 1.15.0.dev0 commit 16cb6eb8
# src/accelerate/accelerator.py:1414 prepare, :1557-1578 one result per argument;
# lightning 2.6.2 Fabric.setup(module, *optimizers) / setup_optimizers(*optimizers)).
PASS_THROUGH_FACTORIES = frozenset(
    {
        "accelerate.Accelerator.prepare",
        "accelerate.accelerator.Accelerator.prepare",
        "lightning.Fabric.setup",
        "lightning.fabric.Fabric.setup",
        "lightning_fabric.Fabric.setup",
        "lightning.Fabric.setup_optimizers",
        "lightning.fabric.Fabric.setup_optimizers",
        "lightning_fabric.Fabric.setup_optimizers",
    }
)
# Methods of such an object that apply an update: `step()`, and a pipeline engine's
# `train_batch()` (deepspeed v0.19.5 deepspeed/runtime/pipe/engine.py:341-392: runs a
# TrainSchedule of forward, backward and optimizer steps).
ENGINE_UPDATES = frozenset({"step", "train_batch"})
