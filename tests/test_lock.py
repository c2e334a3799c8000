"""The locked environments (requirements/*.txt, scripts/lock.sh) hold what pyproject.toml
asks for: a dependency added without re-locking would install nothing on a fresh machine
(the README's commands and .ci/run install from the locks only)."""

from __future__ import annotations

import re
import tomllib

import pytest

from conftest import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# each lock and the extras it is made with (scripts/lock.sh)
LOCKS = {"lint": (), "test": ("dev",), "ci": ("dev", "logs", "server")}


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement)[0]).lower()  # type: ignore[index]


def _pinned(lock: str) -> set[str]:
    text = (ROOT / "requirements" / f"{lock}.txt").read_text(encoding="utf-8")
    return {_name(m) for m in re.findall(r"^([A-Za-z0-9._-]+)==", text, re.M)}


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_each_lock_pins_every_dependency_it_is_for(lock: str) -> None:
    wanted = list(PROJECT["dependencies"])
    for extra in LOCKS[lock]:
        wanted += PROJECT["optional-dependencies"][extra]
    missing = sorted({_name(r) for r in wanted} - _pinned(lock))
    assert not missing, f"requirements/{lock}.txt lacks {missing}: run scripts/lock.sh"


def test_every_lock_carries_hashes_and_the_build_backend() -> None:
    for lock in LOCKS:
        text = (ROOT / "requirements" / f"{lock}.txt").read_text(encoding="utf-8")
        pins = re.findall(r"^[A-Za-z0-9._-]+==\S+", text, re.M)
        assert pins and text.count("--hash=sha256:") >= len(pins), lock
        assert {"hatchling", "editables"} <= _pinned(lock), lock
    # ./cfglint installs what the lint needs: none of the test tools
    assert not {"pytest", "selenium", "hypothesis", "pre-commit"} & _pinned("lint")
