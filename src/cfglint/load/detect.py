"""What one input file is, decided by its content before any rule sees it.

A YAML is a MindFormers config when it has MindFormers' own sections, and a training config
unless its ``run_mode`` says inference. A shell script is what it launches: the entry script
(resolved through variables and ``eval`` text; a partly unknown path still names its file),
the launcher, and whose arguments it passes: a Megatron-family training launch passes
Megatron's arguments, most of its flags being names from our Megatron-LM / MindSpeed-LLM
argument tables. The tables of entry-script roles and of other frameworks' signatures are
data (``data/launches.yaml``).

Nothing here raises for a bad file: that is ``InputKind.BROKEN``, handed to its loader so
the error reaches the user (exit 2). A file found by walking a folder that does not parse
and shows no sign of being a training input is some other file, skipped with the reason.
"""

# Annotations are evaluated here, not kept as strings (no `from __future__ import
# annotations`): written when its records were pydantic models, which turn each string field
# annotation into a typing.ForwardRef that Python 3.11 compiles one by one at import
# (tests/model/test_model_schemas.py); its records are plain ones now.
import os
import re
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from cfglint.load.datacache import DATA_DIR, load_data
from cfglint.load.extensions import SHELL_EXT, YAML_EXT
from cfglint.load.globs import glob_match
from cfglint.model.errors import InputError
from cfglint.model.lazy_re import compile_on_use
from cfglint.model.record import Frozen, Record

if TYPE_CHECKING:
    from cfglint.load.reads import Reads


class InputKind(StrEnum):
    MF_TRAIN = "MindFormers training config"
    MF_INFER = "MindFormers inference config"
    MF_LAUNCH = "MindFormers launch script"
    MG_LAUNCH = "Megatron-family training launch"
    MG_ARGS = "Megatron arguments file"
    MG_LOG = "Megatron training log"
    MG_YAML = "Megatron --yaml-cfg file"
    FSDP2 = "MindSpeed-LLM FSDP2 launch"
    UNREADABLE_LAUNCH = "training launch whose arguments cannot be read"
    OTHER_FRAMEWORK = "training launch of another framework"
    CONVERTER = "checkpoint or model converter"
    PREPROCESS = "data preprocessing"
    ANALYSIS = "log or data analysis"
    EVALUATION = "evaluation or inference"
    HELPER = "environment setup or helper script"
    OTHER_YAML = "YAML that is not a MindFormers config"
    PYTHON = "Python source"
    OTHER = "not a file cfglint checks"
    BROKEN = "unreadable"


Role = Literal["mindformers", "megatron", "launch", "source"]

# The role each kind plays in a lint; kinds without one are skipped with a note.
ROLE_OF: dict[InputKind, Role] = {
    InputKind.MF_TRAIN: "mindformers",
    InputKind.MF_LAUNCH: "launch",
    InputKind.MG_LAUNCH: "megatron",
    InputKind.MG_ARGS: "megatron",
    InputKind.MG_LOG: "megatron",
    InputKind.MG_YAML: "megatron",
    InputKind.PYTHON: "source",
}
MEGATRON_FORMS = {
    InputKind.MG_LAUNCH: "script",
    InputKind.MG_ARGS: "args",
    InputKind.MG_LOG: "log",
    InputKind.MG_YAML: "yaml",
}
# A script's entry role (data/launches.yaml) -> the kind of a script that runs only it
_ROLE_KIND = {
    "converter": InputKind.CONVERTER,
    "preprocessing": InputKind.PREPROCESS,
    "analysis": InputKind.ANALYSIS,
    "evaluation": InputKind.EVALUATION,
    "inference": InputKind.EVALUATION,
}


