"""What kind of input a path is, decided before any rule sees it.

One table says which entry scripts are training launches and which are converters,
preprocessors, evaluation, generation or environment setup. A file that is not a training
input is skipped with a note saying what it was taken for; a file that is unreadable is
still handed to its loader, so its error reaches the user (exit 2), never a silent skip.

Facts the table rests on (upstream file names, read from the repositories):
- MindFormers launches training with ``msrun ... run_mindformer.py --config X.yaml``
  (mindformers: scripts/msrun_launcher.sh, run_mindformer.py).
- Megatron-LM trains through ``pretrain_*.py`` / ``train.py`` and converts checkpoints
  with ``tools/checkpoint/convert.py``, preprocesses with ``tools/preprocess_data.py``,
  generates with ``tools/run_text_generation_server.py`` (NVIDIA/Megatron-LM).
- MindSpeed-LLM trains through ``pretrain_gpt.py`` / ``posttrain_gpt.py``, converts with
  ``convert_ckpt.py`` / ``convert_ckpt_v2.py``, preprocesses with ``preprocess_data.py``,
  evaluates with ``evaluation.py``, generates with ``inference.py``; its FSDP2 backend
  trains with ``train_fsdp2.py CONFIG.yaml --training.x ... --parallel.y ...``
  (Ascend/MindSpeed-LLM: examples/fsdp2/*/*.sh), a different argument system.
"""

from __future__ import annotations

import fnmatch
import os
import re
from enum import StrEnum
from typing import NamedTuple

from cfglint.model.errors import InputError


class Kind(StrEnum):
    MINDFORMERS_CONFIG = "MindFormers config"
    MINDFORMERS_LAUNCH = "MindFormers launch script"
    MEGATRON_LAUNCH = "Megatron-LM / MindSpeed-LLM training launch"
    FSDP2_LAUNCH = "MindSpeed-LLM FSDP2 launch"
    NOT_TRAINING = "not a training launch"
    PYTHON = "Python source"
    OTHER_YAML = "YAML that is not a MindFormers training config"
    OTHER = "not a file cfglint checks"
    BROKEN = "unreadable"


# Kinds the lint reads; the others are skipped with a note.
LINTED = frozenset(
    {Kind.MINDFORMERS_CONFIG, Kind.MINDFORMERS_LAUNCH, Kind.MEGATRON_LAUNCH, Kind.BROKEN}
)


class Detected(NamedTuple):
    path: str
    kind: Kind
    why: str  # one phrase: what made us decide
    entry: str | None = None  # the entry script a launch runs

    def note(self) -> str:
        return f"{self.path}: skipped, {self.kind.value} ({self.why})"


# (entry-script pattern, role). First match wins, so specific names precede general ones.
# Roles other than "training" are not training launches: their flags are not a training run.
SCRIPT_ROLES: tuple[tuple[str, str], ...] = (
    ("run_mindformer.py", "mindformers"),
    ("train_fsdp2.py", "fsdp2"),  # MindSpeed-LLM FSDP2 backend
    ("*fsdp2*.py", "fsdp2"),
    ("*convert*.py", "checkpoint or model conversion"),
    ("*checkpoint_converter*.py", "checkpoint or model conversion"),
    ("*ckpt*.py", "checkpoint or model conversion"),
    ("combine_state_dicts.py", "checkpoint or model conversion"),
    ("*param_merge*.py", "checkpoint or model conversion"),
    # Megatron-LM's tools/merge_mp_partitions.py (and Megatron-DeepSpeed's copy) merges
    # tensor-parallel checkpoint shards
    ("merge_mp_partitions*.py", "checkpoint or model conversion"),
    ("*dequant*.py", "checkpoint or model conversion"),
    ("export*.py", "checkpoint or model conversion"),
    ("quantize*.py", "checkpoint or model conversion"),
    ("prune*.py", "checkpoint or model conversion"),
    ("preprocess*.py", "data preprocessing"),
    ("*preprocessing*.py", "data preprocessing"),
    ("create_*dataset*.py", "data preprocessing"),
    ("download_*.py", "data preprocessing"),
    ("offline_feature_extract*.py", "data preprocessing"),
    ("evaluat*.py", "evaluation"),
    ("eval_*.py", "evaluation"),
    ("mmlu*.py", "evaluation"),
    ("validate*.py", "evaluation"),
    ("*inference*.py", "inference or generation"),
    ("*generat*.py", "inference or generation"),
    ("*text_generation*.py", "inference or generation"),
    ("chat*.py", "inference or generation"),
    ("pretrain_*.py", "training"),
    ("posttrain*.py", "training"),
    ("finetune*.py", "training"),
    ("train.py", "training"),
    ("train_*.py", "training"),
    ("training.py", "training"),
    ("rlhf_*.py", "training"),
)

