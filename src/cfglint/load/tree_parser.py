"""The argument parser a launch's own repository defines, read by content.

A fork of Megatron-LM keeps Megatron's entry scripts (``pretrain_gpt.py``) and most of its
flags, so neither the entry script nor the flags a script passes say whose code runs. The
repository around the script does: its parser module registers the flags the run accepts.
Here that module's ``add_argument`` calls are read with Python's ast (nothing is imported or
run), so the dialect detector can tell Megatron-LM from a fork by what the tree defines,
never by the repository's name.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from functools import cache

from cfglint.model.errors import InputError

# Where a Megatron-style repository keeps its parser, relative to the folder holding the
# entry script: Megatron-LM since core_r0.6 (megatron/training/arguments.py), before it and
# its forks (megatron/arguments.py), and flat forks such as GLM (arguments.py).
PARSER_FILES = ("megatron/training/arguments.py", "megatron/arguments.py", "arguments.py")

# a module registering fewer flags is a task's or a tool's own parser, not the trainer's
_MIN_FLAGS = 40
_MAX_PARSER_BYTES = 2 * 1024 * 1024
_ANCESTORS = 5
# DeepSpeed's add_config_arguments(parser) registers these (deepspeed/__init__.py
# _add_core_arguments); forks that call it accept them without an add_argument of their own
_DEEPSPEED_CONFIG_FLAGS = (
    "--deepspeed",
    "--deepspeed_config",
    "--deepscale",
    "--deepscale_config",
    "--deepspeed_mpi",
)


@dataclass(frozen=True)
class TreeParser:
    """The parser module found beside a launch's entry script and the flags it registers."""

    path: str  # the parser module, as found on disk
    rel: str  # its path from the folder the entry path starts from
    flags: frozenset[str]


def find_tree_parser(entry_script: str | None, script_path: str | None) -> TreeParser | None:
    """The parser of the repository that holds ``entry_script``: found from the entry
    script's folder up to the folder its path starts from (the nearest first), the first of
    PARSER_FILES that registers a trainer's worth of flags. None when the entry script is not
    in the tree."""
    found = _locate(entry_script, script_path)
    if found is None:
        return None
    root, entry = (os.path.normpath(p) for p in found)
    here = os.path.dirname(entry)
    if not here.startswith(root + os.sep):
        root = here  # `../../pretrain_gpt.py`: the entry's own folder is the top
    # from the entry's folder up, never above the folder its path starts from
    while here == root or here.startswith(root + os.sep):
        for rel in PARSER_FILES:
            flags = parser_flags(os.path.join(here, rel))
            if len(flags) >= _MIN_FLAGS:
                shown = os.path.relpath(os.path.join(here, rel), root)
                return TreeParser(os.path.join(here, rel), shown, flags)
        if here == root:
            break
        here = os.path.dirname(here)
    return None


def entry_flags(entry_script: str | None, script_path: str | None) -> frozenset[str]:
    """The flags the entry script itself registers (an ``extra_args_provider``: Megatron's
    tasks/main.py adds --task, --epochs, ...), when it is in the tree."""
    found = _locate(entry_script, script_path)
    return frozenset() if found is None else parser_flags(found[1])


def _locate(entry_script: str | None, script_path: str | None) -> tuple[str, str] | None:
    """(the folder the entry path starts from, the entry file) when the entry is on disk:
    an absolute path as written, else relative to the launch script's folder or one above
    it (scripts run from the repository root: ``bash scripts/x.sh`` with ``x.py``). The known
    end of a path built at run time (``$MAIN_DIR/pkg/tools/train.py``) is tried so too."""
    if not entry_script or "$" in entry_script or not entry_script.endswith(".py"):
        return None
    if os.path.isabs(entry_script) and os.path.isfile(entry_script):
        return os.path.dirname(entry_script), entry_script
    if not script_path:
        return None
    rel = entry_script.lstrip("/")
    here = os.path.dirname(os.path.abspath(script_path))
    for _ in range(_ANCESTORS):
        candidate = os.path.join(here, rel)
        if os.path.isfile(candidate):
            return here, candidate
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return None


def parser_flags(path: str) -> frozenset[str]:
    """Every option string an ``add_argument`` call in ``path`` registers (``--no-X`` too for
    a BooleanOptionalAction); empty when the file is absent, too large or not Python."""
    try:
        st = os.stat(path)
    except OSError:
        return frozenset()
    # keyed by the file's state too: a long-lived process (server, watch) sees edits
    return _parser_flags(path, st.st_mtime_ns, st.st_size)


@cache
def _parser_flags(path: str, _mtime: int, _size: int) -> frozenset[str]:
    from cfglint.load.safeio import read_text

    try:
        tree = ast.parse(read_text(path, max_bytes=_MAX_PARSER_BYTES, what="argument parser"))
    except (InputError, SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    out: set[str] = set()
    registering = {"add_argument", *argument_wrappers(tree)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = called_name(node)
        if name == "add_config_arguments":
            out.update(_DEEPSPEED_CONFIG_FLAGS)
        if name not in registering:
            continue
        names = [
            a.value
            for a in node.args
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")
        ]
        out.update(names)
        if any(_boolean_optional(k) for k in node.keywords):
            out.update("--no-" + n[2:] for n in names if n.startswith("--"))
    return frozenset(out)


def called_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def argument_wrappers(tree: ast.AST) -> set[str]:
    """Functions of the module that register a flag they are given: their body calls
    ``X.add_argument(param, ...)`` with one of their parameters (Pai-Megatron-Patch's
    ``patch_if_not_exist(group, "--patch-size", type=int, default=14)``)."""
    out = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        params = {a.arg for a in fn.args.args}
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Call)
                and called_name(node) == "add_argument"
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in params
            ):
                out.add(fn.name)
                break
    return out


def _boolean_optional(kw: ast.keyword) -> bool:
    return kw.arg == "action" and ast.unparse(kw.value).endswith("BooleanOptionalAction")