class Classified(Frozen):
    """One input, what it is, and what that was decided from. Built by our own classifier
    from typed fields (``classified``), never validated nor serialized: a plain record, not
    a pydantic model (whose class cost ~1.5 M instructions to create at import)."""

    __slots__ = ("config", "dialect", "entry", "evidence", "kind", "line", "path", "why")

    path: str
    kind: InputKind
    why: str  # the deciding fact, one phrase
    evidence: tuple[str, ...]  # further facts, for -v
    entry: str | None  # the entry script a launch runs
    config: str | None  # the --config a MindFormers launch passes, as written
    dialect: str | None  # the Megatron-family dialect a launch is written for
    line: int | None  # where a broken file breaks

    def __init__(
        self,
        path: str,
        kind: InputKind,
        why: str,
        evidence: tuple[str, ...] = (),
        entry: str | None = None,
        config: str | None = None,
        dialect: str | None = None,
        line: int | None = None,
    ) -> None:
        self.path = path
        self.kind = kind
        self.why = why
        self.evidence = evidence
        self.entry = entry
        self.config = config
        self.dialect = dialect
        self.line = line

    def error(self) -> InputError:
        """A broken file's problem, as the input error to report."""
        return InputError(self.path, self.why, line=self.line)

    @property
    def role(self) -> Role | None:
        return ROLE_OF.get(self.kind)

    def describe(self) -> str:
        facts = "; ".join((self.why, *self.evidence))
        return f"{self.kind.value} ({facts})"

    def note(self) -> str:
        return f"{self.path}: skipped, {self.describe()}"


def classified(path: str, kind: InputKind, why: str, **kw: Any) -> Classified:
    return Classified(path, kind, why, **kw)


# why-prefixes of a YAML document that holds no mapping of settings
NOT_A_MAPPING = ("top level is", "empty YAML")


def is_shell_name(path: str) -> bool:
    return path.lower().endswith(SHELL_EXT)


def classify(path: str, *, named: bool = True, reads: "Reads | None" = None) -> Classified:
    """The kind of one file. ``named``: the user named it (a broken file is then an input
    error to report); else it was found by walking a folder. ``reads``: where the parse is
    kept for the run's loader (load/reads.py)."""
    low = path.lower()
    if low.endswith(".py"):
        return classified(path, InputKind.PYTHON, "a .py file")
    if low.endswith(YAML_EXT):
        return classify_yaml(path, named=named, reads=reads)
    if is_shell_name(path) or _has_shell_shebang(path):
        return classify_script(path, named=named, reads=reads)
    return classified(path, InputKind.OTHER, f"{os.path.splitext(path)[1] or 'no'} extension")


def classify_megatron(path: str, reads: "Reads | None" = None) -> Classified:
    """A file given as the Megatron side: a launch script, a plain args file, the
    arguments block of a training log, or a ``--yaml-cfg`` file, told apart by content."""
    from cfglint.load.safeio import check_regular, exists, read_text

    if not exists(path):
        return classified(path, InputKind.BROKEN, "no such file")
    if os.path.isdir(path):
        return classified(
            path, InputKind.BROKEN, "is a directory, expected a launch script, args file or log"
        )
    try:
        check_regular(path, what="launch script, args file or log")
    except InputError as exc:
        return classified(path, InputKind.BROKEN, exc.message)
    if path.lower().endswith(YAML_EXT):
        return classify_yaml(path, named=True, megatron=True, reads=reads)
    if is_shell_name(path):
        return classify_script(path, reads=reads)
    from cfglint.load.megatron_log import looks_like_log  # not for a launch script (bench/)

    if looks_like_log(path):
        return classified(path, InputKind.MG_LOG, "holds a Megatron 'arguments' block")
    try:
        text = read_text(path, what="launch script")
    except InputError as exc:
        return classified(path, InputKind.BROKEN, exc.message)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    if lines and lines[0].startswith("-"):
        return classified(path, InputKind.MG_ARGS, "a list of command-line arguments")
    return classify_script(path, reads=reads)


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


# -- YAML ------------------------------------------------------------------------------------
# Sections and run keys only MindFormers' config system has (mindformers: configs/
# __base__.yaml, MindFormerConfig, run_mindformer.py's run keys). Generic names such as
# `model`, `optimizer` or `trainer` are in many frameworks' YAML (GPT-NeoX, TTS recipes,
# Lightning) and prove nothing alone.
MF_OWN = frozenset(
    {
        "runner_config",
        "parallel_config",
        "runner_wrapper",
        "run_mode",
        "use_parallel",
        "auto_trans_ckpt",
        "src_strategy_path_or_dir",
        "load_checkpoint",
        "resume_training",
        "micro_batch_interleave_num",
        "recompute_config",
        "moe_config",
        "train_dataset_task",
        "eval_dataset_task",
        "use_legacy",
        "load_ckpt_format",
        "only_save_strategy",
        "layer_scale",
        "lr_scale",
        "base_config",
    }
)
MF_SECTIONS = frozenset(
    {"model", "optimizer", "lr_schedule", "trainer", "train_dataset", "context", "processor"}
)
# run_mode values that run no training step (run_mindformer.py --run_mode)
INFERENCE_MODES = frozenset({"predict", "eval"})
# text markers of a MindFormers config, for a file that does not parse: one of its own
# top-level keys, or its model section's model_config at any depth (a file that looks like a
# training config but does not parse is an input error, never a silent skip); the pynative
# trainer's parallelism.data_parallel_shard (torchtitan spells it data_parallel_shard_degree)
_MF_TEXT = compile_on_use(
    rf"^(?:(?:{'|'.join(sorted(MF_OWN))})|[ \t]*model_config|[ \t]+data_parallel_shard)[ \t]*:",
    re.M,
)


