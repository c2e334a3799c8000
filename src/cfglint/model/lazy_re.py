"""Regular expressions compiled on their first use, for module-level patterns that a pair
lint never reaches.

``re.compile`` runs sre's compiler, which is Python code: a pattern costs tens to hundreds of
thousands of instructions (a long alternation of keys nearly a million), paid at import by
every run whether or not the pattern is ever matched. :func:`compile_on_use` defers that to
the first call of one of its methods; from then on the compiled pattern's bound methods sit
in the object's own attributes, so a hot call site pays one attribute lookup, as it would on
the compiled pattern. ``tests/model/test_lazy_re.py`` bounds the number of patterns a pair
lint compiles.
"""

import re
from typing import Any, AnyStr, cast

# what call sites use of a compiled pattern (``pattern`` is answered without compiling)
_METHODS = ("match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer")


class _OnUse:
    """Stands for ``re.compile(pattern, flags)`` until a method is first asked for."""

    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:
        # only reached for an attribute not yet set: the first use of a method
        if name.startswith("_"):  # copy/pickle probing an instance built without __init__
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self._flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        self.compiled = compiled
        return getattr(compiled, name)


def compile_on_use(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """``re.compile(pattern, flags)``, compiled when first used. Use it with methods only
    (``P.search(text)``); ``re.sub(P, ...)`` and friends need a real pattern."""
    return cast(re.Pattern[AnyStr], _OnUse(pattern, flags))
