"""TrustedModel.model_construct (cfglint.model.trusted) builds what pydantic's own
model_construct builds, for every model a lint constructs, and it stops re-inspecting each
default factory on every call (the cost it removes, see bench/results/fresh_env.md)."""

from __future__ import annotations

import inspect
import sys
from collections import Counter
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from cfglint.check.pipeline import Options, lint
from cfglint.check.rule import Rule
from cfglint.model.config import Config
from cfglint.model.trusted import TrustedModel

EX = "fixtures/examples/llama2_7b"
DENSE = "fixtures/pairs/llama2_dense"
PAIRS = [
    (f"{EX}/pretrain_llama2_7b.yaml", f"{EX}/pretrain_llama2_7b.sh", None),
    (
        f"{DENSE}/llama2_7b_align.yaml",
        f"{DENSE}/pretrain_llama2_align.sh",
        f"{DENSE}/msrun_align.sh",
    ),
]
PYDANTIC = BaseModel.model_construct.__func__  # type: ignore[attr-defined]
TRUSTED = TrustedModel.model_construct.__func__  # type: ignore[attr-defined]


def _same_instance(a: BaseModel, b: BaseModel) -> None:
    assert type(a) is type(b)
    assert list(a.__dict__) == list(b.__dict__)  # field order: what model_dump follows
    for k, v in a.__dict__.items():
        assert type(v) is type(b.__dict__[k]) and v == b.__dict__[k], k
    assert a.model_fields_set == b.model_fields_set
    assert a.__pydantic_extra__ == b.__pydantic_extra__
    assert a.__pydantic_private__ == b.__pydantic_private__