def classify_yaml(
    path: str, *, named: bool = True, megatron: bool = False, reads: "Reads | None" = None
) -> Classified:
    from cfglint.load.yamltree import load_yaml

    try:
        root = (reads.yaml(path) if reads is not None else load_yaml(path)).root
    except InputError as exc:
        if exc.message.startswith(NOT_A_MAPPING):
            kind = InputKind.BROKEN if named else InputKind.OTHER_YAML
            return classified(path, kind, exc.message)
        if named or _mf_text(path):
            return classified(path, InputKind.BROKEN, exc.message, line=exc.line)
        return classified(
            path,
            InputKind.OTHER_YAML,
            f"does not parse ({exc.message}) and has no MindFormers sections",
        )
    if not isinstance(root.value, dict):
        kind = InputKind.BROKEN if named else InputKind.OTHER_YAML
        return classified(path, kind, "top level is not a mapping")
    keys = set(root.value)
    sections = sorted(MF_SECTIONS & keys)
    found = _mindformers(path, root.value)
    if found is None and "base_config" in keys:
        found = _through_bases(path)
    if found is not None:
        return found
    if megatron or named:
        from cfglint.load.megatron_yamlcfg import NESTED

        nested = sorted(k for k in NESTED if k in keys)
        hits = sorted(keys & megatron_dests())
        if nested or len(hits) >= 3:
            return classified(path, InputKind.MG_YAML, f"has {', '.join((nested + hits)[:4])}")
    for marker, what in (
        ("services", "a compose file"),
        ("jobs", "a CI workflow"),
        ("on", "a CI workflow"),
        ("repos", "a pre-commit config"),
        ("steps", "a CI pipeline"),
        ("stages", "a CI pipeline"),
        ("include", "a CI pipeline"),
        ("variables", "a CI pipeline"),
    ):
        if marker in keys:
            return classified(path, InputKind.OTHER_YAML, what)
    seen = f" (has only {', '.join(sections)})" if sections else ""
    return classified(path, InputKind.OTHER_YAML, f"none of MindFormers' own sections{seen}")


def _mindformers(path: str, top: dict[str, Any], via: str = "") -> Classified | None:
    """A MindFormers training or inference config, told by its own sections (``via``: what
    they came through, for a file that inherits them); None when they do not show it."""
    keys = set(top)
    own = sorted(MF_OWN & keys)
    sections = sorted(MF_SECTIONS & keys)
    mf_model = _mf_model(top.get("model"))
    if not (mf_model or own):
        return pynative(path, top)  # the pynative trainer's own sections, else None
    facts = mf_model + own[:3] + [x for x in sections if x != "model"][:2]
    mode = top.get("run_mode")
    run_mode = str(mode.plain()).strip().lower() if mode is not None and not mode.is_map else ""
    if run_mode in INFERENCE_MODES:
        return classified(
            path,
            InputKind.MF_INFER,
            f"run_mode: {run_mode}",
            evidence=(f"has {via}{', '.join(facts)}",),
        )
    if len(facts) >= 2:
        return classified(path, InputKind.MF_TRAIN, f"has {via}{', '.join(facts[:4])}")
    return None


# MindFormers' pynative trainer (v1.9.0+, mindformers/pynative/config/config.py): top-level
# `training` and `parallelism` dataclass sections. torchtitan's JobConfig has the same section
# names but spells its degrees `*_degree` and names a model by `name`/`flavor`; these keys are
# MindFormers' own (ParallelismConfig fields, ModelConfig.model_type / architectures).
PYNATIVE_SECTIONS = ("training", "parallelism")
PYNATIVE_OWN = frozenset(
    {
        "parallelism.data_parallel_shard",
        "parallelism.tensor_parallel",
        "parallelism.pipeline_parallel",
        "parallelism.expert_parallel",
        "model.model_type",
        "model.architectures",
    }
)


