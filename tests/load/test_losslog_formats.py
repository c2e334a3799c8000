"""Real log formats beyond the plain step line: each excerpt written from the framework's
logging source at a recorded release (cited), and what a correct reader must take from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cfglint.load import losslog
from cfglint.load.losslog import read_run_log

_PREFIX = (
    "2026-01-01 00:00:00,000 - mindformers[mindformers/core/callback/callback.py:544] - INFO - "
)


def _mf(step: int, loss: float, separate: str = "", per: int = 100) -> str:
    """MFLossMonitor at v1.7.0 (callback.py:531-561@d4ef84c2): the step line in sink mode
    ("loss: %5.6f", then print_separate_loss's "lm_loss: %5.6f, load_balancing_loss: %5.6f, "
    when on), then the progress line."""
    return (
        f"{_PREFIX}{{ Epoch:[  1/  1], step:[{step:5d}/{per:5d}], loss: {loss:5.6f}, {separate}"
        f"per_step_time: {800 + step % 7}ms, lr: {1e-5 * step:.6e}, overflow cond: False, "
        f"loss_scale: 1.0, global_norm: [{1.5 + step / 100:.6f}], "
        f"train_throughput_per_npu: {150 + step % 5:.3f}T\n"
        f"{_PREFIX}   {step:4.1f}% |{'█' * (step % 50):<50}| 1.23000 samples/s/p  0:01:40 }}\n"
    )


def _monitor(step: int, tag: str, value: float) -> str:
    """TrainingStateMonitor with ``local_norm_format: log`` (callback.py:1065-1070@d4ef84c2,
    _to_log): ``Epoch:[E/NE], step:[N/M] <tag>: %.4f``, one line per monitored weight."""
    return f"{_PREFIX}Epoch:[  1/  1], step:[{step:5d}/  100] {tag}: {value:.4f}\n"


def _w(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_local_norm_monitor_lines_repeat_the_step_and_are_not_step_lines(tmp_path, monkeypatch):
    text = "".join(
        _mf(s, 10 - s / 10)
        + _monitor(s, "local_norm/model.layers.0.attention.wq.weight", 0.1 * s)
        + _monitor(s, "local_norm/model.tok_embeddings.embedding_weight", 0.2 * s)
        + _monitor(s, "device_local_norm", 3.0)
        for s in range(1, 41)
    )
    path = _w(tmp_path, "mf.log", text)
    log = read_run_log(path, "mindformers")
    assert log.steps.tolist() == list(range(1, 41)) and log.restarts == []
    assert log.series["loss"][:3].tolist() == [9.9, 9.8, 9.7]
    assert log.series["grad_norm"][0] == pytest.approx(1.51)
    # the line-by-line reader (a chunk the vectorized scan cannot decide) agrees
    monkeypatch.setattr(losslog, "scan", lambda *a: None)
    slow = read_run_log(path, "mindformers")
    assert slow.steps.tolist() == log.steps.tolist()
    assert np.array_equal(slow.series["loss"], log.series["loss"])


def test_print_separate_loss_reads_lm_loss(tmp_path: Path) -> None:
    text = "".join(
        _mf(s, 10 - s / 10, f"lm_loss: {10 - s / 10 - 0.02:5.6f}, load_balancing_loss: 0.020000, ")
        for s in range(1, 11)
    )
    log = read_run_log(_w(tmp_path, "mf.log", text), "mindformers")
    assert log.series["loss"][0] == pytest.approx(9.9)
    assert log.series["lm_loss"][0] == pytest.approx(9.88)


def test_dynamic_graph_format_reads_step_loss_lr_and_grad_norm(tmp_path: Path) -> None:
    # mindformers/pynative/callback/loss_callback.py:172-184@f52743ca (master, 2026-01-15):
    # "{ step:[%5d/%5d], loss: %.6f, per_step_time: %dms, lr: %.6e }"; no recorded release
    # prints the gradient norm yet: "grad_norm: %.6f" as the line's other fields are
    # printed is read when it is there
    text = "".join(
        f"2026-01-15 10:00:00,000 - mindformers[mindformers/pynative/callback/loss_callback.py:184]"
        f" - INFO - {{ step:[{s:5d}/  100], loss: {10 - s / 10:.6f}, per_step_time: 812ms, "
        f"lr: {1e-5:.6e}, grad_norm: {2.5 - s / 100:.6f} }}\n"
        for s in range(1, 11)
    )
    log = read_run_log(_w(tmp_path, "mf.log", text), "mindformers")
    assert log.steps.tolist() == list(range(1, 11))
    assert log.series["loss"][0] == pytest.approx(9.9)
    assert log.series["grad_norm"][:2].tolist() == [pytest.approx(2.49), pytest.approx(2.48)]
    assert log.series["lr"][0] == pytest.approx(1e-5)


def _mg(step: int, loss: float, skipped: int = 0) -> str:
    """Megatron core_v0.17.0 training_log (training.py:2229-2266@9539a12e)."""
    return (
        f" [2026-01-01 00:00:00.000000] iteration {step:8d}/     100 | consumed samples: "
        f"{step * 8:12d} | elapsed time per iteration (ms): 812.5 | learning rate: 1.000000E-05 |"
        f" global batch size:     8 | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: 1.250 |"
        f" number of skipped iterations: {skipped:3d} | number of nan iterations:   0 |\n"
    )


def test_megatron_017_zero_loss_on_a_skipped_window_is_not_a_loss(tmp_path: Path) -> None:
    # core >= 0.17 prints the mean of a window whose every iteration was skipped as 0
    # ("if avg >= 0.0", training.py:2244-2246@9539a12e; core_v0.16.0 had "avg > 0.0")
    text = _mg(1, 10.0) + _mg(2, 0.0, skipped=1) + _mg(3, 9.8)
    log = read_run_log(_w(tmp_path, "mg.log", text), "megatron")
    assert log.steps.tolist() == [1, 2, 3]
    assert np.isnan(log.series["loss"][1]) and log.series["loss"][2] == pytest.approx(9.8)
    assert log.empty_windows.tolist() == [2]
    # core_v0.16.0 and most forks ("avg > 0.0", training.py:2069@3bec9aa9) leave the field
    # out: the same window, no loss printed
    no_field = _mg(2, 0.0, skipped=1).replace("lm loss: 0.000000E+00 | ", "")
    log = read_run_log(_w(tmp_path, "mg16.log", _mg(1, 10.0) + no_field + _mg(3, 9.8)))
    assert log.steps.tolist() == [1, 2, 3] and log.empty_windows.tolist() == [2]


def test_a_last_line_still_being_written_is_left_out_and_said(tmp_path: Path) -> None:
    whole = _mg(1, 10.0) + _mg(2, 9.9)
    third = _mg(3, 9.812345)
    cut = whole + third[: third.index("lm loss: ") + 12]  # "lm loss: 9.8", no line end
    log = read_run_log(_w(tmp_path, "mg.log", cut), "megatron")
    assert log.steps.tolist() == [1, 2] and log.partial_line
    assert not read_run_log(_w(tmp_path, "mg2.log", whole), "megatron").partial_line


def test_megatron_bridge_fork_with_extra_fields_and_a_skipped_window(tmp_path: Path) -> None:
    """GeodesicResearch/geodesic-megatron (Megatron-Bridge) train_utils.py:773-821@df06386a:
    skipped samples, energy and power per GPU, params norm and max attention logit around
    the fields read, and ``if avg >= 0.0`` (line 808): an all-skipped window prints 0."""

    def line(step: int, loss: float, skipped: int) -> str:
        return (
            f" [2026-01-01 00:00:{step:02d}] iteration {step:8d}/    1000 | consumed samples: "
            f"{step * 8:12d} | skipped samples: {8 * skipped:12d} | elapsed time per iteration "
            f"(ms): {800 + step:.1f} | throughput per GPU (TFLOP/s/GPU): 180.{step} | energy "
            f"per GPU (J/iter/GPU): 512.3 | power per GPU (W/GPU): 640.1 | learning rate: "
            f"{1e-5 * step:.6E} | global batch size:     8 | lm loss: {loss:.6E} | loss scale: "
            f"1.0 | grad norm: {1.5 + step / 100:.3f} | params norm: 250.125 | max attention "
            f"logit: 12.500 | number of skipped iterations: {skipped:3d} | number of nan "
            f"iterations:   0 |\n"
        )

    text = line(1, 10.5, 0) + line(2, 0.0, 1) + line(3, 10.25, 0)
    log = read_run_log(_w(tmp_path, "mg.log", text), "megatron")
    assert log.steps.tolist() == [1, 2, 3]
    assert log.series["loss"][0] == 10.5 and np.isnan(log.series["loss"][1])
    assert log.series["grad_norm"].tolist() == [1.51, 1.52, 1.53]
    assert log.series["lr"][2] == pytest.approx(3e-5)
    assert log.empty_windows.tolist() == [2]
