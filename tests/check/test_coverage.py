"""Every checklist row has a rule, every rule names a real row, the rule files validate."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from cfglint.check.rulebook import RuleFileError, load_rules
from conftest import ROOT, need_shared


def checklist_rows() -> set[str]:
    data = YAML(typ="safe").load(need_shared("checklist.yaml").read_text(encoding="utf-8"))
    return {f"{sec}.{row}" for sec, body in data["sections"].items() for row in body["rows"]}


def test_every_row_is_covered_and_no_rule_names_an_unknown_row() -> None:
    rows = checklist_rows()
    named = {r.row for r in load_rules()}
    assert rows - named == set(), f"rows without a rule: {sorted(rows - named)}"
    assert named - rows == set(), f"rules naming unknown rows: {sorted(named - rows)}"


def test_one_rule_file_per_section() -> None:
    files = sorted(p.stem for p in (ROOT / "rules").glob("*.yaml"))
    sections = sorted({r.row.split(".")[0] for r in load_rules()})
    assert files == sections


def test_rules_are_validated_when_loaded(tmp_path: Path) -> None:
    bad = tmp_path / "optimizer.yaml"
    bad.write_text(
        "section: optimizer\ntitle: Optimizer\nrules:\n"
        "  - id: OPT999\n    row: optimizer.beta2\n    severity: error\n    title: t\n"
        "    kind: compare\n    field: optimizer.no_such_field\n    message: m\n"
        "    rationale: r\n    fix: f\n"
    )
    with pytest.raises(RuleFileError, match="no_such_field"):
        load_rules(str(tmp_path))
    # each kind has its own required fields, named with the rule they belong to
    bad.write_text(
        bad.read_text().replace(
            "kind: compare\n    field: optimizer.no_such_field", "kind: builtin"
        )
    )
    # a builtin rule's function is registered by its id in the code, never named in YAML
    with pytest.raises(RuleFileError, match=r"builtin rule OPT999: 0 checks registered"):
        load_rules(str(tmp_path))
    bad.write_text(bad.read_text().replace("kind: builtin", "kind: builtin\n    check: lr.curve"))
    with pytest.raises(
        RuleFileError, match=r"rule OPT999 \(kind builtin\): check: .*names no check"
    ):
        load_rules(str(tmp_path))


def test_conditions_cannot_escape_the_expression_language(tmp_path: Path) -> None:
    (tmp_path / "weight.yaml").write_text(
        "section: weight\ntitle: W\nrules:\n"
        "  - id: WGT999\n    row: weight.init_method_std\n    severity: note\n    title: t\n"
        "    kind: consistency\n    check: \"__import__('os').system('true')\"\n"
        "    message: m\n    rationale: r\n    fix: f\n"
    )
    with pytest.raises(RuleFileError, match="not allowed"):
        load_rules(str(tmp_path))


def test_every_builtin_rule_has_one_check_and_every_check_a_rule() -> None:
    """The YAML entry is a builtin rule's one definition and its check is the function
    registered by its id: the loader pairs them, so the real rule set loads only when
    each side has exactly one partner (the tests below take one side away)."""
    from cfglint.check.registry import check_of, declared, implementations, resolve

    builtins = [r for r in load_rules() if r.kind == "builtin"]
    impls = implementations()
    assert len(builtins) >= 20
    assert sorted(impls) == sorted(r.id for r in builtins)
    assert declared() == impls  # the ready rule set reads them from the source instead
    for r in builtins:
        assert impls[r.id] == [r.check]
        assert check_of(r.id, r.check) is check_of(r.id)
    with pytest.raises(KeyError):
        resolve("data.dataset_prefixes", "OTH001")  # a helper, not a check
    with pytest.raises(KeyError):
        resolve("lr.curve", "OTH001")  # another rule's check (a planted cache entry)
    # the engine then finds the rule's own check by its id
    assert check_of("OTH001", "lr.curve") is check_of("OTH001") is not check_of("OPT010")


@pytest.fixture
def own_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A copy of cfglint's rule files, loaded as cfglint's own rule set (load_rules())."""
    import shutil

    d = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", d, ignore=shutil.ignore_patterns("variations"))
    monkeypatch.setenv("CFGLINT_RULES_DIR", str(d))
    monkeypatch.setenv("CFGLINT_CACHE_DIR", str(tmp_path / "cache"))
    load_rules.cache_clear()
    yield d
    load_rules.cache_clear()


def test_a_check_without_its_rule_fails_the_load(own_rules: Path) -> None:
    text = (own_rules / "other.yaml").read_text(encoding="utf-8")
    start = text.index("  - id: OTH009\n")
    end = text.index("  - id: ", start + 1)
    (own_rules / "other.yaml").write_text(text[:start] + text[end:], encoding="utf-8")
    with pytest.raises(RuleFileError, match=r"no builtin rule: upstream\.version_check \(OTH009\)"):
        load_rules()


