"""model.record: the lint path's record classes behave as the dataclasses they replaced did
(equality and repr over the fields in their declared order, replace, hashing only when
frozen, cached properties beside slots)."""

from __future__ import annotations

from functools import cached_property

import pytest

from cfglint.model.record import Frozen, Record


class Pair(Record):
    __slots__ = ("b", "a")  # noqa: RUF023 - deliberately not in field order

    a: int
    b: list[int]

    def __init__(self, a: int, b: list[int] | None = None) -> None:
        self.a = a
        self.b = [] if b is None else b


class Point(Frozen):
    __slots__ = ("x", "y")

    x: int
    y: int

    def __init__(self, x: int, y: int = 0) -> None:
        self.x = x
        self.y = y


class Other(Frozen):
    __slots__ = ("x", "y")

    x: int
    y: int

    def __init__(self, x: int, y: int = 0) -> None:
        self.x = x
        self.y = y


class Lazy(Record):
    __slots__ = ("__dict__", "n")

    n: int

    def __init__(self, n: int) -> None:
        self.n = n

    @cached_property
    def double(self) -> int:
        return self.n * 2


def test_fields_follow_the_annotations_not_the_slots() -> None:
    assert Pair._fields == ("a", "b")
    assert repr(Pair(1, [2])) == "Pair(a=1, b=[2])"
    assert Lazy._fields == ("n",)


def test_equality_is_by_fields_and_class() -> None:
    assert Pair(1, [2]) == Pair(1, [2])
    assert Pair(1) != Pair(1, [2])
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert Point(1, 2) != Other(1, 2)  # like dataclasses: another class is never equal
    assert Point(1, 2) != (1, 2)  # and a record is no tuple


def test_repr_of_a_record_that_holds_itself_ends() -> None:
    p = Pair(1)
    p.b.append(p)  # type: ignore[arg-type]
    assert repr(p) == "Pair(a=1, b=[...])"


def test_a_lone_field_compares_as_a_tuple() -> None:
    nan = float("nan")
    assert Lazy(nan) == Lazy(nan)  # type: ignore[arg-type]  # (nan,) == (nan,): same object


def test_only_frozen_records_hash() -> None:
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert len({Point(1, 2), Point(1, 2), Point(3)}) == 2
    with pytest.raises(TypeError):
        hash(Pair(1))


def test_replace_copies_with_changes() -> None:
    p = Point(1, 2)
    q = p.replace(y=5)
    assert (q.x, q.y, p.y) == (1, 5, 2) and type(q) is Point
    with pytest.raises(TypeError):
        p.replace(z=1)


def test_slots_refuse_unknown_attributes_and_dict_allows_cached_properties() -> None:
    with pytest.raises(AttributeError):
        Point(1).z = 3  # type: ignore[attr-defined]
    lazy = Lazy(4)
    assert lazy.double == 8 and lazy == Lazy(4)
