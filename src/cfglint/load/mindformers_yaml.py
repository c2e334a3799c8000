"""MindFormers YAML files: one document, with its `base_config` chain merged in."""

from __future__ import annotations

import os

from cfglint.load.yamltree import Node, load_yaml
from cfglint.model.errors import InputError
from cfglint.model.record import Record

MAX_BASE_FILES = 64


class MindFormersYaml(Record):
    __slots__ = ("files", "path", "root", "texts", "warnings")

    path: str
    root: Node  # merged tree; every leaf keeps the file it was written in
    files: list[str]  # the file itself first, then bases
    texts: dict[str, str]
    warnings: list[str]

    def __init__(
        self,
        path: str,
        root: Node,
        files: list[str] | None = None,
        texts: dict[str, str] | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        self.path = path
        self.root = root
        self.files = [] if files is None else files
        self.texts = {} if texts is None else texts
        self.warnings = [] if warnings is None else warnings


def load_mindformers_yaml(path: str) -> MindFormersYaml:
    out = MindFormersYaml(path=path, root=Node({}, path, 1, 1))
    out.root = _load(path, out, chain=())
    return out


def _load(path: str, out: MindFormersYaml, chain: tuple[str, ...]) -> Node:
    real = os.path.realpath(path)
    if real in chain:
        raise InputError(path, "base_config includes itself (a cycle)")
    if len(out.files) >= MAX_BASE_FILES:
        raise InputError(path, f"more than {MAX_BASE_FILES} base_config files")
    doc = load_yaml(path)
    out.files.append(path)
    out.texts[path] = doc.text
    out.warnings.extend(doc.warnings)
    root = doc.root
    base = root.value.get("base_config")
    if base is None:
        return root
    # As MindFormerConfig does it: the bases, in the order listed, are combined section by
    # section (a later base replaces a whole top-level section of an earlier one); then the
    # file itself is deep-merged on top. Paths are relative to the listing file's folder.
    entries = base.value if base.is_seq else [base]
    combined: dict[str, Node] = {}
    for entry in entries:
        if not isinstance(entry.value, str) or not entry.value.strip():
            raise InputError(path, "base_config entries must be file paths", line=entry.line)
        target = os.path.normpath(os.path.join(os.path.dirname(path), entry.value.strip()))
        if not os.path.lexists(target):
            raise InputError(path, f"base_config file {entry.value!r} not found", line=entry.line)
        try:
            combined.update(_load(target, out, (*chain, real)).value)
        except InputError as exc:
            # name the including file too: the user may only know the top-level config
            exc.message = f"{exc.message} (base_config of {path}:{entry.line})"
            raise
    merged = Node(combined, path, 1, 1)
    own = Node({k: v for k, v in root.value.items() if k != "base_config"}, path, root.line, 1)
    return merge(merged, own)


def merge(base: Node, over: Node) -> Node:
    """Deep merge of mappings; anything else in ``over`` replaces ``base``."""
    if not (base.is_map and over.is_map):
        return over
    out = dict(base.value)
    for k, v in over.value.items():
        out[k] = merge(out[k], v) if k in out else v
    node = Node(out, over.path, over.line, over.column)
    node.key_line, node.key_column = over.key_line, over.key_column
    return node