def test_a_builtin_rule_without_its_check_fails_the_load(own_rules: Path) -> None:
    text = (own_rules / "optimizer.yaml").read_text(encoding="utf-8")
    (own_rules / "optimizer.yaml").write_text(
        text.replace("  - id: OPT010\n", "  - id: OPT990\n", 1), encoding="utf-8"
    )
    with pytest.raises(RuleFileError, match=r"builtin rule OPT990: 0 checks registered"):
        load_rules()


def test_two_checks_for_one_rule_fail_the_load(
    own_rules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cfglint.check.builtins import lr
    from cfglint.check.context import builtin

    @builtin("OPT010")
    def curve_again(rule, ctx):  # type: ignore[no-untyped-def]
        return []

    curve_again.__module__ = lr.__name__
    monkeypatch.setattr(lr, "curve_again", curve_again, raising=False)
    with pytest.raises(RuleFileError, match=r"builtin rule OPT010: 2 checks registered"):
        load_rules()


def test_a_row_the_code_names_without_a_rule_fails_the_load(
    own_rules: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows are referenced through the rule set, checked when it is loaded: a row the
    guide's causes or the standard's measurements name must be a rule's row."""
    from cfglint.check.rulebook import named_rows
    from cfglint.evidence.runs import guide

    assert "standard.first_loss" in named_rows() and "optimizer.lr" in named_rows()
    monkeypatch.setattr(guide, "LR", (*guide.LR, "optimizer.lr_typo"))
    with pytest.raises(
        RuleFileError, match=r"rows named in cfglint's code have no rule: optimizer\.lr_typo"
    ):
        load_rules()


def test_source_rules_need_sources_so_a_plain_lint_never_imports_them() -> None:
    src = {r.id for r in load_rules() if r.kind == "builtin" and r.check.startswith("source.")}
    assert src and all("sources" in r.needs for r in load_rules() if r.id in src)


def test_rule_index_table_is_generated_from_the_rule_files() -> None:
    from cfglint.report.rules_doc import rules_markdown

    index = (ROOT / "docs" / "rule-index.md").read_text(encoding="utf-8")
    section = index.split("<!-- rules:start -->\n", 1)[1].split("<!-- rules:end -->", 1)[0]
    assert section == rules_markdown(load_rules()), "run scripts/update_readme_rules.py"
    for rule in load_rules():
        assert f"| {rule.id} |" in section


def test_readme_quickstart_is_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quickstart", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[0].startswith("./cfglint ") and commands[1] == "./test"
    for word in commands[0].split()[1:]:
        if not word.startswith("-"):
            assert (ROOT / word).is_file(), word
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "./test" in ci


def test_every_row_named_in_the_code_is_a_rule_row_or_a_setting() -> None:
    """Code names checklist rows as strings (the probe's and the logs' standard rows, the
    guide's causes of a gap): each must be a row some rule reports or a normalized setting,
    so a renamed row or a typo fails here instead of silently matching nothing."""
    import ast
    import re

    from cfglint.model.config import Config
    from cfglint.model.findings import SECTION_ORDER

    known = {r.row for r in load_rules()} | set(Config.field_paths())
    shaped = re.compile(rf"^({'|'.join(SECTION_ORDER)})\.[a-z0-9_]+$")
    named = {}
    for path in (ROOT / "src" / "cfglint").rglob("*.py"):
        if "normalize" in path.parts:  # reads MindFormers YAML keys (optimizer.betas), not rows
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_str = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_str and shaped.match(node.value):
                named.setdefault(node.value, path.name)
    assert len(named) > 50
    assert {row: where for row, where in named.items() if row not in known} == {}


@pytest.mark.parametrize(
    "text",
    [
        '@builtin("ABC001")\ndef first(rule, ctx):\n',  # at the start of the file
        'x = 1\n@builtin("ABC002")\n\ndef spaced(rule, ctx):\n',
        # not at a line start
        'x = "@builtin(\\"ABC003\\")"\n    @builtin("ABC004")\ndef inner():\n',
        '@builtin("abc005")\ndef lower():\n@builtin("ABC006")\nclass C:\n',  # no id, no def
        '@builtin("ABC007")\ndef a():\n    pass\n@builtin("ABC008")\ndef b():\n',
    ],
)
def test_declarations_are_the_patterns_matches(text: str) -> None:
    """Issue 29: declared() tries the pattern only where a line starts with ``@builtin(``;
    it finds what a search over the whole text finds."""
    from cfglint.check import registry

    assert registry._declarations(text) == registry._DECLARED.findall(text)
