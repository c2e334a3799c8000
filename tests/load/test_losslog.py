"""The per-step readers of both frameworks' training logs and of TensorBoard events."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cfglint.load import losslog
from cfglint.load.losslog import read_loss_log, read_run_log
from cfglint.model.errors import InputError

# Short excerpts of real public logs, retyped (values and layout as published):
# Megatron-DeepSpeed's fork (BigScience tr8-104B, bigscience-workshop/bigscience
# train/tr8-104B-wide/chronicles.md@82fe642f): log interval 10, fp16 loss scale, a validation
# line between step lines, and the loss running away over 40 steps.
BIGSCIENCE = """\
 validation loss at iteration 7000 | lm loss value: 7.174200E+00 | lm loss PPL: 1.305315E+03 |
 iteration     6900/  159576 | consumed samples:       251312 | elapsed time per iteration (ms): 18495.6 | learning rate: 6.000E-05 | global batch size:    96 | lm loss: 6.365808E+00 | loss scale: 4096.0 | grad norm: 95313.572 | num zeros: 0.0 | number of skipped iterations:   0 | number of nan iterations:   0 |
 iteration     6910/  159576 | consumed samples:       252272 | elapsed time per iteration (ms): 18802.1 | learning rate: 6.000E-05 | global batch size:    96 | lm loss: 6.598378E+00 | loss scale: 4096.0 | grad norm: 84678.880 | num zeros: 0.0 | number of skipped iterations:   0 | number of nan iterations:   0 |
 iteration     6920/  159576 | consumed samples:       253232 | elapsed time per iteration (ms): 18641.0 | learning rate: 6.000E-05 | global batch size:    96 | lm loss: 7.314456E+00 | loss scale: 4096.0 | grad norm: 122716.232 | num zeros: 0.0 | number of skipped iterations:   0 | number of nan iterations:   0 |
 iteration     6930/  159576 | consumed samples:       254192 | elapsed time per iteration (ms): 18564.1 | learning rate: 6.000E-05 | global batch size:    96 | lm loss: 9.121927E+00 | loss scale: 4096.0 | grad norm: 283384.130 | num zeros: 0.0 | number of skipped iterations:   0 | number of nan iterations:   0 |
