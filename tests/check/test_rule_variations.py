"""The aligned fixture pairs are clean, and one-knob variations of them each produce the
expected checklist row, located on the changed line (or saying it is a default). The cases are
data beside the rules they exercise: ``rules/variations/<section>.yaml`` (and ``bases.yaml``).

The pairs (never modified here; every case edits a copy):
  dense  fixtures/pairs/llama2_dense  MindFormers legacy LlamaConfig vs Megatron-LM bash arrays
  moe    fixtures/pairs/qwen3_moe     MindFormers mcore (use_legacy: False) vs MindSpeed-LLM blocks
Each case names the file it edits (mf: the MindFormers YAML, mg: the Megatron / MindSpeed-LLM
script, launch: the msrun script given with --launch), the edit, the rule expected (its row
is the rule's, from rules/*.yaml),
the side of the finding's primary location and, in `also`, the other rules the same knob
legitimately moves (each explained). Three tests read every case: `test_fires` (the rule, its
row, the exit code, "default" wording for deletions, no unexpected rules), `test_values`
(both sides' values for compare rules) and `test_located` (the edited line is pointed at;
deletions point at no line that no longer holds the setting). A known cfglint bug is an
entry in `bugs` ({aspect: reason}) and turns that aspect into a strict xfail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from variations import (
    Append,
    Applied,
    Delete,
    Edit,
    Pair,
    Replace,
    apply_edit,
    brief,
    copy_pair,
    run_cli,
    same_values,
)

from cfglint.check.rulebook import load_rules
from conftest import ROOT

MF, MG = "mindformers", "megatron"


# -- the cases: data beside the rule files (rules/variations/*.yaml) ----------------------------
VARIATIONS = ROOT / "rules" / "variations"
EDIT_KEYS = ("replace", "delete", "append")


@dataclass(frozen=True)
class Case:
    id: str
    pair: str  # "dense" | "moe"
    role: str  # "mf" | "mg" | "launch": the file the knob is in
    edit: Edit
    rule: str | None  # expected rule id; None: no finding at all
    side: str | None = None  # side of the expected finding's first location (None: unchecked)
    profile: str = "default"
    base: str | None = None
    also: tuple[str, ...] = ()  # companions: other rules this knob legitimately fires
    says: tuple[str, ...] = ()  # the message contains one of these
    values: dict[str, Any] | None = None  # the expected finding's `values`, exactly
    on_edit: bool | None = None  # a location on the edited line; default: unless a deletion
    within: str | None = None  # role of the file the first location must be in
    bugs: dict[str, str] = field(default_factory=dict)  # aspect -> reason: strict xfail
    why: str = ""  # why the expectation is what it is (companions, defaults)
    section: str = ""  # the rules file the case sits beside

    @property
    def row(self) -> str:
        """The expected rule's row: the rule file defines it, the case does not repeat it."""
        return RULES[self.rule].row if self.rule is not None else ""

    @property
    def deletes(self) -> bool:
        return isinstance(self.edit, Delete)

    @property
    def must_locate_edit(self) -> bool:
        return (not self.deletes) if self.on_edit is None else self.on_edit


def _edit(d: dict[str, Any], where: str) -> Edit:
    kinds = [k for k in EDIT_KEYS if k in d]
    assert len(kinds) == 1, f"{where}: exactly one of {EDIT_KEYS} is needed"
    if kinds[0] == "replace":
        return Replace(d["replace"]["old"], d["replace"]["new"])
    if kinds[0] == "delete":
        return Delete(d["delete"])
    return Append(d["append"])


def _sections() -> list[tuple[Path, dict[str, Any]]]:
    return [
        (path, yaml.safe_load(path.read_text(encoding="utf-8")))
        for path in sorted(VARIATIONS.glob("*.yaml"))
        if path.stem != "bases"
    ]


def _load_cases() -> list[Case]:
    known = {f for f in Case.__dataclass_fields__} - {"edit", "section"}
    out = []
    for path, data in _sections():
        assert set(data) <= {"cases", "one_sided"}, f"{path.name}: unknown keys {sorted(data)}"
        for d in data["cases"]:
            where = f"{path.name} {d.get('id')}"
            extra = set(d) - known - set(EDIT_KEYS)
            assert not extra, f"{where}: unknown keys {sorted(extra)}"
            fields_ = {k: v for k, v in d.items() if k in known}
            for k in ("also", "says"):
                fields_[k] = tuple(fields_.get(k, ()))
            out.append(Case(**fields_, edit=_edit(d, where), section=path.stem))
    return out


def _load_bases() -> dict[str, tuple[str, tuple[tuple[str, Edit], ...]]]:
    data = yaml.safe_load((VARIATIONS / "bases.yaml").read_text(encoding="utf-8"))["bases"]
    return {
        name: (b["pair"], tuple((e["role"], _edit(e, f"bases.yaml {name}")) for e in b["edits"]))
        for name, b in data.items()
    }


