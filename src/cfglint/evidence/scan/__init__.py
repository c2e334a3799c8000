"""Source scanner: seeding, determinism, dropout and weight-decay grouping in training code.

Importing this package is cheap: the scanner and linker are loaded only when sources are
scanned, so the plain config lint (which imports :mod:`cfglint.check.builtins.source`)
never pays for them. Files are read with CPython's own parser (``ast``): no third-party
parser is loaded at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cfglint.evidence.scan.model import ScanResult


def scan_paths(
    paths: list[str],
    entry_hints: list[str] | None = None,
    jobs: int | None = None,
    use_cache: bool = True,
    members: list[str] | None = None,
) -> ScanResult:
    """Scan Python training sources (files or folders) without importing or running them.

    ``entry_hints`` name the scripts a launch script starts (``pretrain_gpt.py``); without
    them, a file named in ``paths`` is an entry point, and in folders (and ``members``:
    files named without being asked to be entry points, as pre-commit passes them) a
    module is one when it trains (reaches an optimizer step, a hand-written parameter
    update or a framework training call; a backward pass alone updates nothing).
    ``jobs`` caps the worker processes (default: all cores, started only when the
    parsing pays for them; 1 parses in this process).
    """
    from cfglint.evidence.scan.runner import scan

    return scan(
        list(paths),
        entry_hints=entry_hints,
        jobs=jobs,
        use_cache=use_cache,
        members=list(members or []),
    )


__all__ = ["scan_paths"]
