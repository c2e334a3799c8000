"""The defaults cfglint states for a MindFormers release against that release's own package.

MindFormers 1.x-2.x are on the package index; importing them needs MindSpore (cp310-312 wheels,
hundreds of MB), so the check reads the installed package's source: each config class's
``__init__`` signature, parsed with ast (nothing of the package is executed). It runs where a
MindFormers package is findable, either installed in this interpreter or at the site-packages
folder named by CFGLINT_MINDFORMERS_SITE (e.g. ``pip install --no-deps mindformers==1.3.2``
into a throwaway venv), and skips cleanly otherwise.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

from cfglint.normalize.mindformers.defaults import (
    MF_RELEASES,
    REQUIRED,
    canonical_dtype,
    mf_defaults,
)

_UNSET = object()


def _package() -> tuple[Path, str] | None:
    """(the mindformers package folder, its version) without importing it."""
    site = os.environ.get("CFGLINT_MINDFORMERS_SITE")
    if site:
        root = Path(site) / "mindformers"
        dists = list(importlib.metadata.distributions(path=[site], name="mindformers"))
        if root.is_dir() and dists:
            return root, dists[0].version
        return None
    spec = importlib.util.find_spec("mindformers")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))), importlib.metadata.version(
        "mindformers"
    )


def _init_defaults(source: str, cls: str) -> dict[str, Any]:
    """The literal defaults of ``cls.__init__`` in ``source`` (dtype names as written)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    return _literal_defaults(item.args)
    return {}


def _literal_defaults(args: ast.arguments) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pos = args.args[len(args.args) - len(args.defaults) :]
    pairs = list(zip(pos, args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    for arg, default in pairs:
        if isinstance(default, ast.Attribute) and isinstance(default.value, ast.Name):
            out[arg.arg] = canonical_dtype(f"{default.value.id}.{default.attr}")  # mstype.float16
            continue
        try:
            value = ast.literal_eval(default)
            out[arg.arg] = list(value) if isinstance(value, tuple) else value
        except ValueError:
            out[arg.arg] = _UNSET
    return out


PKG = _package()
pytestmark = pytest.mark.skipif(
    PKG is None, reason="no MindFormers package (set CFGLINT_MINDFORMERS_SITE to a site-packages)"
)


def test_stated_config_class_defaults_match_the_installed_release() -> None:
    root, version = PKG  # type: ignore[misc]
    release = f"v{version}"
    if release not in MF_RELEASES:
        pytest.skip(f"cfglint has no defaults for MindFormers {release}")
    d = mf_defaults(release)
    checked, wrong = 0, []
    for comp in {id(c): c for c in d.by_name.values()}.values():
        if comp.role != "model_config_legacy" or comp.version != release:
            continue
        src = root.parent / str(comp.raw.get("file", ""))
        if not src.is_file():
            continue  # a research class: not in the wheel
        theirs = _init_defaults(src.read_text(encoding="utf-8"), comp.name)
        for key, ours in comp.defaults.items():
            got = theirs.get(key, _UNSET)
            if got is _UNSET or ours is REQUIRED:
                continue
            checked += 1
            if canonical_dtype(got) != canonical_dtype(ours) and not (
                isinstance(got, (int, float)) and isinstance(ours, (int, float)) and got == ours
            ):
                wrong.append(f"{comp.name}.{key}: cfglint {ours!r}, package {got!r}")
    print(f"MindFormers {release}: {checked} defaults compared")
    assert checked > 50, f"only {checked} defaults compared: the layout changed?"
    assert not wrong, "\n".join(wrong)
