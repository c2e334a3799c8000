"""Run cfglint on hostile inputs in a child process and check the input-error contract.

The contract (issue 12): every run ends with exit code 0, 1 or 2, within a time bound and a
memory bound; exit 2 writes ONE line on stderr naming the responsible file and no traceback;
exit 0/1 writes well-formed JSON (strict: no NaN/Infinity) whose findings name rows that
exist in ``rules/*.yaml``; nothing in the input is ever executed (canary files stay absent).

Two ways to run a case:

* :func:`run_cli` starts one ``python -m cfglint`` per case (used for the special files: a
  FIFO, ``/dev/zero``, a symlink loop, an unreadable folder, huge files), under
  ``RLIMIT_AS`` and a wall-clock timeout, and measures peak RSS with ``wait4``.
* :class:`Pool` keeps a few long-lived workers that each run many cases in-process through
  ``cfglint.cli.main`` (thousands of cases in minutes). A worker that hangs past the timeout
  is killed and the case counted as a hang; one that dies (segfault, memory) is counted as a
  crash; either way a fresh worker carries on.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
RULES = ROOT / "rules"

MEM_LIMIT = 2 * 1024**3  # the address-space limit of the fuzz campaign in the issue
TIMEOUT = 30.0
OUT_CAP = 16 * 1024 * 1024  # keep at most this much of a child's stdout/stderr


def known_rows() -> set[str]:
    rows: set[str] = set()
    for p in RULES.glob("*.yaml"):
        rows.update(re.findall(r"^\s*row:\s*([A-Za-z0-9_.]+)\s*$", p.read_text(), flags=re.M))
    return rows


def _env(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CFGLINT_", "PYTEST", "COV"))}
    env["CFGLINT_CACHE_DIR"] = cache
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "120"
    return env


def _hwm_kib(pid: int) -> int:
    """The process's own peak resident size (VmHWM, reset at exec), 0 where unknown."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _limits(mem: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@dataclass
class Outcome:
    argv: list[str]
    rc: int | None  # None: killed at the timeout; negative: killed by a signal
    stdout: str
    stderr: str
    seconds: float
    max_rss_mib: float = 0.0
    timed_out: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        if self.timed_out:
            return "hang"
        if self.rc is None or self.rc < 0 or self.rc not in (0, 1, 2):
            return "crash"
        return f"exit{self.rc}"


def _read_capped(fh: Any) -> str:
    fh.seek(0)
    data = fh.read(OUT_CAP)
    return data.decode("utf-8", "replace")


def run_cli(
    argv: list[str],
    *,
    cwd: str | Path,
    timeout: float = TIMEOUT,
    mem: int = MEM_LIMIT,
    cache: str | None = None,
) -> Outcome:
    """One ``python -m cfglint ARGV`` under a memory limit and a timeout."""
    cache = cache or tempfile.mkdtemp(prefix="cfglint-fuzz-cache-")
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "cfglint", *argv],
            cwd=str(cwd),
            env=_env(cache),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            preexec_fn=lambda: _limits(mem),
            start_new_session=True,
        )
        timed_out = False
        peak_kib = 0
        while True:
            peak_kib = max(peak_kib, _hwm_kib(proc.pid))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - t0 > timeout:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        proc.returncode = 0  # reaped by wait4; keep Popen from waiting again
        secs = time.monotonic() - t0
        rc: int | None = None if timed_out else os.waitstatus_to_exitcode(status)
        return Outcome(
            argv=list(argv),
            rc=rc,
            stdout=_read_capped(out),
            stderr=_read_capped(err),
            seconds=secs,
            # ru_maxrss of a child keeps its parent's high-water mark across fork and exec
            # (a test process that loaded torch reads as 300 MiB); VmHWM is the child's own
            max_rss_mib=(peak_kib or usage.ru_maxrss) / 1024,
            timed_out=timed_out,
        )


# -- the contract ----------------------------------------------------------------------------


def _strict_json(text: str) -> Any:
    def bad_constant(name: str) -> Any:
        raise ValueError(f"bare {name} is not JSON")

    return json.loads(text, parse_constant=bad_constant)


def _nothing_checked(o: Outcome) -> bool:
    lines = [ln for ln in o.stderr.splitlines() if ln.strip()]
    return (
        not o.stdout.strip()
        and bool(lines)
        and lines[-1].startswith("cfglint: nothing checked")
        and all(": skipped: " in ln for ln in lines[:-1])
    )


_FOLDER_NOTE = re.compile(r"^cfglint: \d+ file\(s\) in the given folders skipped ")


def _skip_note(line: str) -> bool:
    return ": skipped: " in line or bool(_FOLDER_NOTE.match(line))