# MindSpeed-LLM FSDP2 flags are dotted paths into its own config classes.
_DOTTED_FLAG = re.compile(r"--(model|data|training|parallel|optimizer|train)\.[A-Za-z_]")

# MindFormers' own wrapper: ``bash scripts/msrun_launcher.sh "run_mindformer.py --config …"``
# (mindformers: scripts/msrun_launcher.sh), where the entry is inside a quoted string.
_MF_LAUNCHER_TEXT = re.compile(r"msrun_launcher\.sh\b[^\n]*run_mindformer\.py")

MF_KEYS = frozenset(
    {
        "model",
        "model_config",
        "runner_config",
        "optimizer",
        "lr_schedule",
        "parallel_config",
        "trainer",
        "training_args",
        "runner_wrapper",
        "base_config",
        "moe_config",
        "context",
    }
)
# Top-level run settings of MindFormers' config (mindformers: configs/__base__.yaml and
# MindFormerConfig's run keys); a base config that other configs inherit holds only these.
MF_RUN_KEYS = frozenset(
    {
        "seed",
        "run_mode",
        "use_parallel",
        "output_dir",
        "load_checkpoint",
        "auto_trans_ckpt",
        "resume_training",
        "src_strategy_path_or_dir",
        "micro_batch_interleave_num",
        "recompute_config",
        "train_dataset",
        "train_dataset_task",
        "eval_dataset",
        "callbacks",
        "eval_callbacks",
        "do_eval",
        "eval_step_interval",
        "eval_epoch_interval",
        "profile",
        "profile_start_step",
        "profile_stop_step",
        "layer_scale",
        "layer_decay",
        "lr_scale",
        "lr_scale_factor",
        "auto_tune",
        "processor",
        "resume_or_finetune_checkpoint",
    }
)
YAML_EXT = (".yaml", ".yml")
# why-prefixes of a YAML document that holds no mapping of settings
NOT_A_MAPPING = ("top level is", "empty YAML")
SHELL_EXT = (".sh", ".bash")


def script_role(entry: str | None) -> str | None:
    """The role of an entry script by its file name (``None`` when the table has no row)."""
    if not entry:
        return None
    base = entry.rsplit("/", 1)[-1]
    if not base.endswith(".py") and "." in base and "/" not in entry:
        base = base.rsplit(".", 1)[-1] + ".py"  # `python -m pkg.tools.run_text_generation`
    for pattern, role in SCRIPT_ROLES:
        if fnmatch.fnmatchcase(base, pattern):
            return role
    return None


def detect(path: str) -> Detected:
    """The kind of one file. Never raises for a bad file: that is ``Kind.BROKEN``."""
    low = path.lower()
    if path == "-":
        return Detected(path, Kind.MINDFORMERS_CONFIG, "standard input")
    if low.endswith(".py"):
        return Detected(path, Kind.PYTHON, "a .py file")
    if low.endswith(YAML_EXT):
        return detect_yaml(path)
    if low.endswith(SHELL_EXT) or _has_shell_shebang(path):
        return detect_script(path)
    return Detected(path, Kind.OTHER, f"{os.path.splitext(path)[1] or 'no'} extension")


def _has_shell_shebang(path: str) -> bool:
    from cfglint.load.safeio import open_regular

    try:  # regular files only: opening a FIFO would block
        with open_regular(path) as fh:
            head = fh.read(64)
    except (InputError, OSError):
        return False
    return (
        head.startswith(b"#!")
        and re.search(rb"\b(ba|z|da|k)?sh\b", head.split(b"\n")[0]) is not None
    )


