"""Issue 12: the smallest input of every class that once hung, crashed, ate memory or ended in
an internal error, run as a child process under a memory limit and a timeout."""

from __future__ import annotations

from pathlib import Path

import pytest
from cases import CASES, CLASS, restore, unreadable_dirs_work
from harness import known_rows, run_cli, violations

from conftest import campaign

ROWS = known_rows()
# one quick case of each class (cases.CLASS) in ./test; every case in CI (--slow): each is a
# child process with an empty cache, about a second of CPU
EACH_CLASS = {
    "gitignore_60_stars",
    "fifo_yaml",
    "cache_empty_lists",
    "nested_parens_py",
    "dangling_pipe",
    "beta1_1e999",
    "duplicate_anchor",
    "output_is_the_config",
    "yaml_open_brackets",
    "megatron_dev_zero",
    "lr_data_root",
}


def test_each_class_has_a_case_in_the_default_run() -> None:
    assert {CLASS[n] for n in EACH_CLASS} == set(CLASS.values())


@pytest.mark.parametrize("name", campaign(sorted(CASES), sorted(CASES), keep=EACH_CLASS))
def test_bounded(name: str, tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    case = CASES[name](work, 1)
    if case.setup_as_root_skips and not unreadable_dirs_work():
        restore(work)
        pytest.skip("root reads folders whatever their mode")
    before = case.untouched.read_bytes() if case.untouched is not None else None
    try:
        cache = str(case.cache) if case.cache is not None else None
        out = run_cli(case.argv, cwd=work, timeout=case.timeout, cache=cache)
        if case.untouched is not None:
            assert case.untouched.read_bytes() == before, f"{name}: an input was overwritten"
    finally:
        restore(work)
    bad = violations(
        out,
        responsible=case.responsible,
        rows=ROWS,
        json_out=case.json_out,
        canaries=case.canaries,
        max_rss_mib=case.max_rss_mib,
    )
    assert not bad, f"{name}: {bad}\nstderr: {out.stderr[-800:]}"
    assert out.rc in case.want_exit, f"{name}: exit {out.rc}, stderr {out.stderr[-500:]}"
    if "also" in case.extra:
        assert case.extra["also"] in out.stderr, out.stderr


def test_unreadable_source_folder_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sub-folder of --source that cannot be listed is reported, not skipped silently.
    chmod 0 does not stop root (CI may run as root), so the denial is simulated where
    os.walk lists folders."""
    import os

    from cfglint.evidence.scan.runner import scan

    (tmp_path / "train.py").write_text("import torch\ntorch.manual_seed(1)\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text("import random\n")
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:
        if os.fspath(path) == str(locked):  # type: ignore[arg-type]
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    result = scan([str(tmp_path)], use_cache=False)
    notes = [(p.path, p.level, p.message) for p in result.errors]
    assert any(path == str(locked) and level == "warning" for path, level, _ in notes), notes
