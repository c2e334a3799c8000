"""Installed MindSpore / MindFormers / CANN versions against known-compatible sets.

Versions are read from package metadata and CANN's version files: nothing is imported.
"""

from __future__ import annotations

import os
import re
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from cfglint.load.datacache import DATA_DIR, load_data

DATA = DATA_DIR / "versions.yaml"
CANN_FILES = ("version.cfg", "ascend_toolkit_install.info", "compiler/version.info")


def installed(dist: str) -> str | None:
    """The installed version of a distribution whose top-level package has its name
    (mindspore, mindformers). A package that cannot be found is not installed, and asking
    the import system first spares importing importlib.metadata, which costs more than the
    rest of a lint's checks together when neither framework is there (see bench/)."""
    spec = find_spec(dist)
    if spec is None:
        return None
    # a wheel install leaves NAME-VERSION.dist-info beside the package; its name is the
    # version (the wheel spec's naming rule) and reading a folder name costs nothing, while
    # importlib.metadata costs ~30 ms of imports (see bench/); anything else asks metadata
    for folder in spec.submodule_search_locations or ():
        site = Path(folder).parent
        hits = [p.name for p in site.glob(f"{dist}-*.dist-info") if (p / "METADATA").is_file()]
        if len(hits) == 1:
            return hits[0][len(dist) + 1 : -len(".dist-info")]
        break
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def cann_version() -> str | None:
    roots = [os.environ.get(k) for k in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH")]
    roots.append("/usr/local/Ascend/ascend-toolkit/latest")
    for root in roots:
        if not root:
            continue
        for name in CANN_FILES:
            p = os.path.join(root, name)
            try:
                text = Path(p).read_text(encoding="utf-8", errors="replace")[:4096]
            except OSError:
                continue
            m = re.search(
                r"(?:toolkit_installed_version|version)\s*=\s*\[?([0-9][0-9A-Za-z.\-]*)", text
            )
            if m:
                return m.group(1)
    return None


def _mm(v: str) -> str:
    """major.minor(.patch) without local suffixes, for table lookups."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", v)
    if not m:
        return v
    return ".".join(x for x in m.groups() if x is not None)


def _same_release(table: str, installed_version: str) -> bool:
    """A table entry "1.0" covers 1.0.x; "2.4.10" must match exactly (local suffixes aside)."""
    t, v = _mm(table).split("."), _mm(installed_version).split(".")
    return v[: len(t)] == t


def check_installed() -> tuple[str | None, Any]:
    """(problem or None, details). None with a reason string when nothing can be checked."""
    ms, mf, cann = installed("mindspore"), installed("mindformers"), cann_version()
    if ms is None and mf is None:
        return None, "MindSpore and MindFormers are not installed in this environment"
    try:
        data = load_data(DATA)
    except (OSError, ValueError):
        return None, "no version table shipped"
    rows = list(data.get("mindformers") or []) + list(
        data.get("mindformers_compatible_extra") or []
    )
    have = {"mindspore": ms, "mindformers": mf, "cann": cann}
    if mf is None:
        return None, f"MindFormers is not installed (MindSpore {ms})"
    matches = [r for r in rows if _same_release(str(r.get("mindformers", "")), mf)]
    if not matches:
        return None, f"MindFormers {mf} is not in the version table"
    for key in ("mindspore", "cann"):
        if have[key] is None:
            continue
        allowed = {_mm(str(r.get(key))) for r in matches if r.get(key)}
        if allowed and not any(_same_release(a, have[key]) for a in allowed):  # type: ignore[arg-type]
            return (
                f"installed MindFormers {mf} expects {key} {' or '.join(sorted(allowed))} "
                f"but {have[key]} is installed ({matches[0].get('source', 'version table')})",
                have,
            )
    return None, have  # a compatible set
