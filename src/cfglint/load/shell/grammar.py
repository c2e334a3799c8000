"""tree-sitter-bash's grammar, taken from its compiled binding alone.

``import tree_sitter_bash`` runs the package's ``__init__``, which imports
``importlib.resources`` (and with it tempfile, shutil, bz2, lzma and zlib) only to read its
highlight queries, which cfglint never uses: about 10 M instructions of a 1,016 M pair lint
(issue 29). ``language()`` lives in the binding, an extension module found on the package's
own search path, as the import system finds it; an install that path finder cannot read
(a zip, an already imported package) gets the package itself."""

from __future__ import annotations

import sys
from importlib.machinery import PathFinder
from importlib.util import find_spec, module_from_spec

PACKAGE = "tree_sitter_bash"


def bash_language() -> object:
    """The grammar's ``tree_sitter.Language`` capsule (what ``tree_sitter_bash.language()``
    returns)."""
    package = sys.modules.get(PACKAGE)
    spec = None
    if package is None:
        found = find_spec(PACKAGE)
        where = found.submodule_search_locations if found else None
        spec = PathFinder.find_spec(f"{PACKAGE}._binding", where) if where else None
    if spec is None or spec.loader is None:
        import tree_sitter_bash

        return tree_sitter_bash.language()
    binding = module_from_spec(spec)
    spec.loader.exec_module(binding)
    return binding.language()
