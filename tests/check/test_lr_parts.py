"""OPT010 when the curve cannot be simulated compares the schedule's known parts. A constant
schedule never decays on either side: Megatron's returns the peak lr after warmup and never
reads --min-lr (optimizer_param_scheduler.py:235-237 @ core_v0.19.0), so its floor is its
peak, as MindFormers' ConstantWarmUpLR's is."""

from __future__ import annotations

from pathlib import Path

import yaml
from test_rule_variations import BASES
from variations import Replace, apply_edit, copy_pair, run_cli


def _ratio_pair(tmp_path: Path, mg_edit: Replace | None = None) -> list[dict]:
    pair_name, edits = BASES["ratio"]  # total_steps -1 on a MindRecord dataset: length unknown
    pair = copy_pair(pair_name, tmp_path)
    for role, edit in edits:
        apply_edit(pair.path(role), edit)
    if mg_edit is not None:
        apply_edit(pair.mg, mg_edit)
    _, report = run_cli(pair.argv())
    return [f for f in report["findings"] if f["rule"] == "OPT010"]


def test_constant_schedules_have_no_min_lr_to_compare(tmp_path: Path) -> None:
    # Megatron's --min-lr is left at its default 0, which a constant schedule never reaches
    assert _ratio_pair(tmp_path) == []


def test_a_different_peak_is_still_reported_alone(tmp_path: Path) -> None:
    found = _ratio_pair(tmp_path, Replace("--lr 1e-5", "--lr 2e-5"))
    assert len(found) == 1
    assert set(found[0]["values"]) == {"peak lr"}, yaml.safe_dump(found[0]["values"])
    assert "could not be simulated" in found[0]["message"]
