"""Megatron dialects as data (read here, in the load stage, so that the input classifier
can name a launch's dialect): Megatron-LM and MindSpeed-LLM releases, MindSpeed core
branches, forks (Megatron-DeepSpeed, Megatron-LLaMA, bigcode's Megatron-LM) and MindSpeed-MM.

Each modelled dialect is a file under ``data/dialects/``: its argument table read from its
own source at a recorded commit (scripts/extract_argparse.py), its post-processing (``derive``:
how a setting cfglint reads by its Megatron-LM name is spelled in the dialect), how a fix
names a flag there (``spellings``), and what identifies its scripts (``detect``). A script
that is recognisably a fork we do not model is named as one: its defaults are not decided.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from cfglint.load import datacache
from cfglint.load.datacache import DATA_DIR, load_data
from cfglint.load.datayaml import (
    FLAGS,
    INDEXED,
    ArgList,
    accepted_flags,
    dialect_index,
    dialect_index_name,
    flag_table,
    read_indexed_table,
    ready_name,
)
from cfglint.load.tree_parser import (
    MINDSPEED_PACKAGES,
    NOWHERE,
    PARSER_FILES,
    Place,
    TreeParser,
    entry_flags,
    entry_imports,
    find_tree_parser,
    locate_entry,
    repository_root,
    unreadable_parser,
)
from cfglint.model.lazy_re import compile_on_use
from cfglint.model.record import Frozen, Record

DATA = DATA_DIR
DIALECT_DIR = DATA_DIR / "dialects"

# Entry scripts of Megatron-LM itself (core_v0.12.1 / core_v0.19.0 repository roots) and of
# the older layouts forks inherited; a launch of another *.py with unknown flags is a fork.
MEGATRON_ENTRIES = frozenset(
    {
        "pretrain_gpt.py",
        "pretrain_bert.py",
        "pretrain_t5.py",
        "pretrain_mamba.py",
        "pretrain_retro.py",
        "pretrain_ict.py",
        "pretrain_vlm.py",
        "pretrain_vision_classify.py",
        "pretrain_vision_dino.py",
        "pretrain_vision_inpaint.py",
        "train_rl.py",
    }
)

# an older MindSpeed-LLM release with a table of its own (data/dialects/)
OLDER_MINDSPEED_LLM = "mindspeed-llm-2.1.0"

# Pai-Megatron-Patch's backend, as its example scripts put it on PYTHONPATH
_PAI_BACKEND = compile_on_use(r"backends/megatron/([A-Za-z0-9._-]+)")

# Forks we recognise but do not model: (what names it, how it is recognised).
UNMODELLED = (
    ("Pai-Megatron-Patch", ("megatron_patch",), ("--patch-tokenizer-type",)),
    ("FlagScale", ("flagscale",), ()),
    ("InternEvo", ("internlm",), ()),
    ("Megatron-LLM (epfLLM)", (), ("--use_rms_norm", "--use_post_ln")),
)


class Dialect(Frozen):
    """One Megatron-family dialect; ``table`` names the argument table to load."""

    __slots__ = (
        "derive",
        "kind",
        "label",
        "model_json",
        "modelled",
        "name",
        "project",
        "side_label",
        "spellings",
        "table",
    )

    name: str  # what --megatron-version accepts
    project: str
    kind: str  # megatron-lm | mindspeed-llm | mindspeed-core | fork | mindspeed-mm | unmodelled
    label: str  # "Megatron-LLaMA main (25306de)"
    side_label: str
    table: str
    modelled: bool
    derive: tuple[dict[str, Any], ...]
    spellings: tuple[tuple[str, str | None], ...]
    model_json: str  # the dest naming a model-definition file (MindSpeed-MM --mm-model)

    def __init__(
        self,
        name: str,
        project: str,
        kind: str,
        label: str,
        side_label: str = "Megatron",
        table: str = "megatron-lm",
        modelled: bool = True,
        derive: tuple[dict[str, Any], ...] = (),
        spellings: tuple[tuple[str, str | None], ...] = (),
        model_json: str = "",
    ) -> None:
        self.name = name
        self.project = project
        self.kind = kind
        self.label = label
        self.side_label = side_label
        self.table = table
        self.modelled = modelled
        self.derive = derive
        self.spellings = spellings
        self.model_json = model_json


class Detection(Record):
    __slots__ = ("accepts", "dialect", "evidence", "extra", "note", "parser", "root", "unread")

    dialect: Dialect
    evidence: list[str]
    note: str  # a warning when the choice is not certain
    # the flags the repository's own parser registers, when an unmodelled fork's was read:
    # only a flag outside them is one its argparse refuses
    accepts: frozenset[str] | None
    # the flags the entry script registers itself (an extra_args_provider)
    extra: frozenset[str]
    # the argument parser the job runs, when it was found in the repository and read
    parser: TreeParser | None
    root: str | None  # the repository the launch belongs to, when one is
    # why the parser the job runs was not read ("" when it was, or when the table is it):
    # a flag the table lacks is then not decided, never an error
    unread: str

    def __init__(
        self,
        dialect: Dialect,
        evidence: list[str] | None = None,
        note: str = "",
        accepts: frozenset[str] | None = None,
        extra: frozenset[str] = frozenset(),
        parser: TreeParser | None = None,
        root: str | None = None,
        unread: str = "",
    ) -> None:
        self.dialect = dialect
        self.evidence = [] if evidence is None else evidence
        self.note = note
        self.accepts = accepts
        self.extra = extra
        self.parser = parser
        self.root = root
        self.unread = unread


@cache
def dialect_names() -> tuple[str, ...]:
    return tuple(sorted(_by_name()))


@cache
def _by_name() -> dict[str, str]:
    return {str(d["name"]): stem for stem, d in _dialect_index().items()}


@cache
def _dialect_index() -> dict[str, dict[str, Any]]:
    """Each dialect table by its stem, without its argument lists: the ready index an
    install ships (named by the hash of every dialect table, so it is found only while none
    changed), else read from the tables themselves."""
    raws = [(p.stem, p.read_bytes()) for p in sorted(DIALECT_DIR.glob("*.yaml"))]
    ready = datacache.DATA_DIR / datacache.READY / f"{dialect_index_name(raws)}.json"
    try:
        index = json.loads(ready.read_bytes()) if ready.is_file() else None
    except (OSError, ValueError):
        index = None  # unreadable or not JSON: the tables say it
    if _well_formed(index, [stem for stem, _ in raws]):
        return index  # type: ignore[return-value]
    return dialect_index({stem: _meta(stem) for stem, _ in raws})


def _well_formed(index: object, stems: list[str]) -> bool:
    """A ready index that names exactly these tables, each with a name and no arguments (one
    damaged after the install is not used; the tables are read instead)."""
    return (
        isinstance(index, dict)
        and list(index) == stems
        and all(
            isinstance(d, dict)
            and isinstance(d.get("name"), str)
            and not any(k.endswith("args") for k in d)
            for d in index.values()
        )
    )


def dialect_summary(name: str) -> dict[str, Any]:
    """Dialect ``name``'s table without its argument lists (its project, kind, ``detect``
    signs, ...): read from the dialect index, so no argument list is read for it."""
    return _dialect_index()[_by_name()[name]]


@cache
def _meta(stem: str) -> dict[str, Any]:
    return load_data(DIALECT_DIR / f"{stem}.yaml")


def dialect_data(name: str) -> dict[str, Any]:
    return _meta(_by_name()[name])


def argument_tables() -> list[Any]:
    """Every argument table of ours as plain data: the Megatron-LM and MindSpeed tables of
    data/ and the dialects of data/dialects/, each read once per run (detecting a launch
    asks for all of them, and the dialects' own readers share these)."""
    stems = sorted(p.stem for p in DATA.glob("*.yaml") if p.stem.startswith(_TABLE_PREFIXES))
    dialects = sorted(p.stem for p in DIALECT_DIR.glob("*.yaml"))
    return [*(_data(s) for s in stems), *(_meta(s) for s in dialects)]


_TABLE_PREFIXES = ("megatron", "mindspeed")


def short_commit(meta: dict[str, Any]) -> str:
    return str(meta.get("commit") or "")[:7]


@cache
def get_dialect(name: str) -> Dialect:
    """The dialect ``name``: a data file's, or one of the Megatron-LM / MindSpeed-LLM tables."""
    if name in _by_name():
        d = dialect_data(name)
        label = f"{d['project']} {d['ref']} ({short_commit(d)})"
        return Dialect(
            name=name,
            project=d["project"],
            kind=d["kind"],
            label=label,
            side_label=d.get("side_label") or d["project"],
            table=name,
            derive=tuple(d.get("derive") or ()),
            spellings=tuple((d.get("spellings") or {}).items()),
            model_json=d.get("model_json") or "",
        )
    if name.startswith("unmodelled:"):
        project = name.partition(":")[2]
        return Dialect(
            name=name,
            project=project,
            kind="unmodelled",
            label=f"{project} (a Megatron fork cfglint does not model)",
            side_label=project,
            modelled=False,
        )
    label = (table_index(name) or table_entries(name))[0]
    if name == "mindspeed-llm":
        return Dialect(name, "MindSpeed-LLM", "mindspeed-llm", label, "MindSpeed-LLM", name)
    return Dialect(name, "Megatron-LM", "megatron-lm", label, "Megatron", name)


def _repo_root_markers(script_path: str | None, limit: int = 5) -> list[str]:
    """The folders at and above the script, nearest first (a repository's layout shows
    which project it is)."""
    if not script_path:
        return []
    here = os.path.dirname(os.path.abspath(script_path))
    out = []
    for _ in range(limit):
        out.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return out


def _has(folders: list[str], rel: str) -> str | None:
    for f in folders:
        if os.path.exists(os.path.join(f, rel)):
            return os.path.join(f, rel)
    return None


def detect_dialect(
    flags: list[str],
    entry_script: str | None,
    script_path: str | None = None,
    text: str = "",
    place: Place = NOWHERE,
    memo: dict[Any, Detection] | None = None,
) -> Detection:
    """Which Megatron dialect a launch is written for (see :func:`_detect_by_launch`), then
    checked against the code the launch runs: the entry script found in its repository
    (through the launch's ``cd`` and ``PYTHONPATH``), the packages it imports and the
    argument parser beside it. A tree whose parser is a fork's runs that fork's code,
    whatever flags the script passes.

    ``memo``: the detections made from the same parse of the script (its ShellScript's),
    by what detection reads of the launch: the input classifier's is the loader's, not
    made again (each caller gets its own copy)."""
    if memo is None:
        return _detect(flags, entry_script, script_path, text, place)
    key = (launch_flags(flags), entry_script, script_path, text, place)
    if key not in memo:
        memo[key] = _detect(flags, entry_script, script_path, text, place)
    done = memo[key]
    return done.replace(evidence=list(done.evidence))


def launch_flags(flags: list[str]) -> tuple[str, ...]:
    """A launch's flags as detection reads them: each ``-`` word once, in order."""
    return tuple(dict.fromkeys(f for f in flags if f.startswith("-")))


def _detect(
    flags: list[str], entry_script: str | None, script_path: str | None, text: str, place: Place
) -> Detection:
    found = _detect_by_launch(flags, entry_script, script_path, text)
    located = locate_entry(entry_script, script_path, place)
    if found.dialect.kind in _PATCHING_KINDS and not _runs_mindspeed(located, script_path, text):
        # flags or an entry script's name chose MindSpeed, but the entry the launch runs
        # imports none of it and none is in the tree: the code present decides (a fork that
        # defines the same flags, a Megatron-LM pretrain_vlm.py)
        found = Detection(get_dialect("megatron-lm"), [f"entry script {entry_script}"])
    tree = None
    if found.dialect.kind not in _PATCHING_KINDS:
        tree = find_tree_parser(entry_script, script_path, place)
        found = found if tree is None else _by_tree(found, tree, entry_script)
    found.extra = entry_flags(entry_script, script_path, place)
    found.parser = tree
    found.root = repository_root(script_path)
    found.unread = _unread(found, tree, entry_script, located)
    return found


def _runs_mindspeed(
    located: tuple[str, str] | None, script_path: str | None, text: str = ""
) -> bool:
    """Whether the code present confirms a MindSpeed dialect chosen from the launch (its
    flags, its entry script's name): the entry script is not in the tree (nothing there
    contradicts the launch), or it imports a MindSpeed package, or its repository holds
    one, or the script puts one on its path."""
    if located is None:
        return True
    if entry_imports(located[1]) & MINDSPEED_PACKAGES:
        return True
    roots = {located[0], repository_root(script_path) or located[0]}
    if any(os.path.isdir(os.path.join(r, p)) for r in roots for p in MINDSPEED_PACKAGES):
        return True
    return any(p in text.lower() for p in ("mindspeed", "modellink"))


def _unread(
    found: Detection,
    tree: TreeParser | None,
    entry_script: str | None,
    located: tuple[str, str] | None,
) -> str:
    """Why the argument parser the job runs was not read, or "" when it was (found in the
    tree) or when a table is it (a MindSpeed release, a modelled fork, a Megatron-LM entry
    script outside any repository: the release the table was read from)."""
    if tree is not None or found.dialect.kind in _PATCHING_KINDS:
        return ""
    if found.dialect.name in dialect_names():
        return ""  # a modelled fork: its table was read from its source at a recorded commit
    base = os.path.basename(entry_script or "")
    if located is None:
        if not entry_script or base in MEGATRON_ENTRIES | MINDSPEED_ENTRIES:
            return ""
        return f"the entry script {entry_script} was not found, and its own flags are not known"
    broken = unreadable_parser(located[1], located[0])
    if broken:
        return f"{broken} is beside {os.path.basename(located[1])} but is not valid Python"
    return (
        f"{os.path.basename(located[1])} is in the repository, but no Megatron argument "
        f"parser ({', '.join(PARSER_FILES)}) is beside it or on its PYTHONPATH: the package "
        "it imports (a submodule, an installed fork) was not read"
    )


# MindSpeed patches Megatron's parser at import: a vendored megatron/ in its tree is not the
# whole parser, so the flags decide there
_PATCHING_KINDS = frozenset({"mindspeed-llm", "mindspeed-core", "mindspeed-mm"})
# the share of a tree parser's flags a table must hold (and of its own the tree must hold)
# to be the same code: a fork's table extracted from that very file matches at 1.0, another
# project sharing Megatron's ancestry at most ~0.87 (Megatron-LLaMA against bigcode's)
_SAME_PARSER = 0.95
# the share of a tree parser's flags our Megatron-LM tables hold for the tree to be a
# Megatron-LM release (core_r0.5.0-core_v0.19.0 trees: 0.95-1.0; forks: 0.29-0.90)
_MEGATRON_RELEASE = 0.95


def _by_tree(found: Detection, tree: TreeParser, entry_script: str | None) -> Detection:
    where = f"{tree.rel} beside {entry_script}"
    same = _same_parser(tree.flags)
    if same is not None:
        if same == found.dialect.name:
            return found
        label = get_dialect(same).label
        return Detection(get_dialect(same), [f"{where} registers the flags of {label}"])
    mlm: set[str] = set()
    for v in megatron_versions():
        mlm |= table_flags(v)
    accepts = tree.flags
    if not found.dialect.modelled and not found.dialect.name.startswith(_GENERIC_FORK):
        # named already (a fork's layout): the tree's parser says what it accepts
        return Detection(found.dialect, [*found.evidence, f"its parser: {where}"], accepts=accepts)
    if len(tree.flags & mlm) >= _MEGATRON_RELEASE * len(tree.flags):
        # Megatron-LM itself at a release we have no table for: flags it lacks are typos or
        # the entry script's own (accepted through ``extra``), not a fork's
        if found.dialect.name.startswith(_GENERIC_FORK):
            return Detection(get_dialect("megatron-lm"), [f"{where} is Megatron-LM's parser"])
        return found
    if found.dialect.kind == "fork" and _jaccard(tree.flags, table_flags(found.dialect.name)) > 0.8:
        return found  # the same fork at another commit: its own flags chose it
    own = sorted(tree.flags - mlm)
    project = f"Megatron-derived trainer ({tree.rel})"
    return Detection(
        get_dialect(f"unmodelled:{project}"),
        [
            f"{where} is the repository's parser: {len(own)} of its {len(tree.flags)} flags "
            f"are in no Megatron-LM release cfglint models ({', '.join(own[:3])}, ...)"
        ],
        accepts=accepts,
    )


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _same_parser(flags: frozenset[str]) -> str | None:
    """The table extracted from the same parser as ``flags`` (a fork's or a Megatron-LM
    release's), if one is."""
    names = [
        *megatron_versions(),
        *(n for n in dialect_names() if dialect_summary(n)["kind"] == "fork"),
    ]
    scored = [(_jaccard(flags, table_flags(n)), n) for n in names]
    best = max(scored, default=(0.0, ""))
    return best[1] if best[0] >= _SAME_PARSER else None


def _detect_by_launch(
    flags: list[str],
    entry_script: str | None,
    script_path: str | None = None,
    text: str = "",
) -> Detection:
    """Which Megatron dialect a launch is written for, from its flags, its entry script, the
    repository around it and what the script names (a backend on PYTHONPATH); with the
    evidence, for the input classifier to report.

    ``flags`` are the command line's ``--flag`` words (values after ``=`` stripped);
    ``text`` the script's text. The detectors of ``_BY_LAUNCH`` are asked in turn, the
    most specific first; a launch none of them claims is Megatron-LM's."""
    launch = _Launch.of(flags, entry_script, script_path, text)
    for detector in _BY_LAUNCH:
        found = detector(launch)
        if found is not None:
            return found
    return _megatron_lm(launch)


class _Launch(Record):
    """What the detectors read of one launch; what several of them need is worked out
    once, when first asked (a repository's layout is a file-system look-up)."""

    # __dict__: the cached properties below
    __slots__ = ("__dict__", "base", "entry_script", "folders", "given", "script_path", "text")

    given: list[str]  # the command line's flags, each once, in order
    entry_script: str | None
    base: str | None  # the entry script's file name
    folders: list[str]  # where the repository's layout is looked for, nearest first
    script_path: str | None
    text: str

    def __init__(
        self,
        given: list[str],
        entry_script: str | None,
        base: str | None,
        folders: list[str],
        script_path: str | None,
        text: str,
    ) -> None:
        self.given = given
        self.entry_script = entry_script
        self.base = base
        self.folders = folders
        self.script_path = script_path
        self.text = text

    @classmethod
    def of(
        cls, flags: list[str], entry_script: str | None, script_path: str | None, text: str
    ) -> _Launch:
        folders = _repo_root_markers(script_path)
        if entry_script:
            # the entry script's own folder is its repository root when the path is relative
            # to it (`torchrun pretrain_llama.py` run from the root)
            cwd_root = os.path.dirname(os.path.abspath(entry_script))
            folders = [*folders, cwd_root] if cwd_root not in folders else folders
        return cls(
            given=list(launch_flags(flags)),
            entry_script=entry_script,
            base=os.path.basename(entry_script) if entry_script else None,
            folders=folders,
            script_path=script_path,
            text=text,
        )

    @cached_property
    def plain(self) -> frozenset[str]:
        """Megatron-LM's own flags: a flag among them names no fork."""
        return table_flags("megatron-lm")

    @cached_property
    def pai_backend(self) -> re.Match[str] | None:
        # the pattern only for a script that names the folder at all
        return _PAI_BACKEND.search(self.text) if "backends/megatron/" in self.text else None

    @cached_property
    def runs_pai(self) -> bool:
        """The script runs Pai-Megatron-Patch: a backend of it on PYTHONPATH, or its tree."""
        return self.pai_backend is not None or bool(
            _has(self.folders, "megatron_patch/arguments.py")
        )

    @cached_property
    def strangers(self) -> list[str]:
        return _strangers(self.given)

    @cached_property
    def mindspeed_flags(self) -> frozenset[str]:
        """The flags of the MindSpeed-LLM release we model (none when its table is absent)."""
        try:
            return table_flags("mindspeed-llm")
        except (OSError, ValueError):
            return frozenset()

    @cached_property
    def unplain(self) -> list[str]:
        """The launch's flags that Megatron-LM has not: only these are looked up in other
        tables (a plain Megatron-LM launch reads no MindSpeed table)."""
        return [f for f in self.given if f not in self.plain]

    @cached_property
    def mindspeed_own(self) -> list[str]:
        """The launch's flags that MindSpeed-LLM has and Megatron-LM has not."""
        return [f for f in self.unplain if f in self.mindspeed_flags]


def _fsdp2_trainer(launch: _Launch) -> Detection | None:
    """MindSpeed-MM's FSDP2 trainer takes one YAML that holds the model and the training
    settings (mindspeed_mm/fsdp/train/trainer.py): no Megatron argument applies."""
    entry = launch.entry_script
    if not entry or "mindspeed_mm/fsdp/" not in entry.replace("\\", "/"):
        return None
    return Detection(
        get_dialect("unmodelled:MindSpeed-MM FSDP2 trainer (settings in its YAML)"),
        [f"entry script {entry}"],
    )


def _modelled_dialect(launch: _Launch) -> Detection | None:
    """The dialect of data/dialects/ whose ``detect`` signs the launch shows most."""
    best = _best_dialect(launch)
    if best is None:
        return None
    name, evidence = best
    if launch.runs_pai and dialect_summary(name)["project"] != "Pai-Megatron-Patch":
        # Pai-Megatron-Patch's own examples reuse other forks' entry names
        # (examples/llama3/pretrain_llama.py) and flags (--attention-head-type): the backend
        # the script runs and the repository decide, not those
        return None
    flags_alone = len(evidence) == 1 and evidence[0].endswith(("flag)", "flags)"))
    if flags_alone and _fork_entry(launch.base) and len(launch.strangers) >= 2:
        # only flags chose it (--deepspeed comes with DeepSpeed to any trainer), and the
        # launch passes flags no release has: another fork's trainer
        return _unknown_fork(launch.base, launch.strangers)
    return Detection(get_dialect(name), evidence)


def _best_dialect(launch: _Launch) -> tuple[str, list[str]] | None:
    """The highest-scoring dialect (the first of equals) and its evidence; a score under 2
    is one weak sign (a layout file, a script path), not enough to name a dialect."""
    best: tuple[int, str, list[str]] | None = None
    for name in dialect_names():
        scored = _dialect_score(launch, name)
        if scored is not None and scored[0] >= 2 and (best is None or scored[0] > best[0]):
            best = (scored[0], name, scored[1])
    return None if best is None else (best[1], best[2])


def _dialect_score(launch: _Launch, name: str) -> tuple[int, list[str]] | None:
    """How strongly the launch shows dialect ``name``'s ``detect`` signs, with the evidence;
    None when a sign rules it out (a layout it never has, its project on another backend)."""
    d = dialect_summary(name)
    det = d.get("detect") or {}
    if any(_has(launch.folders, rel) for rel in det.get("not_layout") or ()):
        return None
    score, ev = _named_signs(launch, det, d["project"])
    marks = [m for m in det.get("text_markers") or () if m in launch.text]
    if marks:
        ev.append(f"the script names {marks[0]}")
        score += 2
    elif det.get("text_markers") and score:
        return None  # the same project on another backend: not this table
    path = launch.script_path
    sp = [p for p in det.get("script_paths") or () if path and p in path]
    if sp:
        ev.append(f"script under {sp[0]}")
        score += 1
    return score, ev


def _named_signs(launch: _Launch, det: dict[str, Any], project: str) -> tuple[int, list[str]]:
    """The signs a dialect's ``detect`` names that the launch shows: its entry script and
    its own flags (2 each), files of its layout in the repository (1 each)."""
    ev: list[str] = []
    score = 0
    if launch.base and launch.base in (det.get("entry_scripts") or ()):
        ev.append(f"entry script {launch.base}")
        score += 2
    own = [f for f in launch.given if f in (det.get("flags") or ()) and f not in launch.plain]
    if own:
        ev.append(f"{', '.join(own[:3])} ({project} flag{'s' if len(own) > 1 else ''})")
        score += 2 * len(own)
    for rel in det.get("layout") or ():
        hit = _has(launch.folders, rel)
        if hit:
            ev.append(f"{rel} in the repository ({hit})")
            score += 1
    return score, ev


def _pai_megatron_patch(launch: _Launch) -> Detection | None:
    """Pai-Megatron-Patch, named by the backend the script puts on its path."""
    if not launch.runs_pai:
        return None
    backend = launch.pai_backend
    where = f"backends/megatron/{backend.group(1)}" if backend else "an unnamed backend"
    return Detection(
        get_dialect(f"unmodelled:Pai-Megatron-Patch on {where}"),
        [f"the script runs Pai-Megatron-Patch on {where}"],
    )


def _unmodelled_fork(launch: _Launch) -> Detection | None:
    """A fork of ``UNMODELLED``, by its flags, its package in the repository or the entry
    script's path."""
    entry = launch.entry_script
    for project, layout, fork_flags in UNMODELLED:
        hits = [f for f in launch.given if f in fork_flags]
        lay = [rel for rel in layout if _has(launch.folders, rel)]
        if hits or lay or (entry and any(x in entry for x in layout)):
            ev = [
                *(f"{h} ({project} flag)" for h in hits),
                *(f"{r}/ in the repository" for r in lay),
            ]
            return Detection(get_dialect(f"unmodelled:{project}"), ev or [f"entry script {entry}"])
    return None


def _mindspeed_llm(launch: _Launch) -> Detection | None:
    """MindSpeed-LLM: its post-training entry script, or its own flags on one of its entry
    scripts (or none named); flags only an older release had name that release."""
    base, own = launch.base, launch.mindspeed_own
    unplain = launch.unplain
    older = (
        table_flags(OLDER_MINDSPEED_LLM)
        if unplain and OLDER_MINDSPEED_LLM in dialect_names()
        else frozenset()
    )
    gone = [f for f in unplain if f in older and f not in launch.mindspeed_flags]
    on_its_entry = (own or gone) and (base is None or base in MINDSPEED_ENTRIES)
    if base != "posttrain_gpt.py" and not on_its_entry:
        return None
    ev = [f"entry script {base}"] if base == "posttrain_gpt.py" else []
    ev += [f"{', '.join(own[:3])} (MindSpeed-LLM flags)"] if own else []
    if gone:
        # flags the release we model (v26.1.0) no longer has: an older release's script
        ev.append(f"{', '.join(gone[:3])} (MindSpeed-LLM 2.1.0 flags that v26.1.0 lacks)")
        return Detection(get_dialect(OLDER_MINDSPEED_LLM), ev)
    return Detection(get_dialect("mindspeed-llm"), ev)


def _unknown_trainer(launch: _Launch) -> Detection | None:
    """An entry script of no release we know, passed flags no table has: another fork's."""
    if _fork_entry(launch.base) and len(launch.strangers) >= 2:
        return _unknown_fork(launch.base, launch.strangers)
    return None


def _megatron_lm(launch: _Launch) -> Detection:
    """Megatron-LM, what no other detector claimed; MindSpeed-LLM's flags on an entry
    script of neither project leave a note (a fork of Megatron-LM may define them too)."""
    base, own = launch.base, launch.mindspeed_own
    note = ""
    if own:
        note = (
            f"read as Megatron-LM: {base} is not a MindSpeed-LLM entry script, although "
            f"{', '.join(own[:3])} {'is a flag' if len(own) == 1 else 'are flags'} of "
            "MindSpeed-LLM (a fork of Megatron-LM may define them too); give "
            "--megatron-version mindspeed-llm if it runs on MindSpeed-LLM"
        )
    ev = [f"entry script {base}"] if base else []
    return Detection(get_dialect("megatron-lm"), ev or ["no fork's flags or entry script"], note)


# the detectors of a launch's dialect, most specific first; Megatron-LM is what none claims
_BY_LAUNCH: tuple[Callable[[_Launch], Detection | None], ...] = (
    _fsdp2_trainer,
    _modelled_dialect,
    _pai_megatron_patch,
    _unmodelled_fork,
    _mindspeed_llm,
    _unknown_trainer,
)


def _fork_entry(base: str | None) -> bool:
    """An entry script that is none of Megatron-LM's or MindSpeed-LLM's own."""
    return bool(base and base.endswith(".py") and base not in MEGATRON_ENTRIES | MINDSPEED_ENTRIES)


_GENERIC_FORK = "unmodelled:Megatron fork ("


def _unknown_fork(base: str | None, strangers: list[str]) -> Detection:
    return Detection(
        get_dialect(f"{_GENERIC_FORK}{base})"),
        [f"entry script {base}", f"{', '.join(strangers[:3])} are flags of no known release"],
    )


@cache
def _known_flags() -> frozenset[str]:
    known = set(table_flags("megatron-lm"))
    with contextlib.suppress(OSError, ValueError):
        known |= table_flags("mindspeed-llm")
    for n in dialect_names():
        known |= table_flags(n)
    return frozenset(known)


def _strangers(given: list[str]) -> list[str]:
    """The flags no table we have defines."""
    known = _known_flags()
    return [f for f in given if f.startswith("--") and f not in known]


# The training entry scripts at MindSpeed-LLM's repository root (c77308a1); ModelLink, its
# earlier name, had pretrain_gpt.py and posttrain_gpt.py too.
MINDSPEED_ENTRIES = frozenset(
    {
        "pretrain_gpt.py",
        "posttrain_gpt.py",
        "pretrain_mamba.py",
        "pretrain_deepseek4.py",
        "rlhf_gpt.py",
        "train_fsdp2.py",
    }
)


# -- argument tables as data (normalize/megatron/args.py builds them into parsers) ---------


def _label(meta: dict[str, Any]) -> str:
    commit = str(meta.get("commit") or "")[:7]
    return f"{meta['project']} {meta['version']}" + (f" ({commit})" if commit else "")


def megatron_versions() -> list[str]:
    """Megatron-LM releases we have a table for, newest first (``core_v0.19.0``, ...)."""
    return list(_megatron_versions())


@cache
def _megatron_versions() -> tuple[str, ...]:
    """The package's own data folder, listed once per process as its tables are read once
    (:func:`_data`): a pair lint asked six times (~0.16 M instructions a listing)."""
    names = [p.stem.removeprefix("megatron_lm_") for p in DATA.glob("megatron_lm_*.yaml")]
    return tuple(sorted(names, key=_version_key, reverse=True))


def _version_key(name: str) -> tuple[int, ...]:
    digits = name.removeprefix("core_v").removeprefix("core_r")
    return tuple(int(x) if x.isdigit() else 0 for x in digits.split("."))


def known_versions() -> list[str]:
    """What ``--megatron-version`` accepts: Megatron-LM and MindSpeed-LLM releases, then
    the dialects of data/dialects/ (MindSpeed core branches, forks, MindSpeed-MM)."""
    return ["megatron-lm", "mindspeed-llm", *megatron_versions(), *dialect_names()]


@cache
def _data(stem: str) -> Any:
    """One of our argument tables as plain data, read once per run (several tables layer on
    the same Megatron-LM release; nothing here changes what it reads)."""
    return load_data(DATA / f"{stem}.yaml")


def table_entries(
    name: str, read: Callable[[Path], Any] | None = None
) -> tuple[str, list[tuple[dict[str, Any], str]]]:
    """The label of table ``name`` and its argument entries, each with the release it was
    read from, in the order the table registers them; ``read`` reads each table file
    (whole, unless told: :func:`table_flags` reads their flag tables)."""
    read = read or _whole
    versions = megatron_versions()
    if name in dialect_names():
        return _dialect_entries(name, read)
    if name not in known_versions():
        raise ValueError(f"unknown Megatron version {name!r}; known: {', '.join(known_versions())}")
    extra = read(DATA / "mindspeed_llm.yaml") if name == "mindspeed-llm" else None
    if extra is not None:
        base_name = (
            extra.get("base_megatron") if extra.get("base_megatron") in versions else versions[0]
        )
    else:
        base_name = _release(name)
    base = read(DATA / f"megatron_lm_{base_name}.yaml")
    label = _label(base)
    src = f"Megatron-LM {base['version']}"
    out = [(e, src) for e in base["args"]]
    if extra is not None:
        label = f"{_label(extra)} on {label}"
        src2 = f"MindSpeed-LLM {extra['version']}"
        # core-only flags are not registered on MindSpeed-LLM's own parser
        out += [(e, src2) for e in extra["args"] if e.get("scope") != "mindspeed_core_only"]
    return label, out


def _release(name: str) -> str:
    """The Megatron-LM release a Megatron-LM table name (``megatron-lm``: the newest, or a
    release such as ``core_v0.12.1``) reads."""
    return megatron_versions()[0] if name == "megatron-lm" else name


def table_index(name: str) -> tuple[str, str, ArgList] | None:
    """The label of table ``name``, the release its arguments are from and its argument
    list as the install ships it indexed (datayaml.indexed_table: each entry decoded when
    its argument is asked for), when the table is one file's list (a Megatron-LM release);
    else None, and :func:`table_entries` reads it."""
    if name in ("mindspeed-llm", *dialect_names()) or name not in known_versions():
        return None
    found = _indexed(DATA / f"megatron_lm_{_release(name)}.yaml")
    if found is None or "args" not in found[1]:
        return None
    meta, lists = found
    return _label(meta), f"Megatron-LM {meta['version']}", lists["args"]


@cache
def _indexed(path: Path) -> tuple[dict[str, Any], dict[str, ArgList]] | None:
    """A table file's argument index, shipped by the install (named by the table's
    checksum, so one built before the table changed is not found); None without one, or
    with one damaged after the build."""
    ready = datacache.DATA_DIR / datacache.READY / f"{INDEXED}{_raw_name(path)}.json"
    try:
        return read_indexed_table(ready.read_bytes()) if ready.is_file() else None
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


@cache
def _raw_name(path: Path) -> str:
    """The ready name of a table file's bytes (datayaml.ready_name), read once per run: a
    lint asks a table's flags, then its arguments."""
    return ready_name(path.read_bytes())


def _dialect_entries(
    name: str, read: Callable[[Path], Any]
) -> tuple[str, list[tuple[dict[str, Any], str]]]:
    """A dialect's table: the layers it names (our Megatron-LM / MindSpeed tables), its
    base's arguments, then its own, each labelled with the project and release it is from;
    a later definition of a flag replaces an earlier one (MindSpeed's parsers resolve
    conflicts so)."""
    d = read(DIALECT_DIR / f"{_by_name()[name]}.yaml")
    out: list[tuple[dict[str, Any], str]] = []
    for layer in d.get("layers") or ():
        stem = layer["table"]
        data = read(DATA / f"{stem}.yaml")
        src = f"{data['project']} {data['version']}"
        prefix = layer.get("from_prefix")
        for e in data["args"]:
            if prefix is None or str(e.get("from", "")).startswith(prefix):
                out.append((e, src))
    base = d.get("base") or {}
    for layer, key in ((base, "base_args"), (d.get("mid") or {}, "mid_args")):
        if layer:
            src = f"{layer['project']} {layer['ref']} ({str(layer['commit'])[:7]})"
            out += [(e, src) for e in d.get(key) or ()]
    own = f"{d['project']} {d['ref']} ({short_commit(d)})"
    out += [(e, own) for e in (*(d.get("args") or ()), *(d.get("extra_args") or ()))]
    label = own + (f" on {base['project']} {base['ref']}" if base else "")
    return label, out


@cache
def table_flags(name: str) -> frozenset[str]:
    """The flags of table ``name``, as its parser (normalize/megatron/args.py) accepts them,
    without building its ~800 specs: detecting a dialect asks this of tables a plain
    Megatron launch never uses (building one was a visible part of a lint's start-up, see
    bench/)."""
    indexed = table_index(name)
    if indexed is not None:
        # its flags: the same index then serves the table's arguments
        return frozenset(indexed[2].flags)
    out: set[str] = set()
    for e, _ in table_entries(name, _flags_of)[1]:
        out.update(accepted_flags(e))
    return frozenset(out)


def _whole(path: Path) -> Any:
    """A table file read whole, once per run (:func:`_data`, :func:`_meta`)."""
    return _meta(path.stem) if path.parent == DIALECT_DIR else _data(path.stem)


@cache
def _flags_of(path: Path) -> Any:
    """A table file's flag table (datayaml.flag_table): the one an install ships ready
    (named by the table's hash, so one built before the table changed is not found), else
    cut from the whole table. Detection asks several tables their flags, and a plain
    Megatron-LM launch uses none of them."""
    ready = datacache.DATA_DIR / datacache.READY / f"{FLAGS}{_raw_name(path)}.json"
    try:
        flags = json.loads(ready.read_bytes()) if ready.is_file() else None
    except (OSError, ValueError):
        flags = None  # unreadable or not JSON: the table says it
    if _flag_table_ok(flags):
        return flags
    return flag_table(_whole(path))


def _flag_table_ok(flags: object) -> bool:
    """A ready flag table whose argument entries each name their flags (one damaged after
    the install is not used)."""
    return (
        isinstance(flags, dict)
        and all(
            isinstance(v, list)
            and all(
                isinstance(e, dict)
                and isinstance(e.get("flags"), list)
                and all(isinstance(f, str) for f in e["flags"])
                for e in v
            )
            for k, v in flags.items()
            if k.endswith("args")
        )
        and any(k.endswith("args") for k in flags)
    )
