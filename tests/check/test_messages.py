"""Every compare rule reads right whichever side holds which value (issue 22).

Each compare rule's variation cases (rules/variations/, edited copies of a fixture pair)
write its difference once in a MindFormers file and once in the Megatron script
(test_rule_variations.py::test_every_compare_rule_is_written_on_both_sides), so reading the
message of every case checks both directions on real files. In each, every value must sit
with its own side in the message, the message's own words may state no value (a sentence
such as "Megatron's default beta2 is 0.999" is true in one direction only: such facts belong
in the rationale), and a fix that names a side names the one left at its default, or offers
both when both were written.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from test_rule_variations import CASES, RULES, outcome

from cfglint.check.context import Context, label
from cfglint.check.engine import run_rules
from cfglint.check.pipeline import load_megatron_side, load_mindformers_side
from cfglint.model.values import Value, fmt


def _compare_cases() -> list[Any]:
    return [c for c in CASES if c.rule in RULES and RULES[c.rule].kind == "compare" and not c.bugs]


COMPARE_CASES = _compare_cases()


def _static_words(template: str) -> str:
    return re.sub(r"\{[^}]*\}", " ", template)


def _states(text: str, value: Any) -> bool:
    shown = fmt(value)
    return bool(re.search(rf"(?<![\w.-]){re.escape(shown)}(?![\w.-])", text, re.IGNORECASE))


def _check(rule: Any, ctx: Context, a: Value, b: Value) -> None:
    found = [f for f in run_rules((rule,), ctx) if f.rule == rule.id]
    assert len(found) == 1, f"{rule.id}: {[f.message for f in found]}"
    f = found[0]
    text = f.message.removeprefix(rule.title)
    mf_at = text.find(fmt(a.value))
    mg_label = label(ctx.mg)  # type: ignore[arg-type]
    label_at = text.find(mg_label, mf_at)
    assert 0 <= mf_at < label_at < text.find(fmt(b.value), label_at), (
        f"{rule.id}: MindFormers {fmt(a.value)}, {mg_label} {fmt(b.value)}: {f.message}"
    )
    if "{fix_side}" in rule.fix:
        a_default, b_default = a.origin.value == "default", b.origin.value == "default"
        # a value no setting holds (the legacy Llama's dropout) is never the side to change
        a_fixed, b_fixed = (v.origin.value == "derived" and not v.inputs for v in (a, b))
        if a_fixed and not b_fixed:
            assert f"Set {b.knob} to {fmt(a.value)} on {mg_label};" in f.fix, f.fix
        elif (b_fixed and not a_fixed) or (a_default and not b_default):
            assert f.fix.startswith(f"Set {a.knob} to {fmt(b.value)} on MindFormers"), f.fix
        else:
            assert f"Set {b.knob} to {fmt(a.value)} on {mg_label}" in f.fix, f.fix
            assert (f", or {a.knob} to {fmt(b.value)}" in f.fix) == (not b_default), f.fix


@pytest.mark.parametrize("case", COMPARE_CASES, ids=[c.id for c in COMPARE_CASES])
def test_compare_message_reads_right(case: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    rule = RULES[case.rule]
    out = outcome(case, tmp_path_factory)
    assert any(f["rule"] == rule.id for f in out.findings), "the case must fire its rule"
    ctx = Context(profile=case.profile)
    ctx.mf = load_mindformers_side(str(out.pair.mf), str(out.pair.launch), out.pair.release)
    ctx.mg = load_megatron_side(str(out.pair.mg))
    a, b = ctx.mf.get(rule.field), ctx.mg.get(rule.field)
    assert a is not None and b is not None
    if a.yaml11_string or b.yaml11_string:
        pytest.skip("a YAML 1.1 string is reported by its own message, on the MindFormers side")
    for v in (a, b):
        assert not _states(_static_words(rule.message), v.value), (
            f"{rule.id}'s own words state the value {fmt(v.value)}: true in one direction only"
        )
    _check(rule, ctx, a, b)
