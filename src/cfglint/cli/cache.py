"""``cfglint cache clear|info``."""

from __future__ import annotations

import argparse
import sys


def cmd_cache(args: argparse.Namespace) -> int:
    """``cfglint cache clear`` / ``cfglint cache info``: every part of the cache (parsed data
    tables, validated rules, source-scan summaries)."""
    from cfglint.check.caches import scan_cache
    from cfglint.load.datacache import PARTS, cache_dir, clear_part, part_usage

    root = cache_dir()
    if args.action == "clear":
        n = freed = 0
        for part in PARTS:
            k, b = clear_part(root / part)
            n, freed = n + k, freed + b
        sys.stdout.write(f"removed {n} cache files from {root} ({freed / 2**20:.1f} MiB)\n")
        return 0
    scan = scan_cache(root)
    n, size = scan.usage()
    sys.stdout.write(
        f"{scan.root}: {n} scan summaries, {size / 2**20:.1f} MiB "
        f"(bound {scan.max_bytes / 2**20:.0f} MiB, CFGLINT_SCAN_CACHE_MB)\n"
    )
    for part in PARTS[:-1]:
        m, b = part_usage(root / part)
        sys.stdout.write(f"{root / part}: {m} files, {b / 2**20:.1f} MiB\n")
    return 0
