"""Load a Megatron argument set from any of the four input kinds.

Launch script (parsed, never run), plain args file, the arguments block of a training
log, or a ``--yaml-cfg`` file. All four become a :class:`MegatronInput`: the values the
user wrote (dest -> Value), the table that supplies defaults, and what the launcher
starts.
"""

from __future__ import annotations

import os
from typing import Any

from cfglint.load.dialects import (
    Detection,
    Dialect,
    detect_dialect,
    get_dialect,
)
from cfglint.load.reads import Reads
from cfglint.load.tree_parser import (
    NOWHERE,
    Place,
    entry_flags,
    first_reads,
    launch_place,
    parser_specs,
    repository_flags,
)
from cfglint.model.errors import InputError
from cfglint.model.record import Record
from cfglint.model.values import Loc, Value
from cfglint.normalize.launch import env_hidden, launcher_options, word_value
from cfglint.normalize.megatron.args import ArgTable, load_table, resolve, with_fork_flags
from cfglint.normalize.megatron.mm_model import (
    MODEL_DESTS,
    ModelFile,
    find_model_file,
    model_value,
)

NPU_ENV = (
    "ASCEND_",
    "HCCL_",
    "PYTORCH_NPU_",
    "TASK_QUEUE_ENABLE",
    "CPU_AFFINITY_CONF",
    "NPU_ASD_ENABLE",
    "MS_",
    "GLOG_",
    "LCCL_",
)
GPU_ENV = ("NCCL_", "CUDA_VISIBLE_DEVICES", "CUBLAS_", "NVTE_")


