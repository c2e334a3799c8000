"""The caches a run keeps, for ``cfglint cache``: parsed data and validated rules
(:mod:`cfglint.load.datacache`) and source-scan summaries (the scanner's own store)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def scan_cache(root: Path) -> Any:
    """The source-scan summaries under the cache folder ``root`` (size-bounded)."""
    from cfglint.evidence.scan.runner import Cache

    return Cache(root / "scan")