def detect_yaml(path: str) -> Detected:
    from cfglint.load.yamltree import load_yaml

    try:
        root = load_yaml(path).root
    except InputError as exc:
        if exc.message.startswith(NOT_A_MAPPING):
            return Detected(path, Kind.OTHER_YAML, exc.message)
        return Detected(path, Kind.BROKEN, exc.message)
    if not isinstance(root.value, dict):
        return Detected(path, Kind.OTHER_YAML, "top level is not a mapping")
    keys = set(root.value)
    hits = MF_KEYS & keys
    if len(hits) >= 2:
        return Detected(path, Kind.MINDFORMERS_CONFIG, f"has {', '.join(sorted(hits)[:3])}")
    run = (MF_KEYS | MF_RUN_KEYS) & keys
    if len(run) >= 4:  # a base config: run settings only, no model section
        return Detected(path, Kind.MINDFORMERS_CONFIG, f"has {', '.join(sorted(run)[:3])}")
    for marker, what in (
        ("services", "a compose file"),
        ("jobs", "a CI workflow"),
        ("on", "a CI workflow"),
        ("repos", "a pre-commit config"),
        ("steps", "a CI pipeline"),
        ("stages", "a CI pipeline"),
    ):
        if marker in keys:
            return Detected(path, Kind.OTHER_YAML, what)
    return Detected(path, Kind.OTHER_YAML, "no MindFormers sections (model, trainer, optimizer, …)")


def detect_script(path: str) -> Detected:
    """Which launch a shell script is: MindFormers (msrun / run_mindformer.py), a Megatron
    training launch, an FSDP2 launch, or a script that does not train."""
    from cfglint.load.shell import main_invocation, parse_script

    try:
        sh = parse_script(path)
    except InputError as exc:
        return Detected(path, Kind.BROKEN, exc.message)
    if not sh.invocations:
        if _MF_LAUNCHER_TEXT.search(sh.text):
            return Detected(
                path, Kind.MINDFORMERS_LAUNCH, "runs run_mindformer.py through msrun_launcher.sh"
            )
        return Detected(
            path, Kind.NOT_TRAINING, "environment setup or helper: it runs no python or launcher"
        )
    roles = []
    for inv in sh.invocations:
        entry = inv.script.text if inv.script is not None else None
        roles.append((inv, entry, script_role(entry)))
    # MindSpeed-LLM's MindSpore backend also starts pretrain_gpt.py with msrun: the entry
    # script, not the launcher, says whose arguments these are.
    mf = [(i, e) for i, e, r in roles if r == "mindformers"] or [
        (i, e)
        for i, e, r in roles
        if i.launcher == "msrun"
        and r is None
        and any((w.text or "").startswith("--config") for w in i.args)
    ]
    if mf:
        inv, entry = mf[0]
        return Detected(path, Kind.MINDFORMERS_LAUNCH, f"{inv.launcher} runs {entry}", entry)
    dotted = any(_DOTTED_FLAG.match(w.text or "") for inv, _, _ in roles for w in inv.args)
    if dotted or any(r == "fsdp2" for _, _, r in roles):
        entry = next((e for _, e, r in roles if r == "fsdp2"), roles[0][1])
        return Detected(
            path,
            Kind.FSDP2_LAUNCH,
            f"runs {entry} with dotted flags (--training.*, --parallel.*): MindSpeed-LLM's "
            "FSDP2 argument system, which cfglint does not read",
            entry,
        )
    training = [(inv, e) for inv, e, r in roles if r == "training"]
    if training:
        main = main_invocation(sh)
        entry = main.script.text if main is not None and main.script is not None else None
        return Detected(
            path, Kind.MEGATRON_LAUNCH, f"{training[0][0].launcher} runs {entry}", entry
        )
    named = [(e, r) for _, e, r in roles if r is not None]
    if named:
        entry, role = named[0]
        return Detected(path, Kind.NOT_TRAINING, f"runs {entry}: {role}", entry)
    # An entry the table does not know (often `torchrun ${SCRIPT}`): the launch script's
    # own name says what it does (Megatron-LM's post_training/modelopt/{convert,export,
    # mmlu,quantize,...}.sh share one launch line)
    own = script_role(os.path.basename(path).rsplit(".", 1)[0] + ".py")
    if own is not None and own != "training" and own not in ("mindformers", "fsdp2"):
        return Detected(path, Kind.NOT_TRAINING, f"{os.path.basename(path)}: {own}")
    # else a training launch only if it passes Megatron flags.
    main = main_invocation(sh)
    entry = main.script.text if main is not None and main.script is not None else None
    flags = sum(1 for w in (main.args if main else []) if (w.text or "").startswith("--"))
    if main is not None and main.launcher != "python" and flags:
        return Detected(path, Kind.MEGATRON_LAUNCH, f"{main.launcher} runs {entry}", entry)
    if main is not None and flags >= 5:
        return Detected(path, Kind.MEGATRON_LAUNCH, f"{main.launcher} runs {entry}", entry)
    return Detected(
        path,
        Kind.NOT_TRAINING,
        f"runs {entry or 'a command'}, not a known training entry point",
        entry,
    )
