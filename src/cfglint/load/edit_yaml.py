"""Edits of a MindFormers YAML that keep everything else byte for byte.

ruamel.yaml's round-trip composer gives every node its exact character span; an edit
replaces one scalar's span (or inserts one new line under an existing mapping) and leaves
comments, key order, quoting, anchors, indentation and blank lines as they were. Dumping a
round-tripped document would re-indent and re-wrap it, which is what users of a fixer
rightly refuse.

Values are written as MindFormers will read them: PyYAML follows YAML 1.1, so a float is
written with a dot and a signed exponent (``1.0e-08``), a boolean as ``True``/``False`` (or
in the spelling the edited scalar used).
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

from cfglint.model.edits import TextEdit

_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[[0-9]+\])*)")
# what a YAML 1.1 reader takes for something other than a string when written plain
_NOT_PLAIN = re.compile(
    r"^(?:[-+]?[0-9._:]+(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|nan)|y|n|yes|no|on|off|true|false"
    r"|null|~|)$|^[\s&*!|>'\"%@`#,\[\]{}?:-]|[:#]\s|\s$",
    re.IGNORECASE,
)


_COMMENT_GAP = re.compile(r"( +)#")


def key_path(dotted: str) -> list[str | int]:
    """``optimizer.betas[1]`` -> ["optimizer", "betas", 1]."""
    out: list[str | int] = []
    for part in dotted.split("."):
        m = _SEGMENT.fullmatch(part)
        if m is None:
            raise ValueError(f"not a key path: {dotted!r}")
        out.append(m.group(1))
        out.extend(int(i) for i in re.findall(r"\[([0-9]+)\]", m.group(2)))
    return out


@functools.lru_cache(maxsize=8)
def _compose(text: str) -> Any:
    """The node tree of ``text`` (read-only here; planning one file's fixes composes it
    once)."""
    from ruamel.yaml import YAML

    return YAML(typ="rt").compose(text)


def yaml_scalar(v: Any, like: str | None = None) -> str:
    """``v`` as a plain YAML 1.1 scalar, in the spelling of ``like`` (the scalar it
    replaces) where that is a choice: boolean case, quotes."""
    if isinstance(v, bool):
        word = "True" if v else "False"
        if like is not None and like.strip("'\"") in ("true", "false"):
            word = word.lower()
        return word
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float11(v)
    if v is None:
        return "null"
    s = str(v)
    if like is not None and like[:1] in ("'", '"'):
        return json.dumps(s) if like[0] == '"' else "'" + s.replace("'", "''") + "'"
    return json.dumps(s) if _NOT_PLAIN.search(s) else s


def _float11(x: float) -> str:
    if math.isnan(x):
        return ".nan"
    if math.isinf(x):
        return ".inf" if x > 0 else "-.inf"
    text = repr(x)
    mant, e, exp = text.partition("e")
    if "." not in mant:
        mant += ".0"
    if e:
        sign = exp[0] if exp[0] in "+-" else "+"
        return f"{mant}e{sign}{exp.lstrip('+-')}"
    return mant


def set_scalar_at(text: str, path: str, line: int, column: int, value: Any) -> TextEdit | None:
    """Replace the scalar that starts at ``line``:``column`` (1-based) with ``value``;
    None when no scalar starts there (the file changed, or the value is a collection)."""
    node = _scalar_at(_compose(text), line - 1, column - 1)
    if node is None:
        return None
    start, end = node.start_mark.index, node.end_mark.index
    old = text[start:end]
    new = yaml_scalar(value, like=old)
    # a trailing comment aligned with its neighbours' stays in its column
    gap = _COMMENT_GAP.match(text, end)
    if gap is not None and len(new) != len(old):
        room = len(gap.group(1)) + len(old) - len(new)
        if room >= 1:
            new += " " * room
            end = gap.end(1)
    return TextEdit.model_construct(path=path, start=start, end=end, text=new, line=line)


def misread_number_at(text: str, path: str, line: int, column: int) -> TextEdit | None:
    """The plain scalar at ``line``:``column`` rewritten as a YAML 1.1 number when it is
    one YAML 1.2 reads as a number and PyYAML (YAML 1.1, MindFormers' reader) as a
    string (``1e-5``); None otherwise."""
    from cfglint.load.yamltree import resolve_plain_yaml11, resolve_plain_yaml12

    node = _scalar_at(_compose(text), line - 1, column - 1)
    if node is None or node.style is not None:  # quoted or block: a string on purpose
        return None
    raw = text[node.start_mark.index : node.end_mark.index]
    meant = resolve_plain_yaml12(raw)
    if not isinstance(resolve_plain_yaml11(raw), str) or isinstance(meant, bool):
        return None
    if not isinstance(meant, (int, float)):
        return None
    return set_scalar_at(text, path, line, column, float(meant))


def _scalar_at(root: Any, line: int, col: int) -> Any:
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    todo = [root] if root is not None else []
    seen: set[int] = set()
    while todo:
        n = todo.pop()
        if id(n) in seen:  # an alias: the anchored node is visited once
            continue
        seen.add(id(n))
        if isinstance(n, ScalarNode):
            if n.start_mark.line == line and n.start_mark.column == col:
                return n
        elif isinstance(n, MappingNode):
            for k, v in n.value:
                todo += [k, v]
        elif isinstance(n, SequenceNode):
            todo += list(n.value)
    return None


def set_or_add(text: str, path: str, dotted: str, value: Any) -> TextEdit | None:
    """Set ``dotted`` to ``value``: its scalar when written, else a new line under the
    deepest mapping of the path that exists. None when the path runs through something
    that is not a block mapping, or ends in a list index that is not there."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    keys = key_path(dotted)
    root = _compose(text)
    node, depth = root, 0
    while depth < len(keys) and node is not None:
        k = keys[depth]
        if isinstance(k, int):
            if not isinstance(node, SequenceNode) or k >= len(node.value):
                return None
            node = node.value[k]
        elif isinstance(node, MappingNode):
            child = next((v for kn, v in node.value if kn.value == k), None)
            if child is None:
                break
            node = child
        else:
            return None
        depth += 1
    if depth == len(keys):
        if not isinstance(node, ScalarNode):
            return None
        m = node.start_mark
        return set_scalar_at(text, path, m.line + 1, m.column + 1, value)
    rest = keys[depth:]
    if any(isinstance(k, int) for k in rest):
        return None
    if node is None:  # an empty document
        return _insert(text, path, 0, 0, 2, [str(k) for k in rest], value)
    if not isinstance(node, MappingNode) or node.flow_style or not node.value:
        return None
    return _add_under(text, path, node, [str(k) for k in rest], value)


def _add_under(text: str, path: str, mapping: Any, rest: list[str], value: Any) -> TextEdit:
    """A new entry in a block mapping: at the end of the document for the top level, after
    its last entry when that entry is a plain scalar (ending on its own line), else before
    its first entry."""
    from ruamel.yaml.nodes import ScalarNode

    first_key = mapping.value[0][0]
    indent = first_key.start_mark.column
    step = _indent_step(text, indent)
    last_key, last_val = mapping.value[-1]
    if indent == 0:
        line0 = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    elif isinstance(last_val, ScalarNode) and last_val.end_mark.line == last_key.start_mark.line:
        line0 = last_val.end_mark.line + 1
    else:
        line0 = first_key.start_mark.line
    return _insert(text, path, line0, indent, step, rest, value)


def _indent_step(text: str, base: int) -> int:
    """The file's indentation step, read off its nested lines (2 when nothing tells)."""
    steps = []
    for ln in text.splitlines()[:400]:
        stripped = ln.lstrip(" ")
        if stripped and not stripped.startswith("#"):
            width = len(ln) - len(stripped)
            if width:
                steps.append(width)
    small = min(steps) if steps else 2
    return small if small in (2, 4) else 2


def _insert(
    text: str, path: str, line0: int, indent: int, step: int, keys: list[str], value: Any
) -> TextEdit:
    lines = []
    for i, k in enumerate(keys):
        pad = " " * (indent + i * step)
        lines.append(f"{pad}{k}:" if i < len(keys) - 1 else f"{pad}{k}: {yaml_scalar(value)}")
    offset = _line_offset(text, line0)
    prefix = "" if offset == 0 or text[offset - 1] == "\n" else "\n"
    newline = "\r\n" if "\r\n" in text else "\n"
    block = prefix + newline.join(lines) + newline
    return TextEdit.model_construct(path=path, start=offset, end=offset, text=block, line=line0 + 1)


def _line_offset(text: str, line0: int) -> int:
    """Character offset of the start of 0-based line ``line0`` (the end when past it)."""
    pos = 0
    for _ in range(line0):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    return pos
