"""Fast loading of our own YAML data (rule files, default tables).

Parsing a few hundred KiB of YAML costs ~100 ms, more than the whole lint budget, so the
parsed form is cached as JSON under the user's cache directory, keyed by a hash of the
file's bytes. A stale or unwritable cache only costs speed, never correctness.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

# the default tables and reference data shipped inside the package (src/cfglint/data/)
DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def cache_dir() -> Path:
    env = os.environ.get("CFGLINT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cfglint"


def load_data(path: str | Path) -> Any:
    """Plain data of one of *our* YAML files (trusted, but still parsed safely)."""
    raw = Path(path).read_bytes()
    key = hashlib.sha256(raw).hexdigest()[:32]
    cached = cache_dir() / "data" / f"{Path(path).stem}-{key}.json"
    hit = read_json(cached)
    if hit is not None:
        return hit
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    # Our data files are YAML 1.2 (unlike user configs, which MindFormers reads as 1.1).
    try:
        data = YAML(typ="safe", pure=False).load(raw.decode("utf-8"))
    except YAMLError as exc:
        raise ValueError(f"{path}: {' '.join(str(exc).split())}") from None
    write_json(cached, data)
    return data


def read_json(path: Path) -> Any:
    """A cached JSON file, or None when it is missing or damaged."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: Path, data: Any) -> None:
    """Write a cache file atomically; a failure only costs speed on the next run."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
