"""The Megatron-LM defaults cfglint states against megatron-core's own config classes.

megatron-core's wheel has no argument parser (megatron/training is not in it), so most of
the argparse defaults of data/megatron_lm_*.yaml have no counterpart there. From core_v0.19.0
on, Megatron builds the TransformerConfig arguments from the dataclass itself
(megatron/training/argument_utils.py ArgumentGroupFactory: the field's default, or
default_factory(), overridden by the field's ``argparse_meta``); our table marks those entries
``from_dataclass: TransformerConfig``. Each is checked here against the package's
TransformerConfig and its base ModelParallelConfig, read with ast (nothing imported: the
package needs torch). The package is found at CFGLINT_MEGATRON_CORE_SITE (a folder holding
megatron/core, e.g. ``pip install --no-deps --target DIR megatron-core==0.19.0``), installed
in this interpreter, or (slow) downloaded from the package index; otherwise the test skips.
"""

from __future__ import annotations

import ast
import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

from cfglint.load.datacache import DATA_DIR, load_data
from conftest import unpacked_wheel

_UNREAD = object()
CLASSES = (
    ("megatron/core/transformer/transformer_config.py", "TransformerConfig"),
    ("megatron/core/model_parallel_config.py", "ModelParallelConfig"),
)


def _tables() -> list[str]:
    """Megatron-LM releases whose table has TransformerConfig-generated entries."""
    out = []
    for p in sorted(DATA_DIR.glob("megatron_lm_core_v*.yaml")):
        data = load_data(p)
        if any(e.get("from_dataclass") == "TransformerConfig" for e in data["args"]):
            out.append(str(data["version"]))
    return out


def _version(root: Path) -> str | None:
    """MAJOR.MINOR.PATCH from megatron/core/package_info.py, read with ast."""
    info = root / "megatron" / "core" / "package_info.py"
    if not info.is_file():
        return None
    parts: dict[str, Any] = {}
    for node in ast.parse(info.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                parts[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    if not all(k in parts for k in ("MAJOR", "MINOR", "PATCH")):
        return None
    return f"{parts['MAJOR']}.{parts['MINOR']}.{parts['PATCH']}"


def _local_roots() -> list[Path]:
    roots = []
    site = os.environ.get("CFGLINT_MEGATRON_CORE_SITE")
    if site:
        roots.append(Path(site))
    spec = importlib.util.find_spec("megatron")
    if spec is not None and spec.submodule_search_locations:
        roots.append(Path(next(iter(spec.submodule_search_locations))).parent)
    return roots


def _field(node: ast.AnnAssign) -> tuple[str, Any, dict[str, Any]] | None:
    """(name, default, argparse_meta) of a dataclass field; None for init=False."""
    assert isinstance(node.target, ast.Name)
    value: Any = _UNREAD
    meta: dict[str, Any] = {}
    v = node.value
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "field":
        kw = {k.arg: k.value for k in v.keywords if k.arg}
        if "init" in kw and isinstance(kw["init"], ast.Constant) and kw["init"].value is False:
            return None
        if "default" in kw:
            value = _literal(kw["default"])
        elif "default_factory" in kw and isinstance(kw["default_factory"], ast.Name):
            factory = {"list": [], "dict": {}}.get(kw["default_factory"].id, _UNREAD)
            value = factory
        if "metadata" in kw:
            md = _literal(kw["metadata"])
            meta = md.get("argparse_meta", {}) if isinstance(md, dict) else {}
    elif v is not None:
        value = _literal(v)
    return node.target.id, value, meta


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _UNREAD


def package_defaults(root: Path) -> dict[str, Any]:
    """dest -> the argparse default ArgumentGroupFactory derives from each field."""
    out: dict[str, Any] = {}
    for rel, cls in CLASSES:
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ClassDef) and node.name == cls):
                continue
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    got = _field(item)
                    if got is None:
                        continue
                    name, value, meta = got
                    dest = meta.get("dest", name)
                    # the subclass's field wins (TransformerConfig is read first)
                    out.setdefault(dest, meta.get("default", value))
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b) and isinstance(b, bool) == isinstance(a, bool)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return list(a) == list(b)
    return bool(a == b) and type(a) is type(b)


def compare(root: Path, version: str) -> tuple[int, list[str]]:
    theirs = package_defaults(root)
    table = load_data(DATA_DIR / f"megatron_lm_{version}.yaml")
    checked, wrong = 0, []
    for e in table["args"]:
        if e.get("from_dataclass") != "TransformerConfig" or e["dest"] not in theirs:
            continue
        got = theirs[e["dest"]]
        if got is _UNREAD:
            continue
        checked += 1
        if not _same(e.get("default"), got):
            wrong.append(f"{e['flags'][0]}: cfglint {e.get('default')!r}, package {got!r}")
    return checked, wrong


def _check(root: Path, version: str) -> None:
    checked, wrong = compare(root, version)
    print(f"megatron-core {version}: {checked} TransformerConfig defaults compared")
    assert checked > 100, f"only {checked} defaults compared: the layout changed?"
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("version", _tables())
def test_stated_transformer_config_defaults_match_the_local_package(version: str) -> None:
    want = version.removeprefix("core_v")
    for root in _local_roots():
        if _version(root) == want:
            _check(root, version)
            return
    pytest.skip(f"no megatron-core {want} here (set CFGLINT_MEGATRON_CORE_SITE)")


@pytest.mark.slow
@pytest.mark.parametrize("version", _tables())
def test_stated_transformer_config_defaults_match_the_package_on_the_index(
    version: str, tmp_path: Path
) -> None:
    site = unpacked_wheel("megatron-core", version.removeprefix("core_v"), tmp_path)
    _check(site, version)
