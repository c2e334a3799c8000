"""Per-step training metrics from either framework's text log, streamed.

What each framework prints (one line per logged step):

- Megatron-LM ``training_log`` (megatron/training/training.py:3567-3641@d98e8a64) and
  MindSpeed-LLM's copy (mindspeed_llm/training/training.py:1156-1194@c77308a1):
  ``[date] iteration  N/ M | consumed samples: S | elapsed time per iteration (ms): T |
  throughput per GPU (TFLOP/s/GPU): F | learning rate: 1.000000E-05 | global batch size: B |
  lm loss: 1.0E+01 | loss scale: 1.0 | grad norm: 1.234 | number of skipped iterations: 0 |
  number of nan iterations: 0 |``. Losses are means over the ``--log-interval`` iterations
  since the previous line; the skipped and nan counts are sums over the same iterations.
- MindFormers ``MFLossMonitor`` (mindformers/core/callback/callback.py:484-507@fd4deebc):
  ``{ Epoch:[  E/ NE], step:[  N/ M], loss: 10.1, per_step_time: 845ms, lr: 3e-06,
  overflow cond: False, loss_scale: 1.0, global_norm: [1.2], train_throughput_per_npu: 155.1T``;
  outside sink mode the loss reads ``loss:[cur/mean]``. ``step`` counts within the epoch:
  the global step is ``N + (E - 1) * M`` (callback.py:297-305 and :472).

A log is read in large chunks; each field is found by one regular-expression pass over the
chunk, anchored on a literal prefix, and taken for the chunk's step lines when it occurs
exactly once per step line. A chunk where a field does not line up is read line by line.
That keeps a million-line log to about a second instead of tens of seconds.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

from cfglint.load import losslog_numba
from cfglint.load.datacache import cache_enabled
from cfglint.load.losslog_scan import WS, Field, StepForm, scan
from cfglint.load.safeio import iter_lines, open_regular
from cfglint.model.errors import InputError

CHUNK = 16 * 1024 * 1024
# With numba (the logs extra) a chunk's labels are found and its numbers read by compiled
# loops that release the interpreter lock, and a large log's byte ranges are read by threads;
# without it, by the numpy scan in forked processes. ``None`` turns it off (bench/).
compiled_read = losslog_numba.read if losslog_numba.AVAILABLE else None


def _compiled() -> Callable[..., Any] | None:
    """The compiled reader, unless ``--no-cache`` asks that nothing be written: numba's
    compiled loops are cached on disk, and compiling them again on every run would cost
    about 15 CPU seconds (bench/results/logs_speed.md): the numpy scan reads instead."""
    return compiled_read if cache_enabled() else None


# a chunk this small is read by the scan: importing numba and loading the compiled loops
# costs more
COMPILED_MIN = 4 * 1024 * 1024
# Reading stops after this many bytes (the result says so): bounded time and memory on a
# runaway log. Four GiB holds ten million Megatron step lines.
MAX_BYTES = 4 * 1024 * 1024 * 1024
MAX_LINE = 64 * 1024
# a log this large is read by up to MAX_WORKERS processes at once
PARALLEL_MIN = 64 * 1024 * 1024
MAX_WORKERS = 8
# up to this many byte ranges a worker, taken from one queue as each worker is free: with one
# range a worker, the worker that drew the slower bytes (Megatron's lines cost more a byte than
# MindFormers') finished 0.06-0.15 s after the other, idle (bench/results/logs_speed.md)
RANGES_PER_WORKER = 8

# the series every reader fills, in the report's order
SERIES = (
    "loss",
    "lm_loss",
    "grad_norm",
    "lr",
    "loss_scale",
    "skipped",
    "nan",
    "overflow",
    "step_time_ms",
    "throughput",
)
# Step numbers are bounded to 18 digits: int() of a 5,000-digit run would raise. A global
# step computed from MindFormers' epoch counter is bounded the same way: int64 arithmetic
# wraps silently (issue 32: a wrapped counter aligned with Megatron's steps, every row PASS).
MAX_STEP = 10**18 - 1
# the step given to a line whose global step is beyond MAX_STEP (read counters are >= 0)
STEP_OVERFLOW = -1
# A logged loss, norm, rate, scale, count or time larger than this in magnitude is no value
# a training run printed: it reads as infinite (a non-finite print, which the judge lists),
# so that no sum or difference of the series overflows float64 (issue 32: losses of 1e308
# gave a drift "offset -inf" and numpy warnings). 1e30 is far above any loss scale (2**64)
# or throughput, and its square is still finite.
MAX_MAGNITUDE = 1e30
_MG_STEP = re.compile(rb"iteration\s+(\d{1,18})\s*/\s*\d{1,18}\s*\|")
_MG_FORM = StepForm(b"iteration", b"|", gap=True, pattern=_MG_STEP)
_MG_SCAN: dict[str, Field] = {
    "loss": Field(b"| lm loss: ", varying=True),
    "grad_norm": Field(b"| grad norm: ", varying=True),
    "lr": Field(b"| learning rate: "),
    "loss_scale": Field(b"| loss scale: "),
    "skipped": Field(b"| number of skipped iterations:", ((WS, None),)),
    "nan": Field(b"| number of nan iterations:", ((WS, None),)),
    "step_time_ms": Field(b"| elapsed time per iteration (ms): "),
    "throughput": Field(b"| throughput per GPU (TFLOP/s/GPU): "),
}


def _mf_step(groups: tuple[bool, bool]) -> re.Pattern[bytes]:
    """MindFormers' ``Epoch:[E/NE], step:[N/M]``, N always a group, E and M as asked."""
    epoch, per = (rb"(\d{1,9})" if g else rb"\d{1,9}" for g in groups)
    return re.compile(
        rb"Epoch:\[\s*"
        + epoch
        + rb"\s*/\s*\d{1,9}\s*\],\s*step:\[\s*(\d{1,18})\s*/\s*"
        + per.replace(b"9", b"18")
        + rb"\s*\]"
    )


