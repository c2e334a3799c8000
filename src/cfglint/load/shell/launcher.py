"""Which command is the training launch (torchrun, msrun, deepspeed, python -m
torch.distributed.*, behind wrappers), and how its words split into launcher options,
entry script and training arguments.
"""

from __future__ import annotations

from cfglint.load.globs import glob_match
from cfglint.load.shell.pieces import NAME_RE
from cfglint.load.shell.words import Invocation, ShellScript, Word
from cfglint.model.lazy_re import compile_on_use

LAUNCHERS = frozenset({"torchrun", "msrun", "deepspeed"})


PYTHON_RE = compile_on_use(r"python(\d+(\.\d+)*)?")


def is_python(base: str) -> bool:
    """Whether a command's base name is a Python interpreter (``python``, ``python3.10``);
    the pattern is compiled only once some word starts with python."""
    return base.startswith("python") and PYTHON_RE.fullmatch(base) is not None


# Commands that run their argument list as another command.
WRAPPERS = frozenset(
    {
        "nohup",
        "exec",
        "env",
        "time",
        "command",
        "stdbuf",
        "numactl",
        "taskset",
        "mpirun",
        "mpiexec",
        "srun",
        "timeout",
        "nice",
        "ionice",
        "setsid",
        "unbuffer",
        "builtin",
        "uv",  # `uv run [--extra X] python -m torch.distributed.run ...` (Megatron-LM examples)
    }
)


SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})


# Launcher options that take no value; every other option is assumed to take one.
_TORCHRUN_FLAGS = frozenset(
    {
        "--standalone",
        "--no_python",
        "--no-python",
        "-m",
        "--module",
        "--run_path",
        "--run-path",
        "--use_env",
        "--use-env",
    }
)


_DEEPSPEED_FLAGS = frozenset(
    {
        "--no_ssh_check",
        "--no_local_rank",
        "--no_python",
        "--module",
        "--force_multi",
        "--save_pid",
        "--enable_each_rank_log",
        "--bind_cores_to_rank",
        "--no_ssh",
    }
)


_PYTHON_VALUE_OPTS = frozenset({"-W", "-X", "-Q"})


_TRAIN_PATTERNS = (
    "pretrain_*.py",
    "posttrain*.py",
    "train*.py",
    "finetune*.py",
    "run_mindformer.py",
)


LAUNCH_WORD_RE = compile_on_use(r"(?<![\w.-])(torchrun|msrun|deepspeed|python[\d.]*)(?![\w-])")


def _launcher_kind(text: str | None) -> str | None:
    if text is None:
        return None
    base = text.rsplit("/", 1)[-1]
    if base in LAUNCHERS:
        return base
    if is_python(base):
        return "python"
    return None


def find_launcher(words: list[Word]) -> tuple[str, int, dict[str, Word]] | None:
    """(launcher kind, index of the launcher word, env from ``env X=1``) or None.
    Kind "?" means the command name is unknown but a .py script follows."""
    skip = 0
    while skip < len(words) and words[skip].text == "":
        skip += 1  # an unquoted prefix that expanded to nothing: the next word is the command
    if skip:
        found = find_launcher(words[skip:])
        return None if found is None else (found[0], found[1] + skip, found[2])
    if not words:
        return None
    kind = _launcher_kind(words[0].text)
    if kind is not None:
        return kind, 0, {}
    if words[0].text is None:
        return _behind_unknown_prefix(words)
    return _behind_wrapper(words, words[0].text.rsplit("/", 1)[-1])


def _behind_unknown_prefix(words: list[Word]) -> tuple[str, int, dict[str, Word]] | None:
    """``$VENV_PREFIX torchrun ...``: an unknown prefix (a wrapper or an environment
    activation) in front of a launcher; the launcher decides how the words split. With no
    launcher before a ``.py`` word, the unknown command runs that script (kind "?")."""
    for i, w in enumerate(words[1:], start=1):
        if names_script(w):
            break
        kind = _launcher_kind(w.text)
        if kind is not None:
            return kind, i, {}
    if any(names_script(w) for w in words[1:]):
        return "?", 0, {}
    return None


