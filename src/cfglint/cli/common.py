"""What the subcommands share: settings, the paths of one pair, plain-text styling."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from cfglint.model.config import Config
from cfglint.model.errors import InputError


def settings(args: argparse.Namespace) -> dict[str, Any]:
    from cfglint.cli.settings import find_pyproject, load_settings

    path = getattr(args, "config", None)
    if path:
        from pathlib import Path

        if not os.path.lexists(path):
            raise InputError(path, "no such pyproject.toml")
        return load_settings(Path(path))
    return load_settings(find_pyproject())


def load_pair(args: argparse.Namespace) -> tuple[Config | None, Config | None]:
    """Both sides of the one pair a ``show`` / ``lr`` call names, classified as the lint
    classifies its inputs."""
    from cfglint.check.pipeline import load_megatron_side, load_mindformers_side
    from cfglint.load.classify import one_pair

    job = one_pair(list(args.files), args.megatron, args.launch, args.command)
    mf_version = getattr(args, "mindformers_version", None)
    mf = load_mindformers_side(job.mindformers, job.launch, mf_version) if job.mindformers else None
    mg = (
        load_megatron_side(job.megatron, args.megatron_version, job.megatron_form)
        if job.megatron
        else None
    )
    return mf, mg


SEVERITY_ANSI = {"error": "1;31", "warning": "1;33", "note": "1;36"}


def painter(args: argparse.Namespace) -> Callable[[str, str], str]:
    """ANSI styling for the small plain-text commands, under the same switches as lint."""
    from cfglint.cli.terminal import use_color

    if not use_color(args):
        return lambda text, code: text
    return lambda text, code: f"\x1b[{code}m{text}\x1b[0m"
