"""Edits of a MindFormers YAML that keep everything else byte for byte.

PyYAML's composer (libyaml's where built, the reader MindFormers loads configs with, so a
file the lint reads is a file the fixer reads) gives every node its exact character span;
an edit replaces one scalar's span (or inserts one new line under an existing mapping) and
leaves comments, key order, quoting, anchors, indentation and blank lines as they were.
Dumping a round-tripped document would re-indent and re-wrap it, which is what users of a
fixer rightly refuse.

Anchors, aliases and merge keys are edited so that only the use being fixed changes: a
value reached through ``*alias`` has the alias replaced by the new value; an anchored
value that aliases use moves its anchor (and old value) to the first alias; a key that a
mapping takes from a ``<<`` merge is overridden by a key of its own.

Values are written as MindFormers will read them: PyYAML follows YAML 1.1, so a float is
written with a dot and a signed exponent (``1.0e-08``), a boolean as ``True``/``False`` (or
in the spelling the edited scalar used).
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
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


class Unreadable(ValueError):
    """The text does not compose (the fixer then writes nothing to it)."""


def _loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.lru_cache(maxsize=8)
def _compose(text: str) -> Any:
    """The node tree of ``text`` (read-only here; planning one file's fixes composes it
    once). Marks are character offsets, with libyaml as with PyYAML's own scanner."""
    import yaml

    try:
        return yaml.compose(text, Loader=_loader())
    except yaml.YAMLError as exc:
        raise Unreadable(str(exc).splitlines()[0]) from None


@functools.lru_cache(maxsize=8)
def _anchors(text: str) -> tuple[dict[str, list[int]], list[tuple[str, int, int]]]:
    """Where each anchor is defined (name -> start offsets) and every alias (name, start,
    end), in document order."""
    import yaml

    defined: dict[str, list[int]] = {}
    aliases: list[tuple[str, int, int]] = []
    for tok in yaml.scan(text, Loader=_loader()):
        if isinstance(tok, yaml.AnchorToken):
            defined.setdefault(tok.value, []).append(tok.start_mark.index)
        elif isinstance(tok, yaml.AliasToken):
            aliases.append((tok.value, tok.start_mark.index, tok.end_mark.index))
    return defined, aliases


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


_PREFIX = re.compile(r"(?:[&!][^\s]*[ \t]+)*")


def _replace_scalar(text: str, path: str, node: Any, value: Any, line: int) -> TextEdit:
    """``node``'s scalar text replaced by ``value``; an anchor or tag written before it
    stays (deleting ``&name`` would leave every ``*name`` undefined)."""
    start, end = node.start_mark.index, node.end_mark.index
    start = _PREFIX.match(text, start, end).end()  # type: ignore[union-attr]
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


def set_scalar_at(text: str, path: str, line: int, column: int, value: Any) -> TextEdit | None:
    """Replace the scalar that starts at ``line``:``column`` (1-based) with ``value``;
    None when no scalar starts there (the file changed, or the value is a collection)."""
    node = _scalar_at(_compose(text), line - 1, column - 1)
    if node is None or node.style in ("|", ">"):
        return None
    return _replace_scalar(text, path, node, value, line)


def misread_number_at(text: str, path: str, line: int, column: int) -> TextEdit | None:
    """The plain scalar at ``line``:``column`` rewritten as a YAML 1.1 number when it is
    one YAML 1.2 reads as a number and PyYAML (YAML 1.1, MindFormers' reader) as a
    string (``1e-5``); None otherwise."""
    from cfglint.load.yamltree import resolve_plain_yaml11, resolve_plain_yaml12

    node = _scalar_at(_compose(text), line - 1, column - 1)
    if node is None or node.style:  # quoted or block: a string on purpose
        return None
    raw = node.value
    meant = resolve_plain_yaml12(raw)
    if not isinstance(resolve_plain_yaml11(raw), str) or isinstance(meant, bool):
        return None
    if not isinstance(meant, (int, float)):
        return None
    return set_scalar_at(text, path, line, column, float(meant))


def _scalar_at(root: Any, line: int, col: int) -> Any:
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

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


MERGE = "tag:yaml.org,2002:merge"


@dataclass
class _Step:
    """One step of a key path through the document: the node reached, and how."""

    node: Any
    # the use of the node at this step is an alias (the node was written elsewhere)
    alias: tuple[str, int, int] | None = None
    # the key came from a ``<<`` merge of this mapping (the mapping, the merge entry)
    merged_into: tuple[Any, Any] | None = None


