"""Where each section of a config file begins: what a finding on a setting the file leaves
to its default points at (``Config.sections``), since such a value is written nowhere.

A YAML config's sections are its mapping keys (``optimizer:`` for an optimizer default,
``model_config:`` for a model class's); a launch script's one section is its launch
command, where a missing flag would be added. Only keys written in the file itself count
(a ``base_config`` parent's keys are in another file).
"""

from __future__ import annotations

from cfglint.load.yamltree import Node
from cfglint.model.values import Loc

# deep enough for model.model_config.<sub-config>; a mapping's sections are bounded by
# what the file holds, and this bounds the walk of a pathological one
MAX_DEPTH = 4


def yaml_sections(root: Node, path: str) -> dict[str, tuple[int, int]]:
    """Every mapping key of ``root`` written in ``path`` -> its (line, column)."""
    out: dict[str, tuple[int, int]] = {}
    stack: list[tuple[str, Node, int]] = [("", root, 0)]
    while stack:
        prefix, node, depth = stack.pop()
        if depth >= MAX_DEPTH:
            continue
        for key, child in node.value.items():
            if not isinstance(key, str) or not isinstance(child, Node) or not child.is_map:
                continue
            dotted = f"{prefix}.{key}" if prefix else key
            if child.path == path and child.key_line is not None:
                out[dotted] = (child.key_line, child.key_column or 1)
            stack.append((dotted, child, depth + 1))
    return out


def command_section(path: str, command: Loc | None) -> dict[str, tuple[int, int]]:
    """A launch script's launch command, when the script itself holds it."""
    if command is None or command.path != path:
        return {}
    return {"": (command.line, command.column or 1)}
