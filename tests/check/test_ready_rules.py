"""The ready rule set an install ships (hatch_build.py): the rules built from it without a
validator are the rules validation gives, and a set that is stale or damaged is not used
(the rule files are validated instead) (issue 29)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cfglint.check import rulebook
from cfglint.load import datacache
from cfglint.load.datayaml import (
    parse_data_yaml,
    read_ready_rule_set,
    ready_rule_set,
    rules_ready_name,
)

SHIPPED = rulebook.rules_dir()


def _write_ready(rules: Path, data_dir: Path) -> Path:
    """What hatch_build.py writes: every rule file as plain data, with its content's hash."""
    raws = [(p.name, p.read_bytes()) for p in sorted(rules.glob("*.yaml"))]
    files = [[n, parse_data_yaml(raw, n)] for n, raw in raws]
    (data_dir / datacache.READY).mkdir(exist_ok=True)
    out = data_dir / datacache.READY / f"{rules_ready_name(raws)}.json"
    out.write_bytes(ready_rule_set(files))
    return out


@pytest.fixture
def rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the shipped rule files read as the packaged ones, and an install folder."""
    folder = tmp_path / "rules"
    shutil.copytree(SHIPPED, folder, ignore=shutil.ignore_patterns("variations"))
    monkeypatch.delenv("CFGLINT_RULES_DIR", raising=False)
    monkeypatch.setattr(rulebook, "rules_dir", lambda: folder)
    monkeypatch.setattr(datacache, "DATA_DIR", tmp_path)
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path / "cache"))
    rulebook.load_rules.cache_clear()
    yield folder
    rulebook.load_rules.cache_clear()


def _validated(folder: Path) -> tuple[object, ...]:
    # with each builtin rule's check, as load_rules() gives them
    return rulebook._with_checks(rulebook._validate(sorted(folder.glob("*.yaml"))), True)


def _no_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("validated the rule files")

    monkeypatch.setattr(rulebook, "_validate", refuse)
    monkeypatch.setattr(rulebook, "_rules_adapter", refuse)


def test_the_ready_set_builds_the_validated_rules_without_a_validator(
    rules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _validated(rules)
    _write_ready(rules, datacache.DATA_DIR)
    _no_validation(monkeypatch)
    got = rulebook.load_rules()
    assert len(got) == len(expected) > 100
    # repr names each model's class and shows tuples as tuples: a list where validation
    # gives a tuple, or a dict where it gives a model, differs
    for a, b in zip(got, expected, strict=True):
        assert type(a) is type(b) and repr(a) == repr(b), a.id


def _edit_title(rules: Path) -> str:
    table = sorted(rules.glob("*.yaml"))[0]
    data = parse_data_yaml(table.read_bytes(), table.name)
    rid, title = data["rules"][0]["id"], data["rules"][0]["title"]
    table.write_text(
        table.read_text().replace(f"title: {title}", "title: edited after the build", 1)
    )
    return rid


def test_a_stale_ready_set_is_not_used(rules: Path) -> None:
    _write_ready(rules, datacache.DATA_DIR)
    rid = _edit_title(rules)  # a rule file edited after the build: the set has another name
    got = {r.id: r for r in rulebook.load_rules()}
    assert got[rid].title == "edited after the build"


def _damage_severity(raw: bytes) -> bytes:
    """A severity changed in the JSON, the hash left as built."""
    digest, _, body = raw.partition(b"\n")
    doc = json.loads(body)
    doc["files"][0][1]["rules"][0]["severity"] = "note-planted"
    return digest + b"\n" + json.dumps(doc).encode()


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: b"{not json",
        lambda raw: ready_rule_set([]).replace(b"\n", b"\n{not json", 1),
        _damage_severity,  # the hash no longer matches
        lambda raw: raw.replace(b"\n", b"\n ", 1),  # one byte more
        lambda raw: b"0" * 64 + raw[64:],
        lambda raw: raw.partition(b"\n")[2],  # no hash
        lambda raw: ready_rule_set([]),
        lambda raw: ready_rule_set([["x.yaml", 1]]),
    ],
)
def test_a_damaged_ready_set_is_validated_instead(rules: Path, damage: object) -> None:
    expected = _validated(rules)
    out = _write_ready(rules, datacache.DATA_DIR)
    out.write_bytes(damage(out.read_bytes()))  # type: ignore[operator]
    got = rulebook.load_rules()
    assert [repr(r) for r in got] == [repr(r) for r in expected]


def test_a_rules_folder_given_is_always_validated(
    rules: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_ready(rules, datacache.DATA_DIR)
    calls: list[int] = []
    real = rulebook._validate
    monkeypatch.setattr(rulebook, "_validate", lambda files: calls.append(1) or real(files))
    monkeypatch.setenv("CFGLINT_RULES_DIR", str(rules))
    rulebook.load_rules()
    assert calls == [1]


def test_reading_the_ready_set_encodes_no_rule_again(
    rules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29: the ready set carries the hash of its bytes; reading it back hashes what
    was read (C speed) instead of encoding every rule as canonical JSON to hash that."""
    out = _write_ready(rules, datacache.DATA_DIR)
    assert (
        read_ready_rule_set(out.read_bytes())["files"][0][0] == sorted(rules.glob("*.yaml"))[0].name
    )
    encoded: list[int] = []
    real = json.dumps
    monkeypatch.setattr(json, "dumps", lambda *a, **kw: encoded.append(1) or real(*a, **kw))
    assert len(rulebook.load_rules()) > 100
    assert encoded == []
