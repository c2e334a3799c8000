"""``cfglint logs --watch`` on two logs that a thread writes while it runs: it judges as
steps arrive, refreshes the picture, and exits 1 as soon as the curves part; it stops on
idle logs with the last judgement; a line still being written waits for its end."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from cfglint.cli.app import main
from cfglint.load.losslog import LogFollower


def _mf(s: int, n: int, loss: float) -> str:
    return (
        f"2026-01-01 00:00:{s % 60:02d},000 - mindformers[mindformers/core/callback/"
        f"callback.py:544] - INFO - {{ Epoch:[  1/  1], step:[{s:5d}/{n:5d}], "
        f"loss: {loss:5.6f}, per_step_time: "
        f"{800 + s % 9}ms, lr: 1.000000e-05, overflow cond: False, loss_scale: 1.0, global_norm: "
        f"[1.500000], train_throughput_per_npu: 155.1T\n"
        f"2026-01-01 00:00:00,000 - mindformers[mindformers/core/callback/callback.py:560] - INFO"
        f" -    {100 * s / n:4.1f}% |██        | 1.23000 samples/s/p  0:01:40 }}\n"
    )


def _mg(s: int, n: int, loss: float) -> str:
    return (
        f" [2026-01-01 00:00:00.000000] iteration {s:8d}/{n:8d} | consumed samples: {s * 8:12d}"
        f" | elapsed time per iteration (ms): {812 + s % 7:.1f} | learning rate: 1.000000E-05 | "
        f"global batch size:     8 | lm loss: {loss:.6E} | loss scale: 1.0 | grad norm: 1.500 | "
        f"number of skipped iterations:   0 | number of nan iterations:   0 |\n"
    )


class Writer(threading.Thread):
    """Both runs' logs, a few steps at a time, the last line of each batch written in two
    halves (a reader between them sees a line without its end)."""

    def __init__(self, folder: Path, n: int, part_at: int | None, pause: float = 0.01):
        super().__init__(daemon=True)
        self.mf, self.mg = folder / "mf.log", folder / "mg.log"
        self.mf.write_text("")
        self.mg.write_text("")
        self.n, self.part_at, self.pause = n, part_at, pause
        self.written = 0
        self.stop = threading.Event()
        rng = np.random.default_rng(0)
        st = np.arange(1, n + 1)
        self.base = 3 + 5 * np.exp(-st / 300) + rng.normal(0, 0.02, n)

    def run(self) -> None:
        with open(self.mf, "a") as fa, open(self.mg, "a") as fb:
            for s in range(1, self.n + 1):
                if self.stop.is_set():
                    return
                x = float(self.base[s - 1])
                y = x + (0.3 if self.part_at and s >= self.part_at else 0.0)
                a, b = _mf(s, self.n, y), _mg(s, self.n, x)
                if s % 10 == 0:  # half a line, then a pause, then the rest
                    fa.write(a[:40])
                    fb.write(b[:40])
                    fa.flush()
                    fb.flush()
                    time.sleep(self.pause)
                    a, b = a[40:], b[40:]
                fa.write(a)
                fb.write(b)
                fa.flush()
                fb.flush()
                self.written = s
                if s % 10 == 0:
                    # after the parting the run goes on slowly: the watch must end first
                    late = self.part_at and s > self.part_at + 100
                    time.sleep(self.pause * (20 if late else 1))


def test_watch_exits_1_as_soon_as_the_curves_part(tmp_path: Path, capsys) -> None:
    w = Writer(tmp_path, n=20_000, part_at=400)
    png = tmp_path / "live.png"
    w.start()
    try:
        code = main(
            [
                "logs",
                str(w.mf),
                str(w.mg),
                "--watch",
                "0.2",
                "--idle",
                "30",
                "--plot",
                str(png),
                "--format",
                "json",
            ]
        )
    finally:
        w.stop.set()
        w.join(10)
    out, err = capsys.readouterr()
    assert code == 1
    doc = json.loads(out)["logs"]
    assert 395 <= doc["divergence_step"] <= 420
    # it stopped while the runs were still going, not at their end
    assert w.written < 20_000
    assert "watch ended (parted)" in err
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_watch_of_matching_runs_stops_on_idle_logs_and_passes(tmp_path: Path, capsys) -> None:
    w = Writer(tmp_path, n=600, part_at=None)
    html = tmp_path / "live.html"
    w.start()
    code = main(
        ["logs", str(w.mf), str(w.mg), "--watch", "0.1", "--idle", "2", "--plot", str(html)]
    )
    w.join(10)
    out, err = capsys.readouterr()
    assert code == 0, out
    assert "watch ended (idle)" in err
    assert err.count("The runs match") >= 2  # judged again as steps arrived
    assert "600 common steps" in out
    assert "The runs match" in html.read_text(encoding="utf-8")


def test_follower_keeps_a_half_written_line_for_the_next_poll(tmp_path: Path) -> None:
    path = tmp_path / "mg.log"
    line = _mg(1, 10, 9.5)
    path.write_text(line + line.replace("       1/", "       2/")[:50])
    f = LogFollower(str(path), "megatron")
    assert f.poll() == 1 and f.log().partial_line
    with open(path, "a") as fh:
        fh.write(line.replace("       1/", "       2/")[50:])
    assert f.poll() == 1
    log = f.log()
    assert log.steps.tolist() == [1, 2] and not log.partial_line
    assert log.series["loss"].tolist() == [9.5, 9.5]
    path.write_text(line)  # the job started again: the log is shorter than what was read
    f.poll()
    assert f.log().steps.tolist() == [1]


def test_follower_memory_is_bounded(tmp_path: Path, monkeypatch) -> None:
    from cfglint.load import losslog

    monkeypatch.setattr(losslog, "FOLLOW_MAX_STEPS", 50)
    path = tmp_path / "mg.log"
    f = LogFollower(str(path), "megatron")
    path.write_text("")
    for k in range(5):
        with open(path, "a") as fh:
            fh.write("".join(_mg(s, 1000, 5.0) for s in range(k * 40 + 1, k * 40 + 41)))
        assert f.poll() == 40  # new steps are said even once old ones are dropped
    log = f.log()
    assert log.steps.size == 50 and log.steps[-1] == 200 and f.dropped == 150
    assert len(f.acc.steps) == 1  # one array, not a list growing with every poll


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path / "cache"))


def test_follower_catches_up_a_large_log_in_one_poll(tmp_path: Path, monkeypatch) -> None:
    """A watch started on a log already weeks long reads all of it at once, a chunk at a
    time (it read one chunk a poll: a 800 MB log took fifty polls to be judged whole)."""
    from cfglint.load import losslog

    monkeypatch.setattr(losslog, "FOLLOW_CHUNK", 1000)
    path = tmp_path / "mg.log"
    path.write_text("".join(_mg(s, 1000, 5.0) for s in range(1, 51)))
    f = LogFollower(str(path), "megatron")
    assert f.poll() == 50 and f.log().steps[-1] == 50