_MF_STEP = _mf_step((True, True))
# older MindFormers (and some callbacks) print "step:[N/M]" without the epoch
_MF_STEP_ONLY = re.compile(rb"step:\[\s*(\d{1,18})\s*/\s*(\d{1,18})\s*\]")
_MF_FORM = StepForm(
    b"step:[",
    b"]",
    epoch_label=b"Epoch:[",
    epoch_close=b"]",
    pattern=_mf_step((False, False)),
)
_BRACKET = ((b"[", 1), (WS, None))  # a value printed as a one-element array: "[1.5]"
_MF_SCAN: dict[str, Field] = {
    # sink mode "loss: 10.1", otherwise "loss:[10.1/10.2]" (the step's, then the mean)
    "loss": Field(b"], loss:", ((b" ", 1), *_BRACKET), varying=True, required=True),
    "lm_loss": Field(b", lm_loss: ", varying=True),
    "grad_norm": Field(b"global_norm: ", _BRACKET, varying=True),
    # the dynamic-graph trainer's "{ step:[N/M], loss: L, ..., grad_norm: G }"
    "grad_norm_dynamic": Field(b", grad_norm: ", varying=True),
    "lr": Field(b", lr: ", _BRACKET),
    "loss_scale": Field(b"loss_scale: ", _BRACKET),
    "overflow": Field(b"overflow cond: ", words=(b"True", b"False")),
    "step_time_ms": Field(b"per_step_time: ", suffix=b"ms"),
    "throughput": Field(b"train_throughput_per_npu: ", suffix=b"T"),
}
_MG_FIELDS = {k: f.pattern for k, f in _MG_SCAN.items()}
_REQUIRED = {
    fw: tuple(f.label for f in scan_fields.values() if f.required)
    for fw, scan_fields in (("megatron", _MG_SCAN), ("mindformers", _MF_SCAN))
}
_MF_FIELDS = {k: f.pattern for k, f in _MF_SCAN.items()}
# which framework's step line a chunk has: cheap substring tests first
_MARKS = {"megatron": b"iteration", "mindformers": b"step:["}


