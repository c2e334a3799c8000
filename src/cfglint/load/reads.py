"""What one run's planning parsed, handed to the loaders of the same run.

Planning classifies each input by content (:mod:`cfglint.load.detect`): it parses the launch
script and the YAML the loaders then read. A pair lint parsed both twice (~20 M of its
~1,260 M instructions, bench/results/fresh_env.md). A :class:`Reads` is made by the caller
for one run, filled by the classifier and emptied by the loaders: each parse is handed over
once, to the first load of that path, and is gone after it. Nothing is kept between runs or
keyed by path alone beyond that one hand-over: a later lint of the same inputs (``--fix``'s
checks, the editor server's lint of changed text) reads the files as they are then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cfglint.load.shell.words import ShellScript
    from cfglint.load.yamltree import Document


class Reads:
    """The parses of one run's inputs, by path, each taken at most once."""

    __slots__ = ("_scripts", "_yamls")

    def __init__(self) -> None:
        self._scripts: dict[str, ShellScript] = {}
        self._yamls: dict[str, Document] = {}

    def script(self, path: str) -> ShellScript:
        """The launch script at ``path``, parsed now and kept for its loader."""
        from cfglint.load.shell import parse_script

        sh = self._scripts[path] = parse_script(path)
        return sh

    def yaml(self, path: str) -> Document:
        """The YAML file at ``path``, parsed now and kept for its loader."""
        from cfglint.load.yamltree import load_yaml

        doc = self._yamls[path] = load_yaml(path)
        return doc

    def take_script(self, path: str) -> ShellScript | None:
        return self._scripts.pop(path, None)

    def take_yaml(self, path: str) -> Document | None:
        return self._yamls.pop(path, None)

    def retain(self, paths: set[str]) -> None:
        """Drop the parses of inputs no job loads (other files of a folder, skipped)."""
        for kept in (self._scripts, self._yamls):
            for p in [p for p in kept if p not in paths]:
                del kept[p]


def parse_script_once(path: str, reads: Reads | None) -> ShellScript:
    """The launch script at ``path``: the parse planning handed over, else parsed now."""
    sh = reads.take_script(path) if reads is not None else None
    if sh is not None:
        return sh
    from cfglint.load.shell import parse_script

    return parse_script(path)


def load_yaml_once(path: str, reads: Reads | None) -> Document:
    """The YAML file at ``path``: the parse planning handed over, else parsed now."""
    doc = reads.take_yaml(path) if reads is not None else None
    if doc is not None:
        return doc
    from cfglint.load.yamltree import load_yaml

    return load_yaml(path)
