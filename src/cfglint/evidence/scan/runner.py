"""Finding files, the per-file cache, and parsing in parallel.

A file's summary depends on its text only, so it is cached under the sha256 of
(scanner version, text): a re-run after editing one file parses that one file; a warm run
imports no parser code at all.
"""

from __future__ import annotations

import gc
import hashlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cfglint.evidence.scan.link import SourceFile, is_test_file, link
from cfglint.evidence.scan.model import SCANNER_VERSION, FileSummary, ScanResult
from cfglint.evidence.scan.seed_helpers import DATA_KEY
from cfglint.load.datacache import (
    cache_dir,
    cache_enabled,
    clear_part,
    is_entry,
    prune_temp,
    read_entry,
    write_entry,
)
from cfglint.load.safeio import TooLarge, check_regular, read_text
from cfglint.load.walk import MAX_WALK_DIRS, MAX_WALK_FILES, bounded_walk
from cfglint.model.errors import InputError
from cfglint.model.findings import InputProblem

# A process pool pays for its start-up (and for sending each summary back as JSON) only
# above this many files to parse and, unless the caller asks for workers, this much source:
# ast parses ~3 MB/s here, so 2 MB is ~0.6 s of work in one process. Measured (bench/
# scan_trials.md, "Speed"): nanotron (1.9 MB, 195 files) gains nothing from 2 workers,
# torchtitan (4.6 MB) some.
PARALLEL_THRESHOLD = 50
PARALLEL_MIN_CHARS = 2_000_000
# Generated or vendored giants are not training code worth parsing (issue 12: a near-2 MB
# file took 1.9 GB when the scanner used libcst; ast trees are smaller, but still tens of
# bytes per byte of source). The largest training sources we know are ~300 KB (Megatron-LM
# training.py, DeepSpeed engine.py).
MAX_SOURCE_BYTES = 512 * 1024
# Files above this are parsed one at a time in this process, never one per core at once.
BIG_SOURCE_BYTES = 128 * 1024
_SKIP_DIRS = frozenset(
    {
        "__pycache__",
        ".git",
        ".hg",
        ".svn",
        ".tox",
        ".nox",
        ".venv",
        "venv",
        "env",
        "node_modules",
        "site-packages",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "build",
        "dist",
        ".eggs",
    }
)


def scan(
    paths: list[str],
    entry_hints: list[str] | None = None,
    jobs: int | None = None,
    use_cache: bool = True,
    members: list[str] | None = None,
) -> ScanResult:
    t0 = time.perf_counter()
    problems: list[InputProblem] = []
    found = list(discover(paths, problems))
    seen = {real for _, real, _ in found}
    for display, real, _ in discover(list(members or []), problems):
        if real not in seen:  # named, not chosen: an entry point only if it trains
            seen.add(real)
            found.append((display, real, False))
    folders = [os.path.realpath(p) for p in paths if os.path.isdir(p)]
    summaries: dict[str, FileSummary] = {}
    cache = Cache(cache_dir() / "scan") if use_cache and cache_enabled() else None
    misses: list[str] = []
    cached = 0
    workers = 0
    batch = found
    while batch:
        parsed, hits, used = _summarize_batch(batch, summaries, problems, cache, jobs)
        misses += parsed
        cached += hits
        workers = max(workers, used)
        # a file named alone imports its siblings as `python file.py` would (its folder
        # is sys.path[0]): read those too, as members, within a budget
        batch = _siblings(batch, summaries, folders, seen)
        found += batch
    if cache is not None and misses:
        cache.prune()
    files: list[SourceFile] = []
    for display, abspath, explicit in found:
        s = summaries.get(display)
        if s is None:
            continue
        if s.error is not None:
            problems.append(
                InputProblem.model_construct(path=display, message=s.error, line=s.error_line)
            )
        files.append(SourceFile(display=display, abspath=abspath, summary=s, explicit=explicit))
    result = link(files, list(entry_hints or []))
    result.errors = problems
    st = result.stats
    st.files = len(found)
    st.parsed = len(misses)
    st.full = sum(1 for d in misses if d in summaries and not summaries[d].light)
    st.parsed_paths = sorted(misses)
    st.cached = cached
    st.failed = len(problems)
    st.workers = workers
    st.seconds = round(time.perf_counter() - t0, 4)
    return result