@dataclass
class RunLog:
    """Per-step series of one run: ``steps`` sorted and unique, each series aligned with it
    (NaN where the log printed no value)."""

    path: str
    framework: str  # "megatron" or "mindformers"
    source: str = "text log"
    steps: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    series: dict[str, np.ndarray] = field(default_factory=dict)
    # the steps in file order repeated an earlier step here (a resumed run): (step resumed
    # from, how many logged steps it repeated)
    restarts: list[tuple[int, int]] = field(default_factory=list)
    truncated: bool = False
    lines_read: int = 0
    # the file's last line had no line end (a run still writing it): left out
    partial_line: bool = False
    # Megatron steps whose printed loss is not a loss: every iteration of the window was
    # skipped and core >= 0.17 prints the empty mean as 0 (training.py:2244-2246@9539a12e)
    empty_windows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # how many restarts there are in all (``restarts`` details the first MAX_RESTARTS)
    restart_count: int = 0
    # values beyond MAX_MAGNITUDE, read as infinite
    out_of_range: int = 0
    # what the reader could not read (corrupt records skipped, bytes dropped), for the notes
    read_notes: list[str] = field(default_factory=list)

    def has(self, name: str) -> bool:
        s = self.series.get(name)
        return s is not None and bool(np.isfinite(s).any())

    def interval(self) -> int:
        """The usual distance between logged steps (``--log-interval`` / ``per_print_times``)."""
        if self.steps.size < 2:
            return 1
        d = np.diff(self.steps)
        if bool((d == d[0]).all()):  # one interval throughout: no sort
            return int(d[0])
        vals, counts = np.unique(d, return_counts=True)
        return int(vals[np.argmax(counts)])

    def gaps(self) -> list[tuple[int, int]]:
        """(last step before, first step after) where more than one interval is missing."""
        if self.steps.size < 2:
            return []
        d = np.diff(self.steps)
        idx = np.flatnonzero(d > self.interval())
        return [(int(self.steps[i]), int(self.steps[i + 1])) for i in idx]

    def line_of(self, step: int) -> int:
        """The line of the last printed ``step`` (1 when not found): read again, only for the
        few steps a finding points at."""
        return _find_line(self.path, self.framework, step)


# one chunk's steps and series (a series constant over the chunk sent as one number)
_Part = tuple[np.ndarray, dict[str, np.ndarray | float]]


def read_run_log(path: str, framework: str | None = None) -> RunLog:
    """The text log at ``path``; ``framework`` when the caller knows which side wrote it
    (else the kind with more step lines). A large log is read in byte ranges by several
    processes, each range owning the lines that start in it."""
    return read_run_logs([(path, framework)])[0]


def read_run_logs(logs: list[tuple[str, str | None]]) -> list[RunLog]:
    """Several text logs (path, framework or ``None``), their byte ranges read by one pool
    of processes: no pool started per log, and no core idle between two logs."""
    sizes = []
    for path, _fw in logs:
        with open_regular(path, what="training log") as fh:
            sizes.append(os.fstat(fh.fileno()).st_size)
    tasks = [
        (i, path, a, b, fw)
        for i, ((path, fw), size) in enumerate(zip(logs, sizes, strict=True))
        for a, b in _ranges(min(size, MAX_BYTES))
    ]
    if len(tasks) > len(logs):
        with _pool() as pool:
            cols = list(zip(*tasks, strict=True))
            parts = list(pool.map(_read_range, *cols[1:]))
    else:
        parts = [_read_range(path, a, b, fw) for _i, path, a, b, fw in tasks]
    out = []
    for i, ((path, fw), size) in enumerate(zip(logs, sizes, strict=True)):
        mine = [part for task, part in zip(tasks, parts, strict=True) if task[0] == i]
        out.append(_assemble(path, fw, mine, size))
    return out


def _pool() -> Executor:
    """Threads where compiled loops read the chunks (they release the interpreter lock),
    else forked processes (the scan holds the interpreter lock between its numpy
    calls)."""
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if _compiled() is not None:
        return ThreadPoolExecutor(workers)
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))


