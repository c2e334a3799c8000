"""The docs site: it builds with strict link checking, the README stays a front page, and
every rule gets its own page with a wrong/right example from its variation cases."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT, script_module


def _hook() -> ModuleType:
    return script_module("mkdocs_rule_pages")


def test_readme_is_a_front_page_that_links_the_manual() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert readme.count("![") == 1  # one picture
    for page in ("docs/getting-started.md", "docs/rules.md", "docs/development.md"):
        assert f"]({page})" in readme, page


def test_every_page_is_in_the_nav() -> None:
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]

    def pages(entries: list[object]) -> set[str]:
        out: set[str] = set()
        for entry in entries:
            for value in entry.values() if isinstance(entry, dict) else [entry]:
                out |= pages(value) if isinstance(value, list) else {str(value)}
        return out

    on_disk = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk == pages(nav)


def test_each_rule_page_shows_a_wrong_and_a_right_example() -> None:
    pytest.importorskip("mkdocs")
    from cfglint.check.rulebook import load_rules

    hook = _hook()
    cases = hook.variation_cases()
    rules = {r.id: r for r in load_rules()}
    # a replace case: the edited text is wrong, the fixture's is right
    page = hook.rule_page(rules["OPT001"], cases["OPT001"])
    assert page.startswith("# OPT001: ") and "**Wrong**" in page and "**Right**" in page
    assert "type: FP32StateAdamWeightDecay" in page.split("**Right**")[0]
    assert "type: AdamW" in page.split("**Right**")[1]
    # a delete case: the flag written is right, left out is wrong
    page = hook.rule_page(rules["OPT006"], cases["OPT006"])
    assert "--adam-beta2 0.95" in page.split("**Right**")[1]
    # most rules have an example; the others say why not
    with_example = [r for r in rules if r in cases]
    assert len(with_example) > len(rules) / 2
    lonely = next(r for r in rules if r not in cases)
    assert "no variation case" in hook.rule_page(rules[lonely], [])


# the whole site's build (about 10 s): .ci/run builds it with --strict too, and runs this
@pytest.mark.slow
def test_docs_build_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    from cfglint.check.rulebook import load_rules

    for rule in load_rules():
        assert (site / "rules" / rule.id / "index.html").is_file(), rule.id
    assert (site / "commands" / "lint" / "index.html").is_file()