def _child(text: str, node: Any, key: str | int) -> _Step | None:
    """The step from ``node`` to its ``key`` (explicit keys first, then merges, as PyYAML
    resolves them: the first merged mapping that has the key wins)."""
    from yaml.nodes import MappingNode, SequenceNode

    if isinstance(key, int):
        if not isinstance(node, SequenceNode) or key >= len(node.value):
            return None
        child = node.value[key]
        if (
            any(c is child for c in node.value[:key])
            or child.start_mark.index < node.start_mark.index
        ):
            return _Step(child, alias=("", -1, -1))  # an alias inside a sequence
        return _Step(child)
    if not isinstance(node, MappingNode):
        return None
    for k, v in reversed(node.value):  # PyYAML: a later duplicate key wins
        if k.tag != MERGE and k.value == key:
            return _Step(v, alias=_alias_after(text, k.end_mark.index, v))
    for k, v in node.value:
        if k.tag != MERGE:
            continue
        for src in v.value if isinstance(v, SequenceNode) else [v]:
            found = _child(text, src, key) if isinstance(src, MappingNode) else None
            if found is not None:
                return _Step(found.node, merged_into=(node, (k, v)))
    return None


def _alias_after(text: str, at: int, node: Any) -> tuple[str, int, int] | None:
    """The alias written as the value right after offset ``at``, when ``node`` was
    written before it (a value is written after its key; an alias reuses an earlier one)."""
    if node.start_mark.index >= at:
        return None
    _, aliases = _anchors(text)
    return next((a for a in aliases if a[1] >= at), None)


def edit_path(text: str, path: str, dotted: str, value: Any) -> tuple[list[TextEdit], str]:
    """The edits that give the key path ``dotted`` the value ``value`` in this one use:
    every other use of a shared (anchored, aliased, merged) value keeps its own. Returns
    ``([], why)`` when that cannot be done in place."""
    try:
        keys = key_path(dotted)
    except ValueError as exc:
        return [], str(exc)
    node = _compose(text)
    step: _Step | None = _Step(node)
    for i, k in enumerate(keys):
        step = _child(text, step.node, k) if step is not None else None
        if step is None:
            return [], f"{dotted} is not written in {path}"
        last = i == len(keys) - 1
        if (step.alias or step.merged_into) and not last:
            how = "an alias" if step.alias else "a << merge"
            return [], f"{dotted} is reached through {how}: every use would change"
        shared = _shared_anchor(text, step.node) if not last else None
        if shared:
            return (
                [],
                f"{dotted} sits inside &{shared}, which aliases reuse: every use would change",
            )
    return _edit_use(text, path, dotted, step, value)  # type: ignore[arg-type]


def _edit_use(
    text: str, path: str, dotted: str, step: _Step, value: Any
) -> tuple[list[TextEdit], str]:
    from yaml.nodes import ScalarNode

    node = step.node
    if not isinstance(node, ScalarNode) or node.style in ("|", ">"):
        return [], f"{dotted} is not a one-line scalar"
    line = node.start_mark.line + 1
    if step.alias is not None:
        _, start, end = step.alias
        if start < 0:
            return [], f"{dotted} is an alias inside a list: edit it by hand"
        word = yaml_scalar(value)
        return [
            TextEdit.model_construct(
                path=path, start=start, end=end, text=word, line=_line_at(text, start)
            )
        ], ""
    if step.merged_into is not None:
        return _override(text, path, dotted, step.merged_into, value)
    edit = _replace_scalar(text, path, node, value, line)
    moved = _move_anchor(text, path, node)
    if moved is None:
        return [], f"{dotted} carries an anchor defined more than once"
    if moved:  # the anchor (and any tag) leave with the old value
        edit = edit.model_copy(update={"start": node.start_mark.index})
    return [edit, *moved], ""


def _shared_anchor(text: str, node: Any) -> str | None:
    """The anchor ``node`` is written with, when an alias or merge reuses it."""
    m = re.match(r"&(\S+)", text[node.start_mark.index : node.start_mark.index + 200])
    if m is None:
        return None
    _, aliases = _anchors(text)
    return m.group(1) if any(a[0] == m.group(1) for a in aliases) else None


