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
from cfglint.load.safeio import read_text
from cfglint.model.errors import InputError
from cfglint.model.findings import InputProblem

# Above this many files to parse, a process pool pays for its start-up.
PARALLEL_THRESHOLD = 50
# Generated or vendored giants are not training code worth minutes of parsing.
MAX_SOURCE_BYTES = 2 * 1024 * 1024
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
    """(display path, absolute real path, named explicitly) of each Python file, once."""
    seen: set[str] = set()
    for given in paths:
        if os.path.isdir(given):
            for root, dirs, names in os.walk(given):
                dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
                for name in sorted(names):
                    if name.endswith(".py"):
                        display = os.path.join(root, name)
                        real = os.path.realpath(display)
                        if real not in seen:
                            seen.add(real)
                            yield display, real, False
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
        else:
            problems.append(InputProblem(path=given, message="no such file or directory"))


def _parse(
    misses: list[str], texts: dict[str, str], out: dict[str, FileSummary], jobs: int | None
) -> int:
    """Parse the cache misses into ``out``; returns the number of processes used."""
    if not misses:
        return 0
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    workers = max(1, min(workers, len(misses)))
    if workers == 1 or len(misses) <= PARALLEL_THRESHOLD:
        from cfglint.evidence.scan.scanner import summarize

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
