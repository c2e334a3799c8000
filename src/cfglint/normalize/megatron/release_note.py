"""Which MindSpeed-LLM release a launch script belongs to (normalize/release_fit.py), and
which of cfglint's defaults hold there. cfglint reads MindSpeed-LLM's defaults from one
release's argument table (v26.1.0); a script that releases other than that one hold gets
that table's defaults only where every one of those releases' parsers (Megatron-LM at the
pinned core release, MindSpeed at its paired tag, MindSpeed-LLM) gives the same literal
default (data/release_files/mindspeed_llm.json ``args_differ``); the others are not decided."""

from __future__ import annotations

import os

from cfglint.model.values import fmt
from cfglint.normalize.megatron.input import MegatronInput
from cfglint.normalize.release_fit import Fit, fit_file, project_data


def script_fit(m: MegatronInput) -> Fit | None:
    """The releases that hold a MindSpeed-LLM script read with MindSpeed-LLM's table."""
    if m.kind != "mindspeed-script" or (
        m.dialect is not None and m.dialect.table != "mindspeed-llm"
    ):
        return None
    return fit_file("mindspeed_llm", m.path, m.text)


def release_gaps(m: MegatronInput, fit: Fit) -> dict[str, str]:
    """dest -> why its default is not decided, for a script of releases other than the
    table's alone."""
    data = project_data("mindspeed_llm")
    table = data["table_release"]
    # a file only development heads hold runs with a head's parser (read like a release's)
    others = [r for r in (fit.releases or fit.heads) if r != table]
    if not others or fit.by_name:
        return {}
    differ: dict[str, list[str]] = {}
    for rel in [*others, table]:
        # the table release's own entries: what reading its parser gave where that does not
        # confirm the table's default (the comparison has no common ground there)
        said = "read as" if rel == table else "in"
        for dest, value in data["args_differ"].get(rel, {}).items():
            differ.setdefault(dest, []).append(f"{_shown(value)} {said} {rel}")
    name = os.path.basename(m.path)
    return {
        dest: (
            f"not set in {name}, which is {fit.why}; its default there is not the one of "
            f"cfglint's table ({table}): {'; '.join(seen)} "
            "(data/release_files/mindspeed_llm.json): not decided"
        )
        for dest, seen in differ.items()
    }


def _shown(value: object) -> str:
    """A recorded default in words (the markers are already words)."""
    if isinstance(value, str) and value.startswith("<"):
        return value.strip("<>")
    return fmt(value)


def release_note(m: MegatronInput, fit: Fit, gaps: dict[str, str]) -> str | None:
    """An input warning saying whose defaults a script of other releases gets."""
    table = project_data("mindspeed_llm")["table_release"]
    if fit.releases == (table,):
        return None
    where = f"{m.path}:1: {fit.why}"
    held = fit.span if fit.releases else ", ".join(fit.heads)
    if fit.by_name:
        if table in fit.releases:
            return None
        return (
            f"{where}, and {table} ships no such script; cfglint's MindSpeed-LLM defaults are "
            f"{table}'s, so a default labelled {table} may differ in {held}"
        )
    used = sorted(d for d in gaps if d in m.table.by_dest)
    return (
        f"{where}; cfglint's MindSpeed-LLM defaults are {table}'s, and {len(used)} of the "
        f"arguments it knows have another default (or none read) in {held}: those left to "
        "a default are not decided"
    )
