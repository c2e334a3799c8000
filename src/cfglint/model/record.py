"""Plain record classes for the lint path, without ``dataclasses``.

Python 3.11's ``@dataclass`` writes each generated method as source text and compiles it
when the class is created (about 4.7 M instructions for a frozen six-field class); a lint
creates some thirty such classes, a tenth of what it costs. A record here is a class with
``__slots__`` and a hand-written ``__init__`` (compiled once, into the ``.pyc``); this base
gives it what the dataclass gave: equality and ``repr`` over its fields in order, and
``replace``. ``Frozen`` records also hash by their fields (they are never changed after
``__init__``, by convention: enforcing it would slow every construction).
"""

from __future__ import annotations

from inspect import get_annotations
from operator import attrgetter
from reprlib import recursive_repr
from typing import Any, ClassVar, Self


class Record:
    """A class whose fields are its annotated names, in order (a subclass adds its own after
    its base's); each is in ``__slots__`` and set by ``__init__``."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _key: ClassVar[Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the annotations, not __slots__: ruff keeps __slots__ sorted, fields keep their order
        own = get_annotations(cls)  # this class's own, in order
        cls._fields = (*cls._fields, *(n for n, a in own.items() if "ClassVar" not in str(a)))
        # one C call that reads every field as a tuple; always a tuple, as the dataclass
        # compared (a lone field's bare value would compare NaN unequal to itself)
        if len(cls._fields) > 1:
            cls._key = attrgetter(*cls._fields)
        else:
            names = cls._fields  # (a function, unlike attrgetter, would bind as a method)
            cls._key = staticmethod(lambda obj: tuple(getattr(obj, n) for n in names))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._key(self) == self._key(other))

    __hash__ = None  # type: ignore[assignment]  # mutable: like a dataclass, not hashable

    @recursive_repr()  # a node that holds itself shows "...", as a dataclass's repr did
    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{self.__class__.__qualname__}({inner})"

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (``dataclasses.replace``)."""
        return self.__class__(**{n: getattr(self, n) for n in self._fields} | changes)


class Frozen(Record):
    """A record that is never changed after ``__init__``: hashable by its fields."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(self._key(self))
