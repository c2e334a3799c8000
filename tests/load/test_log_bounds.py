"""Issue 32: every number read from a training log is checked for range and finiteness where
it is read, and what is built from it is bounded by the log's own size (not by the last
step it names)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cfglint.cli import main
from conftest import FIXTURES

MF = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
MG = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.sh"


def _run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _mf_line(step: int, total: int, loss: object, epoch: int = 1) -> str:
    return (
        f"2026-01-01 00:00:00,000 - mindformers[mindformers/core/callback/callback.py:485] - "
        f"INFO - {{ Epoch:[{epoch:3d}/{epoch:3d}], step:[{step:5d}/{total:5d}], loss: {loss}, "
        f"per_step_time: 845ms, lr: 1e-05, overflow cond: False, loss_scale: 1.0, "
        f"global_norm: [1.5]\n"
    )


def _mg_line(step: int, total: int, loss: float) -> str:
    return (
        f" [2026-01-01 00:00:00.000000] iteration {step:8d}/{total:8d} | consumed samples: "
        f"{step * 8:12d} | elapsed time per iteration (ms): 812.5 | learning rate: 1.000000E-05"
        f" | global batch size:     8 | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: "
        f"1.510 | number of skipped iterations:   0 | number of nan iterations:   0 |\n"
    )


def _pair(
    d: Path, steps: list[int], mf_loss: Callable[[int], object] = lambda s: 9.0
) -> tuple[Path, Path]:
    n = steps[-1]
    a, b = d / "mf.log", d / "mg.log"
    a.write_text("".join(_mf_line(s, n, mf_loss(s)) for s in steps))
    b.write_text("".join(_mg_line(s, n, 9.0) for s in steps))
    return a, b


@pytest.mark.parametrize("first", [300_000_000, 123_456_789_012_345_678])
def test_logs_config_is_bounded_by_the_log_not_its_last_step(
    first: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    import cfglint.evidence.lr.curves as curves

    real = curves.curve

    def bounded(s: Any, steps: int | None = None) -> list[float]:
        assert steps is None or steps <= 10**6, f"a curve of {steps} steps for a 50-line log"
        return real(s, steps)

    monkeypatch.setattr(curves, "curve", bounded)
    mf, mg = _pair(tmp_path, [first + i for i in range(50)])
    rc, out, err = _run(
        capsys, "logs", mf, mg, "--config", MF, "--megatron", MG, "--format", "json"
    )
    assert rc in (0, 1), err
    rows = {r["row"]: r for r in json.loads(out)["logs"]["rows"]}
    assert rows["lr.configured.megatron"]["numbers"]["steps"] == 50


def test_a_step_counter_beyond_64_bits_is_refused_not_wrapped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # epoch 3 of 2**62 steps each: N + (E - 1) * M wraps int64 back to small steps
    per = 10**17
    a, b = tmp_path / "mf.log", tmp_path / "mg.log"
    a.write_text("".join(_mf_line(s, per, 9.0, epoch=100) for s in range(1, 60)))
    b.write_text("".join(_mg_line(s, 59, 9.0) for s in range(1, 60)))
    rc, _, err = _run(capsys, "logs", a, b)
    assert rc == 2, err
    assert err.count("\n") == 1 and "step counter goes beyond" in err, err


@pytest.mark.parametrize("wild", ["inf", "1e308", "-1e308", "nan"])
def test_a_loss_that_turns_non_finite_or_absurd_is_a_divergence(
    wild: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _pair(tmp_path, list(range(1, 201)), lambda s: 9.0 if s < 100 else wild)
    with _no_warnings():
        rc, out, err = _run(capsys, "logs", mf, mg, "--format", "json")
    assert rc == 1, err
    doc = json.loads(out)["logs"]
    assert doc["divergence_step"] == 100
    rows = {r["row"]: r for r in doc["rows"]}
    assert rows["divergence"]["verdict"] == "diverges"
    assert "-inf" not in json.dumps(rows) and "Infinity" not in out
    assert err == ""


class _no_warnings:
    """Numeric warnings (overflow in a sum) are errors inside."""

    def __enter__(self) -> None:
        import warnings

        self._ctx = warnings.catch_warnings()
        self._ctx.__enter__()
        warnings.simplefilter("error", RuntimeWarning)

    def __exit__(self, *exc: object) -> None:
        self._ctx.__exit__(*exc)


def test_restarts_are_counted_past_a_hundred(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [s for _ in range(150) for s in (1, 2)]  # 150 runs resumed from step 1
    steps += list(range(3, 40))
    a, b = tmp_path / "mf.log", tmp_path / "mg.log"
    a.write_text("".join(_mf_line(s, 39, 9.0) for s in steps))
    b.write_text("".join(_mg_line(s, 39, 9.0) for s in range(1, 40)))
    rc, out, err = _run(capsys, "logs", a, b, "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["logs"]["steps"]["restarts"]["mindformers"] == 149


def test_a_baseline_that_is_the_reference_log_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mf, mg = _pair(tmp_path, list(range(1, 60)))
    link = tmp_path / "again.log"
    link.symlink_to(mg)
    for base in (mg, link):
        rc, _, err = _run(capsys, "logs", mf, mg, "--baseline", base)
        assert rc == 2 and err.count("\n") == 1 and "is MG_LOG" in err, err
