"""The ``arguments`` block Megatron prints at start-up into its training log.

Megatron prints every argument after validation, one per line: two spaces, the dest
name, one space, ``48 - len(name)`` dots, one space, ``str(value)``, between a
``---- arguments ----`` header and a ``---- end of arguments ----`` footer. The values are
final (post-processed) with two caveats the normalizer handles: ``num_query_groups``
prints 1 for plain multi-head attention, and ``padded_vocab_size`` / ``lr_decay_iters``
are filled in after the block is printed.

Logs can be large, so the file is streamed and reading stops at the footer.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

from cfglint.load.safeio import iter_lines, open_regular
from cfglint.model.errors import InputError
from cfglint.model.values import Loc, Value

HEADER = re.compile(r"-{8,} arguments -{8,}")
FOOTER = re.compile(r"-{8,} end of arguments -{8,}")
# Rank prefixes from launchers ("[rank0]: ", "0: ") come before the two spaces.
ENTRY = re.compile(r"^(?P<prefix>.*?)  (?P<name>[A-Za-z_][A-Za-z0-9_]*) (?P<rest>.*)$")
MAX_SCAN_LINES = 2_000_000
MAX_LINE = 1_000_000
_DTYPE = re.compile(r"^torch\.(float32|float16|bfloat16|float64|half|float|bfloat)$")
_ENUM = re.compile(r"^[A-Z][A-Za-z0-9_]*\.([A-Za-z_][A-Za-z0-9_]*)$")


@dataclass
class ArgsBlock:
    path: str
    values: dict[str, Value] = field(default_factory=dict)
    header_line: int = 0


def looks_like_log(path: str) -> bool:
    """A training log with an arguments block within its first 200,000 lines. Only regular
    files are read (a FIFO or ``/dev/zero`` is refused by the loader that follows), and no
    line is held longer than MAX_LINE bytes."""
    try:
        with open_regular(path, what="training log") as fh:
            for i, raw, _ in iter_lines(fh, path, max_line=MAX_LINE):
                if i > 200_000:
                    return False
                if b" arguments -" in raw and HEADER.search(raw.decode("utf-8", "replace")):
                    return True
    except InputError:
        return False
    return False


def parse_value(text: str) -> Any:
    t = text.strip()
    if t == "None":
        return None
    if t in ("True", "False"):
        return t == "True"
    m = _DTYPE.match(t)
    if m:
        return {"half": "float16", "float": "float32", "bfloat": "bfloat16"}.get(
            m.group(1), m.group(1)
        )
    m = _ENUM.match(t)
    if m:
        return m.group(1)
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        pass
    if t[:1] in "[(" and len(t) < 10_000:
        try:
            with warnings.catch_warnings():  # SyntaxWarnings would print on stderr
                warnings.simplefilter("ignore")
                v = ast.literal_eval(t)  # literals only: lists and tuples of plain values
            return list(v) if isinstance(v, tuple) else v
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return t
    return t


def parse_entry(line: str) -> tuple[str, str, int] | None:
    m = ENTRY.match(line)
    if not m:
        return None
    name, rest = m.group("name"), m.group("rest")
    dots = max(0, 48 - len(name))
    # exactly `dots` dots then one space; a value may itself start with a dot ("./data")
    if dots:
        if not rest.startswith("." * dots + " ") and not rest.startswith("." * dots):
            return None
        value = rest[dots + 1 :] if rest.startswith("." * dots + " ") else rest[dots:]
    else:
        value = rest[1:] if rest.startswith(" ") else rest
    col = len(line) - len(value) + 1
    return name, value, col


def load_log(path: str) -> ArgsBlock:
    block = ArgsBlock(path=path)
    inside = False
    with open_regular(path, what="training log") as fh:
        for n, raw, too_long in iter_lines(fh, path, what="training log", max_line=MAX_LINE):
            if n > MAX_SCAN_LINES:
                break
            if too_long or b"\x00" in raw:
                if inside:
                    raise InputError(path, "binary data inside the arguments block", line=n)
                continue
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                if inside:
                    raise InputError(
                        path, "is not valid UTF-8 inside the arguments block", line=n
                    ) from None
                continue
            if not inside:
                if HEADER.search(line) and "end of arguments" not in line:
                    inside, block.header_line = True, n
                continue
            if FOOTER.search(line):
                return block
            entry = parse_entry(line)
            if entry is None:
                continue
            name, text, col = entry
            block.values[name] = Value.written(
                parse_value(text),
                knob=name,
                loc=Loc.model_construct(path=path, line=n, column=col),
                raw=text,
            )
    if not inside:
        raise InputError(path, "no Megatron arguments block (---- arguments ----) found")
    raise InputError(
        path, "the arguments block has no end line (truncated log?)", line=block.header_line
    )