def _summarize_batch(
    batch: list[tuple[str, str, bool]],
    summaries: dict[str, FileSummary],
    problems: list[InputProblem],
    cache: Cache | None,
    jobs: int | None,
) -> tuple[list[str], int, int]:
    """Read, look up in the cache and parse ``batch`` into ``summaries``: (the files
    parsed, how many came from the cache, the worker processes used)."""
    texts: dict[str, str] = {}
    keys: dict[str, str] = {}
    # test suites get the call graph only (never an entry point, nor the job's layers)
    deep = {display: explicit or not is_test_file(display) for display, _, explicit in batch}
    for display, _, _ in batch:
        try:
            text = read_text(display, max_bytes=MAX_SOURCE_BYTES, what="Python file")
        except TooLarge as exc:
            # generated or vendored giants: not training code, and costly to parse
            problems.append(
                InputProblem.model_construct(
                    path=display, level="warning", message=f"{exc.message}; not scanned"
                )
            )
            continue
        except InputError as exc:
            problems.append(
                InputProblem.model_construct(path=display, message=exc.message, line=exc.line)
            )
            continue
        texts[display] = text
        keys[display] = _key(text, deep[display])
    misses: list[str] = []
    for display, key in keys.items():
        s = cache.get(key) if cache is not None else None
        if s is None:
            misses.append(display)
        else:
            summaries[display] = s
    workers = _parse(misses, texts, summaries, jobs, deep)
    if cache is not None:
        for display in misses:
            cache.put(keys[display], summaries[display])
    return misses, len(keys) - len(misses), workers


# Sibling modules read for files named alone, at most (a script imports a handful).
MAX_SIBLINGS = 200


def _siblings(
    batch: list[tuple[str, str, bool]],
    summaries: dict[str, FileSummary],
    folders: list[str],
    seen: set[str],
) -> list[tuple[str, str, bool]]:
    """Modules the files of ``batch`` import from their own folder (``from train import
    main`` next to train.py, ``import utils``, a sibling package) or by relative import,
    when no scanned folder holds them already: Python finds them through sys.path[0]."""
    out: list[tuple[str, str, bool]] = []
    for display, real, _ in batch:
        s = summaries.get(display)
        if s is None or s.error is not None or _inside(real, folders):
            continue
        here = os.path.dirname(display)
        for ref in [*s.imports.values(), *s.star_imports]:
            for cand in _module_files(here, ref.level, ref.module, ref.name):
                rc = os.path.realpath(cand)
                if rc in seen or len(seen) >= MAX_WALK_FILES or len(out) >= MAX_SIBLINGS:
                    continue
                seen.add(rc)
                out.append((cand, rc, False))
    return out


