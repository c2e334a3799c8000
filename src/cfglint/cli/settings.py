"""Settings from ``[tool.cfglint]`` in the nearest ``pyproject.toml``.

Command-line options win over the file. Keys use the option spelling with dashes or
underscores: ``select``, ``ignore``, ``profile``, ``fail-on``, ``megatron-version``,
``format``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cfglint.model.errors import InputError

MAX_PYPROJECT = 1024 * 1024
KNOWN = {
    "select",
    "ignore",
    "profile",
    "fail_on",
    "megatron_version",
    "format",
    "exclude",
    "pairs",
}
PAIR_KEYS = {"mindformers", "megatron", "launch", "source"}


def _choices(key: str) -> list[str] | None:
    if key == "megatron_version":
        from cfglint.normalize.megatron.args import known_versions

        return known_versions()
    from cfglint.check.schema import PROFILES
    from cfglint.model.findings import FAIL_ON
    from cfglint.report import FORMATS

    return {
        "profile": list(PROFILES),
        "fail_on": list(FAIL_ON),
        "format": list(FORMATS),
    }.get(key)


def find_pyproject(start: str | None = None) -> Path | None:
    cur = Path(start or os.getcwd()).resolve()
    for d in (cur, *cur.parents):
        p = d / "pyproject.toml"
        if p.is_file():
            return p
        if (d / ".git").exists():
            break
    return None


def load_settings(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    import tomllib

    from cfglint.load.safeio import read_text

    # a pyproject is a few KiB; the cap keeps a huge or endless file from costing minutes
    text = read_text(str(path), max_bytes=MAX_PYPROJECT, what="pyproject.toml")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(str(path), f"invalid TOML: {exc}") from None
    except RecursionError:
        raise InputError(str(path), "invalid TOML: nested too deeply") from None
    tool = data.get("tool", {})
    section = tool.get("cfglint", {}) if isinstance(tool, dict) else {}
    if not isinstance(section, dict):
        raise InputError(str(path), "[tool.cfglint] must be a table")
    out: dict[str, Any] = {}
    for k, v in section.items():
        key = k.replace("-", "_")
        if key not in KNOWN:
            raise InputError(
                str(path),
                f"unknown setting {k!r} in [tool.cfglint]; known: {', '.join(sorted(KNOWN))}",
            )
        if key in ("select", "ignore", "exclude") and isinstance(v, str):
            v = [v]
        allowed = _choices(key)
        if allowed is not None and v not in allowed:
            raise InputError(
                str(path), f"[tool.cfglint] {k} = {v!r}: expected one of {', '.join(allowed)}"
            )
        if key in ("select", "ignore", "exclude") and not (
            isinstance(v, list) and all(isinstance(x, str) for x in v)
        ):
            raise InputError(str(path), f"[tool.cfglint] {k} must be a list of strings")
        if key == "pairs":
            v = _pairs(path, v)
        out[key] = v
    out["_base"] = path.parent
    out["_path"] = path
    return out


def _pairs(path: Path, value: Any) -> list[dict[str, Any]]:
    """``pairs = [{mindformers = …, megatron = …, launch = …, source = […]}]``, paths
    relative to the pyproject.toml, made relative to the current folder."""
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        raise InputError(str(path), "[tool.cfglint] pairs must be a list of tables")
    out = []
    for i, pair in enumerate(value, 1):
        bad = sorted(set(pair) - PAIR_KEYS)
        if bad:
            raise InputError(
                str(path),
                f"[tool.cfglint] pairs entry {i}: unknown key(s) {', '.join(bad)}; "
                f"known: {', '.join(sorted(PAIR_KEYS))}",
            )
        if not (pair.get("mindformers") or pair.get("megatron")):
            raise InputError(
                str(path), f"[tool.cfglint] pairs entry {i} needs mindformers and/or megatron"
            )
        src = pair.get("source", [])
        src = [src] if isinstance(src, str) else src
        if not isinstance(src, list) or not all(isinstance(x, str) for x in src):
            raise InputError(str(path), f"[tool.cfglint] pairs entry {i}: source must be paths")
        entry: dict[str, Any] = {"source": [_rel(path.parent, x) for x in src]}
        for k in ("mindformers", "megatron", "launch"):
            if pair.get(k) is not None:
                if not isinstance(pair[k], str):
                    raise InputError(
                        str(path), f"[tool.cfglint] pairs entry {i}: {k} must be a path"
                    )
                entry[k] = _rel(path.parent, pair[k])
        out.append(entry)
    return out


def _rel(base: Path, p: str) -> str:
    full = p if os.path.isabs(p) else os.path.join(base, p)
    try:
        return os.path.relpath(full)
    except ValueError:  # another drive on Windows
        return full
