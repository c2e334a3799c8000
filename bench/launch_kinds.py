"""Classify every shell script of a repository checkout the way cfglint's detector does.

    .venv/bin/python bench/launch_kinds.py /tmp/MindSpeed-LLM [--list]

Prints one line per kind (and role) with its count; ``--list`` also prints every file.
Used for the classification table in the issue-11 note (training launches vs converters,
preprocessors, evaluation, generation and environment-setup scripts).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from cfglint.load.detect import Kind, detect_script


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    show = "--list" in argv
    counts: Counter[str] = Counter()
    for path in sorted(root.rglob("*.sh")):
        d = detect_script(str(path))
        label = d.kind.value
        if d.kind is Kind.NOT_TRAINING:
            label += ": " + d.why.split(": ", 1)[-1] if ": " in d.why else ": " + d.why
        counts[label] += 1
        if show:
            print(f"{d.kind.name:20} {path.relative_to(root)}  ({d.why})")
    total = sum(counts.values())
    for label, n in counts.most_common():
        print(f"{n:5}  {n / total:6.1%}  {label}")
    print(f"{total:5}  total .sh files under {root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
