"""Models that our own code builds from trusted values, by the hundred on every lint.

``model_construct`` skips validation, but pydantic still works out each default it fills on
every call: a field's ``default_factory`` has its signature inspected each time (whether it
takes the validated data; for a C type such as ``list`` that tokenizes its text signature),
and each plain default goes through its copy rules. Across the ~1,300 values, rules and
findings of a pair lint that cost more than a tenth of its run (see bench/). A
:class:`TrustedModel` works its defaults out once per class and fills ``__dict__``,
``__pydantic_fields_set__``, ``__pydantic_extra__`` and ``__pydantic_private__`` exactly as
``model_construct`` does; a class this does not cover (aliases, extra fields kept, private
attributes, a post-init hook, a factory that reads the validated data) is handed to
pydantic's own ``model_construct``. tests/model/test_trusted.py checks that both give the same
instance for every model that uses it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Self

from pydantic import BaseModel, ConfigDict
from pydantic_core import PydanticUndefined

# one field of a plan: (name, the default itself, or None; a callable making it, or None;
# required). A default that is its own deep copy (None, a number, a string, a tuple of them,
# an enum member) is shared, as pydantic's copy returns it unchanged too.
_Step = tuple[str, Any, Callable[[], Any] | None, bool]
_PLANS: dict[type[BaseModel], tuple[_Step, ...] | None] = {}
# the same plan for the common call, every value given by a field's name and every required
# field among them: (every field in order, holding its shared default or a stand-in, their
# count, the required names, (name, factory) of the defaults made per instance). The
# instance's fields are then one dict merge in the fields' order (a key keeps its place); a
# name that is no field makes the merge longer than the field count.
_Fast = tuple[dict[str, Any], int, frozenset[str], tuple[tuple[str, Any], ...]]
_FAST: dict[type[BaseModel], _Fast] = {}
# the four attributes every instance holds: pydantic's BaseModel keeps them in __slots__, and
# their descriptors' setters, bound once, set each one in a single C call (object.__setattr__
# would look the slot up on the class and check the call on every instance)
_new = object.__new__
_set_dict = vars(BaseModel)["__dict__"].__set__
_set_fields_set = vars(BaseModel)["__pydantic_fields_set__"].__set__
_set_extra = vars(BaseModel)["__pydantic_extra__"].__set__
_set_private = vars(BaseModel)["__pydantic_private__"].__set__
# defaults that are their own deep copy, known without asking copy.deepcopy
_ATOMIC = frozenset({type(None), bool, int, float, str, bytes})


# pydantic's own defaults of the settings its class creation reads, written out: a setting
# the class's config lacks is found by a KeyError from the config, caught, then a second
# lookup, once per setting and field (~1,100 a pair lint across ~350 fields). Subclasses
# inherit them; tests/model/test_trusted.py checks they are pydantic's defaults.
DEFAULT_SETTINGS = ConfigDict(
    protected_namespaces=("model_validate", "model_dump"),
    alias_generator=None,
    field_title_generator=None,
    ignored_types=(),
    use_attribute_docstrings=False,
    frozen=False,
)


class TrustedModel(BaseModel):
    """A model whose ``model_construct`` resolves its defaults once per class."""

    model_config = ConfigDict(defer_build=True, **DEFAULT_SETTINGS)

    @classmethod
    def model_construct(cls, _fields_set: set[str] | None = None, **values: Any) -> Self:
        fast = _FAST.get(cls)
        if fast is not None:
            fields = {**fast[0], **values}
            if len(fields) != fast[1] or (fast[2] and not values.keys() >= fast[2]):
                return _instance(cls, *_fill(_PLANS[cls], values), _fields_set)  # type: ignore[arg-type]
            for name, make in fast[3]:
                if name not in values:
                    fields[name] = make()
            m = _new(cls)
            _set_dict(m, fields)
            _set_fields_set(m, set(values) if _fields_set is None else _fields_set)
            _set_extra(m, None)
            _set_private(m, None)
            return m
        plan = _PLANS[cls] if cls in _PLANS else _plan(cls)
        if plan is None:
            return super().model_construct(_fields_set, **values)
        return _instance(cls, *_fill(plan, values), _fields_set)


_CONSTRUCT = TrustedModel.model_construct.__func__  # type: ignore[attr-defined]


def _instance(
    cls: type[TrustedModel], fields: dict[str, Any], given: set[str], fields_set: set[str] | None
) -> Any:
    """The instance ``model_construct`` makes, with these fields."""
    m = _new(cls)
    _set_dict(m, fields)
    _set_fields_set(m, given if fields_set is None else fields_set)
    _set_extra(m, None)
    _set_private(m, None)
    return m


def _fill(plan: tuple[_Step, ...], values: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The fields and the names given, step by step (a required field not given is left
    out, as pydantic leaves it)."""
    fields: dict[str, Any] = {}
    given = set()
    for name, default, make, required in plan:
        if name in values:
            fields[name] = values[name]
            given.add(name)
        elif make is not None:
            fields[name] = make()
        elif not required:
            fields[name] = default
    return fields, given


def _plan(cls: type[BaseModel]) -> tuple[_Step, ...] | None:
    """The class's defaults, worked out once; None when pydantic must build it."""
    plan: tuple[_Step, ...] | None = None
    if _plain(cls):
        steps = [_step(name, f) for name, f in cls.__pydantic_fields__.items()]
        plan = None if any(s is None for s in steps) else tuple(s for s in steps if s is not None)
    _PLANS[cls] = plan
    if plan is not None:
        _FAST[cls] = (
            {name: default for name, default, _, _ in plan},
            len(plan),
            frozenset(name for name, _, _, required in plan if required),
            tuple((name, make) for name, _, make, _ in plan if make is not None),
        )
    return plan


def _plain(cls: type[BaseModel]) -> bool:
    """Whether ``model_construct`` does nothing for the class beyond its fields' defaults."""
    return (
        cls.model_config.get("extra") != "allow"
        and not cls.__pydantic_root_model__
        and cls.__pydantic_post_init__ is None
        and not cls.__private_attributes__
        and all(
            f.alias is None and f.validation_alias is None for f in cls.__pydantic_fields__.values()
        )
    )


def _step(name: str, field: Any) -> _Step | None:
    factory = field.default_factory
    if factory is not None:
        # a C type (list, dict) is called with no argument: pydantic passes the data only
        # to a factory with one required positional parameter, which none of them has
        # (asking inspect for theirs tokenizes a text signature); nor has a trusted model's
        # own model_construct (a config's nine sections: inspect.signature of each)
        builtin = isinstance(factory, type) and factory.__module__ == "builtins"
        ours = getattr(factory, "__func__", None) is _CONSTRUCT
        if not (builtin or ours) and field.default_factory_takes_validated_data:
            return None
        return (name, None, factory, False)
    default = field.default
    if default is PydanticUndefined:
        return (name, None, None, True)
    if type(default) in _ATOMIC or copy.deepcopy(default) is default:
        return (name, default, None, False)
    return (name, None, lambda: copy.deepcopy(default), False)
