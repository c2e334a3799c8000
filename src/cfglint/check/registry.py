"""Builtin checks by rule id: each function under :mod:`cfglint.check.builtins` marked with
:func:`cfglint.check.context.builtin` ("ID") is the check of that builtin rule.

Validating the rule files imports every builtin module once to pair each builtin rule with
its check, and stores the check's ``module.function`` with the validated rules; a lint then
imports only the modules of the checks it runs, and nobody keeps a list of them by hand.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from cfglint.model.lazy_re import compile_on_use

if TYPE_CHECKING:
    from cfglint.check.context import Check

PACKAGE = "cfglint.check.builtins"
_NAME = re.compile(r"^([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)$")
# how a check is registered in its module's source (ruff format keeps it on one line)
_DECLARED = compile_on_use(
    r'^@builtin\("([A-Z]{2,4}[0-9]{3})"\)\s*\ndef ([a-z_][a-z0-9_]*)\(', re.M
)


def implementations() -> dict[str, list[str]]:
    """Rule id -> the checks registered for it (``module.function``), read from every
    module under :mod:`cfglint.check.builtins`."""
    import pkgutil  # rule validation only: a lint reads declared() instead

    package = importlib.import_module(PACKAGE)
    out: dict[str, list[str]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        for attr, fn in vars(module).items():
            rule_id = getattr(fn, "cfglint_rule", None)
            if isinstance(rule_id, str) and getattr(fn, "__module__", "") == module.__name__:
                out.setdefault(rule_id, []).append(f"{info.name}.{attr}")
    return out


def declared() -> dict[str, list[str]]:
    """Rule id -> the checks registered for it, read from the builtin modules' source
    without importing them (a ready rule set: a lint imports only the modules of the checks
    it runs). :func:`implementations` imports them instead; the tests check the two agree."""
    spec = importlib.util.find_spec(PACKAGE)
    out: dict[str, list[str]] = {}
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for path in sorted(Path(folder).glob("*.py")):
            text = path.read_text(encoding="utf-8")
            for rule_id, function in _DECLARED.findall(text):
                out.setdefault(rule_id, []).append(f"{path.stem}.{function}")
    return out


def resolve(name: str, rule_id: str) -> Check:
    """The check ``name`` (``module.function``) registered for ``rule_id``; KeyError when
    there is none (a name from a cache entry is trusted no further than this)."""
    m = _NAME.match(name)
    if m is None:
        raise KeyError(name)
    module_name = f"{PACKAGE}.{m.group(1)}"
    if importlib.util.find_spec(module_name) is None:
        raise KeyError(name)
    fn = getattr(importlib.import_module(module_name), m.group(2), None)
    if fn is None or getattr(fn, "cfglint_rule", None) != rule_id:
        raise KeyError(name)
    return fn  # type: ignore[no-any-return]


def check_of(rule_id: str, name: str = "") -> Check:
    """The check of builtin rule ``rule_id``: by its stored ``name`` when that is the
    check registered for it, else found among the registered checks (a rule validated on
    its own, or a stale or planted cache entry naming another function)."""
    if name:
        try:
            return resolve(name, rule_id)
        except KeyError:
            pass
    names = _registered().get(rule_id, [])
    if len(names) != 1:
        raise KeyError(rule_id)
    return resolve(names[0], rule_id)


@cache
def _registered() -> dict[str, list[str]]:
    return implementations()
