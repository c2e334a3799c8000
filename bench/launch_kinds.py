"""Classify every file a folder lint would consider, the way cfglint's classifier does.

    .venv/bin/python bench/launch_kinds.py /tmp/MindSpeed-MM [--list KIND,KIND]

Prints one line per kind with its count and share; ``--list`` also prints each file of the
named kinds (InputKind names, e.g. MG_LAUNCH,OTHER_FRAMEWORK) with the reason. Used for the
table in bench/classify_trials.md.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from cfglint.load.detect import classify
from cfglint.load.walk import walk


def main(argv: list[str]) -> int:
    root = argv[0]
    show = argv[argv.index("--list") + 1].split(",") if "--list" in argv else []
    counts: Counter[str] = Counter()
    for path in walk(root, [], Path(root)):
        c = classify(path, named=False)
        counts[c.kind.name] += 1
        if c.kind.name in show:
            print(f"{c.kind.name:18} {Path(path).relative_to(root)}  ({c.why})")
    total = sum(counts.values())
    for kind, n in counts.most_common():
        print(f"{n:5}  {n / total:6.1%}  {kind}")
    print(f"{total:5}  files a folder lint considers under {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
