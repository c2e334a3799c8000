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
from collections.abc import Mapping
from functools import cache, lru_cache
from types import MappingProxyType

from cfglint.model.errors import InputError
from cfglint.model.record import Frozen

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


class TreeParser(Frozen):
    """The parser module found beside a launch's entry script and the flags it registers."""

    __slots__ = ("flags", "path", "rel")

    path: str  # the parser module, as found on disk
    rel: str  # its path from the folder the entry path starts from
    flags: frozenset[str]

    def __init__(
        self,
        path: str,
        rel: str,
        flags: frozenset[str],
    ) -> None:
        self.path = path
        self.rel = rel
        self.flags = flags


class Place(Frozen):
    """Where a launch runs its entry script: the folder it ``cd``s into and the folders it
    puts on ``PYTHONPATH`` (each as far as the script's text says: an absolute or relative
    path, or the known end of one built at run time, ``${ROOT}/Megatron-LM``)."""

    __slots__ = ("cwd", "pythonpath")

    cwd: str | None
    pythonpath: tuple[str, ...]

    def __init__(
        self,
        cwd: str | None = None,
        pythonpath: tuple[str, ...] = (),
    ) -> None:
        self.cwd = cwd
        self.pythonpath = pythonpath


NOWHERE = Place()


def find_tree_parser(
    entry_script: str | None, script_path: str | None, place: Place = NOWHERE
) -> TreeParser | None:
    """The parser of the repository that holds ``entry_script``: found from the entry
    script's folder up to the folder its path starts from (the nearest first), then in the
    folders the launch puts on ``PYTHONPATH``, the first of PARSER_FILES that registers a
    trainer's worth of flags. None when the entry script is not in the tree."""
    found = locate_entry(entry_script, script_path, place)
    if found is None:
        return None
    root, entry = (os.path.normpath(p) for p in found)
    here = os.path.dirname(entry)
    if not here.startswith(root + os.sep):
        root = here  # `../../pretrain_gpt.py`: the entry's own folder is the top
    # the packages the entry imports may be a renamed Megatron (AscendSpeed's ascendspeed/)
    names = _package_parsers(entry)
    # from the entry's folder up, never above the folder its path starts from
    while here == root or here.startswith(root + os.sep):
        got = _parser_in(here, root, names)
        if got is not None:
            return got
        if here == root:
            break
        here = os.path.dirname(here)
    for folder in _path_folders(script_path, place):
        got = _parser_in(folder, folder)
        if got is not None:
            return got
    return None


def _package_parsers(entry: str) -> tuple[str, ...]:
    """Where the packages ``entry`` imports would keep a Megatron-style parser, after
    PARSER_FILES: ``ascendspeed/arguments.py`` for Ascend/AscendSpeed's pretrain_gpt.py
    (``from ascendspeed import get_args``), a fork that renamed ``megatron``."""
    pkgs = sorted(entry_imports(entry) - {"megatron"})
    return tuple(f"{p}/{rel}" for p in pkgs for rel in ("arguments.py", "training/arguments.py"))


def _parser_in(here: str, root: str, extra: tuple[str, ...] = ()) -> TreeParser | None:
    for rel in (*PARSER_FILES, *extra):
        flags = parser_flags(os.path.join(here, rel))
        if len(flags) >= _MIN_FLAGS:
            shown = os.path.relpath(os.path.join(here, rel), root)
            return TreeParser(os.path.join(here, rel), shown, flags)
    return None


def unreadable_parser(entry: str, root: str) -> str:
    """A parser file beside ``entry`` (up to ``root``) that exists but does not parse as
    Python (an instrumented copy, a merge conflict): its path from ``root``, else ""."""
    here = os.path.dirname(entry)
    while here == root or here.startswith(root + os.sep):
        for rel in PARSER_FILES:
            path = os.path.join(here, rel)
            if os.path.isfile(path) and not parser_flags(path) and not _parses(path):
                return os.path.relpath(path, root)
        if here == root:
            break
        here = os.path.dirname(here)
    return ""