def pynative(path: str, top: dict[str, Any]) -> Classified | None:
    """A MindFormers pynative trainer config (``training:`` / ``parallelism:`` / ``model:
    model_type``), else None."""
    if not all(top.get(s) is not None and top[s].is_map for s in PYNATIVE_SECTIONS):
        return None
    own = sorted(
        f"{sec}.{k}"
        for sec in ("parallelism", "model")
        if top.get(sec) is not None and top[sec].is_map
        for k in top[sec].value
        if f"{sec}.{k}" in PYNATIVE_OWN
    )
    if not own:
        return None
    return classified(
        path,
        InputKind.MF_TRAIN,
        f"a MindFormers pynative trainer config (has training, parallelism, {', '.join(own[:2])})",
        dialect=PYNATIVE_DIALECT,
    )


PYNATIVE_DIALECT = "mindformers-pynative"


def _through_bases(path: str) -> Classified:
    """A config that holds little but ``base_config`` (a child that sets the seed) is what
    its bases make it; one whose bases cannot be read is an input error naming it (its
    ``base_config`` makes it MindFormers' own)."""
    from cfglint.load.mindformers_yaml import load_mindformers_yaml

    try:
        merged = load_mindformers_yaml(path).root
    except InputError as exc:
        return classified(path, InputKind.BROKEN, exc.message, line=exc.line)
    found = _mindformers(path, merged.value, via="through base_config: ")
    if found is not None:
        return found
    return classified(
        path, InputKind.OTHER_YAML, "base_config whose bases hold no MindFormers sections"
    )


def _mf_model(model: Any) -> list[str]:
    """MindFormers' model section: ``model_config`` and ``arch`` are mappings with a
    ``type`` (a registered class); LAVIS-style ``arch: minigpt4`` is a name, not this."""
    if model is None or not model.is_map:
        return []
    out = []
    for key in ("model_config", "arch"):
        sub = model.value.get(key)
        if sub is not None and sub.is_map and (key == "model_config" or "type" in sub.value):
            out.append(f"model.{key}")
    return out


def _mf_text(path: str) -> bool:
    from cfglint.load.safeio import read_text

    try:
        return _MF_TEXT.search(read_text(path, what="YAML")) is not None
    except InputError:
        return False


# -- shell -------------------------------------------------------------------------------------
@cache
def _launch_data() -> dict[str, Any]:
    return load_data(DATA_DIR / "launches.yaml")


@cache
def megatron_flags() -> frozenset[str]:
    """Every flag some Megatron-family argument table of ours defines (``--no-x`` forms of
    BooleanOptionalAction flags included)."""
    out: set[str] = set()
    for entry in _table_entries():
        out.update(entry["flags"])
        if entry.get("action") == "boolean_optional":
            out.update("--no-" + f[2:] for f in entry["flags"])
    return frozenset(out)


@cache
def megatron_dests() -> frozenset[str]:
    return frozenset(e["dest"] for e in _table_entries())


def _table_entries() -> list[dict[str, Any]]:
    from cfglint.load.dialects import argument_tables

    out: list[dict[str, Any]] = []
    # the dialects' own tables too (data/dialects/: forks, MindSpeed releases, MindSpeed-MM),
    # read once with the dialect detection that follows
    for data in argument_tables():
        if isinstance(data, dict) and isinstance(data.get("args"), list):
            out += [e for e in data["args"] if isinstance(e, dict) and e.get("flags")]
    return out


def entry_name(word: Any) -> str | None:
    """The entry script a launch word names: its text, else the known end of its path."""
    if word is None:
        return None
    if word.text:
        return word.text
    tail = getattr(word, "tail", "")
    base = tail.rsplit("/", 1)[-1]
    return base if base.endswith(".py") else None


def entry_path(word: Any) -> str | None:
    """The entry script's path as far as it is known: its text, else the known end of a
    path built at run time (``$MAIN_DIR/pkg/tools/train.py``), for finding it in the tree."""
    if word is None:
        return None
    if word.text:
        return str(word.text)
    tail = str(getattr(word, "tail", ""))
    return tail if tail.endswith(".py") else None


