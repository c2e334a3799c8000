"""`cfglint show` calls two values different exactly when the rule engine does: one
tolerance (model/values.py TOLERANCE, or the compare rule's own), strings in any case.
Before, show used 1e-9 while the rules used 1e-6, so `show --diff-only` listed settings
that `lint` called equal."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfglint.check.rulebook import load_rules
from cfglint.check.settings import differs, tolerances
from cfglint.cli import main
from cfglint.model.values import TOLERANCE, Origin, Value
from conftest import FIXTURES

EX = FIXTURES / "examples" / "llama2_7b"


def _v(x: object) -> Value:
    return Value(value=x, origin=Origin.FILE)


def test_differs_is_the_engines_comparison() -> None:
    assert not differs(_v(0.999), _v(0.999 * (1 + TOLERANCE / 10)))
    assert differs(_v(0.999), _v(0.95))
    assert not differs(_v("AdamW"), _v("adamw"))
    assert not differs(_v(1), None)
    # a compare rule's own tolerance wins for its setting (OPT011: warmup steps at 1e-9)
    tol = tolerances(load_rules())
    assert tol["optimizer.lr_warmup_steps"] == 1e-9
    assert tol["optimizer.beta2"] == TOLERANCE


def test_show_and_lint_agree_on_a_difference_within_tolerance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf = tmp_path / "llama.yaml"
    # Megatron's default beta2 is 0.999; 1e-7 relative off it is the same setting for OPT006
    mf.write_text(
        (EX / "pretrain_llama2_7b.yaml").read_text().replace("beta2: 0.95", "beta2: 0.9990001")
    )
    mg = str(EX / "pretrain_llama2_7b.sh")
    main([str(mf), "--megatron", mg, "--select", "optimizer.beta2", "--format", "concise"])
    assert "OPT006" not in capsys.readouterr().out
    main(["show", str(mf), "--megatron", mg, "--diff-only", "--no-color"])
    out = capsys.readouterr().out
    assert "optimizer.beta2" not in out and "structure.ffn_hidden_size" in out
