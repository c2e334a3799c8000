"""Load a Megatron argument set from any of the four input kinds.

Launch script (parsed, never run), plain args file, the arguments block of a training
log, or a ``--yaml-cfg`` file. All four become a :class:`MegatronInput`: the values the
user wrote (dest -> Value), the table that supplies defaults, and what the launcher
starts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from cfglint.model.errors import InputError
from cfglint.model.values import Loc, Value
from cfglint.normalize.launch import launcher_options, word_value
from cfglint.normalize.megatron.args import ArgTable, load_table, resolve, table_flags

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


@dataclass
class MegatronInput:
    path: str
    kind: str  # megatron-script | mindspeed-script | megatron-args | megatron-log | megatron-yaml
    table: ArgTable
    values: dict[str, Value]
    final: bool = False  # values are post-validation (a training log): no defaults needed
    env: dict[str, Value] = field(default_factory=dict)
    launcher: Value | None = None
    entry_script: Value | None = None
    launcher_args: dict[str, Value] = field(default_factory=dict)
    command_loc: Loc | None = None
    unknown: list[Value] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    text: str = ""

    def arg(self, dest: str, *older: str) -> Value:
        """What Megatron would hold in ``args.<dest>`` before post-processing. ``older``
        names the same argument's dest in other releases (e.g. ``norm_epsilon`` before it
        became ``layernorm_epsilon``)."""
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
        return Value.default(spec.default, knob=knob, source=spec.source)

    def given(self, dest: str) -> bool:
        return dest in self.values


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


def detect_version(tokens: list[Any], script: str | None) -> str:
    """MindSpeed-LLM if the command line uses flags only MindSpeed-LLM defines, or the
    entry script is MindSpeed-LLM's own; plain Megatron-LM otherwise."""
    return _detect(tokens, script)[0]


def _detect(tokens: list[Any], script: str | None) -> tuple[str, str]:
    """(version, a note on how it was decided when that is not certain). A launch of an
    entry script MindSpeed-LLM does not have (a fork's own ``pretrain_deepseek.py``) is
    not read as MindSpeed-LLM because of a few flag names: forks such as
    Pai-Megatron-Patch define some of the same flags (``--qk-nope-head-dim``) on top of
    Megatron-LM, and MindSpeed-LLM's defaults would then be the wrong release's."""
    base = os.path.basename(script) if script else None
    if base == "posttrain_gpt.py":
        return "mindspeed-llm", ""
    plain = load_table("megatron-lm").by_flag
    try:
        ms = table_flags("mindspeed-llm")
    except (OSError, ValueError):
        return "megatron-lm", ""
    own: list[str] = []
    for t in tokens:
        flag = (t.text or "").partition("=")[0]
        if flag.startswith("--") and flag in ms and flag not in plain and flag not in own:
            own.append(flag)
    if not own:
        return "megatron-lm", ""
    if base is not None and base.endswith(".py") and base not in MINDSPEED_ENTRIES:
        return "megatron-lm", (
            f"read as Megatron-LM: {base} is not a MindSpeed-LLM entry script, although "
            f"{', '.join(own[:3])} {'is a flag' if len(own) == 1 else 'are flags'} of "
            "MindSpeed-LLM (a fork of Megatron-LM may define them too); give "
            "--megatron-version mindspeed-llm if it runs on MindSpeed-LLM"
        )
    return "mindspeed-llm", ""


def load_megatron(path: str, version: str | None = None, form: str | None = None) -> MegatronInput:
    """Read the Megatron side in the ``form`` the input classifier found (``script``,
    ``args``, ``log`` or ``yaml``); a library call without one classifies it here, the same
    way."""
    from cfglint.load.detect import MEGATRON_FORMS, InputKind, classify_megatron

    if form is None:
        c = classify_megatron(path)
        if c.kind is InputKind.BROKEN:
            raise c.error()
        form = MEGATRON_FORMS.get(c.kind, "script")
    reader = {"yaml": _from_yaml_cfg, "log": _from_log, "args": _from_args_file}
    return reader.get(form, _from_script)(path, version)


def _from_script(path: str, version: str | None) -> MegatronInput:
    from cfglint.load.shell import main_invocation, parse_script

    sh = parse_script(path)
    inv = main_invocation(sh)
    env = {k: word_value(k, w) for k, w in sh.env.items()}
    if inv is None:
        raise InputError(path, "no training command found (torchrun, msrun, python ... *.py)")
    tokens = inv.args
    script = inv.script.text if inv.script is not None else None
    name, note = (version, "") if version else _detect(tokens, script)
    table = load_table(name)
    res = resolve(tokens, table)
    if note:
        res.warnings.insert(0, f"{inv.loc}: {note}")
    kind = "mindspeed-script" if name == "mindspeed-llm" else "megatron-script"
    m = MegatronInput(
        path=path,
        kind=kind,
        table=table,
        values=res.values,
        env=env,
        unknown=res.unknown,
        warnings=list(sh.warnings) + res.warnings,
        text=sh.text,
        command_loc=inv.loc,
    )
    m.launcher = Value.written(
        inv.launcher, knob="launcher", loc=inv.loc, conditional=inv.conditional
    )
    if inv.script is not None:
        m.entry_script = word_value("entry script", inv.script)
    m.launcher_args = launcher_options(inv.launcher_args)
    return m


def _from_args_file(path: str, version: str | None) -> MegatronInput:
    from cfglint.load.shell import parse_args_file

    words, text = parse_args_file(path)
    tokens = words
    name = version or detect_version(tokens, None)
    table = load_table(name)
    res = resolve(tokens, table)
    return MegatronInput(
        path=path,
        kind="megatron-args",
        table=table,
        values=res.values,
        unknown=res.unknown,
        warnings=res.warnings,
        text=text,
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