def _behind_wrapper(words: list[Word], wrapper: str) -> tuple[str, int, dict[str, Word]] | None:
    """A launcher run by a wrapper (``nohup``, ``env X=1``, ``srun ...``), with the
    variables the wrapper sets for it."""
    if wrapper not in WRAPPERS:
        return None
    if wrapper == "command" and len(words) > 1 and (words[1].text or "").startswith("-"):
        return None  # `command -v torchrun` looks a launcher up, it does not run it
    env: dict[str, Word] = {}
    for i, w in enumerate(words[1:], start=1):
        kind = _launcher_kind(w.text)
        if kind is not None:
            return kind, i, env
        if w.text and NAME_RE.fullmatch(w.text.split("=", 1)[0]) and "=" in w.text:
            name, _, value = w.text.partition("=")
            env[name] = w.replace(text=value)
    return None


def names_script(w: Word) -> bool:
    """The word is a ``.py`` path, known or ending known (``${dir}/../../pretrain_gpt.py``)."""
    text = w.text if w.text is not None else w.tail
    return text.endswith(".py") and not text.startswith("-")


def split_launch(kind: str, words: list[Word]) -> tuple[str, list[Word], Word | None, list[Word]]:
    """(launcher, launcher args, script, script args) for the words after the launcher."""
    if kind == "python":
        return _split_python(words)
    if kind == "?":
        i = next(i for i, w in enumerate(words) if names_script(w))
        return kind, words[:i], words[i], words[i + 1 :]
    flags = {"torchrun": _TORCHRUN_FLAGS, "deepspeed": _DEEPSPEED_FLAGS}.get(kind, frozenset())
    return (kind, *_split_options(words, flags))


def _split_python(words: list[Word]) -> tuple[str, list[Word], Word | None, list[Word]]:
    i = 0
    while i < len(words):
        t = words[i].text
        if t is None:
            break
        if t == "-m" and i + 1 < len(words):
            module = words[i + 1]
            if module.text in ("torch.distributed.launch", "torch.distributed.run"):
                return (
                    f"python -m {module.text}",
                    *_split_options(words[i + 2 :], _TORCHRUN_FLAGS),
                )
            return "python", words[: i + 1], module, words[i + 2 :]
        if t == "-c":
            return "python", words[: i + 2], None, words[i + 2 :]
        if t in _PYTHON_VALUE_OPTS:
            i += 2
        elif t.startswith("-") and t != "-":
            i += 1
        else:
            break
    if i < len(words):
        return "python", words[:i], words[i], words[i + 1 :]
    return "python", words, None, []


def _split_options(
    words: list[Word], flags: frozenset[str]
) -> tuple[list[Word], Word | None, list[Word]]:
    """(launcher options, script, script arguments): the first .py word is the script;
    else the first word that is not an option, once options (with their values) are
    skipped. ``flags`` are the launcher's options that take no value."""
    for i, w in enumerate(words):
        if names_script(w):
            return words[:i], w, words[i + 1 :]
    i = 0
    while i < len(words):
        t = words[i].text
        if t is None and words[i].head.startswith("-"):
            t = words[i].head  # `--nproc_per_node=$1`: an option whatever its value
        if t is None or not t.startswith("-"):
            if t is None and i == 0:
                break
            return _script_at(words, i)
        if "=" in t or t in flags:
            i += 1
        else:  # an option with its value; an unknown value is still a value
            nxt = words[i + 1] if i + 1 < len(words) else None
            i += 1 if nxt is None or (nxt.text or "").startswith("-") else 2
    return words, None, []


def _script_at(words: list[Word], i: int) -> tuple[list[Word], Word | None, list[Word]]:
    """The split at the first word that is not a launcher option: the entry script, or an
    interpreter in front of it (`torch.distributed.run ... python -u x.py`, ROCm/Megatron-LM
    2b855baf tools/retro/sft/sft_retro_lm.sh), whose own options are skipped."""
    t = words[i].text
    if t is not None and is_python(t.rsplit("/", 1)[-1]) and i + 1 < len(words):
        _, opts, script, rest = _split_python(words[i + 1 :])
        if script is not None and (script.text is None or names_script(script)):
            return [*words[: i + 1], *opts], script, rest
    return words[:i], words[i], words[i + 1 :]


def main_invocation(script: ShellScript) -> Invocation | None:
    """The invocation that runs the training job."""
    if not script.invocations:
        return None

    def is_training(inv: Invocation) -> bool:
        name = inv.script.text if inv.script is not None and inv.script.text else ""
        base = name.rsplit("/", 1)[-1]
        return any(glob_match(base, p) for p in _TRAIN_PATTERNS)

    pool = [inv for inv in script.invocations if is_training(inv)] or script.invocations
    return max(pool, key=lambda inv: sum(1 for w in inv.args if (w.text or "").startswith("--")))
