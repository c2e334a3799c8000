"""Issue 10, class 3: YaRN compared in full on our own real-pair-style fixtures.

fixtures/yarn/ holds MindFormers / MindSpeed-LLM pairs written by us in the upstream styles;
each truth.yaml gives, derived by hand from the frameworks' sources (fixtures/yarn/README.md),
what each side computes for the YaRN rules and whether the two differ. The tool must raise
every YaRN rule in ``differ`` with the stated values and no YaRN rule in ``agree``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cfglint.cli.pipeline import Options, lint
from cfglint.normalize.megatron.build import normalize_megatron
from cfglint.normalize.megatron.input import load_megatron
from cfglint.normalize.mindformers.build import load_mindformers

ROOT = Path(__file__).resolve().parents[2]
YARN = ROOT / "fixtures" / "yarn"
FIELDS = {"STR028": "structure.rope_scaling", "STR030": "structure.yarn_mscale"}


def _pairs() -> list[str]:
    return sorted(p.name for p in YARN.iterdir() if (p / "truth.yaml").is_file())


def _truth(pair: str) -> dict:
    return yaml.safe_load((YARN / pair / "truth.yaml").read_text())


def test_the_set_covers_mla_and_non_mla_legacy_and_mcore() -> None:
    kinds = [_truth(p)["kind"] for p in _pairs()]
    assert {k["attention"] for k in kinds} >= {"mla", "gqa"}
    assert any(_truth(p)["differ"] for p in _pairs())  # a true difference to find
    assert any(not _truth(p)["differ"] for p in _pairs())  # and a pair that agrees
    texts = [(YARN / p / "mindformers.yaml").read_text() for p in _pairs()]
    assert any("use_legacy: False" in t for t in texts)
    assert any("extend_method: \"YARN\"" in t for t in texts)


@pytest.mark.parametrize("pair", _pairs())
def test_each_side_computes_what_the_sources_say(pair: str) -> None:
    t = _truth(pair)
    mf = load_mindformers(str(YARN / pair / "mindformers.yaml"))
    mg = normalize_megatron(load_megatron(str(YARN / pair / "megatron.sh")))
    for side, cfg in (("mindformers", mf), ("megatron", mg)):
        for rule, want in t[side].items():
            v = cfg.get(FIELDS[rule])
            assert v is not None and v.known, f"{pair} {side} {FIELDS[rule]}: {v}"
            assert v.value == want, f"{pair} {side} {FIELDS[rule]}"


@pytest.mark.parametrize("pair", _pairs())
def test_every_yarn_difference_found_and_no_agreeing_row_flagged(pair: str) -> None:
    t = _truth(pair)
    d = YARN / pair
    report, _ = lint(
        Options(mindformers=[str(d / "mindformers.yaml")], megatron=str(d / "megatron.sh"))
    )
    raised = {f.rule: f for f in report.findings}
    for rule in t["differ"]:
        assert rule in raised, f"{pair}: true YaRN difference {rule} not found"
        assert raised[rule].values == {
            "mindformers": t["mindformers"][rule],
            "megatron": t["megatron"][rule],
        }
    for rule in t["agree"]:
        assert rule not in raised, f"{pair}: agreeing {rule} flagged: {raised[rule].message}"
    # YaRN is RoPE on both sides: the position type must not differ because of it
    assert "STR020" not in raised
