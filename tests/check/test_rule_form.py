"""The rules a lint runs are check/rule.py's records, built from rule data validated before;
the pydantic models of check/schema.py validate the rule files and are their contract.
Creating those ten model classes cost ~35 M instructions of a ~1,000 M pair lint (issue 29),
so a lint from a ready rule set does not import the schema (test_ready_rules.py), and each
record must keep the fields and defaults of its model (test_ready_rules.py also checks that
the rules built from a ready set are those built from validation)."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from pydantic import BaseModel

from cfglint.check import rule as form
from cfglint.check import schema
from cfglint.model.findings import RuleProbe


def _required(model: type[BaseModel]) -> dict[str, Any]:
    """A value for each required field (what the record is built from, not validated)."""
    stand_in = {"expect": {"op": "set"}, "kind": None}
    return {n: stand_in.get(n, "x") for n, f in model.model_fields.items() if f.is_required()}


def _default(model: type[BaseModel], name: str) -> Any:
    return model.model_fields[name].get_default(call_default_factory=True)


@pytest.mark.parametrize("kind", form.KINDS)
def test_each_kind_has_its_models_fields_and_defaults(kind: str) -> None:
    model = schema.RULE_CLASSES[kind]
    data = {**_required(model), "kind": kind}
    record = form.Rule.from_data(data)
    assert set(model.model_fields) <= set(form.Rule._fields)
    for name, f in model.model_fields.items():
        if not f.is_required():
            assert getattr(record, name) == _default(model, name), name


def test_the_record_has_no_field_that_no_kind_has() -> None:
    fields = {n for m in schema.RULE_CLASSES.values() for n in m.model_fields}
    assert set(form.Rule._fields) == fields
    assert set(form.KINDS) == set(schema.RULE_CLASSES)


@pytest.mark.parametrize(
    ("record", "model", "data"),
    [
        (form.Expect, schema.Expect, {"op": "eq"}),
        (form.SideFix, schema.SideFix, {"keys": ["--x"]}),
        (form.FixAction, schema.FixAction, {"safety": "safe", "export": "1"}),
    ],
)
def test_the_parts_of_a_rule_have_their_models_fields_and_defaults(
    record: type, model: type[BaseModel], data: dict[str, Any]
) -> None:
    assert record._fields == tuple(model.model_fields)
    built = record(**data)
    for name, f in model.model_fields.items():
        if name not in data and not f.is_required():
            assert getattr(built, name) == _default(model, name), name


def test_a_rule_of_no_known_kind_or_with_an_unknown_field_is_not_built() -> None:
    data = {**_required(schema.CompareRule), "kind": "compare"}
    with pytest.raises(KeyError):
        form.Rule.from_data({**data, "kind": "planted"})
    with pytest.raises(TypeError):
        form.Rule.from_data({**data, "planted": 1})
    with pytest.raises(TypeError):
        form.Rule.from_data({k: v for k, v in data.items() if k != "message"})


def _from_json(data: dict[str, Any]) -> form.Rule:
    # keys parsed from JSON, as a ready set's are: equal strings, not the code's names
    return form.Rule.from_data(json.loads(json.dumps(data)), section="S")


def test_a_rule_builds_its_probe_block_when_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29: a lint builds ~170 rules and reads the probe block of the few it reports
    (a finding carries it); a RuleProbe is built once, when first read."""
    built: list[int] = []
    real = RuleProbe.model_construct
    monkeypatch.setattr(RuleProbe, "model_construct", lambda **kw: built.append(1) or real(**kw))
    data = {**_required(schema.CompareRule), "kind": "compare", "probe": {"knobs": ["lr"]}}
    rule = _from_json(data)
    assert built == []
    assert rule.probe == RuleProbe.model_construct(knobs=("lr",))
    assert rule.probe is rule.probe and len(built) == 2  # the rule's, then the expected one
    assert _from_json({**data, "probe": None}).probe is None


def test_a_rules_fields_are_found_by_the_codes_names() -> None:
    """Issue 29: the names of a rule's fields are the code's (interned) strings, not the
    equal strings JSON parsing made: reading an attribute matches its name by identity
    instead of comparing text, for each of the ~170 rules a lint builds and reads."""
    rule = _from_json({**_required(schema.EnvRule), "kind": "env", "when": "cfg.x"})
    assert list(vars(rule)) == list(form.Rule._fields)
    assert all(sys.intern(name) is name for name in vars(rule))