def _load_one_sided() -> dict[str, dict[str, str]]:
    """Compare rules whose difference only one framework has a setting for:
    {rule: {side without a setting: the evidence}}."""
    out: dict[str, dict[str, str]] = {}
    for path, data in _sections():
        for rule, sides in (data.get("one_sided") or {}).items():
            assert set(sides) <= {MF, MG} and sides, f"{path.name} {rule}: sides {sides}"
            out[rule] = sides
    return out


BASES = _load_bases()
# rules a base legitimately fires on its own (each explained in bases.yaml); its cases list them
BASE_ALSO = {
    name: set(b.get("also", ()))
    for name, b in yaml.safe_load((VARIATIONS / "bases.yaml").read_text(encoding="utf-8"))[
        "bases"
    ].items()
}
CASES = _load_cases()
ONE_SIDED = _load_one_sided()
# the side whose file a case edits (the msrun script is MindFormers' launch)
EDITED_SIDE = {"mf": MF, "launch": MF, "mg": MG}


# -- running a case (once per session) ---------------------------------------------------------
@dataclass
class Outcome:
    rc: int
    report: dict[str, Any]
    applied: Applied
    pair: Pair  # the edited copies, as given on the command line
    role: str

    @property
    def edited(self) -> Path:
        return self.pair.path(self.role)

    @property
    def findings(self) -> list[dict[str, Any]]:
        return self.report["findings"]


_OUTCOMES: dict[str, Outcome] = {}