def script_role(entry: str | None) -> str | None:
    """The role of an entry script by its file name (``None`` when the table has no row)."""
    if not entry:
        return None
    base = entry.rsplit("/", 1)[-1]
    if not base.endswith(".py") and "." in base and "/" not in entry:
        base = base.rsplit(".", 1)[-1] + ".py"  # `python -m pkg.tools.run_text_generation`
    # the first row that matches, as the table orders them: a pattern with a folder is
    # matched against the entry's path, the rest against its file name
    for row in _launch_data()["entry_roles"]:
        pattern = str(row["pattern"])
        if glob_match(entry if "/" in pattern else base, pattern):
            return str(row["role"])
    return None


def _argument_role(
    entry: str | None, args: list[Any], script_path: str | None = None
) -> str | None:
    """The role an entry script takes from one of its arguments (``tasks/main.py --task
    LAMBADA`` evaluates)."""
    words = [w.text for w in args]
    for row in _launch_data().get("entry_arguments", ()):
        if not entry or not glob_match(entry, row["pattern"]):
            continue
        for i, t in enumerate(words[:-1]):
            if t == row["flag"] and words[i + 1] in row["values"]:
                return str(row["role"])
            if t == row["flag"] and words[i + 1] is not None and script_path:
                return _dispatched_role(entry, script_path, row["flag"], words[i + 1])
    return None


# what a dispatched module's name says it does (tasks/<task>/evaluate.py, .../finetune.py)
_EVAL_MODULE = compile_on_use(r"eval|generat|prompt|inference|predict|zeroshot", re.I)
_TRAIN_MODULE = compile_on_use(r"finetune|train", re.I)


def _dispatched_role(entry: str, script_path: str, flag: str, value: str) -> str | None:
    """The role of ``entry --task value`` read from the entry the repository holds: the
    module its branch for ``value`` imports (a fork's tasks/main.py adds its own tasks)."""
    from cfglint.load.tree_parser import locate_entry, task_dispatch

    found = locate_entry(entry, script_path)
    module = task_dispatch(found[1], flag).get(value) if found else None
    if module is None:
        return None
    if _EVAL_MODULE.search(module):
        return "evaluation"
    return "training" if _TRAIN_MODULE.search(module) else None


# MindSpeed-LLM FSDP2 flags are dotted paths into its own config classes.
_DOTTED_FLAG = compile_on_use(r"--(model|data|training|parallel|optimizer|train)\.[A-Za-z_]")
# what a dotted flag starts with: the pattern is tried only on an argument that does
_DOTTED_STARTS = ("--model.", "--data.", "--training.", "--parallel.", "--optimizer.", "--train.")
# MindFormers' own wrapper: ``bash scripts/msrun_launcher.sh "run_mindformer.py --config …"``
# (mindformers: scripts/msrun_launcher.sh), where the entry is inside a quoted string.
_MF_LAUNCHER_TEXT = compile_on_use(r"msrun_launcher\.sh\b[^\n]*run_mindformer\.py")
_CONFIG_FLAG = compile_on_use(r"--config(?:=(.+))?$")


class _Seen(Record):
    """One invocation of a script, as the classifier weighs it (internal, never validated:
    a plain record, not a pydantic model, whose class cost ~1.4 M instructions to create
    at import)."""

    __slots__ = ("entry", "foreign", "inv", "megatron", "role", "settings_file", "unknown")

    inv: Any
    entry: str | None
    role: str | None
    megatron: list[str]
    foreign: list[str]
    unknown: int
    settings_file: str | None  # a positional config file that holds the run's settings

    def __init__(
        self,
        inv: Any,
        entry: str | None,
        role: str | None,
        megatron: list[str],
        foreign: list[str],
        unknown: int,
        settings_file: str | None,
    ) -> None:
        self.inv = inv
        self.entry = entry
        self.role = role
        self.megatron = megatron
        self.foreign = foreign
        self.unknown = unknown
        self.settings_file = settings_file

    @property
    def megatron_args(self) -> bool:
        # most readable flags are Megatron's: a fork adds its own, another framework's
        # trainer shares a few generic names (--lr, --seed) at most. A training entry that
        # passes only Megatron flags (`pretrain_gpt.py --yaml-cfg x.yaml`) needs no count.
        n, other = len(self.megatron), len(self.foreign)
        if self.settings_file is not None and n < 3:
            return False
        own_entry = self.entry in _launch_data().get("megatron_entries", ())
        return (
            (n >= 3 and n >= other)
            or (self.role == "training" and n > 0 and other == 0)
            or (own_entry and n > 0 and _framework(self) is None)
        )


