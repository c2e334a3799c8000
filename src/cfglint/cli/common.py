"""What the subcommands share: settings, the paths of one pair, plain-text styling."""

from __future__ import annotations

import os
from typing import Any

from cfglint.model.config import Config
from cfglint.model.errors import InputError
from cfglint.model.findings import InputProblem


def settings(args: Any) -> dict[str, Any]:
    from cfglint.cli.settings import find_pyproject, load_settings

    path = getattr(args, "config", None)
    if path:
        from pathlib import Path

        if not os.path.lexists(path):
            raise InputError(path, "no such pyproject.toml")
        return load_settings(Path(path))
    return load_settings(find_pyproject())


def check_megatron_side(path: str) -> None:
    """--megatron names the Megatron side: a converter or an FSDP2 script is refused with
    what it is, never read with Megatron's defaults."""
    from cfglint.load.detect import Kind, detect_script

    if not path.lower().endswith((".sh", ".bash")) or not os.path.isfile(path):
        return
    d = detect_script(path)
    if d.kind is Kind.NOT_TRAINING:
        raise InputError(path, f"not a training launch ({d.why}); nothing to compare")
    if d.kind is Kind.FSDP2_LAUNCH:
        raise InputError(path, f"MindSpeed-LLM FSDP2 launch: {d.why}")
    if d.kind is Kind.MINDFORMERS_LAUNCH:
        raise InputError(
            path, f"a MindFormers launch ({d.why}); give it with --launch, beside its config"
        )


def load_pair(args: Any) -> tuple[Config | None, Config | None]:
    from cfglint.check.pipeline import load_megatron_side, load_mindformers_side
    from cfglint.load.detect import Kind, detect

    configs, scripts, launch = [], [], args.launch
    for f in args.files:
        d = detect(f) if os.path.exists(f) else None
        if d is None or (
            d.kind in (Kind.MINDFORMERS_CONFIG, Kind.BROKEN) and not f.endswith((".sh", ".bash"))
        ):
            configs.append(f)
        elif d.kind is Kind.MINDFORMERS_LAUNCH:
            launch = launch or f
        elif d.kind is Kind.MEGATRON_LAUNCH or d.kind is Kind.BROKEN:
            scripts.append(f)
        else:
            raise InputError(f, f"{d.kind.value} ({d.why}): nothing to show")
    megatron = args.megatron or (scripts[0] if scripts else None)
    if megatron is not None:
        check_megatron_side(megatron)
    if len(configs) > 1:
        raise InputError(None, f"{args.command} takes one MindFormers YAML")
    mf_version = getattr(args, "mindformers_version", None)
    mf = load_mindformers_side(configs[0], launch, mf_version) if configs else None
    mg = load_megatron_side(megatron, args.megatron_version) if megatron else None
    if mf is None and mg is None:
        raise InputError(
            None, f"nothing to {args.command}: give a MindFormers YAML and/or --megatron FILE"
        )
    return mf, mg


SEVERITY_ANSI = {"error": "1;31", "warning": "1;33", "note": "1;36"}


def painter(args: Any) -> Any:
    """ANSI styling for the small plain-text commands, under the same switches as lint."""
    from cfglint.cli.terminal import use_color

    if not use_color(args):
        return lambda text, code: text
    return lambda text, code: f"\x1b[{code}m{text}\x1b[0m"


def problem_line(e: InputProblem) -> str:
    return f"{e.path}:{e.line}: {e.message}" if e.line else f"{e.path}: {e.message}"