def _inside(real: str, folders: list[str]) -> bool:
    return any(real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


def _module_files(here: str, level: int, module: str, name: str | None) -> list[str]:
    """Files an import loads, looked up from ``here`` (the importing file's folder): the
    packages' __init__.py on the way and the module itself (or ``name`` as a submodule)."""
    base = here
    for _ in range(max(level - 1, 0)):
        base = os.path.dirname(base)
    parts = [p for p in module.split(".") if p] if module else []
    if name and name != "*":
        parts.append(name)
    out: list[str] = []
    d = base
    for i, part in enumerate(parts):
        pkg = os.path.join(d, part)
        mod = pkg + ".py"
        if os.path.isfile(mod):
            out.append(mod)
            break
        init = os.path.join(pkg, "__init__.py")
        if not os.path.isfile(init):
            break  # `name` may be an attribute of the last module, not a file
        out.append(init)
        d = pkg
        if i == len(parts) - 1:
            break
    return out


def _key(text: str, deep: bool = True) -> str:
    h = hashlib.sha256()
    h.update(f"cfglint-scan/{SCANNER_VERSION}/{DATA_KEY}/{'deep' if deep else 'graph'}\0".encode())
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def discover(paths: list[str], problems: list[InputProblem]) -> Iterator[tuple[str, str, bool]]:
    """(display path, absolute real path, named explicitly) of each Python file, once.

    Bounded: the filesystem root is refused, and a walk stops (with an error naming the
    folder) after MAX_WALK_DIRS folders or MAX_WALK_FILES Python files. Folders that cannot
    be read are reported as warnings, not skipped silently."""
    seen: set[str] = set()
    for given in paths:
        if os.path.isdir(given):
            if os.path.realpath(given) == os.path.realpath(os.sep):
                problems.append(
                    InputProblem.model_construct(
                        path=given,
                        message="is the filesystem root; give the folder of the training code",
                    )
                )
                continue
            yield from _walk(given, seen, problems)
        elif os.path.isfile(given):
            if not given.endswith(".py"):
                problems.append(
                    InputProblem.model_construct(
                        path=given,
                        level="warning",
                        message="not a Python file (.py); skipped by the source scan",
                    )
                )
                continue
            real = os.path.realpath(given)
            if real not in seen:
                seen.add(real)
                yield given, real, True
        elif os.path.lexists(given):  # a FIFO, a device, a broken link or a link loop
            try:
                check_regular(given, what="Python file or folder")
            except InputError as exc:
                problems.append(InputProblem.model_construct(path=given, message=exc.message))
        else:
            problems.append(
                InputProblem.model_construct(path=given, message="no such file or directory")
            )


def _walk(
    given: str, seen: set[str], problems: list[InputProblem]
) -> Iterator[tuple[str, str, bool]]:
    def unreadable(exc: OSError) -> None:
        problems.append(
            InputProblem.model_construct(
                path=exc.filename or given,
                level="warning",
                message=f"cannot read folder ({exc.strerror}); its files are not scanned",
            )
        )

    too_many = InputProblem.model_construct(
        path=given,
        message=f"holds more than {MAX_WALK_DIRS} folders or {MAX_WALK_FILES} Python files; "
        "give the folder of the training code",
    )

    def skipped(path: str, why: str) -> None:
        if path == given and why.startswith("walk stopped"):
            problems.append(too_many)
            return
        problems.append(
            InputProblem.model_construct(
                path=path, level="warning", message=f"{why}; their Python files are not scanned"
            )
        )

    files = 0
    for root, dirs, names in bounded_walk(given, on_skip=skipped, on_error=unreadable):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        for name in names:
            if name.endswith(".py"):
                display = os.path.join(root, name)
                real = os.path.realpath(display)
                if real not in seen:
                    seen.add(real)
                    files += 1
                    yield display, real, False
        if files >= MAX_WALK_FILES:
            problems.append(too_many)
            return


def _parse(
    misses: list[str],
    texts: dict[str, str],
    out: dict[str, FileSummary],
    jobs: int | None,
    deep: dict[str, bool] | None = None,
) -> int:
    """Parse the cache misses into ``out``; returns the number of processes used.

    On a terminal, a progress bar on stderr; Ctrl-C terminates the workers at once."""
    if not misses:
        return 0
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    workers = max(1, min(workers, len(misses)))
    # Syntax trees hold millions of short-lived, acyclic objects: the cyclic collector's
    # passes over them cost time and free nothing (refcounting does).
    gc_was = gc.isenabled()
    gc.disable()
    if jobs is None and sum(len(texts[d]) for d in misses) < PARALLEL_MIN_CHARS:
        workers = 1  # not worth a pool
    try:
        return _parse_all(misses, texts, out, workers, deep or {})
    finally:
        if gc_was:
            gc.enable()


def _parse_all(
    misses: list[str],
    texts: dict[str, str],
    out: dict[str, FileSummary],
    workers: int,
    deep: dict[str, bool],
) -> int:
    from cfglint.evidence.scan.scanner import summarize, summarize_json

    with _progress(len(misses)) as advance:
        # big files one at a time in this process: their parse memory must not add up
        # across cores (a 2 MB file took 1.9 GB)
        for display in [d for d in misses if len(texts[d]) > BIG_SOURCE_BYTES]:
            out[display] = summarize(texts[display], deep.get(display, True))
            advance()
        misses = [d for d in misses if len(texts[d]) <= BIG_SOURCE_BYTES]
        workers = max(1, min(workers, len(misses)))
        if not misses:
            return 1
        if workers == 1 or len(misses) <= PARALLEL_THRESHOLD:
            for display in misses:
                out[display] = summarize(texts[display], deep.get(display, True))
                advance()
            return 1
        import multiprocessing

        # Largest first, so one big file does not finish last on an otherwise idle pool.
        order = sorted(misses, key=lambda d: len(texts[d]), reverse=True)
        chunk = max(1, len(order) // (workers * 8))
        # Ctrl-C while the pool is being built would leave workers nobody terminates:
        # hold SIGINT until it can be handled below.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            pool = multiprocessing.Pool(workers, initializer=_worker_init)
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            raise
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a held Ctrl-C lands here
            work = [(texts[d], deep.get(d, True)) for d in order]
            results = pool.imap(summarize_json, work, chunksize=chunk)
            for display, js in zip(order, results, strict=True):
                out[display] = FileSummary.model_validate_json(js)
                advance()
            pool.close()
        except BaseException:
            pool.terminate()  # Ctrl-C (or any failure): stop the workers now, not at the end
            raise
        finally:
            pool.join()
    return workers


def _worker_init() -> None:
    """Workers leave Ctrl-C to the parent, which terminates them (no traceback per
    worker), and skip the cyclic collector like the parent does."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()


@contextmanager
def _progress(total: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr when it is a terminal and the scan is long enough."""
    if total < PARALLEL_THRESHOLD or not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=Console(stderr=True),
    ) as bar:
        task = bar.add_task("scanning sources", total=total)
        yield lambda: bar.advance(task)


DEFAULT_CACHE_MB = 256
# a bound above a TiB is a typo (or `inf`), not a cache size anyone wants
MAX_CACHE_MB = 2**20


def cache_bound(env: str | None) -> int:
    """The scan cache's bound in bytes from ``CFGLINT_SCAN_CACHE_MB`` (MiB, default 256);
    anything but a finite number from 0 to 2**20 is one input error."""
    if env is None or not env.strip():
        return DEFAULT_CACHE_MB * 2**20
    try:
        mb = float(env)
    except ValueError:
        mb = float("nan")
    if not 0 <= mb <= MAX_CACHE_MB:  # also refuses nan and inf
        raise InputError(
            None,
            f"CFGLINT_SCAN_CACHE_MB={env[:40]!r}: expected a size in MiB from 0 to {MAX_CACHE_MB}",
        )
    return int(mb * 2**20)


class Cache:
    """One small JSON file per summary, tied to the file's text and the scanner version
    (the key) and validated on read (load/datacache.py): anything else is a miss.

    Bounded: after a scan that wrote entries, the least recently written ones go until the
    folder is under ``max_bytes`` (``CFGLINT_SCAN_CACHE_MB``, default 256 MiB), and
    temporary files left by dead runs are removed."""

    def __init__(self, root: Path, max_bytes: int | None = None) -> None:
        self.root = root
        self._ok = True
        if max_bytes is None:
            max_bytes = cache_bound(os.environ.get("CFGLINT_SCAN_CACHE_MB"))
        self.max_bytes = max_bytes

    def _entries(self) -> list[tuple[float, int, Path]]:
        out = []
        try:
            for sub in self.root.iterdir():
                if not sub.is_dir() or sub.is_symlink():
                    continue
                for p in sub.iterdir():
                    if not is_entry(p, "scan"):  # only what cfglint wrote is pruned
                        continue
                    try:
                        st = p.lstat()
                    except OSError:
                        continue
                    out.append((st.st_mtime, st.st_size, p))
        except OSError:
            pass
        return out

    def prune(self) -> int:
        """Drop the oldest entries above the bound (and stale temporary files); returns how
        many were removed."""
        removed = prune_temp(self.root)
        entries = self._entries()
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return removed
        for _, size, p in sorted(entries):
            if total <= self.max_bytes * 0.9:  # some headroom: not a prune on every run
                break
            try:
                p.unlink()
            except OSError:
                continue
            total -= size
            removed += 1
        return removed

    def usage(self) -> tuple[int, int]:
        """(entries, bytes) in the cache folder."""
        entries = self._entries()
        return len(entries), sum(size for _, size, _ in entries)

    def clear(self) -> tuple[int, int]:
        return clear_part(self.root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> FileSummary | None:
        return read_entry(self._path(key), "scan", key, FileSummary.model_validate)

    def put(self, key: str, summary: FileSummary) -> None:
        if not self._ok:
            return
        payload = summary.model_dump_json(exclude_defaults=True)
        if not write_entry(self._path(key), "scan", key, payload, prune=False):
            self._ok = False  # read-only cache: stop trying, correctness is unaffected