def _weigh(inv: Any, own: str | None) -> _Seen:
    """``own``: the role the launch script's own name gives (``train.sh``), which stands in
    for an entry script that is not known statically (``torchrun ${SCRIPT}``)."""
    entry = entry_name(inv.script)
    flags = [(w.text or "").partition("=")[0] for w in inv.args]
    flags = list(dict.fromkeys(f for f in flags if f.startswith("--")))
    from cfglint.load.dialects import table_flags

    # Megatron-LM's own table first (a subset of megatron_flags): the union of every table
    # is built only for a flag it lacks
    plain = table_flags("megatron-lm")
    ours = [f for f in flags if f not in RENDEZVOUS_FLAGS]
    known = {f for f in ours if f in plain or f in megatron_flags()}
    return _Seen(
        inv=inv,
        entry=entry,
        role=_argument_role(entry, inv.args, inv.loc.path if inv.loc else None)
        or (script_role(entry) if entry else own)
        or _named(own),
        megatron=[f for f in ours if f in known],
        foreign=[f for f in ours if f not in known],
        unknown=sum(1 for w in inv.args if w.text is None),
        settings_file=_settings_file(inv.args),
    )


# What a process is told about its place in a distributed launch: torchrun's and
# torch.distributed.launch's options, passed on to any script (a data-loader test takes
# --local_rank as every DDP script does). They say nothing about whose arguments the rest are.
RENDEZVOUS_FLAGS = frozenset(
    {
        "--local_rank",
        "--local-rank",
        "--master_addr",
        "--master-addr",
        "--master_port",
        "--master-port",
        "--node_rank",
        "--node-rank",
        "--nnodes",
        "--nproc_per_node",
        "--nproc-per-node",
        "--rank",
        "--world_size",
        "--world-size",
        "--dist-url",
        "--dist_url",
        "--dist-backend",
        "--dist_backend",
    }
)


def _named(own: str | None) -> str | None:
    """The launch script's own name, when it names a converter (``..._convertor.sh``
    starting an entry the table does not know). Only that role: the evaluation patterns
    (``chat*``, ``benchmark*``) are too broad for a launch script's name."""
    return own if own == "converter" else None


_SETTINGS_EXT = (".yaml", ".yml", ".json", ".toml")


def _settings_file(args: list[Any]) -> str | None:
    """A config file given as the entry script's first argument (MindSpeed-MM's
    ``pretrain_transformers.py ${config_path}``, GPT-NeoX's ``deepy.py train.py X.yml``)."""
    if not args:
        return None
    first = args[0]
    text = first.text if first.text is not None else getattr(first, "tail", "")
    if text.startswith("-") or not text.lower().endswith(_SETTINGS_EXT):
        return None
    return first.text or f"...{text} ({first.unknown})"


def classify_script(path: str, *, named: bool = True, reads: "Reads | None" = None) -> Classified:
    """Which launch a shell script is: MindFormers (msrun / run_mindformer.py), a
    Megatron-family training launch, an FSDP2 launch, another framework's training, or a
    script that does not train. One found in a folder that bash would refuse and that
    names no training entry script (Megatron-LM's evaluation templates with
    ``VALID_DATA=<lambada path>``) is skipped with the reason, not an input error."""
    from cfglint.load.shell import parse_script

    try:
        sh = reads.script(path) if reads is not None else parse_script(path)
    except InputError as exc:
        if named or _names_training_entry(path):
            return classified(path, InputKind.BROKEN, exc.message, line=exc.line)
        return classified(
            path,
            InputKind.OTHER,
            f"does not parse as bash ({exc.message}, line "
            f"{exc.line}) and names no training entry script",
        )
    if not sh.invocations:
        if _MF_LAUNCHER_TEXT.search(sh.text):
            return _mf_launch(path, sh, None, "runs run_mindformer.py through msrun_launcher.sh")
        return classified(path, InputKind.HELPER, "it runs no python or launcher")
    own = script_role(os.path.basename(path).rsplit(".", 1)[0] + ".py")
    seen = [_weigh(inv, own) for inv in sh.invocations]
    for decide in (_as_mindformers, _as_fsdp2, _as_megatron, _as_unreadable, _as_other, _as_tool):
        out = decide(path, sh, seen)
        if out is not None:
            return out
    entry = next((s.entry for s in seen if s.entry), None)
    return classified(
        path,
        InputKind.HELPER,
        f"runs {entry or 'a command'}, not a known training entry point",
        entry=entry,
    )