@pytest.mark.parametrize("pair", PAIRS, ids=["example", "dense"])
def test_every_construction_of_a_lint_equals_pydantics(
    pair: tuple[str, str, str | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    built: Counter[str] = Counter()

    def both(cls: type[BaseModel], _fields_set: set[str] | None = None, **values: Any) -> Any:
        ours = TRUSTED(cls, _fields_set, **dict(values))
        _same_instance(ours, PYDANTIC(cls, _fields_set, **dict(values)))
        built[cls.__name__] += 1
        return ours

    monkeypatch.setattr(TrustedModel, "model_construct", classmethod(both))
    mf, mg, launch = pair
    report, _ = lint(Options(mindformers=[mf], megatron=mg, launch=launch))
    assert not report.errors
    # the hot models of a lint: values, positions, configs, rules, findings, reports
    assert {"Value", "Loc", "Config", "Finding", "Report"} <= set(built) or not report.findings
    assert {"Value", "Loc", "Config", "Report"} <= set(built)


def test_a_model_it_does_not_cover_is_built_by_pydantic() -> None:
    """Aliases, kept extras, private attributes and factories that read the validated data
    are pydantic's to fill; the result is still pydantic's."""

    class Aliased(TrustedModel):
        name: str = Field(default="x", alias="Name")

    class Extra(TrustedModel):
        model_config = ConfigDict(extra="allow")
        a: int = 1

    class Private(TrustedModel):
        a: int = 1
        _p: int = PrivateAttr(default=5)

    class Reads(TrustedModel):
        a: int = 1
        b: int = Field(default_factory=lambda data: data["a"] + 1)

    for cls, values in (
        (Aliased, {"Name": "y"}),
        (Extra, {"a": 2, "zz": 3}),
        (Private, {}),
        (Reads, {"a": 4}),
    ):
        _same_instance(cls.model_construct(**values), PYDANTIC(cls, **values))
    assert Reads.model_construct(a=4).b == 5
    assert Private.model_construct()._p == 5


def test_defaults_are_copied_as_pydantic_copies_them() -> None:
    class Holder(TrustedModel):
        items: list[int] = Field(default_factory=list)
        plain: dict[str, int] = {}  # noqa: RUF012 - pydantic copies a mutable default
        kept: tuple[str, ...] = ("a",)
        required: int

    one, two = Holder.model_construct(), Holder.model_construct()
    one.items.append(1)
    one.plain["a"] = 1
    assert two.items == [] and two.plain == {}
    assert "required" not in one.__dict__  # as model_construct leaves a missing required field
    _same_instance(Holder.model_construct(required=3), PYDANTIC(Holder, required=3))
    _same_instance(
        Holder.model_construct({"kept"}, kept=("b",)), PYDANTIC(Holder, {"kept"}, kept=("b",))
    )


def _signature_calls(build: Any) -> int:
    calls = []

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is inspect.signature.__code__:
            calls.append(frame)

    sys.setprofile(watch)
    try:
        build()
    finally:
        sys.setprofile(None)
    return len(calls)


def test_constructing_again_inspects_no_default_factory() -> None:
    """pydantic asks inspect.signature whether each default factory takes the validated
    data on every model_construct (for list, by tokenizing its text signature): a Config
    fills 15 fields from factories, each rule one. Worked out once per class, a second
    construction asks nothing."""
    rule = {
        "id": "OPT999",
        "kind": "compare",
        "row": "optimizer.beta2",
        "field": "optimizer.beta2",
        "severity": "error",
        "title": "t",
        "message": "m",
        "rationale": "r",
        "fix": "f",
    }

    def build() -> None:
        Config.create(side="megatron", path="a.sh", kind="megatron-script")
        Rule.from_data(rule, section="Optimizer")

    build()
    assert _signature_calls(build) == 0


def test_a_construction_given_every_required_field_is_one_merge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 29: once a class's plan is known, a construction whose values are all fields
    and hold every required one is one dict merge in the fields' order, not a step per
    field; what it builds is pydantic's instance, a factory's default made anew each time.
    A call it does not cover (a required field missing, a name that is no field) still
    takes the steps."""
    from cfglint.model import trusted

    class Holder(TrustedModel):
        first: int = 0
        items: list[int] = Field(default_factory=list)
        required: str
        last: tuple[str, ...] = ("a",)

    Holder.model_construct(required="x")  # works the plan out
    steps: list[int] = []
    real = trusted._fill
    monkeypatch.setattr(trusted, "_fill", lambda *a: steps.append(1) or real(*a))
    for values in ({"required": "y", "first": 2}, {"last": ("b",), "required": "z"}):
        one = Holder.model_construct(**values)
        _same_instance(one, PYDANTIC(Holder, **values))
        one.items.append(1)
        assert Holder.model_construct(**values).items == []
    assert steps == []
    for values in ({"first": 3}, {"required": "y", "other": 1}):
        _same_instance(Holder.model_construct(**values), PYDANTIC(Holder, **values))
    assert steps == [1, 1]


def test_a_construction_sets_the_instance_slots_through_setters_bound_once() -> None:
    """Issue 29: object.__setattr__ looks each of the four slots (``__dict__``, the fields
    set, extra, private) up on the class and checks the call, per instance: ~1,200
    constructions a pair lint. The slot descriptors' setters are bound once at import; the
    class's allocator is object.__new__ itself, not looked up through the model's class."""
    code = TrustedModel.model_construct.__func__.__code__  # type: ignore[attr-defined]
    assert "__setattr__" not in code.co_names
    assert "__new__" not in code.co_names
    _same_instance(
        Config.create(side="megatron", path="a.sh", kind="megatron-script"),
        PYDANTIC(Config, side="megatron", path="a.sh", kind="megatron-script"),
    )


def test_working_a_plan_out_deep_copies_no_atomic_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """None, numbers and strings are their own copies: the plan shares them without asking
    copy.deepcopy (a config section has up to 47 None defaults); anything else is still
    asked, and a default that is not its own copy is copied per instance."""
    import copy

    asked: list[object] = []
    real = copy.deepcopy
    monkeypatch.setattr(copy, "deepcopy", lambda x, *a: asked.append(x) or real(x, *a))

    class Atoms(TrustedModel):
        a: int | None = None
        b: int = 3
        c: float = 0.5
        d: str = "x"
        e: bool = False
        f: tuple[int, ...] = (1,)
        g: list[int] = [1]  # noqa: RUF012 - pydantic copies a mutable default

    one = Atoms.model_construct()
    _same_instance(one, PYDANTIC(Atoms))
    assert asked[:2] == [(1,), [1]]
    one.g.append(2)
    assert Atoms.model_construct().g == [1]


def test_creating_a_model_class_reads_no_setting_from_pydantics_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 29: pydantic reads three settings per field and three per class; one the
    class's config lacks costs a KeyError caught, then pydantic's table of defaults. The
    trusted models' config holds them, with pydantic's own default values."""
    from pydantic._internal import _config

    from cfglint.model.trusted import DEFAULT_SETTINGS

    assert {k: _config.config_defaults[k] for k in DEFAULT_SETTINGS} == DEFAULT_SETTINGS
    missed: list[str] = []
    real = _config.ConfigWrapper.__getattr__

    def watch(self: Any, name: str) -> Any:
        if name not in self.effective_config:
            missed.append(name)
        return real(self, name)

    monkeypatch.setattr(_config.ConfigWrapper, "__getattr__", watch)

    class Fields(TrustedModel):
        model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
        a: int | None = None
        b: str = ""

    assert missed == []
    assert Fields.model_construct(a=1) == Fields(a=1)


def test_working_a_plan_out_inspects_no_trusted_models_construct() -> None:
    """Issue 29: a config's nine sections are made by their classes' own model_construct;
    pydantic would ask inspect.signature whether each takes the validated data (it does
    not: its one positional parameter has a default). Any other factory is still asked."""

    class Section(TrustedModel):
        a: int | None = None

    class Holder(TrustedModel):
        section: Section = Field(default_factory=Section.model_construct)
        items: list[int] = Field(default_factory=list)

    class Other(TrustedModel):
        made: list[int] = Field(default_factory=lambda: [1])

    assert _signature_calls(Holder.model_construct) == 0
    _same_instance(Holder.model_construct(), PYDANTIC(Holder))
    assert _signature_calls(Other.model_construct) == 1
