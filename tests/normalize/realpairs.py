"""Scoring of cfglint against the hand-derived ground truth of fixtures/realpairs/ (issue 10).

A pair folder holds ``mindformers.yaml``, ``megatron.sh`` and ``truth.yaml``. A finding
counts as a claim that the two sides differ when its rule compares the sides (``compare`` and
``consistency`` rules and the comparing builtins below); the fusion notes STR014-STR017 say
which kernels run, not that a value differs, and are not scored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
REALPAIRS = ROOT / "fixtures" / "realpairs"
COMPARING_BUILTINS = {"OPT010", "OTH001", "OTH010", "ALN011"}
NOT_SCORED = {"STR014", "STR015", "STR016", "STR017"}


@dataclass
class Score:
    pair: str
    differ: set[str]
    found: set[str]
    missed: set[str]
    false_flags: set[str]
    silent_broken: set[str]
    not_checked: list[tuple[str, str]] = field(default_factory=list)
    verbose: str = ""


def pairs() -> list[str]:
    return sorted(p.name for p in REALPAIRS.iterdir() if (p / "truth.yaml").is_file())


def truth(pair: str) -> dict:
    return yaml.safe_load((REALPAIRS / pair / "truth.yaml").read_text())


def scored_rules() -> set[str]:
    from cfglint.check.rulebook import load_rules

    out = {r.id for r in load_rules() if r.kind in ("compare", "consistency")}
    return (out | COMPARING_BUILTINS) - NOT_SCORED


def run(pair: str) -> Score:
    from cfglint.check.pipeline import Options, lint

    d, t = REALPAIRS / pair, truth(pair)
    # a fixture restated by hand is in no release; where the real file is (by content), the
    # truth names that release, as the real file's own evidence would (normalize/release_fit)
    report, _ctx = lint(
        Options(
            mindformers=[str(d / "mindformers.yaml")],
            megatron=str(d / "megatron.sh"),
            mindformers_version=t["mindformers"].get("release"),
        )
    )
    differ = set(t.get("differ") or {})
    silent = set(t.get("silent") or {})
    raised = {f.rule for f in report.findings}
    # a non-comparing rule listed in `differ` (PAR013: a layout that cannot run) is scored too
    claims = raised & (scored_rules() | differ)
    return Score(
        pair=pair,
        differ=differ,
        found=claims & differ,
        missed=differ - claims,
        false_flags=claims - differ,
        silent_broken=raised & silent,
        not_checked=list(report.not_checked),
    )


def table() -> str:
    rows = ["| pair | true differences | found | missed | false flags |", "|---|---|---|---|---|"]
    for p in pairs():
        s = run(p)
        wrong = sorted(s.false_flags | s.silent_broken)
        rows.append(
            f"| {p} | {len(s.differ)} | {len(s.found)} | {', '.join(sorted(s.missed)) or '-'} "
            f"| {len(wrong)} {', '.join(wrong)} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