def _assemble(
    path: str,
    framework: str | None,
    parts: list[tuple[dict[str, list[_Part]], int, bool]],
    size: int,
) -> RunLog:
    acc = {fw: _Acc() for fw in ("megatron", "mindformers")}
    lines, partial = 0, False
    for part, n, cut in parts:
        lines += n
        partial |= cut
        for fw, chunks in part.items():
            for c in chunks:
                acc[fw].add(c)
    if framework is None:
        framework = max(acc, key=lambda fw: acc[fw].count)
    log = acc[framework].finish(path, framework)
    log.truncated, log.lines_read, log.partial_line = size > MAX_BYTES, lines, partial
    if framework == "megatron":
        _drop_empty_windows(log)
    if not np.isfinite(log.series.get("loss", np.zeros(0))).any():
        want = (
            "Megatron 'iteration ... lm loss:'"
            if framework == "megatron"
            else ("MindFormers 'step:[...] loss:'")
        )
        raise InputError(path, f"no per-step loss lines found ({want})")
    return log


def _drop_empty_windows(log: RunLog) -> None:
    """A Megatron loss of exactly 0 on a line that counts skipped iterations is the mean
    of a window where every iteration was skipped (core >= 0.17 prints ``avg >= 0.0``,
    training.py:2244-2246@9539a12e; before, ``avg > 0.0`` left the field out): no loss."""
    loss, skipped = log.series.get("loss"), log.series.get("skipped")
    if loss is None or skipped is None:
        return
    # a fork that tests ``avg > 0.0`` prints no loss for that window at all (NaN here)
    empty = ((loss == 0) | np.isnan(loss)) & (np.nan_to_num(skipped) > 0)
    if empty.any():
        log.empty_windows = log.steps[empty]
        loss[empty] = np.nan