def _parses(path: str) -> bool:
    from cfglint.load.safeio import read_text

    try:
        ast.parse(read_text(path, max_bytes=_MAX_PARSER_BYTES, what="argument parser"))
    except (InputError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def entry_flags(
    entry_script: str | None, script_path: str | None, place: Place = NOWHERE
) -> frozenset[str]:
    """The flags the entry script itself registers (an ``extra_args_provider``: Megatron's
    tasks/main.py adds --task, --epochs, ...), when it is in the tree."""
    found = locate_entry(entry_script, script_path, place)
    return frozenset() if found is None else parser_flags(found[1])


def locate_entry(
    entry_script: str | None, script_path: str | None, place: Place = NOWHERE
) -> tuple[str, str] | None:
    """(the folder the entry path starts from, the entry file) when the entry is on disk:
    an absolute path as written; else relative to the folder the launch ``cd``s into; else
    to the launch script's folder or one above it (scripts run from the repository root:
    ``bash scripts/x.sh`` with ``x.py``); else the one file of the script's repository whose
    path ends so. The known end of a path built at run time (``$MAIN_DIR/pkg/tools/train.py``)
    is tried so too."""
    if not entry_script or "$" in entry_script or not entry_script.endswith(".py"):
        return None
    if os.path.isabs(entry_script) and os.path.isfile(entry_script):
        return os.path.dirname(entry_script), entry_script
    if not script_path:
        return None
    rel = entry_script.lstrip("/")
    for here in _cwd_folders(script_path, place):
        if os.path.isfile(os.path.join(here, rel)):
            return here, os.path.join(here, rel)
    here = os.path.dirname(os.path.abspath(script_path))
    for _ in range(_ANCESTORS):
        candidate = os.path.join(here, rel)
        if os.path.isfile(candidate):
            return here, candidate
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return _search_repository(entry_script, script_path)


def _cwd_folders(script_path: str, place: Place) -> list[str]:
    """The folders the launch's ``cd`` may name: an absolute path as written, a relative one
    (or the known end of one) from the script's folder and each folder above it."""
    return _resolve_folder(place.cwd, script_path) if place.cwd else []


def _path_folders(script_path: str | None, place: Place) -> list[str]:
    out: list[str] = []
    for entry in place.pythonpath:
        out += _resolve_folder(entry, script_path) if script_path else []
    return out


def _resolve_folder(text: str, script_path: str) -> list[str]:
    if os.path.isabs(text) and os.path.isdir(text):
        return [text]
    rel = text.strip("/")
    out = []
    here = os.path.dirname(os.path.abspath(script_path))
    for _ in range(_ANCESTORS):
        if rel and os.path.isdir(os.path.join(here, rel)):
            out.append(os.path.normpath(os.path.join(here, rel)))
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return out


def repository_root(script_path: str | None) -> str | None:
    """The repository a launch script belongs to: the nearest folder above it holding
    ``.git``; else the highest (within a few levels) holding a Python project file. None
    when neither shows one (a script on its own)."""
    if not script_path:
        return None
    here = os.path.dirname(os.path.abspath(script_path))
    project = None
    for _ in range(_ANCESTORS):
        if os.path.exists(os.path.join(here, ".git")):
            return here
        if any(os.path.isfile(os.path.join(here, m)) for m in _PROJECT_FILES):
            project = here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return project


_PROJECT_FILES = ("setup.py", "pyproject.toml", "setup.cfg")


def _search_repository(rel: str, script_path: str) -> tuple[str, str] | None:
    """The entry of a path built at run time (``${MEGATRON_PATH}/pretrain_gpt.py``, whose
    known end starts with ``/``) found in the script's repository by that end: the
    candidate nearest the repository's top, when only one is that near (copies at one depth,
    say tests' fixtures, leave it unknown). A path written out is never searched for."""
    if not rel.startswith("/"):
        return None
    root = repository_root(script_path)
    if root is None:
        return None
    tail = os.sep + os.path.normpath(rel.lstrip("/")).lstrip(os.sep)
    if tail.startswith(os.sep + ".."):
        return None
    hits = [p for p in python_files(root) if p.endswith(tail)]
    if not hits:
        return None
    depth = {p: p.count(os.sep) for p in hits}
    top = min(depth.values())
    nearest = [p for p in hits if depth[p] == top]
    if len(nearest) != 1:
        return None
    best = nearest[0]
    return best[: len(best) - len(tail)] or os.sep, best


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


# -- the repository's own flags, read by content ---------------------------------------

# A repository's Python files read for flags: Megatron-LM has ~1,500, its forks up to ~3,000;
# the walk stops there (a home folder is not a repository).
_MAX_PY_FILES = 6000
_MAX_PY_DIRS = 5000


class FlagDef(Frozen):
    """One ``add_argument`` of a repository, as argparse would register it (literal values
    only: a default computed at run time is ``None`` with ``literal`` False)."""

    __slots__ = (
        "action",
        "choices",
        "const",
        "default",
        "dest",
        "flags",
        "line",
        "literal",
        "nargs",
        "path",
        "type",
        "typed",
    )

    flags: tuple[str, ...]
    dest: str
    type: str  # int | float | str | bool (our tables' names)
    action: str  # store | store_true | store_false | store_const | count | boolean_optional
    default: object
    literal: bool
    typed: bool  # an explicit type=int/float/bool/str (not a converter function)
    nargs: str | int | None
    choices: tuple[object, ...] | None
    const: object
    path: str
    line: int

    def __init__(
        self,
        flags: tuple[str, ...],
        dest: str,
        type: str,
        action: str,
        default: object = None,
        literal: bool = True,
        typed: bool = False,
        nargs: str | int | None = None,
        choices: tuple[object, ...] | None = None,
        const: object = None,
        path: str = "",
        line: int = 0,
    ) -> None:
        self.flags = flags
        self.dest = dest
        self.type = type
        self.action = action
        self.default = default
        self.literal = literal
        self.typed = typed
        self.nargs = nargs
        self.choices = choices
        self.const = const
        self.path = path
        self.line = line


def _state(root: str) -> int:
    try:
        return os.stat(root).st_mtime_ns
    except OSError:
        return -1


def python_files(root: str) -> tuple[str, ...]:
    """The repository's Python files (bounded, sorted, hidden and vendored folders skipped);
    read once per run and repository (keyed by the folder's state for a long-lived server)."""
    return _python_files(root, _state(root))


@lru_cache(maxsize=8)
def _python_files(root: str, _state: int) -> tuple[str, ...]:
    from cfglint.load.walk import DEFAULT_EXCLUDE, bounded_walk

    out: list[str] = []
    for dirpath, dirs, files in bounded_walk(root, max_dirs=_MAX_PY_DIRS):
        dirs[:] = [d for d in dirs if d not in DEFAULT_EXCLUDE and not d.startswith(".")]
        out += [os.path.join(dirpath, f) for f in files if f.endswith(".py")]
        if len(out) > _MAX_PY_FILES:
            break
    return tuple(out[:_MAX_PY_FILES])


def repository_flags(root: str) -> Mapping[str, FlagDef]:
    """Every flag an ``add_argument`` registers anywhere in the repository's Python, the
    first definition (in path order) of each: the module that registers a flag a launch
    passes, wherever the launch's entry script takes it from (an extra_args_provider in a
    sibling module, a fork's package that patches Megatron's parser)."""
    return _repository_flags(root, _state(root))


@lru_cache(maxsize=8)
def _repository_flags(root: str, _state: int) -> Mapping[str, FlagDef]:
    out: dict[str, FlagDef] = {}
    for path in python_files(root):
        for d in parser_specs(path):
            for f in d.flags:
                out.setdefault(f, d)
            if d.action == "boolean_optional":
                for f in d.flags:
                    out.setdefault("--no-" + f[2:], d)
    return MappingProxyType(out)


def parser_specs(path: str) -> tuple[FlagDef, ...]:
    """The ``add_argument`` calls of ``path`` as :class:`FlagDef` (empty when the file is
    absent, too large, not Python, or registers nothing)."""
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return _parser_specs(path, st.st_mtime_ns, st.st_size)


@cache
def _parser_specs(path: str, _mtime: int, _size: int) -> tuple[FlagDef, ...]:
    from cfglint.load.safeio import read_text

    try:
        text = read_text(path, max_bytes=_MAX_PARSER_BYTES, what="argument parser")
        if "add_argument" not in text:
            return ()
        tree = ast.parse(text)
    except (InputError, SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    registering = {"add_argument", *argument_wrappers(tree)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and called_name(node) in registering:
            d = _flag_def(node, path)
            if d is not None:
                out.append(d)
    return tuple(out)


_ACTIONS = {
    "store_true": ("store_true", "bool", False),
    "store_false": ("store_false", "bool", True),
    "store_const": ("store_const", "str", None),
    "count": ("count", "int", None),
    "append": ("store", "str", None),
}
# argparse`s type=bool is bool(text): "False" is True, not a switch parser; read as text
_TYPES = {"int": "int", "float": "float", "str": "str"}


def _flag_def(call: ast.Call, path: str) -> FlagDef | None:
    names = tuple(
        a.value
        for a in call.args
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-")
    )
    if not names:
        return None
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    long = next((n for n in names if n.startswith("--")), names[0])
    dest = _literal(kw.get("dest"))[0] or long.lstrip("-").replace("-", "_")
    action_node = kw.get("action")
    action_text = ast.unparse(action_node) if action_node is not None else "store"
    action, typ, default = "store", "str", None
    if action_text.endswith("BooleanOptionalAction"):
        action, typ = "boolean_optional", "bool"
    else:
        action, typ, default = _ACTIONS.get(action_text.strip("'\""), ("store", "str", None))
    type_node = kw.get("type")
    typed = type_node is not None and ast.unparse(type_node) in _TYPES
    if type_node is not None and action == "store":
        typ = _TYPES.get(ast.unparse(type_node), "str")
    literal = True
    if "default" in kw:
        default, literal = _literal(kw["default"])
    choices, _ = _literal(kw.get("choices"))
    nargs, _ = _literal(kw.get("nargs"))
    const, _ = _literal(kw.get("const"))
    return FlagDef(
        flags=names,
        dest=str(dest),
        type=typ,
        action=action,
        default=default,
        literal=literal,
        typed=typed,
        nargs=nargs if isinstance(nargs, (str, int)) else None,
        choices=tuple(choices) if isinstance(choices, (list, tuple)) else None,
        const=const,
        path=path,
        line=call.lineno,
    )


def _literal(node: ast.AST | None) -> tuple[object, bool]:
    """(the value, True) of a literal expression; (None, False) of anything computed."""
    if node is None:
        return None, True
    try:
        return ast.literal_eval(node), True
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return None, False


# packages whose import makes a trainer MindSpeed's (they patch Megatron's parser at import)
MINDSPEED_PACKAGES = frozenset(
    {"mindspeed", "mindspeed_llm", "mindspeed_mm", "modellink", "ascendspeed"}
)


def entry_imports(path: str) -> frozenset[str]:
    """The top-level packages ``path`` imports (``from megatron.training import x`` gives
    ``megatron``); empty when it cannot be read."""
    from cfglint.load.safeio import read_text

    try:
        tree = ast.parse(read_text(path, max_bytes=_MAX_PARSER_BYTES, what="entry script"))
    except (InputError, SyntaxError, ValueError, RecursionError, MemoryError, OSError):
        return frozenset()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return frozenset(out)


def launch_place(cwd: object, variables: dict[str, object]) -> Place:
    """The :class:`Place` of a parsed launch: its ``cd`` target word and the script's
    ``PYTHONPATH`` variable (shell Words: the text, else the known end of it)."""

    def known(word: object) -> str:
        text = getattr(word, "text", None)
        return str(text) if text else str(getattr(word, "tail", "") or "")

    path = known(variables.get("PYTHONPATH")) if variables.get("PYTHONPATH") else ""
    parts = tuple(p for p in path.split(":") if p and "$" not in p)
    return Place(cwd=known(cwd) or None if cwd is not None else None, pythonpath=parts)


def task_dispatch(path: str, flag: str) -> dict[str, str]:
    """What Megatron's ``tasks/main.py``-style entry runs for each value of ``flag``: the
    module each ``if args.task == 'X':`` / ``elif args.task in [...]:`` branch imports
    (``{'LAMBADA': 'zeroshot_gpt.evaluate', 'RACE': 'race.finetune'}``), read from the
    fork's own file, which may add tasks of its own."""
    from cfglint.load.safeio import read_text

    dest = flag.lstrip("-").replace("-", "_")
    try:
        tree = ast.parse(read_text(path, max_bytes=_MAX_PARSER_BYTES, what="entry script"))
    except (InputError, SyntaxError, ValueError, RecursionError, MemoryError, OSError):
        return {}
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
            continue
        t = node.test
        if ast.unparse(t.left) != f"args.{dest}" or len(t.comparators) != 1:
            continue
        values, _ = _literal(t.comparators[0])
        names = values if isinstance(values, (list, tuple, set)) else [values]
        module = next(
            (b.module for b in node.body if isinstance(b, ast.ImportFrom) and b.module), None
        )
        for v in names:
            if isinstance(v, str) and module:
                out.setdefault(v, module)
    return out


def first_reads(root: str, dests: list[str]) -> dict[str, str]:
    """Where the repository first reads each ``args.<dest>`` (``path:line: the line``), in
    one pass over its Python files, for a finding to point at the code that decides what a
    fork's flag changes; a dest no file reads so is absent (Megatron also reads arguments
    by name through getattr)."""
    import re

    from cfglint.load.safeio import read_text

    if not dests:
        return {}
    pattern = re.compile(rf"\bargs\.({'|'.join(re.escape(d) for d in dests)})\b")
    out: dict[str, str] = {}
    for path in python_files(root):
        try:
            text = read_text(path, max_bytes=_MAX_PARSER_BYTES, what="source")
        except InputError:
            continue
        for m in pattern.finditer(text):
            if m.group(1) in out:
                continue
            line = text.count("\n", 0, m.start()) + 1
            code = text.splitlines()[line - 1].strip()
            out[m.group(1)] = f"{os.path.relpath(path, root)}:{line}: {code[:80]}"
        if len(out) == len(set(dests)):
            break
    return out
