"""Finding files, the per-file cache, and parsing in parallel.

A file's summary depends on its text only, so it is cached under the sha256 of
(scanner version, text): a re-run after editing one file parses that one file. libcst is
imported only when something has to be parsed, so a warm run never loads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from pydantic import ValidationError

from cfglint.evidence.scan.link import SourceFile, link
from cfglint.evidence.scan.model import SCANNER_VERSION, FileSummary, LazyFunctions, ScanResult
from cfglint.load.datacache import cache_dir
from cfglint.load.safeio import TooLarge, check_regular, read_text
from cfglint.model.errors import InputError
from cfglint.model.findings import InputProblem

# Above this many files to parse, a process pool pays for its start-up.
PARALLEL_THRESHOLD = 50
# Generated or vendored giants are not training code worth minutes of parsing: libcst takes
# ~1 GB and tens of seconds per MB (issue 12: 1.9 GB for a near-2 MB file). The largest
# training sources we know (Megatron-LM's arguments.py) are ~150 KB.
MAX_SOURCE_BYTES = 512 * 1024
# Files above this are parsed one at a time in this process, never one per core at once.
BIG_SOURCE_BYTES = 128 * 1024
# A training repository (Megatron-LM, MindSpeed-LLM) has a few thousand files at most.
MAX_WALK_DIRS = 20_000
MAX_WALK_FILES = 10_000
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
) -> ScanResult:
    t0 = time.perf_counter()
    problems: list[InputProblem] = []
    found = list(_discover(paths, problems))
    texts: dict[str, str] = {}
    keys: dict[str, str] = {}
    summaries: dict[str, FileSummary] = {}
    for display, _, _ in found:
        try:
            text = read_text(display, max_bytes=MAX_SOURCE_BYTES, what="Python file")
        except TooLarge as exc:
            # generated or vendored giants: libcst needs ~1 GB and tens of seconds per MB
            problems.append(
                InputProblem(path=display, level="warning", message=f"{exc.message}; not scanned")
            )
            continue
        except InputError as exc:
            problems.append(InputProblem(path=display, message=exc.message, line=exc.line))
            continue
        texts[display] = text
        keys[display] = _key(text)
    cache = _Cache(cache_dir() / "scan") if use_cache else None
    misses: list[str] = []
    for display, key in keys.items():
        s = cache.get(key) if cache is not None else None
        if s is None:
            misses.append(display)
        else:
            summaries[display] = s
    workers = _parse(misses, texts, summaries, jobs)
    if cache is not None:
        for display in misses:
            cache.put(keys[display], summaries[display])
    files: list[SourceFile] = []
    for display, abspath, explicit in found:
        s = summaries.get(display)
        if s is None:
            continue
        if s.error is not None:
            problems.append(InputProblem(path=display, message=s.error, line=s.error_line))
        files.append(SourceFile(display=display, abspath=abspath, summary=s, explicit=explicit))
    result = link(files, list(entry_hints or []))
    result.errors = problems
    st = result.stats
    st.files = len(found)
    st.parsed = len(misses)
    st.parsed_paths = sorted(misses)
    st.cached = len(keys) - len(misses)
    st.failed = len(problems)
    st.workers = workers
    st.seconds = round(time.perf_counter() - t0, 4)
    return result


def _key(text: str) -> str:
    h = hashlib.sha256()
    h.update(f"cfglint-scan/{SCANNER_VERSION}\0".encode())
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _discover(paths: list[str], problems: list[InputProblem]) -> Iterator[tuple[str, str, bool]]:
    """(display path, absolute real path, named explicitly) of each Python file, once.

    Bounded: the filesystem root is refused, and a walk stops (with an error naming the
    folder) after MAX_WALK_DIRS folders or MAX_WALK_FILES Python files. Folders that cannot
    be read are reported as warnings, not skipped silently."""
    seen: set[str] = set()
    for given in paths:
        if os.path.isdir(given):
            if os.path.realpath(given) == os.path.realpath(os.sep):
                problems.append(
                    InputProblem(
                        path=given,
                        message="is the filesystem root; give the folder of the training code",
                    )
                )
                continue
            yield from _walk(given, seen, problems)
        elif os.path.isfile(given):
            if not given.endswith(".py"):
                problems.append(
                    InputProblem(
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
                problems.append(InputProblem(path=given, message=exc.message))
        else:
            problems.append(InputProblem(path=given, message="no such file or directory"))


def _walk(
    given: str, seen: set[str], problems: list[InputProblem]
) -> Iterator[tuple[str, str, bool]]:
    def unreadable(exc: OSError) -> None:
        problems.append(
            InputProblem(
                path=exc.filename or given,
                level="warning",
                message=f"cannot read folder ({exc.strerror}); its files are not scanned",
            )
        )

    files = 0
    for folders, (root, dirs, names) in enumerate(os.walk(given, onerror=unreadable), start=1):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".py"):
                display = os.path.join(root, name)
                real = os.path.realpath(display)
                if real not in seen:
                    seen.add(real)
                    files += 1
                    yield display, real, False
        if folders >= MAX_WALK_DIRS or files >= MAX_WALK_FILES:
            problems.append(
                InputProblem(
                    path=given,
                    message=f"holds more than {MAX_WALK_DIRS} folders or {MAX_WALK_FILES} "
                    "Python files; give the folder of the training code",
                )
            )
            return


def _parse(
    misses: list[str], texts: dict[str, str], out: dict[str, FileSummary], jobs: int | None
) -> int:
    """Parse the cache misses into ``out``; returns the number of processes used."""
    if not misses:
        return 0
    big = [d for d in misses if len(texts[d]) > BIG_SOURCE_BYTES]
    small = [d for d in misses if len(texts[d]) <= BIG_SOURCE_BYTES]
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    workers = max(1, min(workers, len(small)))
    if big or workers == 1 or len(small) <= PARALLEL_THRESHOLD:
        from cfglint.evidence.scan.scanner import summarize

        # big files one at a time: their parse memory must not add up across cores
        for display in big:
            out[display] = summarize(texts[display])
    misses = small
    if not misses:
        return 1
    if workers == 1 or len(misses) <= PARALLEL_THRESHOLD:
        for display in misses:
            out[display] = summarize(texts[display])
        return 1
    from cfglint.evidence.scan.scanner import summarize_json

    # Largest first, so one big file does not finish last on an otherwise idle pool.
    order = sorted(misses, key=lambda d: len(texts[d]), reverse=True)
    chunk = max(1, len(order) // (workers * 8))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for display, js in zip(
            order,
            pool.map(summarize_json, [texts[d] for d in order], chunksize=chunk),
            strict=True,
        ):
            out[display] = FileSummary.model_validate_json(js)
    return workers


class _Cache:
    """One small JSON file per summary; unreadable or stale entries are just misses."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._ok = True

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> FileSummary | None:
        try:
            raw = json.loads(self._path(key).read_bytes())
            functions = raw.pop("functions", None) or {}
            summary = FileSummary.model_validate(raw)
        except (OSError, ValueError, ValidationError, AttributeError):
            return None
        summary.functions = LazyFunctions(functions)
        return summary

    def put(self, key: str, summary: FileSummary) -> None:
        if not self._ok:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(summary.model_dump_json(exclude_defaults=True), encoding="utf-8")
            os.replace(tmp, path)
        except (OSError, ValueError):
            self._ok = False  # read-only cache: stop trying, correctness is unaffected