"""  # noqa: E501
# MindFormers (MindSpore docs, docs/mindformers/docs/source_en/feature/
# skip_data_and_ckpt_health_monitor.md@3538d383 in mindspore-ai/docs): one step line, then the
# progress line and the skip-data lines the monitor prints after it.
MINDFORMERS_DOC = """\
- INFO - { Epoch:[  1/  2], step:[    1/ 6500], loss: 0.000, per_step_time: 166756ms, lr: 0.0, overflow cond: False, loss_scale: 1.0, global_norm: [44.313248], train_throughput_per_npu: 2.849T
- INFO -    0.0% |                                                  | 0.00600 samples/s/p  25 days, 2:07:47 }
- INFO - opt_global_step: 0, skip_data_grad_norm_threshold: 3.0, is_skip: [ True]
- INFO - Current global norm [44.313248] of step 1 has been 1 consecutive times greater than threshold: 3.0
"""  # noqa: E501


def _w(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def _mf(step: int, per: int, epoch: int, loss: float, sink: bool = True, **kw: str) -> str:
    lossf = f"loss: {loss:5.3f}" if sink else f"loss:[{loss:5.3f}/{loss + 1:5.3f}]"
    return (
        f"2026-01-01 00:00:00,000 - mindformers[mindformers/core/callback/callback.py:485] - INFO"
        f" - {{ Epoch:[{epoch:3d}/  2], step:[{step:5d}/{per:5d}], {lossf}, per_step_time: "
        f"{kw.get('ms', '845')}ms, lr: {kw.get('lr', '3e-06')}, overflow cond: "
        f"{kw.get('overflow', 'False')}, loss_scale: 1.0, global_norm: [{kw.get('gn', '1.5')}]"
        ", train_throughput_per_npu: 155.1T\n"
    )


def _mg(step: int, loss: str, lr: str = "1.000000E-05", skipped: int = 0, gn: str = "1.250") -> str:
    return (
        f" [2026-01-01 00:00:00.000000] iteration {step:8d}/    1000 | consumed samples: "
        f"{step * 8:12d} | elapsed time per iteration (ms): 812.5 | throughput per GPU "
        f"(TFLOP/s/GPU): 180.2 | learning rate: {lr} | global batch size:     8 | lm loss: "
        f"{loss} | loss scale: 1.0 | grad norm: {gn} | number of skipped iterations: "
        f"{skipped:3d} | number of nan iterations:   0 |\n"
    )


def test_real_megatron_excerpt_reads_every_field(tmp_path: Path) -> None:
    log = read_run_log(_w(tmp_path, "mg.log", BIGSCIENCE))
    assert log.framework == "megatron"
    assert log.steps.tolist() == [6900, 6910, 6920, 6930]  # the validation line is not a step
    assert log.series["loss"].tolist() == [6.365808, 6.598378, 7.314456, 9.121927]
    assert log.series["grad_norm"][3] == pytest.approx(283384.130)
    assert log.series["loss_scale"].tolist() == [4096.0] * 4
    assert log.series["lr"][0] == pytest.approx(6e-5)
    assert log.series["step_time_ms"][1] == pytest.approx(18802.1)
    assert log.series["skipped"].tolist() == [0.0] * 4
    assert log.interval() == 10 and log.gaps() == [] and log.restarts == []


def test_real_mindformers_excerpt_skips_the_progress_and_skip_lines(tmp_path: Path) -> None:
    log = read_run_log(_w(tmp_path, "mf.log", MINDFORMERS_DOC), "mindformers")
    assert log.steps.tolist() == [1]
    assert log.series["grad_norm"].tolist() == [pytest.approx(44.313248)]
    assert log.series["lr"].tolist() == [0.0]
    assert log.series["overflow"].tolist() == [0.0]
    assert log.series["step_time_ms"].tolist() == [166756.0]
    assert log.series["throughput"].tolist() == [pytest.approx(2.849)]


def test_mindformers_step_counts_within_the_epoch(tmp_path: Path) -> None:
    text = "".join(_mf(s, 3, e, 10 - s - 3 * (e - 1)) for e in (1, 2) for s in (1, 2, 3))
    log = read_run_log(_w(tmp_path, "mf.log", text), "mindformers")
    assert log.steps.tolist() == [1, 2, 3, 4, 5, 6]
    assert log.series["loss"].tolist() == [9.0, 8.0, 7.0, 6.0, 5.0, 4.0]


def test_mindformers_loss_outside_sink_mode_reads_the_step_loss(tmp_path: Path) -> None:
    text = _mf(1, 10, 1, 7.25, sink=False, lr="[1.e-04]", overflow="True")
    log = read_run_log(_w(tmp_path, "mf.log", text), "mindformers")
    assert log.series["loss"].tolist() == [7.25]  # not the running mean after the slash
    assert log.series["lr"].tolist() == [pytest.approx(1e-4)]
    assert log.series["overflow"].tolist() == [1.0]


def test_resumed_run_keeps_the_later_print_and_reports_the_restart(tmp_path: Path) -> None:
    first = "".join(_mg(s, f"{10 - s / 10:.6E}") for s in range(1, 6))
    again = "".join(_mg(s, f"{20 - s / 10:.6E}") for s in range(4, 8))
    log = read_run_log(_w(tmp_path, "mg.log", first + again))
    assert log.steps.tolist() == list(range(1, 8))
    assert log.series["loss"][3] == pytest.approx(19.6)  # step 4 from the resumed run
    assert log.restarts == [(4, 2)]


def test_gap_and_mixed_fields_fall_back_to_line_by_line(tmp_path: Path) -> None:
    lines = [_mg(s, "2.000000E+00", skipped=1 if s == 3 else 0) for s in (1, 2, 3, 7, 8)]
    lines[1] = lines[1].replace(" grad norm: 1.250 |", "")  # one line without a grad norm
    lines.insert(2, "note | grad norm: 99.0 | from something else\n")  # not a step line
    log = read_run_log(_w(tmp_path, "mg.log", "".join(lines)))
    gn = log.series["grad_norm"]
    assert gn[0] == 1.25 and math.isnan(gn[1]) and gn[2] == 1.25
    assert log.series["skipped"].tolist() == [0, 0, 1, 0, 0]
    assert log.gaps() == [(3, 7)]


def test_nan_loss_is_kept_as_nan(tmp_path: Path) -> None:
    text = _mg(1, "2.000000E+00") + _mg(2, "NAN") + _mg(3, "1.900000E+00")
    log = read_run_log(_w(tmp_path, "mg.log", text))
    assert log.steps.tolist() == [1, 2, 3]
    assert math.isnan(log.series["loss"][1])


@pytest.mark.parametrize("fast", [True, False], ids=["numba", "scan"])
def test_chunks_split_lines_without_losing_one(tmp_path: Path, monkeypatch, fast: bool) -> None:
    """Each chunk is a view of one buffer that keeps the partial line at its start for the
    next read: lines longer than a chunk, read by the compiled loops or the scan."""
    if fast and losslog.compiled_read is None:
        pytest.skip("the logs extra (numba) is not installed")
    monkeypatch.setattr(losslog, "COMPILED_MIN", 0 if fast else 1 << 40)
    monkeypatch.setattr(losslog, "CHUNK", 300)  # shorter than a step line
    text = "".join(_mg(s, f"{5 + s / 100:.6E}") for s in range(1, 40))
    log = read_run_log(_w(tmp_path, "mg.log", text))
    assert log.steps.tolist() == list(range(1, 40))
    assert np.allclose(log.series["loss"], [5 + s / 100 for s in range(1, 40)])


def test_no_step_lines_is_one_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no per-step loss lines"):
        read_run_log(_w(tmp_path, "x.log", "hello\nworld\n"))


def test_loss_log_for_the_standard_rows_points_at_the_line(tmp_path: Path) -> None:
    text = "header\n" + _mg(1, "2.000000E+00") + "other\n" + _mg(2, "1.500000E+00")
    log = read_loss_log(_w(tmp_path, "mg.log", text))
    assert log.loss == {1: 2.0, 2: 1.5}
    assert log.line_of(2) == 4


def test_tensorboard_events_of_both_frameworks(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    from cfglint.load.tbevents import read_events

    def write(folder: Path, tags: dict[str, list[float]]) -> None:
        w = EventFileWriter(str(folder))
        for step in range(1, 4):
            values = [
                summary_pb2.Summary.Value(tag=t, simple_value=v[step - 1]) for t, v in tags.items()
            ]
            w.add_event(event_pb2.Event(step=step, summary=summary_pb2.Summary(value=values)))
        w.close()

    write(
        tmp_path / "mg",
        {
            "lm loss": [3.0, 2.5, 2.25],
            "grad-norm": [1, 2, 3],
            "learning-rate": [1e-4] * 3,
            "iteration-time": [0.5] * 3,
        },
    )
    write(tmp_path / "mf", {"loss": [3.0, 2.0, 1.0], "loss vs samples": [9, 9, 9]})
    mg = read_events(str(tmp_path / "mg"), "megatron")
    assert mg.steps.tolist() == [1, 2, 3]
    assert mg.series["loss"].tolist() == [3.0, 2.5, 2.25]
    assert mg.series["step_time_ms"].tolist() == [500.0] * 3  # Megatron writes seconds
    mf = read_events(str(tmp_path / "mf"), "mindformers")
    assert mf.series["loss"].tolist() == [3.0, 2.0, 1.0]
    with pytest.raises(InputError, match="no 'lm loss' scalars"):
        read_events(str(tmp_path / "mf"), "megatron")


fast_read = losslog.compiled_read


@pytest.mark.parametrize("per_worker", [1, 8], ids=["a-range-a-worker", "queued-ranges"])
@pytest.mark.parametrize("fast", [True, False], ids=["numba-threads", "scan-processes"])
def test_byte_ranges_in_several_processes_read_every_line_once(
    tmp_path: Path, monkeypatch, fast: bool, per_worker: int
) -> None:
    """Each line once, whichever range holds it; with eight ranges a worker (the default),
    each worker's one read buffer serves several ranges in turn."""
    if fast and losslog.compiled_read is None:
        pytest.skip("the logs extra (numba) is not installed")
    if fast:  # the compiled loops read even these small chunks, in threads
        monkeypatch.setattr(losslog, "COMPILED_MIN", 0)
        calls = []

        def counted(*a):
            calls.append(fast_read(*a))
            return calls[-1]

        monkeypatch.setattr(losslog, "compiled_read", counted)
    else:
        monkeypatch.setattr(losslog, "compiled_read", None)
    monkeypatch.setattr(losslog, "PARALLEL_MIN", 4000)  # ~15 step lines a range
    monkeypatch.setattr(losslog.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(losslog, "RANGES_PER_WORKER", per_worker)
    text = "".join(_mg(s, f"{5 + s / 1000:.6E}") for s in range(1, 301))
    path = _w(tmp_path, "mg.log", text)
    assert len(losslog._ranges(len(text))) == 4 * per_worker
    log = read_run_log(path)
    assert log.steps.tolist() == list(range(1, 301))
    assert np.allclose(log.series["loss"], [5 + s / 1000 for s in range(1, 301)])
    assert log.lines_read == 300
    # one chunk a range, each read by the compiled loops (none left to the scan)
    assert not fast or (len(calls) == 4 * per_worker and all(c is not None for c in calls))


def test_no_cache_reads_with_the_scan(tmp_path: Path, monkeypatch) -> None:
    """``--no-cache`` writes nothing: not numba's compiled loops either (the scan reads)."""
    from cfglint.load import datacache

    monkeypatch.setattr(losslog, "COMPILED_MIN", 0)
    calls = []
    monkeypatch.setattr(losslog, "compiled_read", lambda *a: calls.append(a))
    path = _w(tmp_path, "mg.log", "".join(_mg(s, f"{5 + s / 1000:.6E}") for s in range(1, 31)))
    datacache.use_cache(False)
    try:
        log = read_run_log(path)
    finally:
        datacache.use_cache(True)
    assert not calls and log.steps.tolist() == list(range(1, 31))
    read_run_log(path)
    assert len(calls) == 1  # the cache on: the compiled reader is asked (here it declines)
