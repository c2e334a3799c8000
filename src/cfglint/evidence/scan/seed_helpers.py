"""Library seeding helpers, modelled instead of followed.

Training scripts seldom call ``random.seed`` and friends themselves: they call a library's
helper. Each entry below says which generators the helper seeds and whether it switches
deterministic algorithms on, read from the library's source at the release named in
``source`` (facts restated, no code copied). A helper not in this table, from a library
that is not scanned, is reported as "unknown" (see ``SEEDISH_NAMES``), never as
"not seeded".

Effect kinds are those of :data:`cfglint.evidence.scan.model.EffectKind`; ``torch`` is
``torch.manual_seed``, which seeds the CPU and every CUDA device.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LibraryHelper:
    """Same fields as :class:`known.FrameworkInit`, plus where they were read."""

    kinds: tuple[str, ...]
    # ("arg", positional index, keyword) or ("config", knob)
    seed: tuple
    source: str  # "library version: file:line"
    note: str = ""
    # the call itself switches determinism when this keyword is a literal True
    deterministic_kw: tuple[int, str] | None = None
    # the helper always switches deterministic algorithms on
    deterministic_always: bool = False
    deterministic: str | None = None
    needs_nonzero_seed: bool = False
    conditional: bool = False
    deterministic_note: str = ""
    trains: bool = False


_ACCELERATE = LibraryHelper(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("arg", 0, "seed"),
    deterministic_kw=(2, "deterministic"),
    source="accelerate 1.15.0.dev0 (commit 16cb6eb8): src/accelerate/utils/random.py:40-78",
    note="accelerate.utils.set_seed seeds random, numpy, torch and the accelerator "
    "(cuda/npu/xpu/...); device_specific=True adds the process index",
)
_LIGHTNING = LibraryHelper(
    kinds=("random", "numpy", "torch"),
    seed=("arg", 0, "seed"),
    source="lightning 2.6.2 (commit 7f0c3436): src/lightning/fabric/utilities/seed.py:20-67; "
    "Fabric.seed_everything src/lightning/fabric/fabric.py:1104",
    note="Lightning's seed_everything seeds random, numpy and torch (all devices); without a "
    "seed it takes PL_GLOBAL_SEED or 0",
)
_LIGHTNING_TRAINER = LibraryHelper(
    kinds=(),
    seed=(),
    deterministic_kw=(99, "deterministic"),
    source="lightning 2.6.2: src/lightning/pytorch/trainer/connectors/"
    "accelerator_connector.py:572-591 (_set_torch_flags)",
    note="Trainer(deterministic=True) calls torch.use_deterministic_algorithms(True)",
)
_LIGHTNING_CLI = LibraryHelper(
    kinds=("random", "numpy", "torch"),
    seed=("arg", 99, "seed_everything_default"),
    source="lightning 2.6.2: src/lightning/pytorch/cli.py:330 (seed_everything_default=True), "
    ":775-788 (_set_seed, called from __init__ at :412)",
    note="LightningCLI seeds through seed_everything unless seed_everything is False; the "
    "default True draws a new random seed on every run",
)
_HF_SET_SEED = LibraryHelper(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("arg", 0, "seed"),
    deterministic_kw=(1, "deterministic"),
    source="transformers 5.23.0: src/transformers/trainer_utils.py:180-207",
    note="transformers.set_seed seeds random, numpy, torch and every available device",
)
_HF_FULL = LibraryHelper(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("arg", 0, "seed"),
    deterministic_always=True,
    source="transformers 5.23.0: src/transformers/trainer_utils.py:154-177",
    note="transformers.enable_full_determinism calls set_seed, "
    "torch.use_deterministic_algorithms(True) and sets cudnn.deterministic",
)
_HF_TRAINER = LibraryHelper(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("config", "TrainingArguments.seed"),
    source="transformers 5.23.0: src/transformers/trainer.py:419 (Trainer.__init__), "
    "training_args.py:1293 (seed defaults to 42)",
    note="the transformers Trainer seeds from TrainingArguments.seed (default 42); "
    "full_determinism=True also switches deterministic algorithms on",
)
_TIMM = LibraryHelper(
    kinds=("torch", "numpy", "random"),
    seed=("arg", 0, "seed"),
    source="timm 1.0.29.dev0 (commit aa4b5850): timm/utils/random.py:6-9",
    note="timm's random_seed seeds torch, numpy and random with seed + rank, so every rank "
    "draws differently",
)
_COMPOSER_SEED_ALL = LibraryHelper(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("arg", 0, "seed"),
    source="composer 0.33.0.dev0 (commit 6405188805a0): composer/utils/reproducibility.py:149-176",
    note="composer's reproducibility.seed_all seeds random, numpy, torch and every CUDA device",
)
_COMPOSER_DETERMINISTIC = LibraryHelper(
    kinds=(),
    seed=(),
    deterministic_always=True,
    source="composer 0.33.0.dev0 (commit 6405188805a0): composer/utils/reproducibility.py:90-126",
    note="composer's configure_deterministic_mode calls torch.use_deterministic_algorithms(True) "
    "and sets cudnn.deterministic",
)
_COMPOSER_TRAINER = LibraryHelper(
    kinds=("random", "numpy", "torch", "cuda"),
    seed=("arg", 99, "seed"),
    deterministic_kw=(99, "deterministic_mode"),
    source="composer 0.33.0.dev0 (commit 6405188805a0): composer/trainer/trainer.py:1091-1092, "
    "1212-1217 (_distribute_and_get_random_seed at :473-490)",
    note="the composer Trainer seeds through seed_all with seed + global rank (a seed drawn "
    "from the clock when none is given); deterministic_mode=True switches deterministic "
    "algorithms on",
)
_DEEPSPEED = LibraryHelper(
    kinds=("random", "numpy", "torch"),
    seed=("arg", 0, "seed"),
    source="deepspeed 0.19.6 (commit edaa7221): deepspeed/runtime/utils.py:136-151",
    note="DeepSpeed's set_random_seed seeds random, numpy and torch",
)
_DEVICE_ONLY_DS = LibraryHelper(
    kinds=("cuda",),
    seed=("arg", 0, "seed"),
    source="deepspeed 0.19.6: deepspeed/runtime/activation_checkpointing/checkpointing.py:211",
    note="DeepSpeed's model_parallel_cuda_manual_seed seeds the accelerator's generator only "
    "(model-parallel regions get seed + 2718 + tp rank)",
)
_DEVICE_ONLY_MEGATRON = LibraryHelper(
    kinds=("cuda",),
    seed=("arg", 0, "seed"),
    source="Megatron-LM core_v0.15.0rc7 (commit d98e8a64): "
    "megatron/core/tensor_parallel/random.py:446-520",
    note="Megatron's model_parallel_cuda_manual_seed seeds torch.cuda only (and its RNG "
    "tracker: seed + 2718 + tp rank for tensor-parallel regions)",
)
_MINDFORMERS = LibraryHelper(
    kinds=("random", "numpy", "mindspore"),
    seed=("arg", 0, "seed"),
    source="mindformers 1.6.0 (commit fd4deebc): mindformers/trainer/utils.py:121-130; "
    "BaseTrainer.set_seed mindformers/trainer/base_trainer.py:701",
    note="mindformers.trainer.utils.set_seed seeds random, numpy and MindSpore",
)
_MINDSPORE = LibraryHelper(
    kinds=("mindspore", "numpy"),
    seed=("arg", 0, "seed"),
    source="mindspore master (commit 03b856c9): mindspore/python/mindspore/common/seed.py "
    "set_seed (np.random.seed, dataset seed, global op seed)",
    note="mindspore.set_seed also seeds numpy's global generator and the dataset pipeline",
)

LIBRARY_HELPERS: dict[str, LibraryHelper] = {
    **dict.fromkeys(("accelerate.utils.set_seed", "accelerate.utils.random.set_seed"), _ACCELERATE),
    **dict.fromkeys(
        (
            "lightning.seed_everything",
            "lightning.pytorch.seed_everything",
            "lightning.fabric.seed_everything",
            "lightning.fabric.utilities.seed_everything",
            "lightning.fabric.utilities.seed.seed_everything",
            "lightning.Fabric.seed_everything",
            "lightning.fabric.Fabric.seed_everything",
            "lightning.fabric.fabric.Fabric.seed_everything",
            "lightning_fabric.seed_everything",
            "lightning_fabric.utilities.seed.seed_everything",
            "lightning_fabric.Fabric.seed_everything",
            "pytorch_lightning.seed_everything",
            "pytorch_lightning.utilities.seed.seed_everything",
        ),
        _LIGHTNING,
    ),
    **dict.fromkeys(
        (
            "lightning.Trainer",
            "lightning.pytorch.Trainer",
            "lightning.pytorch.trainer.Trainer",
            "pytorch_lightning.Trainer",
        ),
        _LIGHTNING_TRAINER,
    ),
    **dict.fromkeys(
        ("lightning.pytorch.cli.LightningCLI", "pytorch_lightning.cli.LightningCLI"),
        _LIGHTNING_CLI,
    ),
    **dict.fromkeys(("transformers.set_seed", "transformers.trainer_utils.set_seed"), _HF_SET_SEED),
    "composer.utils.reproducibility.seed_all": _COMPOSER_SEED_ALL,
    "composer.utils.reproducibility.configure_deterministic_mode": _COMPOSER_DETERMINISTIC,
    **dict.fromkeys(
        ("composer.Trainer", "composer.trainer.Trainer", "composer.trainer.trainer.Trainer"),
        _COMPOSER_TRAINER,
    ),
    **dict.fromkeys(
        (
            "transformers.enable_full_determinism",
            "transformers.trainer_utils.enable_full_determinism",
        ),
        _HF_FULL,
    ),
    **dict.fromkeys(("transformers.Trainer", "transformers.trainer.Trainer"), _HF_TRAINER),
    **dict.fromkeys(
        ("timm.utils.random_seed", "timm.utils.random.random_seed", "timm.utils.random_seed"), _TIMM
    ),
    **dict.fromkeys(
        ("deepspeed.runtime.utils.set_random_seed", "deepspeed.utils.set_random_seed"), _DEEPSPEED
    ),
    **dict.fromkeys(
        (
            "deepspeed.checkpointing.model_parallel_cuda_manual_seed",
            "deepspeed.runtime.activation_checkpointing.checkpointing.model_parallel_cuda_manual_seed",
        ),
        _DEVICE_ONLY_DS,
    ),
    **dict.fromkeys(
        (
            "megatron.core.tensor_parallel.model_parallel_cuda_manual_seed",
            "megatron.core.tensor_parallel.random.model_parallel_cuda_manual_seed",
        ),
        _DEVICE_ONLY_MEGATRON,
    ),
    **dict.fromkeys(
        ("mindformers.trainer.utils.set_seed", "mindformers.trainer.base_trainer.set_seed"),
        _MINDFORMERS,
    ),
    **dict.fromkeys(
        ("mindspore.set_seed", "mindspore.common.set_seed", "mindspore.common.seed.set_seed"),
        _MINDSPORE,
    ),
}

# Last name parts of calls that look like a seeding helper: when such a call goes into a
# library that is neither in the tables nor scanned, the seeding is unknown, not missing.
SEEDISH_NAMES = frozenset(
    {
        "set_seed",
        "seed_everything",
        "set_random_seed",
        "random_seed",
        "seed_all",
        "set_seeds",
        "setup_seed",
        "init_seed",
        "fix_seed",
        "seed_torch",
        "manual_seed",
        "enable_full_determinism",
    }
)
