"""``Config.get`` reads a dotted field; issue 29: it asks the section class's field table
directly, not pydantic's ``model_fields`` property (three calls per lookup, ~800 lookups a
pair lint)."""

from __future__ import annotations

import pytest
from pydantic._internal import _utils

from cfglint.model.config import Config
from cfglint.model.values import Value


def test_get_reads_a_field_and_refuses_what_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = Config.create(side="megatron", path="a.sh")
    v = Value.default(32, knob="--num-layers", source="Megatron-LM")
    cfg.set("structure.num_layers", v)
    asked: list[str] = []
    real = _utils.deprecated_instance_property.__get__

    def watch(self: object, instance: object, objtype: type) -> object:
        asked.append(getattr(objtype, "__name__", ""))
        return real(self, instance, objtype)  # type: ignore[arg-type]

    monkeypatch.setattr(_utils.deprecated_instance_property, "__get__", watch)
    assert cfg.get("structure.num_layers") is v
    assert cfg.get("optimizer.beta2") is None
    assert cfg.get("env.CUDA_DEVICE_MAX_CONNECTIONS") is None
    for bad in ("structure.no_such_field", "nosection.x", "side.x"):
        with pytest.raises(KeyError):
            cfg.get(bad)
    assert asked == []


def test_a_path_read_before_is_not_checked_again() -> None:
    """Issue 29: a path is split and checked against the section's fields once; reading it
    again (most of the ~670 reads of a pair lint) is one dict lookup and one C reader, on
    any config. A path that is no field is still refused every time."""
    import sys

    one = Config.create(side="megatron", path="a.sh")
    two = Config.create(side="mindformers", path="b.yaml")
    v = Value.default(0.95, knob="--adam-beta2", source="Megatron-LM")
    two.set("optimizer.beta2", v)
    assert one.get("optimizer.beta2") is None
    called: list[str] = []

    def watch(frame: object, event: str, arg: object) -> None:
        if event == "c_call":
            called.append(getattr(arg, "__name__", ""))

    sys.setprofile(watch)
    try:
        got = two.get("optimizer.beta2")
    finally:
        sys.setprofile(None)
    assert got is v
    assert "partition" not in called and "isinstance" not in called and "getattr" not in called
    for _ in range(2):
        with pytest.raises(KeyError):
            two.get("optimizer.no_such_field")


def test_setting_a_section_field_is_one_call_and_pydantics_result() -> None:
    """Issue 29: normalizers set ~330 section fields a pair lint; each went through
    pydantic's __setattr__ and its per-name handler (two Python calls, and the handler
    worked out once per class and name). The section's own __setattr__ does what that
    handler does; a name that is no field is refused as before."""
    import sys

    from pydantic import BaseModel

    from cfglint.model.config import Structure

    ours, theirs = Structure.model_construct(), Structure.model_construct()
    v = Value.default(32, knob="--num-layers", source="Megatron-LM")
    calls: list[str] = []

    def watch(frame: object, event: str, arg: object) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)  # type: ignore[attr-defined]

    sys.setprofile(watch)
    try:
        ours.num_layers = v
    finally:
        sys.setprofile(None)
    BaseModel.__setattr__(theirs, "num_layers", v)
    assert calls == ["__setattr__"]
    assert ours.__dict__ == theirs.__dict__ and list(ours.__dict__) == list(theirs.__dict__)
    assert ours.model_fields_set == theirs.model_fields_set == {"num_layers"}
    with pytest.raises(ValueError, match="no field"):
        ours.no_such_field = v
