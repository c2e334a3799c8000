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
    with pytest.raises(RuleFileError, match=r"rule OPT999 \(kind builtin\): check: Field required"):
        load_rules(str(tmp_path))
    bad.write_text(bad.read_text().replace("kind: builtin", "kind: builtin\n    check: lr.nothing"))
    with pytest.raises(RuleFileError, match=r"no builtin check named 'lr\.nothing'"):
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


def test_every_builtin_is_named_by_a_rule_and_every_name_resolves() -> None:
    # the registry resolves `module.function` names on demand; nobody keeps a list, so check
    # that no marked check is orphaned and no rule names an unmarked helper
    import importlib
    import pkgutil

    import cfglint.check.builtins as pkg
    from cfglint.check.registry import resolve

    named = {r.check for r in load_rules() if r.kind == "builtin"}
    for n in named:
        assert callable(resolve(n))
    marked = set()
    for info in pkgutil.iter_modules(pkg.__path__):
        mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        for attr, fn in vars(mod).items():
            if getattr(fn, "cfglint_builtin", False) and fn.__module__ == mod.__name__:
                marked.add(f"{info.name}.{attr}")
    assert marked == named
    with pytest.raises(KeyError):
        resolve("data.dataset_prefixes")  # a helper, not a check


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
