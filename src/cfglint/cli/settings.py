"""Settings from ``[tool.cfglint]`` in the nearest ``pyproject.toml``.

Command-line options win over the file. Keys use the option spelling with dashes or
underscores: ``select``, ``ignore``, ``profile``, ``fail-on``, ``megatron-version``,
``format``.
"""

from __future__ import annotations

import json
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
    "per_file_ignores",
}
PAIR_KEYS = {"mindformers", "megatron", "launch", "source"}


def _choices(key: str) -> list[str] | None:
    if key == "megatron_version":
        from cfglint.load.dialects import known_versions

        return known_versions()
    from cfglint.check.rule import PROFILES
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
    from cfglint.load.safeio import read_text

    # a pyproject is a few KiB; the cap keeps a huge or endless file from costing minutes
    text = read_text(str(path), max_bytes=MAX_PYPROJECT, what="pyproject.toml")
    section = _cached_section(path, text)
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
        if key == "per_file_ignores":
            v = _per_file_ignores(path, k, v)
        out[key] = v
    out["_base"] = path.parent
    out["_path"] = path
    return out


def _cached_section(path: Path, text: str) -> dict[str, Any]:
    """The ``[tool.cfglint]`` table as TOML reads it ({} when there is none). Reading TOML
    means importing tomllib, whose module-level patterns and tables cost four times its
    parse of a pyproject (about 20 M instructions, 2% of a pair lint, see bench/): the table
    is kept in the data cache, tied to the file's bytes, and what comes back is checked by
    load_settings like a parsed table (a cache entry is input). A file that is not valid
    TOML, or whose table holds what JSON cannot (a TOML date), is parsed every time."""
    from cfglint.load.datacache import cache_dir, content_key, read_entry, write_entry

    key = content_key(b"pyproject.toml [tool.cfglint]", text.encode("utf-8"))
    entry = cache_dir() / "data" / f"pyproject-{key[:32]}.json"
    hit = read_entry(entry, "data", key, _a_table)
    if hit is not None:
        return hit
    section = _parsed_section(path, text)
    try:
        payload = json.dumps(section, allow_nan=False)
    except (TypeError, ValueError):
        return section
    write_entry(entry, "data", key, payload)
    return section


def _a_table(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise ValueError("not a table")
    return payload


def _parsed_section(path: Path, text: str) -> dict[str, Any]:
    import tomllib

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
    return section


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


def _per_file_ignores(path: Path, name: str, value: Any) -> dict[str, list[str]]:
    """``per-file-ignores = {"legacy/*.yaml" = ["OPT003"], "*.sh" = "DET"}``: patterns in
    .gitignore syntax, relative to the pyproject.toml; selectors as --ignore takes them."""
    if not isinstance(value, dict):
        raise InputError(str(path), f"[tool.cfglint] {name} must be a table of pattern = rules")
    out: dict[str, list[str]] = {}
    for pattern, rules in value.items():
        rules = [rules] if isinstance(rules, str) else rules
        if not (isinstance(rules, list) and all(isinstance(x, str) for x in rules)):
            raise InputError(
                str(path), f"[tool.cfglint] {name} {pattern!r} must be a list of rule names"
            )
        out[pattern] = rules
    return out


def _rel(base: Path, p: str) -> str:
    full = p if os.path.isabs(p) else os.path.join(base, p)
    try:
        return os.path.relpath(full)
    except ValueError:  # another drive on Windows
        return full
