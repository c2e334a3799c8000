"""Issue 29: a MindFormers config that fits several candidate releases is read once per
distinct answer of the default tables (normalize/mindformers/build.py read_candidates,
defaults.Consulted), not once per release, and says exactly what reading every candidate
said: a candidate whose tables answer every question of an earlier reading alike is left
out, one that differs in a single consulted default is still read, and what it disagrees on
stays not decided."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from cfglint.load.mindformers_yaml import load_mindformers_yaml
from cfglint.model.config import Config
from cfglint.normalize.mindformers import build, defaults
from cfglint.normalize.mindformers.pynative import is_pynative, load_pynative
from cfglint.normalize.mindformers.release import fit_releases
from cfglint.normalize.release_fit import settle
from conftest import FIXTURES, need_shared

README_MF = FIXTURES / "examples" / "llama2_7b" / "pretrain_llama2_7b.yaml"
QWEN3 = FIXTURES / "releases" / "user" / "qwen3_no_hidden_dropout.yaml"
DS2 = FIXTURES / "releases" / "research" / "deepseek2" / "finetune_deepseek2_236B.yaml"


def _every_candidate(path: str) -> Config:
    """The config as load_mindformers made it before: read at every candidate, settled."""
    doc = load_mindformers_yaml(path)
    if is_pynative(doc.root):
        return load_pynative(doc, None)
    cands = fit_releases(doc)
    builds = cands.builds()
    if len(builds) == 1 and not (cands.tables and cands.unread):
        rel, cp = builds[0]
        one = build.read_at_release(doc, rel, cands.why, copy=cp)
        if cands.unread:
            one.dialect = f"MindFormers {cands.span} ({cands.why})"
        return one
    cfgs = {
        " ".join(filter(None, (rel or "each class's own release", cp))): build.read_at_release(
            doc, rel, cands.why, cands.table_span, cp
        )
        for rel, cp in builds
    }
    hint = " (--mindformers-version names the release the job runs)"
    cfg = settle(cfgs, cands.unread, "MindFormers", cands.why, hint)
    cfg.dialect = f"MindFormers {cands.span} ({cands.why})"
    return cfg


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The releases read_at_release is called with from now on."""
    seen: list[str | None] = []
    real = build.read_at_release

    def spy(doc, release, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(release)
        return real(doc, release, *args, **kwargs)

    monkeypatch.setattr(build, "read_at_release", spy)
    return seen


def _clear() -> None:
    for f in (
        defaults.mf_table,
        defaults.mf_defaults,
        defaults.release_defaults,
        defaults.model_types,
        defaults.own_releases,
    ):
        f.cache_clear()


@pytest.fixture
def fresh_tables() -> Iterator[None]:
    _clear()
    yield
    _clear()


def test_the_readme_pair_config_is_read_once_per_distinct_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """v1.3.0-v1.5.0 fit it; v1.3.x's LlamaConfig has no init_method_std (v1.5.0's has), so
    v1.3.2 is read; v1.3.0 answers every question as v1.3.2 did and is not (3 readings
    before)."""
    reads = _reads(monkeypatch)
    cfg = build.load_mindformers(str(README_MF))
    assert reads == ["v1.5.0", "v1.3.2"]
    assert cfg.dialect.startswith("MindFormers v1.3.0-v1.5.0")


@pytest.mark.parametrize("path", [README_MF, QWEN3, DS2], ids=lambda p: Path(p).stem)
def test_reading_once_says_what_reading_every_candidate_said(path: Path) -> None:
    assert build.load_mindformers(str(path)).model_dump_json() == (
        _every_candidate(str(path)).model_dump_json()
    )


def test_every_corpus_config_reads_as_every_candidate_read_it() -> None:
    files = sorted(need_shared("corpus", "mindformers").rglob("*.yaml"))
    assert files
    for f in files:
        assert build.load_mindformers(str(f)).model_dump_json() == (
            _every_candidate(str(f)).model_dump_json()
        ), f


def test_a_release_that_differs_in_one_consulted_default_is_still_read(
    monkeypatch: pytest.MonkeyPatch, fresh_tables: None
) -> None:
    """With v1.3.0's LlamaConfig theta (the README config does not set it) made 500000,
    v1.3.0 no longer answers as v1.3.2: it is read, and rope_theta is not decided."""
    real = defaults.mf_table

    def patched(name: str):  # type: ignore[no-untyped-def]
        data = real(name)
        if name != "mindformers_releases.yaml":
            return data
        data = copy.deepcopy(data)
        entry = data["components"]["LlamaConfig@model_config_legacy"]["v1.3.0"]
        entry["differs"] = {**(entry.get("differs") or {}), "theta": 500000.0}
        return data

    _clear()
    monkeypatch.setattr(defaults, "mf_table", defaults.cache(patched))
    reads = _reads(monkeypatch)
    cfg = build.load_mindformers(str(README_MF))
    assert reads == ["v1.5.0", "v1.3.2", "v1.3.0"]
    theta = cfg.structure.rope_theta
    assert theta is not None and not theta.known
    assert "v1.5.0 and v1.3.0 disagree" in theta.detail and "500000" in theta.detail
    # what they agree on is stated, as before
    eps = cfg.structure.norm_epsilon
    assert eps is not None and eps.known


def test_a_whole_defaults_mapping_read_is_compared_whole() -> None:
    """A reading that iterates a component's defaults (the mcore class chain) depends on
    every key: another release that differs in any key is not taken for the same."""
    d = defaults.mf_defaults("v1.8.0")
    rec = defaults.Consulted(d)
    comp = rec.ask("TransformerConfig", "model_config")
    assert comp is not None
    assert rec.same_answers(d)
    dict(comp.defaults.items())
    other = defaults.mf_defaults("v1.9.0")
    tc8, tc9 = (
        d.get("TransformerConfig", "model_config"),
        other.get("TransformerConfig", "model_config"),
    )
    assert tc8 is not None and tc9 is not None
    assert tc8.defaults != tc9.defaults  # the tables differ somewhere
    assert not rec.same_answers(other)
    # one key read, the same at both: the same answer
    rec2 = defaults.Consulted(d)
    c2 = rec2.ask("TransformerConfig", "model_config")
    assert c2 is not None and c2.defaults.get("num_layers") == tc9.defaults.get("num_layers")
    assert rec2.same_answers(other) == (tc8.missing == tc9.missing)


def test_the_readers_see_the_release_only_through_the_view() -> None:
    """Consulted records the release only where a reading asks MFView.release_in; a reader
    that read MFDefaults.project_version itself could branch on it unrecorded."""
    folder = Path(build.__file__).parent
    for f in folder.glob("*.py"):
        if f.name in ("defaults.py", "view.py", "pynative.py"):
            continue
        assert not re.search(r"\.project_version\b", f.read_text()), f.name
