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
import warnings
from pathlib import Path
from typing import Any

import pytest

from cfglint.load.datacache import load_data
from cfglint.normalize.mindformers.defaults import (
    DATA,
    MF_RELEASES,
    REQUIRED,
    Component,
    canonical_dtype,
    mf_defaults,
)
from conftest import mindformers_wheel, unpacked_wheel

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
    """The literal defaults of ``cls`` in ``source`` (dtype names as written): its
    ``__init__`` keyword defaults, else its annotated class attributes (dataclasses and
    the mcore TransformerConfig)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # the package's own docstrings
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            attrs: dict[str, Any] = {}
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    return _literal_defaults(item.args)
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    attrs[item.target.id] = _value(item.value) if item.value else _UNSET
            return attrs
    return {}


def _value(node: ast.expr) -> Any:
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "field":
        # a dataclass field(default=X, metadata=...): X (TransformerConfig from 1.9.0 on)
        given = {k.arg: k.value for k in node.keywords}
        return _value(given["default"]) if "default" in given else _UNSET
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return canonical_dtype(f"{node.value.id}.{node.attr}")  # mstype.float16
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return _UNSET
    return list(value) if isinstance(value, tuple) else value


def _literal_defaults(args: ast.arguments) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pos = args.args[len(args.args) - len(args.defaults) :]
    pairs = list(zip(pos, args.defaults, strict=True))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    for arg, default in pairs:
        out[arg.arg] = _value(default)
    return out


def _file_at(comp: Component, release: str) -> str:
    """Where the release keeps the class (data/mindformers_releases.yaml), else its
    recorded file."""
    per = load_data(DATA / "mindformers_releases.yaml")["components"]
    entry = (per.get(f"{comp.name}@{comp.role}") or {}).get(release) or {}
    return str(entry.get("file") or comp.raw.get("file", "")).split(":")[0]


def compare(root: Path, release: str) -> tuple[int, list[str]]:
    """(defaults compared, those that differ) of every class cfglint states for
    ``release`` whose source the package holds."""
    d = mf_defaults(release)
    checked, wrong = 0, []
    for comp in {id(c): c for c in d.by_name.values()}.values():
        if comp.version != release or "MindSpore" in str(comp.raw.get("version")):
            continue
        src = root.parent / _file_at(comp, release)
        if not src.is_file():
            continue  # a research class: not in the wheel
        theirs = _init_defaults(
            src.read_text(encoding="utf-8"), comp.raw.get("template_class") or comp.name
        )
        for key, ours in comp.defaults.items():
            got = theirs.get(key, _UNSET)
            if got is _UNSET or ours == REQUIRED:
                continue
            checked += 1
            if canonical_dtype(got) != canonical_dtype(ours) and not (
                isinstance(got, (int, float)) and isinstance(ours, (int, float)) and got == ours
            ):
                wrong.append(f"{comp.name} ({comp.role}).{key}: cfglint {ours!r}, package {got!r}")
    return checked, wrong


def _check(root: Path, version: str) -> None:
    release = f"v{version}"
    if release not in MF_RELEASES:
        pytest.skip(f"cfglint has no defaults for MindFormers {release}")
    checked, wrong = compare(root, release)
    print(f"MindFormers {release}: {checked} defaults compared")
    assert checked > 50, f"only {checked} defaults compared: the layout changed?"
    assert not wrong, "\n".join(wrong)


def test_stated_config_class_defaults_match_the_installed_release() -> None:
    pkg = _package()
    if pkg is None:
        pytest.skip("no MindFormers package (set CFGLINT_MINDFORMERS_SITE to a site-packages)")
    _check(*pkg)


# every release cfglint has tables for that has a tag (master has no package)
@pytest.mark.slow
@pytest.mark.parametrize("release", [r for r in MF_RELEASES if r.startswith("v")])
def test_stated_config_class_defaults_match_the_package_on_the_index(
    release: str, tmp_path: Path
) -> None:
    """``pip download --no-deps mindformers==X``, unpacked and read (MindSpore not needed)."""
    version = release.removeprefix("v")
    _check(unpacked_wheel("mindformers", version, tmp_path) / "mindformers", version)


# the releases read from the package index's wheels (scripts/extract_mindformers_releases.py)
@pytest.mark.slow
@pytest.mark.parametrize("release", ["v1.8.0", "v1.9.0", "v2.0.0", "v2.1.0"])
def test_the_wheel_tables_are_what_the_wheel_gives(release: str, tmp_path: Path) -> None:
    """data/mindformers_releases.yaml's entries for a wheel release, and its recorded sha256,
    are what the extractor reads from that wheel today (research/ classes aside: no wheel
    ships them)."""
    x, wheel = mindformers_wheel(release, tmp_path)
    data = load_data(DATA / "mindformers_releases.yaml")
    assert data["sources"][release]["sha256"] == wheel.provenance()["sha256"]
    checked = 0
    for c in load_data(DATA / "mindformers.yaml")["components"]:
        if "MindSpore" in str(c.get("version")) or not str(c.get("file", "")).startswith(
            "mindformers/"
        ):
            continue
        got = x.entry_at(wheel, c.get("template_class") or c["name"], c["file"], c)
        assert got == data["components"][f"{c['name']}@{c['role']}"][release], c["name"]
        checked += 1
    assert checked > 50
