"""Builtin checks by name: ``module.function`` under :mod:`cfglint.check.builtins`.

A rule names its check; the module is imported the first time a rule needs it, so a lint
only loads the checks it runs and nobody keeps a list of them by hand. Only functions marked
with :func:`cfglint.check.context.builtin` can be named.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cfglint.check.context import Check

PACKAGE = "cfglint.check.builtins"
_NAME = re.compile(r"^([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)$")


def resolve(name: str) -> Check:
    """The check ``name`` names; KeyError when there is none."""
    m = _NAME.match(name)
    if m is None:
        raise KeyError(name)
    module_name = f"{PACKAGE}.{m.group(1)}"
    if importlib.util.find_spec(module_name) is None:
        raise KeyError(name)
    fn = getattr(importlib.import_module(module_name), m.group(2), None)
    if fn is None or not getattr(fn, "cfglint_builtin", False):
        raise KeyError(name)
    return fn  # type: ignore[no-any-return]


def exists(name: str) -> bool:
    try:
        resolve(name)
    except KeyError:
        return False
    return True
