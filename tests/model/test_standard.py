"""The migration standard's errors, computed in one place (model/standard.py) for the lint's
``--loss-log`` rows, the runtime probe's gap and ``cfglint logs``."""

from __future__ import annotations

import math

import pytest

from cfglint.model import standard as std


def test_errors_are_against_the_reference_with_one_zero_guard() -> None:
    assert std.first_loss_error(10.2, 10.0) == pytest.approx((0.2, 0.02))
    # a zero reference is a large error, not a division by zero
    err, rel = std.first_loss_error(0.5, 0.0)
    assert err == 0.5 and math.isfinite(rel) and rel > 1e9
    assert std.mean_loss_error([1.0, 2.0], [1.0, 4.0]) == pytest.approx((1.0, 0.25))
    assert std.global_norm_error([1.0, 1.0], [2.0, 0.0]) > 1e9


def test_sequences_and_arrays_give_the_same_errors() -> None:
    np = pytest.importorskip("numpy")
    a, b = [3.1, 2.9, 2.5, 0.0], [3.0, 3.0, 2.4, 0.1]
    assert std.mean_loss_error(np.array(a), np.array(b)) == pytest.approx(std.mean_loss_error(a, b))
    assert std.global_norm_error(np.array(a), b) == pytest.approx(std.global_norm_error(a, b))


def test_probe_gap_survives_a_zero_reference_loss() -> None:
    """The probe's comparison had no zero guard on the loss (ZeroDivisionError)."""
    pytest.importorskip("numpy")
    from cfglint.evidence.probe.measure import compare
    from cfglint.evidence.probe.protocol import Curve, RunResult

    a = RunResult(id="a", curves={"m": Curve(loss=[1.0, 0.5], grad_norm=[1.0, 1.0])})
    b = RunResult(id="b", curves={"m": Curve(loss=[0.0, 0.5], grad_norm=[1.0, 0.0])})
    out = compare(a, b, "m")
    assert out["first_loss_abs"] == 1.0 and math.isfinite(out["first_loss_rel"])
    assert math.isfinite(out["mean_loss_rel"]) and math.isfinite(out["global_norm_rel"])
