"""Launch scripts of both sides: what the launcher starts, its options, its environment.

A Megatron launch script is read by :mod:`cfglint.normalize.megatron.input` with the helpers
here; the MindFormers side's ``msrun`` script (``--launch``) is attached to its config by
:func:`attach_mindformers_launch`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cfglint.model.config import Config
from cfglint.model.values import Value

if TYPE_CHECKING:
    from cfglint.load.reads import Reads


def fixed_int(v: Value, knob: str) -> Value:
    """A launcher option as an integer; unknown (with the reason) when it is not a fixed number."""
    if not v.known:
        return v
    try:
        return v.model_copy(update={"value": int(str(v.value)), "knob": knob})
    except ValueError:
        return Value.unknown(
            knob, f"{v.value!r} is not a fixed number (elastic range?)", loc=v.loc, via=v.via
        )


def word_value(knob: str, w: Any) -> Value:
    """One shell word as a value: its text where the parser could decide it, else unknown
    with the parser's reason."""
    if w.text is None:
        return Value.unknown(knob, w.unknown or "not known statically", loc=w.loc, via=tuple(w.via))
    return Value.written(w.text, knob=knob, loc=w.loc, via=tuple(w.via), conditional=w.conditional)


# Key of launcher_options' result for launcher words that are not known statically.
UNKNOWN_OPTIONS = "?"


def launcher_options(words: list[Any]) -> dict[str, Value]:
    """``--nproc_per_node 8`` / ``--nproc-per-node=8`` / ``--worker_num=8`` -> values."""
    out: dict[str, Value] = {}
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        if w.text is None:
            # `torchrun $DISTRIBUTED_ARGS` with DISTRIBUTED_ARGS unknown: any option may be
            # in it, so no launcher default can be assumed (see UNKNOWN_OPTIONS)
            out.setdefault(
                UNKNOWN_OPTIONS,
                Value.unknown("launcher options", w.unknown or "not known statically", loc=w.loc),
            )
            continue
        if not w.text.startswith("-"):
            continue
        name, eq, val = w.text.lstrip("-").partition("=")
        name = name.replace("-", "_")
        if eq:
            out[name] = Value.written(
                val, knob=f"--{name}", loc=w.loc, via=tuple(w.via), conditional=w.conditional
            )
        elif i < len(words) and (words[i].text is None or not words[i].text.startswith("-")):
            out[name] = word_value(f"--{name}", words[i])
            i += 1
        else:
            out[name] = Value.written("true", knob=f"--{name}", loc=w.loc)
    return out


def env_hidden(unfollowed: list[str]) -> str:
    """Why an unexported variable may still be exported: a sourced file or eval the script
    runs that was not read can export anything."""
    return f"{unfollowed[0]} was not followed and may export it" if unfollowed else ""


def attach_mindformers_launch(cfg: Config, launch: str, reads: Reads | None = None) -> None:
    """The MindFormers side's msrun script: its environment and device count (``reads``:
    the run's planning may hand over its parse, load/reads.py)."""
    from cfglint.load.reads import parse_script_once
    from cfglint.load.shell import main_invocation

    sh = parse_script_once(launch, reads)
    cfg.env = {k: word_value(k, w) for k, w in sh.env.items()}
    cfg.env_hidden = env_hidden(sh.unfollowed)
    cfg.files.append(launch)
    cfg.launch_script = launch
    inv = main_invocation(sh)
    if inv is None:
        cfg.warnings.append(f"{launch}: no msrun / python command found")
        return
    cfg.launch.launcher = Value.written(inv.launcher, knob="launcher", loc=inv.loc)
    if inv.script is not None:
        cfg.launch.entry_script = word_value("entry script", inv.script)
    opts = launcher_options(inv.launcher_args)
    if "worker_num" in opts:
        cfg.launch.nproc_per_node = fixed_int(opts["worker_num"], "--worker_num")
