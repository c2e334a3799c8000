"""Shared test helpers. ``../shared`` (the real MindFormers corpus, the checklist, the SARIF
schema) exists for developers and CI, not in a user's clone: tests that need it skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = Path(os.environ.get("CFGLINT_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus" / "mindformers"


def need_shared(*parts: str) -> Path:
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} is not available (../shared is only present for developers and CI)")
    return p


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow", action="store_true", help="also run the tests marked slow (the long fuzz run)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # ./test stays quick on a laptop; .ci/run passes --slow (a CI environment runs them too)
    if config.getoption("--slow") or os.environ.get("CI"):
        return
    skip = pytest.mark.skip(reason="slow: runs in .ci/run (./test --slow)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # keep the parsed-data and scan caches out of the user's home during tests
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    # unexpected exceptions re-raise instead of becoming cfglint's one-line internal error
    monkeypatch.setenv("CFGLINT_DEBUG", "1")
