"""The ready rule set an install ships (hatch_build.py): the rules built from it without a
validator are the rules validation gives, and a set that is stale or damaged is not used
(the rule files are validated instead) (issue 29)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
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
from conftest import ROOT

SHIPPED = rulebook.rules_dir()
EX = ROOT / "fixtures" / "examples" / "llama2_7b"


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
    # with each builtin rule's check, as the records load_rules() gives
    rules = rulebook._with_checks(rulebook._validate(sorted(folder.glob("*.yaml"))), True)
    return rulebook.as_records(rules)


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


def test_reading_the_ready_set_computes_no_cryptographic_hash(
    rules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29: the ready set's bytes are checked against the checksum they carry (as a
    ready file's name is): a sha256 of its ~130 KB was ~3.3 M instructions of a pair lint.
    The set is still used (no rule file is validated) and still checked (see the damaged
    sets above)."""
    _write_ready(rules, datacache.DATA_DIR)
    hashed: list[int] = []
    real = hashlib.sha256
    monkeypatch.setattr(hashlib, "sha256", lambda *a, **kw: hashed.append(1) or real(*a, **kw))
    validated: list[int] = []
    monkeypatch.setattr(rulebook, "_validate", lambda files: validated.append(1) or ())
    assert len(rulebook.load_rules()) > 100
    assert (hashed, validated) == ([], [])


def test_a_pair_lint_from_the_ready_set_never_imports_the_rule_schema(tmp_path: Path) -> None:
    """Issue 29: the rules come from a ready set (as in an install) and the lint runs and
    reports them: none of it needs the rule schema, whose ten model classes cost ~35 M
    instructions to create (check/rule.py's records are what a lint runs)."""
    ready = tmp_path / "data"
    ready.mkdir()
    _write_ready(SHIPPED, ready)
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from cfglint.load import datacache\nfrom cfglint.check import rulebook\n"
        f"real, datacache.DATA_DIR = datacache.DATA_DIR, Path({str(ready)!r})\n"
        "assert len(rulebook.load_rules()) > 100  # the ready set's rules, kept for the lint\n"
        "datacache.DATA_DIR = real\n"
        "from cfglint.cli.app import main\n"
        f"main([{str(EX / 'pretrain_llama2_7b.yaml')!r}, '--megatron', "
        f"{str(EX / 'pretrain_llama2_7b.sh')!r}])\n"
        "print('schema' if 'cfglint.check.schema' in sys.modules else 'no schema',"
        " file=sys.stderr)\n"
    )
    env = {**os.environ, "CFGLINT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("CFGLINT_RULES_DIR", None)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert proc.stderr.strip().splitlines()[-1] == "no schema", proc.stderr[-800:]