_PY_WORD = compile_on_use(r"[\w./-]+\.py\b")


def _names_training_entry(path: str) -> bool:
    from cfglint.load.safeio import read_text

    try:
        text = read_text(path, what="launch script")
    except InputError:
        return True
    roles = {script_role(m.group(0)) for m in _PY_WORD.finditer(text)}
    return bool(roles & {"training", "mindformers", "fsdp2"})


def _as_mindformers(path: str, sh: Any, seen: list[_Seen]) -> Classified | None:
    # MindSpeed-LLM's MindSpore backend also starts pretrain_gpt.py with msrun: the entry
    # script, not the launcher, says whose arguments these are.
    for s in seen:
        if s.role == "mindformers" or (
            s.inv.launcher == "msrun"
            and s.role is None
            and any((w.text or "").startswith("--config") for w in s.inv.args)
        ):
            return _mf_launch(path, sh, s, f"{s.inv.launcher} runs {s.entry}")
    return None


def _mf_launch(path: str, sh: Any, s: _Seen | None, why: str) -> Classified:
    return classified(
        path, InputKind.MF_LAUNCH, why, entry=s.entry if s else None, config=_written_config(sh)
    )


def _written_config(sh: Any) -> str | None:
    """The ``--config`` a MindFormers launch passes to run_mindformer.py, as written."""
    for inv in sh.invocations:
        words = [w.text for w in inv.args]
        for i, t in enumerate(words):
            m = _CONFIG_FLAG.match(t or "")
            if not m:
                continue
            value = m.group(1) if m.group(1) else (words[i + 1] if i + 1 < len(words) else None)
            if value:
                return value
    m = re.search(r"run_mindformer\.py[^\n\"']*?--config[ =]+(\S+\.ya?ml)", sh.text)
    return m.group(1) if m else None


def _as_fsdp2(path: str, sh: Any, seen: list[_Seen]) -> Classified | None:
    dotted = any(
        (w.text or "").startswith(_DOTTED_STARTS) and _DOTTED_FLAG.match(w.text or "")
        for s in seen
        for w in s.inv.args
    )
    if not dotted and not any(s.role == "fsdp2" for s in seen):
        return None
    entry = next((s.entry for s in seen if s.role == "fsdp2"), seen[0].entry)
    return classified(
        path,
        InputKind.FSDP2,
        f"runs {entry} with dotted flags (--training.*, --parallel.*): MindSpeed-LLM's FSDP2 "
        "argument system, which cfglint does not read",
        entry=entry,
    )


def _trains(s: _Seen) -> bool:
    return s.role in ("training", None)


def _as_megatron(path: str, sh: Any, seen: list[_Seen]) -> Classified | None:
    hits = [s for s in seen if _trains(s) and s.megatron_args]
    if not hits:
        return None
    s = max(hits, key=lambda x: len(x.megatron))
    shown = ", ".join(s.megatron[:4])
    evidence = [
        f"{len(s.megatron)} of its {len(s.megatron) + len(s.foreign)} flags are "
        f"Megatron arguments ({shown}, ...)"
    ]
    others = [o.entry for o in seen if o is not s and o.role not in ("training", None)]
    if others:
        evidence.append(f"also runs {', '.join(dict.fromkeys(e for e in others if e))}")
    from cfglint.load.dialects import detect_dialect
    from cfglint.load.tree_parser import launch_place

    place = launch_place(s.inv.cwd, {**sh.variables, **sh.env})
    found = detect_dialect(
        [*s.megatron, *s.foreign], entry_path(s.inv.script), path, sh.text, place, sh.detections
    )
    why = f" ({'; '.join(found.evidence[:2])})" if found.evidence else ""
    evidence.append(f"dialect {found.dialect.label}{why}")
    return classified(
        path,
        InputKind.MG_LAUNCH,
        f"{s.inv.launcher} runs {s.entry or 'an unnamed script'}",
        evidence=tuple(evidence),
        entry=s.entry,
        dialect=found.dialect.name,
    )