class MegatronInput(Record):
    __slots__ = (
        "command_loc",
        "dialect",
        "entry_script",
        "env",
        "env_hidden",
        "evidence",
        "final",
        "fork_flags",
        "fork_note",
        "kind",
        "launcher",
        "launcher_args",
        "model_file",
        "opaque",
        "path",
        "release_gaps",
        "release_span",
        "table",
        "text",
        "unknown",
        "unread",
        "values",
        "warnings",
    )

    path: str
    kind: str  # megatron-script | mindspeed-script | megatron-args | megatron-log | megatron-yaml
    table: ArgTable
    values: dict[str, Value]
    final: bool  # values are post-validation (a training log): no defaults needed
    env: dict[str, Value]
    launcher: Value | None
    entry_script: Value | None
    launcher_args: dict[str, Value]
    command_loc: Loc | None
    unknown: list[Value]
    warnings: list[str]
    text: str
    dialect: Dialect | None
    evidence: list[str]
    model_file: ModelFile | None  # MindSpeed-MM's --mm-model JSON
    # unreadable words of the command line that may add any flag (args.Resolved.opaque)
    opaque: list[Value]
    env_hidden: str  # why an unexported variable may be exported (normalize.launch)
    # flags the job's own parser defines, that the launch sets and cfglint does not model:
    # they may change any setting, so what the launch leaves to a default is not decided
    fork_flags: list[Value]
    fork_note: str  # where the job's code defines and reads them (for the reason)
    # why the parser the job runs was not read (dialects.Detection.unread): its defaults
    # are then not known, whatever the table says
    unread: str
    # dest -> why its default is not decided: the script belongs to releases whose parser
    # gives another default than the table's (normalize/megatron/release_note.py)
    release_gaps: dict[str, str]
    # the releases the script belongs to where they are not the table's alone: the defaults
    # they share with the table are labelled with them too ("MindSpeed-LLM v2.2.0")
    release_span: str

    def __init__(
        self,
        path: str,
        kind: str,
        table: ArgTable,
        values: dict[str, Value],
        final: bool = False,
        env: dict[str, Value] | None = None,
        launcher: Value | None = None,
        entry_script: Value | None = None,
        launcher_args: dict[str, Value] | None = None,
        command_loc: Loc | None = None,
        unknown: list[Value] | None = None,
        warnings: list[str] | None = None,
        text: str = "",
        dialect: Dialect | None = None,
        evidence: list[str] | None = None,
        model_file: ModelFile | None = None,
        opaque: list[Value] | None = None,
        env_hidden: str = "",
        fork_flags: list[Value] | None = None,
        fork_note: str = "",
        unread: str = "",
        release_gaps: dict[str, str] | None = None,
        release_span: str = "",
    ) -> None:
        self.path = path
        self.kind = kind
        self.table = table
        self.values = values
        self.final = final
        self.env = {} if env is None else env
        self.launcher = launcher
        self.entry_script = entry_script
        self.launcher_args = {} if launcher_args is None else launcher_args
        self.command_loc = command_loc
        self.unknown = [] if unknown is None else unknown
        self.warnings = [] if warnings is None else warnings
        self.text = text
        self.dialect = dialect
        self.evidence = [] if evidence is None else evidence
        self.model_file = model_file
        self.opaque = [] if opaque is None else opaque
        self.env_hidden = env_hidden
        self.fork_flags = [] if fork_flags is None else fork_flags
        self.fork_note = fork_note
        self.unread = unread
        self.release_gaps = {} if release_gaps is None else release_gaps
        self.release_span = release_span

    def arg(self, dest: str, *older: str) -> Value:
        """What Megatron would hold in ``args.<dest>`` before post-processing. ``older``
        names the same argument's dest in other releases (e.g. ``norm_epsilon`` before it
        became ``layernorm_epsilon``). A dialect's own spelling of the setting (``derive``)
        comes first; an unmodelled fork's defaults are not decided."""
        d = self.dialect
        if self.model_file is not None and dest in MODEL_DESTS:
            return self._model_setting(dest)
        if d is not None and d.derive:
            got = self._derived(dest)
            if got is not None and (got.origin.value != "default" or not self.opaque):
                return got
        if self.opaque and dest not in self.values and not any(o in self.values for o in older):
            return self._hidden(dest)
        if d is not None and not d.modelled and dest not in self.values:
            return self.undecided(dest)
        if dest not in self.values and not any(o in self.values for o in older):
            if self.unread:
                return Value.unknown(
                    self._plain(dest).knob,
                    f"not set in {os.path.basename(self.path)}, and the parser the job runs "
                    f"was not read ({self.unread}): its default is not known, not decided",
                )
            if self.fork_flags:
                return self._forked(dest)
        return self._plain(dest, *older)

    def _forked(self, dest: str) -> Value:
        """A setting the launch leaves to a default while it sets flags of its own parser
        that cfglint does not model: what they change is not known, so neither is this."""
        plain = self._plain(dest)
        return Value.unknown(
            plain.knob,
            f"not set in {os.path.basename(self.path)}; it sets {self.fork_note}, which "
            "cfglint does not model and which may change it (which settings a fork's flag "
            "changes cannot be told from its parser): not decided",
        )

    @property
    def modelled(self) -> bool:
        return self.dialect is None or self.dialect.modelled

    def undecided(self, knob: str) -> Value:
        """What an unmodelled fork does where no flag says: its defaults and the behaviour
        they select (GeLU without --swiglu, pretraining without --stage) are not known."""
        project = self.dialect.project if self.dialect is not None else "the fork"
        return Value.unknown(
            knob,
            f"not set in {os.path.basename(self.path)}, and the default of {project} "
            "is not known (a Megatron fork cfglint does not model): not decided",
        )

    def _hidden(self, dest: str) -> Value:
        """A flag the script does not write while an unreadable word may: not decided."""
        spec = self.table.by_dest.get(dest)
        flag = spec.flags[0] if spec is not None and spec.flags else dest
        first = self.opaque[0]
        return Value.unknown(
            flag,
            f"not written in {os.path.basename(self.path)}, but the arguments at {first.loc} "
            f"cannot be read ({first.detail}) and may set it",
        )

    def _model_setting(self, dest: str) -> Value:
        """A MindSpeed-MM model setting: from the model JSON; what it leaves out is not
        decided (never Megatron's default)."""
        mf = self.model_file
        assert mf is not None
        if mf.path is not None and not mf.why:
            got = model_value(mf, dest)
            if got is not None:
                return got
        if dest in self.values:
            return self.values[dest]
        why = mf.why or f"{os.path.basename(mf.path or '')} does not set it in text_decoder"
        return Value.unknown(
            dest, f"MindSpeed-MM builds the model from its --mm-model file: {why}; not decided"
        )

    def _derived(self, dest: str) -> Value | None:
        """The dialect's post-processing for ``dest`` (data/dialects/*.yaml ``derive``)."""
        assert self.dialect is not None
        for rule in self.dialect.derive:
            if rule["dest"] != dest:
                continue
            when = rule.get("when") or {}
            if any(_norm(self._plain(k).value) != _norm(v) for k, v in when.items()):
                continue
            if "const" in rule:
                # the fork has no switch: its code does one thing (no GQA, no QK norm)
                return Value.default(
                    rule["const"],
                    knob=dest,
                    source=f"{self.dialect.project}'s code ({rule['cite']}), no flag",
                )
            src = self._plain(rule["from"])
            if not src.known:
                return Value.derived(None, dest, "", [src])
            how = f"{self.dialect.project}: {rule['cite']}"
            if rule.get("copy"):
                out = src.value
            elif rule.get("nonnull"):
                out = src.value is not None
            else:
                table = {_norm(k): v for k, v in (rule.get("values") or {}).items()}
                if _norm(src.value) not in table:
                    if rule.get("otherwise") == "keep":
                        return None
                    continue
                out = table[_norm(src.value)]
            if src.origin.value == "default":
                return Value.default(
                    out, knob=src.knob, source=f"{src.detail.removeprefix('default of ')} ({how})"
                )
            return Value.derived(out, dest, f"from {src.knob} ({how})", [src])
        return None

    def _plain(self, dest: str, *older: str) -> Value:
        for alt in older:
            if alt in self.values or (dest not in self.table.by_dest and alt in self.table.by_dest):
                dest = alt
                break
        v = self.values.get(dest)
        if v is not None:
            return v
        spec = self.table.by_dest.get(dest)
        if spec is None:
            return Value.unknown(dest, f"{self.table.label} has no argument {dest}")
        knob = spec.flags[0]
        if spec.action == "store_false":
            # the default of a negative flag names the setting, not the flag that turns it off
            knob = dest
        if self.final:
            return Value.default(
                spec.default, knob=knob, source=f"{spec.source} (not printed in the log)"
            )
        if dest in self.release_gaps:
            return Value.unknown(knob, self.release_gaps[dest])
        if self.release_span:
            source = f"{spec.source}, the same in {self.release_span}"
            return Value.default(spec.default, knob=knob, source=source)
        return Value.default(spec.default, knob=knob, source=spec.source)

    def given(self, dest: str) -> bool:
        return dest in self.values


