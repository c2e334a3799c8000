"""The settings ``cfglint show`` prints: every normalized setting of one pair, its value on
each side, and whether the two differ, decided as the rule engine decides it (the tolerance
of the compare rule that reads the setting, else the one default; strings in any case)."""

from __future__ import annotations

from dataclasses import dataclass

from cfglint.check.rule import Rule, same_value
from cfglint.model.config import Config
from cfglint.model.errors import InputError
from cfglint.model.values import TOLERANCE, Value


@dataclass(frozen=True)
class SettingRow:
    path: str  # a field of the normalized model (section.name) or env.NAME
    mindformers: Value | None
    megatron: Value | None
    differs: bool  # both sides set it, both known, and the values differ


def tolerances(rules: tuple[Rule, ...]) -> dict[str, float]:
    """Each compared setting's tolerance: the narrowest of the compare rules that read it."""
    out: dict[str, float] = {}
    for r in rules:
        if r.kind == "compare":
            out[r.field] = min(out.get(r.field, r.tolerance), r.tolerance)
    return out


def differs(a: Value | None, b: Value | None, tolerance: float = TOLERANCE) -> bool:
    """Both sides set the setting, both values are known, and they are not the same."""
    if a is None or b is None or not a.known or not b.known:
        return False
    return not same_value(a.value, b.value, tolerance)


def setting_rows(
    mf: Config | None,
    mg: Config | None,
    rules: tuple[Rule, ...],
    *,
    everything: bool = False,
    diff_only: bool = False,
) -> list[SettingRow]:
    """The rows of ``show``: the settings either side sets (``everything``: all of them),
    then the environment variables either launch sets; ``diff_only`` keeps those that
    differ (a usage error without both sides)."""
    if diff_only and (mf is None or mg is None):
        raise InputError(None, "--diff-only compares two sides: give both")
    tol = tolerances(rules)
    rows = []
    for path in Config.field_paths():
        a = mf.get(path) if mf else None
        b = mg.get(path) if mg else None
        if everything or a is not None or b is not None:
            rows.append(SettingRow(path, a, b, differs(a, b, tol.get(path, TOLERANCE))))
    for name in sorted(set((mf.env if mf else {}) | (mg.env if mg else {}))):
        a = mf.env.get(name) if mf else None
        b = mg.env.get(name) if mg else None
        rows.append(SettingRow(f"env.{name}", a, b, differs(a, b)))
    return [r for r in rows if r.differs] if diff_only else rows
