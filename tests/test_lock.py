"""The locks under requirements/ cover what pyproject.toml asks for: a dependency added to an
extra without re-running scripts/lock.sh leaves the locked CI without it (mkdocs once)."""

from __future__ import annotations

import re
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from conftest import ROOT

# which extras each lock holds, as scripts/lock.sh compiles them
LOCKS = {"lint.txt": (), "test.txt": ("dev",), "ci.txt": ("dev", "logs", "server")}


def _locked(name: str) -> set[str]:
    text = (ROOT / "requirements" / name).read_text(encoding="utf-8")
    pinned = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", text, flags=re.M)
    return {canonicalize_name(p) for p in pinned}


@pytest.mark.parametrize("lock", sorted(LOCKS))
def test_every_wanted_package_is_in_its_lock(lock: str) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = list(project["dependencies"])
    for extra in LOCKS[lock]:
        wanted += project["optional-dependencies"][extra]
    locked = _locked(lock)
    missing = sorted(
        r.name for r in map(Requirement, wanted) if canonicalize_name(r.name) not in locked
    )
    assert missing == [], f"requirements/{lock} lacks {missing}: run scripts/lock.sh"
