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
