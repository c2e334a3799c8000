"""Settings from ``[tool.cfglint]`` in the nearest ``pyproject.toml``.

Command-line options win over the file. Keys use the option spelling with dashes or
underscores: ``select``, ``ignore``, ``profile``, ``fail-on``, ``megatron-version``,
``format``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cfglint.errors import InputError

KNOWN = {"select", "ignore", "profile", "fail_on", "megatron_version", "format", "exclude"}


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

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(str(path), f"invalid TOML: {exc}") from None
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror}") from None
    section = data.get("tool", {}).get("cfglint", {})
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
        out[key] = v
    return out