def _ranges(size: int) -> list[tuple[int, int]]:
    """Byte ranges for the worker processes: one range below PARALLEL_MIN bytes or on a
    single CPU (starting processes costs more than it saves)."""
    cpus = min(os.cpu_count() or 1, MAX_WORKERS)
    if size < PARALLEL_MIN or cpus < 2 or os.name != "posix":
        return [(0, size)]
    n = min(cpus * RANGES_PER_WORKER, -(-size // (PARALLEL_MIN // 2)))
    cuts = [size * i // n for i in range(n + 1)]
    return list(itertools.pairwise(cuts))


def _read_range(
    path: str, start: int, end: int, framework: str | None
) -> tuple[dict[str, list[_Part]], int, bool]:
    """The parsed chunks of the lines that start in [start, end), per framework, the
    number of lines read, and whether the file ended inside a line (that line, which a
    running job is still writing, is left out)."""
    out: dict[str, list[_Part]] = {
        "megatron": [],
        "mindformers": [],
    }
    lines = 0
    with open_regular(path, what="training log") as fh:
        pos = max(0, start - 1)
        fh.seek(pos)
        if start > 0:  # the line running into this range belongs to the one before
            pos += len(fh.readline(MAX_LINE + 1))
        chunks = _Chunks(fh, path, end - pos)
        for chunk in chunks:
            counted = None
            for fw in out:
                if framework in (None, fw) and chunks.holds(_MARKS[fw]):
                    steps, cols, counted = _parse_chunk(chunk, fw)
                    out[fw].append((steps, _compact(cols)))
            lines += chunks.newlines() if counted is None else counted
    return out, lines, chunks.partial


class _Chunks:
    """The whole lines of an open file from where it stands, in chunks of about CHUNK
    bytes that end at a line's end, those of the lines that start within ``limit`` bytes.
    Each chunk is a view of one buffer, read into and reused for the next: a fresh 16 MiB
    ``bytes`` a chunk, and the copies that joined the last partial line to the next chunk,
    cost a page fault every 4 KiB each time (about 1 CPU second for the benchmark's 517
    MiB log against 0.23 s for reading it, bench/results/logs_speed.md). ``partial``: the
    file ended inside a line (left out)."""

    def __init__(self, fh: BinaryIO, path: str, limit: int) -> None:
        self.fh, self.path, self.limit = fh, path, limit
        self.partial = False
        self.store = _store()
        self.cut = 0

    def __iter__(self) -> Iterator[memoryview]:
        view = memoryview(self.store)
        have = pos = 0  # the partial line kept; where the buffer's start is in the range
        while pos < self.limit:
            try:
                n = self.fh.readinto(view[have : have + CHUNK])
            except OSError as exc:
                msg = f"cannot read training log: {exc.strerror or exc}"
                raise InputError(self.path, msg) from None
            if not n:  # the end of the file inside a line: not a whole line yet
                self.partial = have > 0
                return
            total = have + n
            cut = self.store.rfind(b"\n", 0, total) + 1
            if cut == 0 and total > MAX_LINE:
                cut = total  # one enormous line: read past it
            if pos + cut > self.limit:  # keep the lines that start before the limit
                nl = self.store.find(b"\n", max(0, self.limit - pos - 1), cut)
                cut = nl + 1 if nl >= 0 else cut
            self.cut = cut
            if cut:
                yield view[:cut]
            pos += cut
            have = total - cut
            self.store[:have] = bytes(view[cut:total])  # the partial line, to the front

    def holds(self, text: bytes) -> bool:
        """Whether the chunk just given holds ``text``."""
        return self.store.find(text, 0, self.cut) >= 0

    def newlines(self) -> int:
        """The newlines in the chunk just given."""
        return self.store.count(b"\n", 0, self.cut)


# one buffer a thread (or worker process), reused from range to range: a fresh one would
# cost its page faults again in each of a large log's byte ranges
_STORE = threading.local()


def _store() -> bytearray:
    """This thread's read buffer: a partial line of up to CHUNK + MAX_LINE bytes is kept
    at its start, a chunk read after it."""
    store = getattr(_STORE, "buffer", None)
    if store is None:
        store = _STORE.buffer = bytearray(2 * CHUNK + MAX_LINE + 1)
    return store


def _compact(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray | float]:
    """A series with one value throughout the chunk as that value: a worker process sends
    its chunks' series through a pipe, most of them constant (loss scale, skipped counts)."""
    out: dict[str, np.ndarray | float] = {}
    for k, col in cols.items():
        out[k] = float(col[0]) if col.size and bool((col == col[0]).all()) else col
    return out


class _Acc:
    """Chunks of (steps in file order, series) until the end of the file."""

    def __init__(self) -> None:
        self.steps: list[np.ndarray] = []
        self.cols: dict[str, list[np.ndarray | float]] = {k: [] for k in SERIES}
        self.count = 0

    def add(self, part: _Part) -> None:
        steps, cols = part
        if not steps.size:
            return
        self.count += steps.size
        self.steps.append(steps)
        for k in SERIES:
            self.cols[k].append(cols.get(k, np.nan))  # a constant stays a number until joined

    def finish(self, path: str, framework: str) -> RunLog:
        if not self.steps:
            return RunLog(path, framework)
        raw = np.concatenate(self.steps)
        if raw.size and int(raw.min()) < 0:
            raise InputError(
                path,
                f"a {framework} step counter goes beyond {MAX_STEP:.0e} (epoch x steps per "
                "epoch overflows): no run reaches that step, so the log cannot be aligned",
            )
        if raw.size < 2 or bool((raw[1:] > raw[:-1]).all()):
            uniq, keep, restarts, count = raw, None, [], 0  # in order, each step once
        else:
            restarts, count = _restarts(raw)
            # a resumed run repeats steps: the later print is the run that went on
            uniq, first_in_rev = np.unique(raw[::-1], return_index=True)
            keep = raw.size - 1 - first_in_rev
        series = {}
        wild = 0
        sizes = [s.size for s in self.steps]
        for k in SERIES:
            joined = _join(self.cols[k], sizes)
            if joined is None:
                continue
            col, n = bounded(joined if keep is None else joined[keep])
            wild += n
            if np.isfinite(col).any():
                series[k] = col
        return RunLog(
            path,
            framework,
            steps=uniq.astype(np.int64, copy=False),
            series=series,
            restarts=restarts,
            restart_count=count,
            out_of_range=wild,
        )


def _join(parts: list[np.ndarray | float], sizes: list[int]) -> np.ndarray | None:
    """One series' chunks end to end (``sizes``: their steps), a constant chunk filled in
    place rather than made an array first and copied again (a fifth of the serial time
    after the threads, bench/results/logs_speed.md); ``None`` where every chunk is NaN
    throughout (the series is not printed)."""
    if all(isinstance(p, float) and np.isnan(p) for p in parts):
        return None
    out = np.empty(sum(sizes))
    at = 0
    for part, n in zip(parts, sizes, strict=True):
        out[at : at + n] = part
        at += n
    return out


def bounded(col: np.ndarray) -> tuple[np.ndarray, int]:
    """``col`` with every value beyond MAX_MAGNITUDE made infinite (its sign kept), and how
    many were."""
    if col.size and -MAX_MAGNITUDE <= np.fmin.reduce(col) <= np.fmax.reduce(col) <= MAX_MAGNITUDE:
        return col, 0  # two passes without a copy (NaN ignored), the usual case
    with np.errstate(invalid="ignore"):
        wild = np.abs(col) > MAX_MAGNITUDE
    wild &= np.isfinite(col)
    n = int(wild.sum())
    if n:
        col = col.copy()
        col[wild] = np.copysign(np.inf, col[wild])
    return col, n


# restarts described one by one (each costs a pass over the steps before it)
MAX_RESTARTS = 100


def _restarts(raw: np.ndarray) -> tuple[list[tuple[int, int]], int]:
    """The first MAX_RESTARTS restarts (step resumed from, logged steps repeated) and how
    many there are in all."""
    back = np.flatnonzero(raw[1:] <= raw[:-1]) + 1
    out = []
    for i in back[:MAX_RESTARTS]:
        resumed = int(raw[i])
        repeated = int(np.count_nonzero(raw[:i] >= resumed))
        out.append((resumed, repeated))
    return out, int(back.size)


def _parse_chunk(
    data: bytes | memoryview, framework: str
) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Steps, series and the chunk's newlines (the scan has found them already). A view
    of a buffer is read by the compiled loops as it is; the scan and the patterns read a
    copy."""
    form, fields = (_MG_FORM, _MG_SCAN) if framework == "megatron" else (_MF_FORM, _MF_SCAN)
    fast = None
    compiled = _compiled()
    if compiled is not None and len(data) >= COMPILED_MIN:
        fast = compiled(data, form, fields)
    if fast is None:
        chunk = data if isinstance(data, bytes) else bytes(data)
        fast = scan(chunk, form, fields)
        if fast is None:
            fast = (*_parse_lines(chunk, framework), chunk.count(b"\n"))
    steps, cols, newlines = fast
    for alias, name in _ALIASES.items():
        col = cols.pop(alias, None)
        if col is not None:
            have = cols.get(name)
            cols[name] = col if have is None else np.where(np.isnan(have), col, have)
    return steps, cols, newlines


# a field another format of the same framework prints under another label: (its key, the
# series it fills)
_ALIASES = {"grad_norm_dynamic": "grad_norm"}


def global_steps(epoch: np.ndarray, n: np.ndarray, per: np.ndarray) -> np.ndarray:
    """MindFormers' global step ``N + (E - 1) * M`` (callback.py:297-305@fd4deebc), with
    STEP_OVERFLOW where it would pass MAX_STEP (checked before multiplying: int64 wraps)."""
    e = np.maximum(epoch - 1, 0)
    room = (MAX_STEP - np.minimum(n, MAX_STEP)) // np.maximum(per, 1)
    over = (n > MAX_STEP) | ((per > 0) & (e > room))
    steps = n + np.where(over, 0, e) * per
    steps[over] = STEP_OVERFLOW
    return steps


def _parse_lines(chunk: bytes, framework: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The chunk by one pattern pass per field (the scan could not decide a step
    counter)."""
    if framework == "megatron":
        steps = np.array(_MG_STEP.findall(chunk), dtype=np.int64)
        fields = _MG_FIELDS
    else:
        hits = _MF_STEP.findall(chunk)
        if hits:
            a = np.array(hits, dtype=np.int64).reshape(-1, 3)
            steps = global_steps(a[:, 0], a[:, 1], a[:, 2])
        else:
            steps = np.array([h[0] for h in _MF_STEP_ONLY.findall(chunk)], dtype=np.int64)
        fields = _MF_FIELDS
    cols: dict[str, np.ndarray] = {}
    if not steps.size:
        return steps, cols
    if chunk.count(b"\n") + (not chunk.endswith(b"\n")) != steps.size:
        # other lines too: keep the step lines only, so that a field is counted on them
        # alone (a validation or warning line may print "grad norm:" as well)
        lines = _step_lines(chunk, framework)
        chunk = b"\n".join(lines)
        if len(lines) != steps.size:  # lines with a step counter but no loss (monitor lines)
            steps = np.array([_step_of(ln, framework) for ln in lines], dtype=np.int64)
    slow: list[str] = []
    for name, pat in fields.items():
        const = None if name in _VARYING else _constant(chunk, pat, steps.size)
        if const is not None:
            cols[name] = np.full(steps.size, const)
            continue
        vals = pat.findall(chunk)
        if not vals:
            continue
        if len(vals) == steps.size:
            cols[name] = _floats(vals)
        else:
            slow.append(name)
    if slow:
        step_lines = _step_lines(chunk, framework)
        if len(step_lines) == steps.size:
            for name in slow:
                cols[name] = _floats(
                    [(m.group(1) if (m := fields[name].search(ln)) else b"") for ln in step_lines]
                )
    return steps, cols


# series that change every step: searched once, never tested for a constant first
_VARYING = {"loss", "lm_loss", "grad_norm"}


def _constant(chunk: bytes, pat: re.Pattern[bytes], n: int) -> float | None:
    """The field's value when every one of the chunk's ``n`` step lines prints the same
    text for it (loss scale, skipped counts, a constant lr): one substring count instead of
    a regular-expression pass. The byte after the value is part of the text, so "1.0" does
    not count "1.05"."""
    m = pat.search(chunk)
    if m is None:
        return None
    text = chunk[m.start() : m.end() + 1]
    if chunk.count(text) != n:
        return None
    return _float(_WORDS.get(m.group(1), m.group(1)))


def _step_lines(chunk: bytes, framework: str) -> list[bytes]:
    """The chunk's step lines: the step counter and every required field on them."""
    mark = _MARKS[framework]
    pat = _MG_STEP if framework == "megatron" else _MF_STEP_ONLY
    need = _REQUIRED[framework]
    return [
        ln
        for ln in chunk.split(b"\n")
        if mark in ln and all(r in ln for r in need) and pat.search(ln)
    ]


_WORDS = {b"True": b"1", b"False": b"0", b"": b"nan"}


def _floats(vals: list[bytes]) -> np.ndarray:
    if vals[0] in _WORDS:
        vals = [_WORDS.get(v, v) for v in vals]
    # numpy's text parser is C: a token it cannot read ends the array early, and one it
    # reads only in part ("1.2.3") warns, which is turned into the one-by-one reading
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            a = np.fromstring(b" ".join(vals), sep=" ")
        except (DeprecationWarning, ValueError):
            a = np.zeros(0)
    if a.size == len(vals):
        return a
    return np.array([_float(_WORDS.get(v, v)) for v in vals], dtype=np.float64)


def _float(v: bytes) -> float:
    try:
        return float(v)
    except ValueError:
        return float("nan")


MAX_FIND_LINES = 50_000_000


def _find_line(path: str, framework: str, step: int) -> int:
    hit = 0
    try:
        with open_regular(path, what="training log") as fh:
            for n, raw, _ in iter_lines(fh, path, what="training log", max_line=MAX_LINE):
                if n > MAX_FIND_LINES:
                    break
                if _MARKS[framework] in raw and _step_of(raw, framework) == step:
                    hit = n
    except InputError:
        return 1
    return hit or 1


def _step_of(raw: bytes, framework: str) -> int | None:
    if framework == "megatron":
        m = _MG_STEP.search(raw)
        return int(m.group(1)) if m else None
    m = _MF_STEP.search(raw)
    if m:
        e, s, per = (int(x) for x in m.groups())
        step = s + (e - 1) * per
        return step if step <= MAX_STEP else STEP_OVERFLOW
    m = _MF_STEP_ONLY.search(raw)
    return int(m.group(1)) if m else None


# -- the lint's migration-standard rows: loss and global norm by step -----------------------
@dataclass
class LossLog:
    path: str
    framework: str  # "megatron" or "mindformers"
    loss: dict[int, float] = field(default_factory=dict)
    grad_norm: dict[int, float] = field(default_factory=dict)
    run: RunLog | None = None

    def line_of(self, step: int) -> int:
        return self.run.line_of(step) if self.run is not None else 1


def read_loss_log(path: str) -> LossLog:
    run = read_run_log(path)
    return LossLog(
        path,
        run.framework,
        loss=_as_dict(run, "loss"),
        grad_norm=_as_dict(run, "grad_norm"),
        run=run,
    )


def _as_dict(run: RunLog, name: str) -> dict[int, float]:
    col = run.series.get(name)
    if col is None:
        return {}
    ok = np.isfinite(col)
    return dict(zip(run.steps[ok].tolist(), col[ok].tolist(), strict=True))


# -- following a log that a running job is still writing ------------------------------------
# one poll reads at most this much (a log that grew by more is caught up over several polls)
FOLLOW_CHUNK = CHUNK
# a followed log keeps at most this many steps (the most recent): bounded memory on a run
# that lasts weeks (about 100 bytes a step: half a gigabyte at the limit)
FOLLOW_MAX_STEPS = 5_000_000


class LogFollower:
    """A text log read as it grows: each :meth:`poll` parses the whole lines written since
    the last one (a line still being written waits for its end), so memory holds the parsed
    series, never the text. A log that shrinks or is replaced starts again from its top."""

    def __init__(self, path: str, framework: str) -> None:
        self.path, self.framework = path, framework
        self.pos = 0
        self.size = 0
        self.ident: tuple[int, int] | None = None
        self.acc = _Acc()
        self.lines = 0
        self.dropped = 0  # steps left behind by FOLLOW_MAX_STEPS
        self.read = 0  # step lines read in all (the kept ones are bounded)

    def poll(self) -> int:
        """Read what was written since the last poll, all of it (a log that is already
        large when the watch starts is caught up at once, a chunk at a time); the number
        of new step lines."""
        before = self.read
        with open_regular(self.path, what="training log") as fh:
            st = os.fstat(fh.fileno())
            ident = (st.st_dev, st.st_ino)
            if ident != self.ident or st.st_size < self.pos:  # replaced or truncated
                self.ident, self.pos, self.acc, self.lines = ident, 0, _Acc(), 0
            self.size = st.st_size
            while self.pos < self.size and self._read(fh):
                pass
        return self.read - before

    def _read(self, fh: BinaryIO) -> bool:
        """Parse the next chunk of whole lines; ``False`` when only part of a line is left."""
        fh.seek(self.pos)
        try:
            data = fh.read(min(FOLLOW_CHUNK, self.size - self.pos))
        except OSError as exc:
            raise InputError(self.path, f"cannot read training log: {exc.strerror}") from None
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) >= FOLLOW_CHUNK:
            cut = len(data)  # one enormous line: read past it
        if cut == 0:
            return False
        self.pos += cut
        steps, cols, counted = _parse_chunk(data[:cut], self.framework)
        self.lines += counted
        self.read += steps.size
        self.acc.add((steps, _compact(cols)))
        self._bound()
        return True

    def _bound(self) -> None:
        """One array per series (no list of chunks growing with the run), the oldest steps
        dropped past FOLLOW_MAX_STEPS."""
        if len(self.acc.steps) < 2 and self.acc.count <= FOLLOW_MAX_STEPS:
            return
        keep = min(self.acc.count, FOLLOW_MAX_STEPS)
        self.dropped += self.acc.count - keep
        sizes = [s.size for s in self.acc.steps]
        self.acc.steps = [np.concatenate(self.acc.steps)[-keep:]]
        for k in SERIES:
            joined = _join(self.acc.cols[k], sizes)
            self.acc.cols[k] = [np.nan if joined is None else joined[-keep:]]
        self.acc.count = keep

    def log(self) -> RunLog:
        """The steps read so far, as :func:`read_run_log` gives them."""
        log = self.acc.finish(self.path, self.framework)
        log.lines_read = self.lines
        log.partial_line = self.size > self.pos
        if self.framework == "megatron":
            _drop_empty_windows(log)
        return log
