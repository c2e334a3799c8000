"""Dump what the load stage makes of every launch script under some folders, one JSON line
per script: a digest of the parsed script and of its training invocation, the input
classification and every dialect detection (with its evidence, notes and the flags the
repository's parser accepts).

Run it on two trees and diff the outputs to show that a refactoring of load/ changed no
result (issue 34's function splits were checked so on 1,546 scripts, bench/results/radon.md):

    PYTHONPATH=OLD/src python bench/load_dump.py FOLDER... > old.jsonl
    PYTHONPATH=NEW/src python bench/load_dump.py FOLDER... > new.jsonl
    cmp old.jsonl new.jsonl
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

import cfglint.load.dialects as dialects
from cfglint.load.detect import classify_script
from cfglint.load.shell import main_invocation, parse_script
from cfglint.model.errors import InputError

_seen: list[list[Any]] = []
_detect = dialects.detect_dialect


def _recording(*args: Any, **kwargs: Any) -> dialects.Detection:
    """detect_dialect, with what it found kept for the dump (the classifier calls it)."""
    f = _detect(*args, **kwargs)
    accepts = sorted(f.accepts) if f.accepts is not None else None
    parser = f.parser.rel if f.parser else None
    found = [f.dialect.name, f.dialect.label, f.evidence, f.note, accepts, sorted(f.extra)]
    _seen.append([*found, f.root, f.unread, parser])
    return f


def _digest(obj: object) -> str:
    return hashlib.sha1(repr(obj).encode()).hexdigest()[:12]


def dump(root: str) -> None:
    scripts = sorted(
        os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith(".sh")
    )
    for path in scripts:
        _seen.clear()
        try:
            sh = parse_script(path)
            parsed, main = _digest(sh), _digest(main_invocation(sh))
        except InputError as exc:
            parsed, main = f"error {exc.message} (line {exc.line})", ""
        c = classify_script(path, named=False).model_dump(mode="json")
        print(json.dumps([os.path.relpath(path, root), parsed, main, c, _seen], default=str))


if __name__ == "__main__":
    dialects.detect_dialect = _recording  # type: ignore[assignment]
    for folder in sys.argv[1:]:
        dump(folder)