def _move_anchor(text: str, path: str, node: Any) -> list[TextEdit] | None:
    """When ``node`` carries an anchor that aliases use: the anchor and the old value move
    to the first alias, so that every later use keeps the value it had."""
    start, end = node.start_mark.index, node.end_mark.index
    head = _PREFIX.match(text, start, end).group(0)  # type: ignore[union-attr]
    m = re.search(r"&(\S+)", head)
    if m is None:
        return []
    defined, aliases = _anchors(text)
    name = m.group(1)
    if len(defined.get(name, [])) != 1:
        return None
    uses = [a for a in aliases if a[0] == name and a[1] > end]
    if not uses:
        return []
    _, a_start, a_end = uses[0]
    old = text[start:end].strip()
    return [
        TextEdit.model_construct(
            path=path, start=a_start, end=a_end, text=old, line=_line_at(text, a_start)
        )
    ]


def _override(
    text: str, path: str, dotted: str, merged: tuple[Any, Any], value: Any
) -> tuple[list[TextEdit], str]:
    """A key of its own in the mapping that took ``dotted``'s last key from a merge."""
    mapping, (merge_key, merge_value) = merged
    if mapping.flow_style:
        return [], f"{dotted} comes from a << merge into a flow mapping: edit it by hand"
    key = str(key_path(dotted)[-1])
    indent = mapping.value[0][0].start_mark.column
    # after the merge entry: its own lines when written there, else the ``<<: *a`` line
    end = merge_value.end_mark
    if merge_value.start_mark.index > merge_key.start_mark.index:
        line0 = end.line + (1 if end.column else 0)
    else:
        line0 = merge_key.start_mark.line + 1
    return [_insert(text, path, line0, indent, 2, [key], value)], ""


def _line_at(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def set_or_add(text: str, path: str, dotted: str, value: Any) -> TextEdit | None:
    """Set ``dotted`` to ``value``: its scalar when written, else a new line under the
    deepest mapping of the path that exists. None when the path runs through something
    that is not a block mapping, or ends in a list index that is not there."""
    from yaml.nodes import ScalarNode

    keys = key_path(dotted)
    walked = _deepest(_compose(text), keys)
    if walked is None:
        return None
    node, depth = walked
    if depth < len(keys):
        return _add_missing(text, path, node, keys[depth:], value)
    if not isinstance(node, ScalarNode):
        return None
    m = node.start_mark
    return set_scalar_at(text, path, m.line + 1, m.column + 1, value)


def _deepest(root: Any, keys: list[str | int]) -> tuple[Any, int] | None:
    """The deepest node of the key path that is written (None for an empty document), and
    how many keys lead to it; None when the path runs through a scalar or a missing list
    item (nothing can be added there)."""
    from yaml.nodes import MappingNode, SequenceNode

    node, depth = root, 0
    while depth < len(keys) and node is not None:
        k = keys[depth]
        if isinstance(k, int):
            if not isinstance(node, SequenceNode) or k >= len(node.value):
                return None
            node = node.value[k]
        elif isinstance(node, MappingNode):
            child = next((v for kn, v in node.value if kn.tag != MERGE and kn.value == k), None)
            if child is None:
                break
            node = child
        else:
            return None
        depth += 1
    return node, depth


def _add_missing(
    text: str, path: str, node: Any, rest: list[str | int], value: Any
) -> TextEdit | None:
    """New lines for the keys ``rest`` that are not written, under ``node``: only in a
    non-empty block mapping (or an empty document), and only mapping keys."""
    from yaml.nodes import MappingNode

    if any(isinstance(k, int) for k in rest):
        return None
    if node is None:  # an empty document
        return _insert(text, path, 0, 0, 2, [str(k) for k in rest], value)
    if not isinstance(node, MappingNode) or node.flow_style or not node.value:
        return None
    if any(kn.tag == MERGE for kn, _ in node.value) and len(rest) > 1:
        return None  # the new mapping would hide the merged one's other keys
    return _add_under(text, path, node, [str(k) for k in rest], value)


def _add_under(text: str, path: str, mapping: Any, rest: list[str], value: Any) -> TextEdit:
    """A new entry in a block mapping: at the end of the document for the top level, after
    its last entry when that entry is a plain scalar (ending on its own line), else before
    its first entry."""
    from yaml.nodes import ScalarNode

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
