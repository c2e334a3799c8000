"""The fuzz suite of issue 12: mutated and special inputs in every input slot, checked
against the input-error contract (see harness.py). A quick slice runs in ``./test``; the long
run (``--slow``, thousands of cases) runs in ``.ci/run``. ``CFGLINT_FUZZ_SEED`` replays a run,
``CFGLINT_FUZZ_CASES`` sets its size, ``CFGLINT_FUZZ_REPORT`` names a JSON file for the counts.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from cases import restore
from generate import SLOTS, SPECIALS, FuzzCase, make_case, special_case
from harness import Outcome, Pool, known_rows, run_cli, violations

ROWS = known_rows()
SEED = int(os.environ.get("CFGLINT_FUZZ_SEED", "12"))
# a lint of the fixture pair peaks near 150 MiB; the bound leaves room for the source scan
RSS_BOUND_MIB = 1024.0


def _check(c: FuzzCase, o: Outcome, rss: float | None) -> list[str]:
    return violations(
        o,
        responsible=c.responsible,
        rows=ROWS,
        json_out=c.json_out,
        canaries=(c.canary,),
        max_rss_mib=rss,
    )


def _mutated(n: int, workers: int, seed: int) -> tuple[Counter[str], list[str], float]:
    """``n`` mutated cases over all slots on ``workers`` long-lived workers."""
    counts: Counter[str] = Counter()
    failures: list[str] = []
    peak = 0.0

    def run_share(k: int) -> None:
        nonlocal peak
        pool = Pool(timeout=20.0)
        try:
            for i in range(k, n, workers):
                r = random.Random(seed * 1_000_003 + i)
                slot = SLOTS[i % len(SLOTS)]
                d = Path(tempfile.mkdtemp(prefix=f"fz{i}-"))
                try:
                    c = make_case(r, d, slot)
                    o = pool.run(c.argv, d)
                    bad = _check(c, o, None)
                    counts[f"{slot}:{o.kind}"] += 1
                    counts[o.kind] += 1
                    if bad:
                        counts["violation"] += 1
                        failures.append(f"seed={seed} case={i} slot={slot}: {bad}")
                finally:
                    restore(d)
                    shutil.rmtree(d, ignore_errors=True)
        finally:
            pool.close()
            peak = max(peak, pool.peak_rss_mib)

    with ThreadPoolExecutor(workers) as ex:
        list(ex.map(run_share, range(workers)))
    return counts, failures, peak


def _specials(slots: tuple[str, ...], kinds: tuple[str, ...], workers: int, seed: int):  # type: ignore[no-untyped-def]
    counts: Counter[str] = Counter()
    failures: list[str] = []
    jobs = [(s, k) for s in slots for k in kinds]

    def one(job: tuple[str, str]) -> None:
        slot, kind = job
        r = random.Random(f"{seed}:{slot}:{kind}")
        d = Path(tempfile.mkdtemp(prefix=f"fz-{slot}-{kind}-"))
        try:
            c = special_case(r, d, slot, kind)
            o = run_cli(c.argv, cwd=d, timeout=30)
            bad = _check(c, o, RSS_BOUND_MIB)
            counts[f"special:{o.kind}"] += 1
            if bad:
                counts["violation"] += 1
                failures.append(f"{slot}/{kind}: {bad}")
        finally:
            restore(d)
            shutil.rmtree(d, ignore_errors=True)

    with ThreadPoolExecutor(workers) as ex:
        list(ex.map(one, jobs))
    return counts, failures


def _report(counts: Counter[str], failures: list[str], peak: float) -> None:
    path = os.environ.get("CFGLINT_FUZZ_REPORT")
    if path:
        Path(path).write_text(
            json.dumps(
                {"seed": SEED, "counts": dict(counts), "peak_rss_mib": peak, "failures": failures},
                indent=2,
            )
        )


# a campaign, not a regression: CI runs it (--slow); tests/fuzz/test_bounded.py keeps every
# input class that once broke a run in the default one
@pytest.mark.slow
def test_fuzz_quick_slice() -> None:
    """A few mutated cases per slot and the special files that used to block or hang."""
    counts, failures, _ = _mutated(3 * len(SLOTS), 1, SEED)
    more, fails2 = _specials(("megatron", "source"), ("fifo", "deep"), 1, SEED)
    counts.update(more)
    failures += fails2
    assert not failures, "\n".join(failures[:20])
    assert counts["hang"] == counts["crash"] == 0


@pytest.mark.slow
def test_fuzz_long() -> None:
    n = int(os.environ.get("CFGLINT_FUZZ_CASES", "3000"))
    workers = max(1, min(4, os.cpu_count() or 1))
    counts, failures, peak = _mutated(n, workers, SEED)
    more, fails2 = _specials(SLOTS, SPECIALS, workers, SEED)
    counts.update(more)
    failures += fails2
    _report(counts, failures, peak)
    print({k: v for k, v in sorted(counts.items()) if ":" not in k or k.startswith("special")})
    assert not failures, f"{len(failures)} violations:\n" + "\n".join(failures[:30])
    assert peak < 2048