def _as_unreadable(path: str, sh: Any, seen: list[_Seen]) -> Classified | None:
    """A training entry (by name) whose arguments are all hidden behind unknown words
    (``${gpt_options}`` from ``source $1``): linting it would compare Megatron's defaults."""
    for s in seen:
        if _trains(s) and s.settings_file is not None and len(s.megatron) < 3:
            return classified(
                path,
                InputKind.UNREADABLE_LAUNCH,
                f"runs {s.entry} with its settings in {s.settings_file}, a config file that "
                "is not Megatron command-line arguments",
                entry=s.entry,
            )
        if s.role == "training" and s.unknown and not s.megatron and not s.foreign:
            word = next(w for w in s.inv.args if w.text is None)
            return classified(
                path,
                InputKind.UNREADABLE_LAUNCH,
                f"runs {s.entry}, but its arguments are not known statically ({word.unknown})",
                entry=s.entry,
            )
    return None


def _as_other(path: str, sh: Any, seen: list[_Seen]) -> Classified | None:
    """Another framework's training: its signature, else a training entry passing mostly
    flags Megatron does not define."""
    found = [(s, f"runs {s.entry}: {name}") for s in seen if _trains(s) and (name := _framework(s))]
    found += [
        (s, f"runs {s.entry} with Hydra-style overrides (key.path=value), not Megatron's flags")
        for s in seen
        if _trains(s) and s.entry and not s.megatron and _hydra_overrides(s) >= _HYDRA_MIN
    ]
    found += [
        (s, f"runs {s.entry} with arguments that are mostly not Megatron's")
        for s in seen
        if s.role == "training" and s.foreign
    ]
    if not found:
        return None
    s, why = found[0]
    return classified(path, InputKind.OTHER_FRAMEWORK, why, entry=s.entry, evidence=_flag_counts(s))


# `trainer.devices=2 model.num_layers=4` / `+data.x=1` / `~a.b`: positional overrides of a
# Hydra or OmegaConf config (verl recipes, NeMo, ChatLearn); Megatron's argparse takes none
_HYDRA_WORD = compile_on_use(r"[+~]{0,2}[A-Za-z_]\w*(\.[A-Za-z_]\w*)+=")
_HYDRA_MIN = 3


def _hydra_overrides(s: _Seen) -> int:
    return sum(1 for w in s.inv.args if _HYDRA_WORD.match(w.text or w.head or ""))


def _flag_counts(s: _Seen) -> tuple[str, ...]:
    out = []
    if s.foreign:
        shown = ", ".join(s.foreign[:3])
        out.append(f"{len(s.foreign)} flags Megatron does not define ({shown}, ...)")
    if s.megatron:
        out.append(f"{len(s.megatron)} it does ({', '.join(s.megatron[:3])}, ...)")
    return tuple(out)


def _framework(s: _Seen) -> str | None:
    base = (s.entry or "").rsplit("/", 1)[-1]
    package = _top_package(s.entry)
    for fw in _launch_data()["frameworks"]:
        if base in fw.get("entries", ()):
            return f"{fw['name']}'s launcher"
        if package and package in fw.get("packages", ()):
            return f"{fw['name']}'s own module ({s.entry})"
        sig = set(fw.get("flags", ()))
        if len(sig & set(s.foreign)) >= 2 or set(fw.get("alone", ())) & set(s.foreign):
            return f"{fw['name']} arguments"
    return None


def _top_package(entry: str | None) -> str | None:
    """The package an entry belongs to, as written: ``verl`` for ``-m verl.trainer.x``,
    ``chatlearn`` for ``chatlearn/entrypoint.py`` (a path relative to the repository root)."""
    if not entry or entry.startswith(("/", "$")):
        return None
    entry = entry.removeprefix("./")
    if entry.endswith(".py"):
        return entry.split("/", 1)[0] if "/" in entry else None
    return entry.split(".", 1)[0] if "." in entry and "/" not in entry else None


def _as_tool(path: str, sh: Any, seen: list[_Seen]) -> Classified | None:
    named = [(s.entry, s.role) for s in seen if s.role in _ROLE_KIND]
    if named:
        entry, role = named[0]
        why = f"runs {entry}" if entry else f"its name: {os.path.basename(path)}"
        return classified(path, _ROLE_KIND[role], why, entry=entry)
    # An entry the table does not know (often `torchrun ${SCRIPT}`): the launch script's
    # own name says what it does (Megatron-LM's post_training/modelopt/{convert,export,
    # mmlu,quantize,...}.sh share one launch line)
    own = script_role(os.path.basename(path).rsplit(".", 1)[0] + ".py")
    if own in _ROLE_KIND:
        return classified(path, _ROLE_KIND[own], f"its name: {os.path.basename(path)}")
    return None