def violations(
    o: Outcome,
    *,
    responsible: str | None,
    rows: set[str],
    json_out: bool = True,
    canaries: tuple[Path, ...] = (),
    max_rss_mib: float | None = None,
) -> list[str]:
    """What breaks the contract in this outcome; empty when it holds."""
    bad: list[str] = []
    if o.timed_out:
        return [f"hang: no exit within {o.seconds:.0f} s"]
    if o.rc is None or o.rc < 0:
        return [f"crash: killed by signal {-(o.rc or 0)}"]
    if o.rc not in (0, 1, 2):
        bad.append(f"exit code {o.rc}")
    both = o.stdout + o.stderr
    if "Traceback (most recent call last)" in both:
        bad.append("traceback")
    if "internal error" in o.stderr:
        bad.append("internal error: " + o.stderr.strip().splitlines()[0][:300])
    if "site-packages" in o.stderr:
        bad.append("library message leaked to stderr")
    if o.rc == 2:
        lines = [ln for ln in o.stderr.splitlines() if ln.strip()]
        if len(lines) != 1:
            bad.append(f"exit 2 with {len(lines)} stderr lines: {o.stderr[:300]!r}")
        elif responsible is not None and os.path.basename(responsible) not in lines[0]:
            bad.append(f"exit 2 without naming {os.path.basename(responsible)}: {lines[0][:300]}")
    elif o.rc == 0 and _nothing_checked(o):
        pass  # every input was skipped as not a training input: notes only, by design
    elif o.rc in (0, 1):
        # notes that name a skipped input ("x.yaml: skipped: not a MindFormers config"), or
        # count those a folder walk skipped, are part of the report; nothing else on stderr is
        if [ln for ln in o.stderr.splitlines() if ln.strip() and not _skip_note(ln)]:
            bad.append(f"exit {o.rc} with stderr output: {o.stderr[:300]!r}")
        if json_out:
            try:
                doc = _strict_json(o.stdout)
            except ValueError as exc:
                bad.append(f"invalid JSON ({exc}): {o.stdout[:200]!r}")
            else:
                for f in doc.get("findings", []) if isinstance(doc, dict) else []:
                    if f.get("row") not in rows:
                        bad.append(f"finding names an unknown row {f.get('row')!r}")
    for c in canaries:
        if c.exists():
            bad.append(f"input was executed: {c} exists")
    if max_rss_mib is not None and o.max_rss_mib > max_rss_mib:
        bad.append(f"peak RSS {o.max_rss_mib:.0f} MiB over {max_rss_mib:.0f} MiB")
    return bad


# -- many cases per worker -------------------------------------------------------------------

_WORKER = r"""
import io, json, os, sys, time, contextlib
proto = os.fdopen(os.dup(1), "w", buffering=1)
cmd = os.fdopen(os.dup(0), "r")
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0); os.dup2(null, 1); os.dup2(null, 2)
from cfglint.cli import main
for line in cmd:
    case = json.loads(line)
    os.chdir(case["cwd"])
    out, err = io.StringIO(), io.StringIO()
    t0 = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(case["argv"])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:
            rc = 99
            err.write("Traceback (most recent call last): escaped " + repr(exc)[:500])
    proto.write(json.dumps({"rc": rc, "out": out.getvalue()[:16777216],
                            "err": err.getvalue()[:16777216],
                            "secs": time.monotonic() - t0}) + "\n")
"""


class Pool:
    """Long-lived in-process workers; each case still gets a timeout and crash isolation."""

    def __init__(self, *, timeout: float = 10.0, mem: int = MEM_LIMIT) -> None:
        self.timeout, self.mem = timeout, mem
        self.cache = tempfile.mkdtemp(prefix="cfglint-fuzz-cache-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.peak_rss_mib = 0.0

    def _start(self) -> subprocess.Popen[bytes]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _WORKER],
                env=_env(self.cache),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                preexec_fn=lambda: _limits(self.mem),
                start_new_session=True,
            )
        return self.proc

    def _reap(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        _, _, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = -9
        self.peak_rss_mib = max(self.peak_rss_mib, usage.ru_maxrss / 1024)
        self.proc = None

    def run(self, argv: list[str], cwd: str | Path) -> Outcome:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        t0 = time.monotonic()
        try:
            proc.stdin.write((json.dumps({"argv": argv, "cwd": str(cwd)}) + "\n").encode())
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([proc.stdout], [], [], self.timeout)
        line = proc.stdout.readline() if ready else b""
        secs = time.monotonic() - t0
        if not line:
            timed_out = not ready
            status = proc.poll()
            self._reap()
            return Outcome(
                argv,
                None if timed_out else (status if status else -11),
                "",
                "",
                secs,
                0.0,
                timed_out=timed_out,
            )
        r = json.loads(line)
        return Outcome(argv, r["rc"], r["out"], r["err"], r["secs"])

    def close(self) -> None:
        if self.proc is not None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                _, _, usage = os.wait4(self.proc.pid, 0)
                self.proc.returncode = 0
                self.peak_rss_mib = max(self.peak_rss_mib, usage.ru_maxrss / 1024)
            except (OSError, ChildProcessError):
                self._reap()
            self.proc = None
