"""The pydantic models of the normalized config, the values, the findings and the rules:
their JSON schemas are the contract (``cfglint show --format json``, the rule files, the
report), so a change meant only to make their classes cheaper to create must leave each
schema exactly as it was (the snapshot), and the models must still validate.

Their modules evaluate field annotations when the class body runs instead of keeping them as
strings (``from __future__ import annotations``): pydantic then has no string to turn into a
``typing.ForwardRef``, which Python 3.11 compiles with ``compile()`` one annotation at a
time, about 15 M instructions of a pair lint across these ~300 fields (bench/results/
fresh_env.md, "module-level work at import"). The last test keeps it that way."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from cfglint.model.values import Origin, Value

# the modules whose models every lint creates at import
MODULES = (
    "cfglint.model.values",
    "cfglint.model.config",
    "cfglint.model.findings",
    "cfglint.check.schema",
)
SNAPSHOT = Path(__file__).with_name("model_schemas.json")


def _models() -> dict[str, type[BaseModel]]:
    out: dict[str, type[BaseModel]] = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseModel)
                and obj.__module__ == name
                and attr == obj.__name__
            ):
                out[f"{name}.{attr}"] = obj
    return dict(sorted(out.items()))


def _schemas() -> dict[str, object]:
    return {key: cls.model_json_schema() for key, cls in _models().items()}


def test_json_schemas_match_the_snapshot() -> None:
    # regenerate (only for an intended schema change):
    #   python -c "from tests.model.test_model_schemas import write; write()"
    want = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    got = json.loads(json.dumps(_schemas()))
    assert sorted(got) == sorted(want)
    for key in want:
        assert got[key] == want[key], key


def write() -> None:
    SNAPSHOT.write_text(json.dumps(_schemas(), indent=1, sort_keys=True) + "\n", encoding="utf-8")


def test_models_still_validate() -> None:
    from cfglint.check.schema import RuleFile
    from cfglint.model.config import Config

    v = Value.model_validate(
        {
            "value": 2,
            "origin": "file",
            "loc": {"path": "a.sh", "line": 3},
            "alternatives": [{"value": 4, "origin": "file"}],
        }
    )
    assert v.origin is Origin.FILE and v.alternatives[0].value == 4
    assert isinstance(v.alternatives, tuple) and isinstance(v.alternatives[0], Value)
    cfg = Config.model_validate({"side": "megatron", "path": "x", "kind": "megatron-script"})
    assert cfg.structure.num_layers is None
    rules = RuleFile.model_validate(
        {
            "section": "optimizer",
            "title": "Optimizer",
            "rules": [
                {
                    "id": "OPT999",
                    "row": "optimizer.beta2",
                    "severity": "error",
                    "title": "t",
                    "message": "m",
                    "rationale": "r",
                    "fix": "f",
                    "kind": "compare",
                    "field": "optimizer.beta2",
                }
            ],
        }
    )
    assert type(rules.rules[0]).__name__ == "CompareRule"
    with pytest.raises(ValueError, match="normalized model"):
        RuleFile.model_validate(
            {
                "section": "optimizer",
                "title": "Optimizer",
                "rules": [{**rules.rules[0].model_dump(), "field": "optimizer.nope"}],
            }
        )


# further modules on the lint path whose pydantic models or NamedTuples are created at import
EVALUATED = (
    *MODULES,
    "cfglint.load.detect",
    "cfglint.load.cache_envelope",
    "cfglint.evidence.lr.schedule",
    "cfglint.normalize.mindformers.defaults",
)


def _annotated_classes() -> dict[str, type]:
    out: dict[str, type] = {}
    for name in EVALUATED:
        for attr, obj in vars(importlib.import_module(name)).items():
            own = isinstance(obj, type) and obj.__module__ == name and attr == obj.__name__
            if own and (
                issubclass(obj, BaseModel) or (issubclass(obj, tuple) and "_fields" in vars(obj))
            ):
                out[f"{name}.{attr}"] = obj
    return out


@pytest.mark.parametrize("key", list(_annotated_classes()))
def test_field_annotations_are_not_strings(key: str) -> None:
    cls = _annotated_classes()[key]
    strings = {n: a for n, a in inspect.get_annotations(cls).items() if isinstance(a, str)}
    assert not strings, f"{key}: string annotations {strings} cost a compile() each at import"
