"""Values, positions, findings and reports are built with ``model_construct`` on the lint path
(pydantic's validator is built only when something validates: see cfglint.model.values).
This checks that what our constructors build is exactly what validation would have built,
type for type, on every fixture pair and the bundled example: a list where a tuple belongs, a
plain string where an ``Origin`` belongs, a wrong literal would all fail here."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from cfglint.check.pipeline import Options, lint
from cfglint.model.findings import Report
from cfglint.model.values import Loc, Origin, Value

EX = "fixtures/examples/llama2_7b"
DENSE = "fixtures/pairs/llama2_dense"
MOE = "fixtures/pairs/qwen3_moe"
PAIRS = {
    "example": (f"{EX}/pretrain_llama2_7b.yaml", f"{EX}/pretrain_llama2_7b.sh", None),
    "dense": (
        f"{DENSE}/llama2_7b_align.yaml",
        f"{DENSE}/pretrain_llama2_align.sh",
        f"{DENSE}/msrun_align.sh",
    ),
    "moe": (
        f"{MOE}/qwen3_moe_align.yaml",
        f"{MOE}/pretrain_qwen3_moe_align.sh",
        f"{MOE}/msrun_align.sh",
    ),
    "megatron_args_file": (None, "fixtures/megatron/args.txt", None),
    "megatron_yaml_cfg": (None, "fixtures/megatron/gpt_yaml_cfg.yaml", None),
    "megatron_log": (None, "fixtures/logs/megatron_train.log", None),
}


def _fields(m: BaseModel) -> dict[str, Any]:
    """A model's field values, nested models turned back into plain dicts for validation."""
    return {k: _plain(getattr(m, k)) for k in type(m).model_fields}


def _plain(x: Any) -> Any:
    if isinstance(x, BaseModel):
        return _fields(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(i) for i in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _same(a: Any, b: Any, where: str) -> None:
    """Equal, and of the same type all the way down."""
    assert type(a) is type(b), f"{where}: built {type(a).__name__}, validated {type(b).__name__}"
    if isinstance(a, BaseModel):
        for k in type(a).model_fields:
            _same(getattr(a, k), getattr(b, k), f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    else:
        assert a == b, where


def _revalidated(m: BaseModel) -> BaseModel:
    return type(m).model_validate(_fields(m))


@pytest.mark.parametrize("name", PAIRS)
def test_constructed_models_equal_their_validated_copies(name: str) -> None:
    mf, mg, launch = PAIRS[name]
    report, ctx = lint(Options(mindformers=[mf] if mf else [], megatron=mg, launch=launch))
    assert not report.errors, report.errors
    for cfg in (ctx.mf, ctx.mg):
        if cfg is not None:
            assert sum(cfg.get(p) is not None for p in cfg.field_paths()) > 50
            _same(cfg, _revalidated(cfg), cfg.side)
    if name == "example":  # the aligned fixture pairs have no findings
        assert len(report.findings) > 10
    _same(report, _revalidated(report), "report")


def test_the_check_fails_on_what_validation_would_convert() -> None:
    """The comparison above can fail: a list where a tuple belongs, a string for an Origin."""
    loc = Loc.model_construct(path="a.yaml", line=3)
    listed = Value.model_construct(value=1, origin=Origin.FILE, loc=loc, via=[loc])
    with pytest.raises(AssertionError, match="via"):
        _same(listed, _revalidated(listed), "v")
    plain = Value.model_construct(value=1, origin="file")
    with pytest.raises(AssertionError, match="origin"):
        _same(plain, _revalidated(plain), "v")
    # the constructors make those conversions themselves
    made = Value.make(value=1, origin="file", loc=loc, via=[loc])
    _same(made, _revalidated(made), "v")
    _same(Report.model_construct(), _revalidated(Report.model_construct()), "report")


def _frames(build: Any) -> list[str]:
    calls: list[str] = []

    def watch(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)

    import sys

    sys.setprofile(watch)
    try:
        build()
    finally:
        sys.setprofile(None)
    return calls


def test_a_named_constructor_builds_its_value_in_one_construct_call() -> None:
    """Issue 29: ``written``/``default``/``unknown``/``derived`` give their origin as a
    member, so they call ``model_construct`` themselves rather than through ``make`` (a
    second frame and a second copy of the keywords, ~400 values a pair lint); ``via`` is
    still made a tuple, as validation makes it."""
    loc = Loc.model_construct(path="a.sh", line=2)
    a = Value.written(1, "--a", loc)
    a2 = Value.written(1, "--a", loc, via=[loc])
    assert a2.via == (loc,) and a2 == Value.model_validate(a2.model_dump())
    for build in (
        lambda: Value.written(1, "--a", loc, via=[loc]),
        lambda: Value.default(2, "--b", "Megatron-LM core_v0.13.0"),
        lambda: Value.unknown("--c", "why", loc, via=[loc]),
        lambda: Value.derived(3, "c", "a + 1", [a, None]),
    ):
        frames = _frames(build)
        assert frames.count("model_construct") == 1 and "make" not in frames, frames
        value = build()
        assert value == Value.model_validate(value.model_dump())
