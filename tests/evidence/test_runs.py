"""The Stage-3 judgements on curves whose shape is known: noise, a steady offset from the
start, a late drift, lr = 0 runs, baseline bands, the learning rates and the lint link."""

from __future__ import annotations

import numpy as np
import pytest

from cfglint.evidence.runs.judge import judge
from cfglint.evidence.runs.stats import running_max, running_mean, runs_test, sign_test
from cfglint.load.losslog import RunLog
from cfglint.model.findings import Finding

N = 2000
STEPS = np.arange(1, N + 1)


def _curve(seed: int, noise: float = 0.01) -> np.ndarray:
    """A falling loss plus per-step scatter (a run's own randomness)."""
    rng = np.random.default_rng(seed)
    return 2.0 + 8.0 * np.exp(-STEPS / 300) + rng.normal(0, noise, N)


def _log(fw: str, loss: np.ndarray, **series: np.ndarray) -> RunLog:
    s = {"loss": loss, "lr": np.full(N, 1e-4), "grad_norm": np.full(N, 1.0), **series}
    return RunLog(f"{fw}.log", fw, steps=STEPS.copy(), series=s)


def _rows(j) -> dict[str, object]:
    return {r.row: r for r in j.report.rows}


def test_shared_data_noise_is_noise_and_never_diverges() -> None:
    base = _curve(0)
    rng = np.random.default_rng(1)
    j = judge(_log("mindformers", base + rng.normal(0, 0.002, N)), _log("megatron", base))
    rows = _rows(j)
    assert rows["drift"].verdict == "noise"
    assert rows["divergence"].verdict == "none"
    assert j.report.divergence_step is None
    assert rows["late_gap"].verdict == "pass"
    assert not j.report.failing


def test_a_steady_offset_within_float32_arithmetic_is_noise() -> None:
    """Two frameworks running one configuration in float32: the same numbers up to rounding,
    which can lean to one side (reduction order) by a few ulps of the loss."""
    base = np.round(_curve(0, noise=0.02), 6)
    rng = np.random.default_rng(2)
    tiny = base - 1e-6 * rng.integers(1, 3, N)  # one to two printed digits below, every step
    rows = _rows(judge(_log("mindformers", tiny), _log("megatron", base)))
    assert rows["drift"].verdict == "noise"
    assert "float32" in rows["drift"].detail
    # the same lean at a thousand times the size is a difference
    rows = _rows(judge(_log("mindformers", base - 1e-3), _log("megatron", base)))
    assert rows["drift"].verdict in ("drift", "offset")


def test_offset_growing_from_the_start_is_drift_diverging_early() -> None:
    base = _curve(0)
    rng = np.random.default_rng(1)
    # a weight-decay-like cause: the gap grows steadily from step 1
    a = base + 0.1 * STEPS / N + rng.normal(0, 0.002, N)
    j = judge(_log("mindformers", a), _log("megatron", base))
    rows = _rows(j)
    assert rows["drift"].verdict == "drift"
    assert rows["divergence"].verdict == "diverges"
    assert j.report.divergence_step is not None and j.report.divergence_step < N // 4
    assert rows["late_gap"].verdict == "fail"  # 0.1 at a loss near 2: the guide's case, 5%


def test_late_drift_diverges_where_it_starts() -> None:
    base = _curve(0)
    rng = np.random.default_rng(1)
    late = np.where(STEPS > 1400, (STEPS - 1400) * 2e-4, 0.0)
    a = base + late + rng.normal(0, 0.002, N)
    j = judge(_log("mindformers", a), _log("megatron", base))
    step = j.report.divergence_step
    # no baselines: the step is where the running mean (20 steps) leaves the float-noise
    # limit on the side the gap opens, within a window of the cause's start
    assert step is not None and 1380 <= step <= 1550
    assert _rows(j)["drift"].verdict == "drift"


def test_divergence_names_overflow_and_spikes_near_it() -> None:
    base = _curve(0)
    a = base.copy()
    a[1200:] += np.linspace(0, 3, N - 1200)  # runs away from step 1201
    skipped = np.zeros(N)
    skipped[1205] = 1
    j = judge(_log("mindformers", a), _log("megatron", base, skipped=skipped))
    div = _rows(j)["divergence"]
    assert div.verdict == "diverges"
    assert any("Megatron skipped iterations at step 1206" in e for e in div.numbers["events"])


def test_baseline_band_holds_a_run_between_two_reference_runs() -> None:
    ref1, ref2, mf = _curve(0, 0.03), _curve(1, 0.03), _curve(2, 0.03)
    j = judge(_log("mindformers", mf), _log("megatron", ref1), [_log("megatron", ref2)])
    rows = _rows(j)
    assert j.report.band["source"] == "baseline runs"
    assert rows["benchmark.band"].verdict == "inside"
    assert rows["drift"].verdict == "noise"
    # the same MindFormers run 0.2 higher is outside the reference's spread
    j2 = judge(_log("mindformers", mf + 0.2), _log("megatron", ref1), [_log("megatron", ref2)])
    assert _rows(j2)["benchmark.band"].verdict == "outside"