def _norm(x: Any) -> str:
    """A value as a derive rule's key spells it (YAML keys are strings)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    return "none" if x is None else str(x).lower()


def typed(values: dict[str, Value], table: ArgTable) -> tuple[dict[str, Value], list[str]]:
    """Values read from a log or a YAML file checked against the argument's type, as argparse
    would have done on a command line: a wrong type becomes unknown, with a warning."""
    out: dict[str, Value] = {}
    warnings: list[str] = []
    for dest, v in values.items():
        spec = table.by_dest.get(dest)
        x = v.value
        if spec is None or x is None or not v.known:
            out[dest] = v
            continue
        want = spec.type
        ok = True
        if spec.nargs not in (None, "?"):
            ok = isinstance(x, list)
        elif want == "int":
            ok = isinstance(x, int) and not isinstance(x, bool)
        elif want == "float":
            ok = isinstance(x, (int, float)) and not isinstance(x, bool)
            if ok:
                v = v.model_copy(update={"value": float(x)})
        elif want == "bool":
            ok = isinstance(x, bool)
        if ok:
            out[dest] = v
        else:
            warnings.append(f"{v.loc}: {dest} {x!r} is not a valid {want}")
            out[dest] = Value.unknown(v.knob, f"{x!r} is not a valid {want}", loc=v.loc)
    return out, warnings


def _detect(
    tokens: list[Any],
    script: str | None,
    path: str | None = None,
    text: str = "",
    place: Place = NOWHERE,
    memo: dict[Any, Detection] | None = None,
) -> Detection:
    flags = [(t.text or "").partition("=")[0] for t in tokens]
    return detect_dialect(flags, script, path, text, place, memo)


_KIND = {
    "mindspeed-llm": "mindspeed-script",
    "mindspeed-core": "mindspeed-core-script",
    "mindspeed-mm": "mindspeed-mm-script",
}


def load_megatron(
    path: str, version: str | None = None, form: str | None = None, reads: Reads | None = None
) -> MegatronInput:
    """Read the Megatron side in the ``form`` the input classifier found (``script``,
    ``args``, ``log`` or ``yaml``); a library call without one classifies it here, the same
    way, and reads the script it parsed for that. ``reads``: the run's planning may hand
    over its parse (load/reads.py)."""
    from cfglint.load.detect import MEGATRON_FORMS, InputKind, classify_megatron

    if form is None:
        reads = reads if reads is not None else Reads()
        c = classify_megatron(path, reads)
        if c.kind is InputKind.BROKEN:
            raise c.error()
        form = MEGATRON_FORMS.get(c.kind, "script")
    if form in ("yaml", "log", "args"):
        reader = {"yaml": _from_yaml_cfg, "log": _from_log, "args": _from_args_file}[form]
        return reader(path, version)
    return _from_script(path, version, reads)


def _from_script(path: str, version: str | None, reads: Reads | None = None) -> MegatronInput:
    from cfglint.load.detect import entry_path
    from cfglint.load.reads import parse_script_once
    from cfglint.load.shell import main_invocation

    sh = parse_script_once(path, reads)
    inv = main_invocation(sh)
    env = {k: word_value(k, w) for k, w in sh.env.items()}
    if inv is None:
        raise InputError(path, "no training command found (torchrun, msrun, python ... *.py)")
    tokens = inv.args
    script = entry_path(inv.script)
    place = launch_place(inv.cwd, {**sh.variables, **sh.env})
    if version:
        det = Detection(
            get_dialect(version), ["--megatron-version"], extra=entry_flags(script, path, place)
        )
    else:
        det = _detect(tokens, script, path, sh.text, place, sh.detections)
    base = load_table(det.dialect.table)
    table = _forked_table(base, tokens, det)
    res = resolve(tokens, table)
    if det.note:
        res.warnings.insert(0, f"{inv.loc}: {det.note}")
    if not det.dialect.modelled:
        res.warnings.insert(
            0,
            f"{inv.loc}: {det.dialect.label} ({'; '.join(det.evidence)}): its flags are read "
            "with the Megatron-LM table and settings it does not set are not decided",
        )
    res.unknown = _refused(res.unknown, det, res.warnings)
    kind = _KIND.get(det.dialect.kind, "megatron-script")
    forked = [
        v
        for dest, v in res.values.items()
        if dest not in base.by_dest and table.by_dest[dest].source.startswith(_FORK_SOURCE)
    ]
    m = MegatronInput(
        path=path,
        kind=kind,
        table=table,
        values=res.values,
        env=env,
        unknown=res.unknown,
        opaque=res.opaque,
        env_hidden=env_hidden(sh.unfollowed),
        warnings=list(sh.warnings) + res.warnings,
        text=sh.text,
        command_loc=inv.loc,
        dialect=det.dialect,
        evidence=det.evidence,
        fork_flags=[v for v in forked if det.dialect.modelled],
    )
    m.fork_note = _fork_note(m.fork_flags, table, det)
    m.unread = det.unread if det.dialect.modelled else ""
    m.launcher = Value.written(
        inv.launcher, knob="launcher", loc=inv.loc, conditional=inv.conditional
    )
    if inv.script is not None:
        m.entry_script = word_value("entry script", inv.script)
    m.launcher_args = launcher_options(inv.launcher_args)
    if det.dialect.model_json:
        m.model_file = _mm_model(m, det.dialect.model_json, path)
    return m


# how a flag read from the launch's own repository names its source
_FORK_SOURCE = "the repository's parser"


def _forked_table(table: ArgTable, tokens: list[Any], det: Detection) -> ArgTable:
    """``table`` with what the job's own code registers: each flag the launch passes that
    the table lacks, as the repository defines it (its type, choices, literal default), and
    each flag of the parser the job runs that it types otherwise than the table (read with
    the fork's type). ``table`` itself when the repository adds nothing."""
    own = _own_specs(det)
    given = {(t.text or "").partition("=")[0] for t in tokens}
    missing = [f for f in given if f.startswith("-") and f not in table.by_flag]
    missing = [f for f in missing if f not in det.extra]
    repo = repository_flags(det.root) if det.root is not None and missing else {}
    defs = [own.get(f) or repo[f] for f in sorted(missing) if f in own or f in repo]
    defs += _job_parser_changes(own, table, given)
    if not defs:
        return table
    root = det.root or os.path.dirname(det.parser.path if det.parser else "")
    return with_fork_flags(
        table, [(d, f"{_FORK_SOURCE} {_shown(d.path, root)}:{d.line}") for d in defs]
    )


def _own_specs(det: Detection) -> dict[str, Any]:
    """Each flag of the parser the job runs, by flag (the first definition wins)."""
    own: dict[str, Any] = {}
    for d in parser_specs(det.parser.path) if det.parser is not None else ():
        for f in d.flags:
            own.setdefault(f, d)
    return own


def _job_parser_changes(own: dict[str, Any], table: ArgTable, given: set[str]) -> list[Any]:
    """The table's flags that the job's parser types otherwise (where the launch passes
    them) or gives another literal default."""
    out: list[Any] = []
    for f, d in own.items():
        spec = table.by_flag.get(f)
        if spec is None or spec.dest != d.dest:
            continue
        if f in given and spec.type != d.type and d.typed:
            out.append(d)
        elif _other_default(d, spec):
            # the job's parser was read: its literal default is the run's, not the table's
            out.append(
                d.replace(
                    flags=spec.flags,
                    type=spec.type,
                    action=spec.action,
                    nargs=spec.nargs,
                    choices=spec.choices,
                    const=spec.const,
                )
            )
    return out


def _other_default(d: Any, spec: Any) -> bool:
    """The job's parser gives a flag a literal default other than the table's (same action;
    ``None`` is no evidence: upstream fills many such defaults from its config dataclasses)."""
    if not d.literal or d.default is None or d.action != spec.action:
        return False
    a, b = d.default, spec.default
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) != float(b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(a) != list(b)
    return bool(a != b)


def _fork_note(flags: list[Value], table: ArgTable, det: Detection) -> str:
    """The fork flags a launch sets, where the job's code defines each and where it first
    reads it (``args.<dest>``): the code an engineer reads to tell what they change."""
    if not flags:
        return ""
    specs = [(v, table.by_flag.get(v.knob)) for v in flags[:3]]
    dests = [sp.dest for _, sp in specs if sp is not None]
    reads = first_reads(det.root, dests) if det.root else {}
    parts = []
    for v, spec in specs:
        where = spec.source if spec is not None else "the job's own parser"
        read = reads.get(spec.dest) if spec is not None else None
        parts.append(f"{v.knob} ({where}{'; read at ' + read if read else ''})")
    more = f" and {len(flags) - 3} more" if len(flags) > 3 else ""
    return ", ".join(parts) + more


def _shown(path: str, root: str) -> str:
    rel = os.path.relpath(path, root) if root else path
    return path if rel.startswith("..") else rel


def _refused(unknown: list[Value], det: Detection, warnings: list[str]) -> list[Value]:
    """The flags the run's argparse refuses: in neither the table nor what the job's own
    code registers (the entry script's ``det.extra``, its repository's parser). Only when
    the parser the job runs was read (``det.unread`` empty) is a flag it lacks refused;
    otherwise it may be that parser's own: not decided, said once with the reason."""
    unknown = [v for v in unknown if v.knob not in det.extra]
    if det.accepts is not None:
        unknown = [v for v in unknown if v.knob not in det.accepts]
    why = det.unread
    if not why and not det.dialect.modelled and det.accepts is None:
        why = "its argument parser was not found beside the entry script"
    if unknown and why:
        names = ", ".join(dict.fromkeys(v.knob for v in unknown))
        warnings.append(
            f"{det.dialect.label}: whether the parser the job runs accepts {names} is not "
            f"decided ({why})"
        )
        return []
    return unknown


def _mm_model(m: MegatronInput, dest: str, path: str) -> ModelFile:
    named = m.values.get(dest)
    if named is None or not named.known or not named.value:
        return ModelFile(None, why=f"the launch names no model file (--{dest.replace('_', '-')})")
    return find_model_file(str(named.value), path)


def _from_args_file(path: str, version: str | None) -> MegatronInput:
    from cfglint.load.shell import parse_args_file

    words, text = parse_args_file(path)
    tokens = words
    det = (
        Detection(get_dialect(version), ["--megatron-version"])
        if version
        else _detect(tokens, None)
    )
    table = load_table(det.dialect.table)
    res = resolve(tokens, table)
    return MegatronInput(
        path=path,
        kind="megatron-args",
        table=table,
        values=res.values,
        unknown=res.unknown,
        opaque=res.opaque,
        warnings=res.warnings,
        text=text,
        dialect=det.dialect,
        evidence=det.evidence,
    )


def _from_log(path: str, version: str | None) -> MegatronInput:
    from cfglint.load.megatron_log import load_log

    block = load_log(path)
    table = load_table(version or "megatron-lm")
    known = set(table.by_dest)
    unknown = [v for k, v in block.values.items() if k not in known]
    values, warnings = typed(block.values, table)
    return MegatronInput(
        path=path,
        kind="megatron-log",
        table=table,
        values=values,
        final=True,
        unknown=[],
        warnings=warnings
        + [f"{v.loc}: {v.knob} is not an argument of {table.label}" for v in unknown][:20],
    )


def _from_yaml_cfg(path: str, version: str | None) -> MegatronInput:
    from cfglint.load.megatron_yamlcfg import load_yaml_cfg

    raw, text = load_yaml_cfg(path)
    table = load_table(version or "megatron-lm")
    values, warnings = typed(raw, table)
    return MegatronInput(
        path=path, kind="megatron-yaml", table=table, values=values, text=text, warnings=warnings
    )
