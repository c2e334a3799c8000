"""``cfglint cache clear|info``."""

from __future__ import annotations

import sys
from typing import Any


def cmd_cache(args: Any) -> int:
    """``cfglint cache clear`` / ``cfglint cache info``: the source-scan cache."""
    from cfglint.evidence.scan.runner import Cache
    from cfglint.load.datacache import cache_dir

    cache = Cache(cache_dir() / "scan")
    if args.action == "clear":
        n, freed = cache.clear()
        sys.stdout.write(f"removed {n} cached scan summaries ({freed / 2**20:.1f} MiB)\n")
    else:
        n, size = cache.usage()
        sys.stdout.write(
            f"{cache.root}: {n} scan summaries, {size / 2**20:.1f} MiB "
            f"(bound {cache.max_bytes / 2**20:.0f} MiB, CFGLINT_SCAN_CACHE_MB)\n"
        )
    return 0