def test_lr0_runs_check_forward_and_backward() -> None:
    base = _curve(0)
    zero = {"lr": np.zeros(N)}
    ok = judge(
        _log("mindformers", base + 0.001, grad_norm=np.full(N, 1.05), **zero),
        _log("megatron", base, **zero),
    )
    rows = _rows(ok)
    assert rows["lr0.forward"].verdict == "pass"
    assert rows["lr0.backward"].verdict == "pass"  # 5% against the standard's 10%
    bad = judge(_log("mindformers", base + 0.2, **zero), _log("megatron", base, **zero))
    assert _rows(bad)["lr0.forward"].verdict == "fail"
    not_zero = judge(_log("mindformers", base), _log("megatron", base))
    assert _rows(not_zero)["lr0.forward"].verdict == "not applicable"


def test_learning_rates_differing_from_a_step() -> None:
    lr_b = np.full(N, 1e-4)
    lr_a = lr_b.copy()
    lr_a[500:] = 5e-5
    j = judge(_log("mindformers", _curve(0), lr=lr_a), _log("megatron", _curve(0), lr=lr_b))
    row = _rows(j)["lr.logged"]
    assert row.verdict == "differ" and row.numbers["first_step"] == 501


def test_lint_findings_named_for_a_late_gap_but_not_for_noise() -> None:
    base = _curve(0)
    wd = Finding(rule="OPT007", row="optimizer.weight_decay", severity="error", message="wd")
    shape = Finding(rule="STR001", row="structure.num_layers", severity="error", message="n")
    data = Finding(rule="OTH001", row="other.data_check", severity="warning", message="d")
    a = base + 0.1 * STEPS / N
    j = judge(_log("mindformers", a), _log("megatron", base), findings=[wd, shape, data])
    rows = _rows(j)
    assert [f.rule for f in rows["late_gap"].findings] == ["OPT007"]
    # the curves part from the first steps: the structure is named as well (the guide's
    # prerequisites of a long run)
    assert {f.rule for f in rows["divergence"].findings} == {"OPT007", "OTH001", "STR001"}
    assert "decode the batches around step" in rows["divergence"].detail
    calm = judge(_log("mindformers", base), _log("megatron", base), findings=[wd])
    assert all(not r.findings for r in calm.report.rows)


def test_statistics_helpers() -> None:
    x = np.arange(10, dtype=float)
    assert running_mean(x, 3)[5] == pytest.approx(5.0)
    assert running_max(np.array([0, 5, 0, 0, 0, 0, 0, 0.0]), 2)[3] == 5.0
    assert sign_test(10, 0) == pytest.approx(2 / 1024)
    assert sign_test(5, 5) == 1.0
    assert runs_test(np.array([1, -1] * 50)) > 5  # alternating: far more runs than chance
    assert runs_test(np.array([1] * 50 + [-1] * 50)) < -5


def test_probe_log_writer_round_trips_through_the_readers(tmp_path) -> None:
    """The probe's --log-dir text is what each framework prints: the readers take it back at
    the framework's print precision, and the printed lr is the next step's rate."""
    from types import SimpleNamespace

    from cfglint.evidence.probe.textlog import megatron_log, mindformers_log
    from cfglint.load.losslog import read_run_log

    curve = SimpleNamespace(loss=[10.1234567, 9.87654, 9.5], grad_norm=[3.25, 2.5, 2.0])
    spec = SimpleNamespace(batch=4, lr_at=lambda step: {1: 1e-3, 2: 2e-3, 3: 3e-3}.get(step, 4e-3))
    (tmp_path / "mf.log").write_text(mindformers_log(curve, spec, "cfg", "mindspore"))
    (tmp_path / "mg.log").write_text(megatron_log(curve, spec, "cfg"))
    mf = read_run_log(str(tmp_path / "mf.log"), "mindformers")
    mg = read_run_log(str(tmp_path / "mg.log"), "megatron")
    # MindFormers v1.7.0 prints %5.6f (releases up to v1.6.0 printed three decimals)
    assert mf.series["loss"].tolist() == [10.123457, 9.87654, 9.5]
    assert mg.series["loss"].tolist() == pytest.approx(curve.loss, rel=1e-6)
    assert mg.series["grad_norm"].tolist() == [3.25, 2.5, 2.0]
    for log in (mf, mg):
        assert log.series["lr"].tolist() == pytest.approx([2e-3, 3e-3, 4e-3])
    (tmp_path / "z.log").write_text(megatron_log(curve, spec, "zero"))
    zero = read_run_log(str(tmp_path / "z.log"), "megatron")
    assert zero.series["lr"].tolist() == [0.0, 0.0, 0.0]