def outcome(case: Case, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    if case.id not in _OUTCOMES:
        pair = copy_pair(case.pair, tmp_path_factory.mktemp(case.id.lower()))
        if case.base is not None:
            base_pair, edits = BASES[case.base]
            assert base_pair == case.pair, f"base {case.base} is for the {base_pair} pair"
            for role, edit in edits:
                apply_edit(pair.path(role), edit)
        applied = apply_edit(pair.path(case.role), case.edit)
        rc, report = run_cli(pair.argv(case.profile))
        _OUTCOMES[case.id] = Outcome(rc, report, applied, pair, case.role)
    return _OUTCOMES[case.id]


RULES = {r.id: r for r in load_rules()}


def expected(case: Case, out: Outcome) -> list[dict[str, Any]]:
    return [f for f in out.findings if f["rule"] == case.rule]


def params(aspect: str, cases: list[Case]) -> list[Any]:
    out = []
    for c in cases:
        reason = c.bugs.get(aspect) or c.bugs.get("fires")
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out


# -- the aligned pairs ----------------------------------------------------------------------------
@pytest.mark.parametrize("profile", ["default", "align"])
@pytest.mark.parametrize("pair_name", ["dense", "moe"])
def test_aligned_pair_is_clean(pair_name: str, profile: str, tmp_path: Path) -> None:
    pair = copy_pair(pair_name, tmp_path)
    rc, report = run_cli(pair.argv(profile))
    assert report["findings"] == [], f"aligned {pair_name} pair:{brief(report['findings'])}"
    assert report["errors"] == []
    assert rc == 0


@pytest.mark.parametrize("base", sorted(BASES))
def test_base_is_clean(base: str, tmp_path: Path) -> None:
    pair_name, edits = BASES[base]
    pair = copy_pair(pair_name, tmp_path)
    for role, edit in edits:
        apply_edit(pair.path(role), edit)
    rc, report = run_cli(pair.argv("default"))
    fired = {f["rule"] for f in report["findings"]}
    assert fired == BASE_ALSO[base], f"base {base}:{brief(report['findings'])}"
    failing = any(f["severity"] in ("error", "warning") for f in report["findings"])
    assert rc == (1 if failing else 0)


# -- one-knob variations -------------------------------------------------------------------------
@pytest.mark.parametrize("case", params("fires", CASES))
def test_fires(case: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = outcome(case, tmp_path_factory)
    assert out.report["errors"] == []
    got = brief(out.findings)
    if case.rule is None:
        assert out.findings == [], f"expected no finding:{got}"
        assert out.rc == 0
        return
    mine = expected(case, out)
    assert mine, f"{case.rule} ({case.row}) did not fire:{got}"
    for f in mine:
        assert f["row"] == case.row
        yaml11 = "as the string" in f["message"]  # promoted to error whatever the rule says
        assert f["severity"] == ("error" if yaml11 else RULES[case.rule].severity)
    others = {f["rule"] for f in out.findings} - {f["rule"] for f in mine}
    assert others == set(case.also), f"companions differ from {sorted(case.also)}:{got}"
    if case.deletes:
        assert case.says, "a deletion case must say which default wording to expect"
    if case.says:
        assert any(s in f["message"] for f in mine for s in case.says), (
            f"no message says {case.says}:{got}"
        )
    failing = any(f["severity"] in ("error", "warning") for f in out.findings)
    assert out.rc == (1 if failing else 0)


VALUE_CASES = [c for c in CASES if c.values is not None]


@pytest.mark.parametrize("case", params("values", VALUE_CASES))
def test_values(case: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = outcome(case, tmp_path_factory)
    mine = expected(case, out)
    assert mine, f"{case.rule} ({case.row}) did not fire:{brief(out.findings)}"
    assert len(mine) == 1, f"one finding expected:{brief(mine)}"
    values = mine[0]["values"]
    if RULES[case.rule].kind == "compare":
        assert set(values) == {MF, MG}, f"a compare finding carries both sides: {values}"
    assert same_values(values, case.values), f"values {values}, expected {case.values}"


LOCATED_CASES = [c for c in CASES if c.rule is not None]


@pytest.mark.parametrize("case", params("located", LOCATED_CASES))
def test_located(case: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    out = outcome(case, tmp_path_factory)
    mine = expected(case, out)
    assert mine, f"{case.rule} ({case.row}) did not fire:{brief(out.findings)}"
    edited = str(out.edited)
    n_lines = len(out.edited.read_text(encoding="utf-8").splitlines())
    for f in mine:
        for loc in f["locations"]:
            if loc["path"] == edited:
                assert 1 <= loc["line"] <= n_lines, f"{loc} is outside {out.edited.name}"
                assert loc["line"] not in out.applied.removed, (
                    f"{loc} points at a line that no longer holds the deleted setting"
                )
    # a setting left at its default is written nowhere: such a finding has no location
    # (not a made-up line 1), and its one side's value and its message name the side and file
    if case.side is not None:
        sides = {
            f["locations"][0]["side"] if f["locations"] else next(iter(f["values"]))
            for f in mine
            if f["locations"] or len(f["values"]) == 1
        }
        assert case.side in sides, f"primary location side {sides}, expected {case.side}"
    if case.within is not None:
        want = str(out.pair.path(case.within))
        firsts = [f["locations"][0]["path"] for f in mine if f["locations"]]
        named = any(not f["locations"] and Path(want).name in f["message"] for f in mine)
        assert want in firsts or named, f"first location in {firsts}, expected {want}"
    if case.must_locate_edit:
        changed = set(out.applied.changed)
        hits = [
            loc
            for f in mine
            for loc in f["locations"]
            if loc["path"] == edited and loc["line"] in changed
        ]
        assert hits, (
            f"no location on the edited line(s) {sorted(changed)} of "
            f"{out.edited.name}:{brief(mine)}"
        )


# -- coverage of the checklist rows -----------------------------------------------------------
def test_every_compare_and_recommend_row_has_a_variation() -> None:
    rows = {r.row for r in RULES.values() if r.kind in ("compare", "recommend")}
    covered = {c.row for c in CASES if c.rule is not None}
    assert rows - covered == set(), f"rows without a variation: {sorted(rows - covered)}"


def test_every_compare_rule_is_written_on_both_sides() -> None:
    """A compare rule's message must read right whichever side holds which value, so each
    rule has a case that writes the difference in a MindFormers file and one that writes it
    in the Megatron script (tests/check/test_messages.py reads every one), unless that side
    has no setting for it (`one_sided`, with its evidence)."""
    written: dict[str, set[str]] = {}
    for c in CASES:
        if c.rule is not None and not c.bugs:
            written.setdefault(c.rule, set()).add(EDITED_SIDE[c.role])
    missing = {
        rid: sorted({MF, MG} - written.get(rid, set()) - set(ONE_SIDED.get(rid, {})))
        for rid, r in RULES.items()
        if r.kind == "compare"
    }
    missing = {rid: sides for rid, sides in missing.items() if sides}
    assert missing == {}, f"compare rules without a case edited on these sides: {missing}"
    for rid, sides in ONE_SIDED.items():
        assert rid in RULES and RULES[rid].kind == "compare", f"one_sided {rid}: not a compare rule"
        assert not set(sides) & written.get(rid, set()), (
            f"one_sided {rid}: a case does write it on {sorted(set(sides) & written[rid])}"
        )


def test_case_table_is_consistent() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    for c in CASES:
        assert re.match(r"^[A-Z]{3}([0-9]{3})?-[a-z0-9.-]+$", c.id), c.id
        assert c.role in ("mf", "mg", "launch"), c.id
        if c.rule is not None:
            assert c.rule in RULES, f"{c.id}: no rule {c.rule}"
            assert c.id.startswith(c.rule), f"{c.id} should be named after {c.rule}"
        if c.rule is not None:
            section = RULES[c.rule].row.split(".")[0]
            assert c.section == section, f"{c.id}: {c.rule} belongs in {section}.yaml"
        for companion in c.also:
            assert companion in RULES, f"{c.id}: no companion rule {companion}"
        assert set(c.bugs) <= {"fires", "values", "located"}, c.id
