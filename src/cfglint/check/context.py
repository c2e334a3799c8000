"""What every check sees and the helpers that turn facts into findings.

:class:`Context` carries both normalized sides and the evidence gathered for this run; the
rule engine and the builtin checks under :mod:`cfglint.check.builtins` share the helpers
here, so that no check module reaches into another.
"""

from __future__ import annotations

import math
import os
import string
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cfglint.model.config import Config
from cfglint.model.findings import Finding, Location
from cfglint.model.record import Record
from cfglint.model.values import Loc, Value

if TYPE_CHECKING:
    from cfglint.check.rule import Rule

SIDE_LABEL = {"mindformers": "MindFormers", "megatron": "Megatron"}


class Context(Record):
    """Everything the rules look at."""

    __slots__ = (
        "data",
        "log_cache",
        "logs",
        "mf",
        "mg",
        "not_checked",
        "profile",
        "sources",
        "yaml11_seen",
    )

    mf: Config | None
    mg: Config | None
    profile: str
    # results of the source scanner (cfglint.evidence.scan), when --source was given
    sources: Any
    # paths of data / tokenizer files given on the command line
    data: dict[str, str]
    # training logs with per-step losses (--loss-log), parsed once
    logs: list[str]
    log_cache: dict[str, Any]
    # (path, line, knob) of PyYAML-string values already reported: one finding per string,
    # whichever rules read it
    yaml11_seen: set[tuple[str, int, str]]
    # rows that could not be checked, with the reason (shown in verbose output)
    not_checked: list[tuple[str, str]]

    def __init__(
        self,
        mf: Config | None = None,
        mg: Config | None = None,
        profile: str = "default",
        sources: Any = None,
        data: dict[str, str] | None = None,
        logs: list[str] | None = None,
        log_cache: dict[str, Any] | None = None,
        yaml11_seen: set[tuple[str, int, str]] | None = None,
        not_checked: list[tuple[str, str]] | None = None,
    ) -> None:
        self.mf = mf
        self.mg = mg
        self.profile = profile
        self.sources = sources
        self.data = {} if data is None else data
        self.logs = [] if logs is None else logs
        self.log_cache = {} if log_cache is None else log_cache
        self.yaml11_seen = set() if yaml11_seen is None else yaml11_seen
        self.not_checked = [] if not_checked is None else not_checked

    def side(self, name: str) -> Config | None:
        return self.mf if name == "mindformers" else self.mg


def label(cfg: Config) -> str:
    if cfg.side_label:
        return cfg.side_label
    if cfg.side == "megatron" and cfg.kind.startswith("mindspeed"):
        return "MindSpeed-LLM"
    return SIDE_LABEL[cfg.side]


def to_location(loc: Loc, side: str) -> Location:
    return Location.model_construct(path=loc.path, line=loc.line, column=loc.column, side=side)


def value_locations(v: Value | None, side: str) -> list[Location]:
    """Where a value was typed first, then the lines that carried it there (the variable
    assignment a flag expands, the array a value sits in)."""
    if v is None:
        return []
    return [to_location(loc, side) for loc in v.locations()]


def where(v: Value | None, cfg: Config | None) -> str:
    if v is None:
        return "no such setting"
    if v.origin.value == "default" and cfg is not None and v.knob:
        return f"{v.detail}, not set in {os.path.basename(cfg.path)}"
    return v.where()


class _Fmt(string.Formatter):
    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        # Only plain names and one [key] lookup: templates cannot reach attributes.
        name, _, key = field_name.partition("[")
        obj = kwargs[name]
        if key:
            obj = obj[key.rstrip("]")]
        return obj, field_name


_FMT = _Fmt()


def render(template: str, fields: dict[str, Any]) -> str:
    return _FMT.vformat(template, (), fields).strip()


def make_finding(
    rule: Rule, message: str, values: dict[str, Any], locations: list[Location]
) -> Finding:
    seen: list[Location] = []
    for loc in locations:
        if loc not in seen:
            seen.append(loc)
    return Finding.model_construct(  # trusted fields: see cfglint.model.findings
        rule=rule.id,
        row=rule.row,
        severity=rule.severity,
        message=message,
        values=dict(values),
        locations=seen,
        rationale=rule.rationale,
        fix=rule.general_fix,
        probe=rule.probe,
    )


def yaml11_findings(
    rule: Rule, v: Value, cfg: Config, ctx: Context, other: Value | None = None
) -> list[Finding]:
    """A number MindFormers will read as a string, reported once."""
    # one cause, one finding: the value, whichever rows read it (the comparison, which runs
    # first, reports it with both sides)
    key = (v.loc.path if v.loc else cfg.path, v.loc.line if v.loc else 0, v.knob)
    if key in ctx.yaml11_seen:
        return []
    ctx.yaml11_seen.add(key)
    f = yaml11_finding(rule, v, cfg)
    if other is not None and other.known:
        f.values["megatron"] = other.value
        f.locations.extend(value_locations(other, "megatron"))
    return [f]


def yaml11_finding(rule: Rule, v: Value, cfg: Config) -> Finding:
    """A number MindFormers will read as a string (PyYAML follows YAML 1.1)."""
    msg = (
        f"{rule.title}: MindFormers reads {v.knob}: {v.raw} as the string {v.raw!r}, "
        f"not a number ({v.short_where()}). PyYAML, which MindFormers uses, follows YAML 1.1: "
        "a float needs a dot and a signed exponent. Write it as "
        f"{_yaml11_spelling(v.raw or '')}."
    )
    return make_finding(rule, msg, {cfg.side: v.raw}, value_locations(v, cfg.side)).model_copy(
        update={"severity": "error"}
    )


def _yaml11_spelling(raw: str) -> str:
    try:
        x = float(raw)
    except ValueError:
        return "a quoted-free number with a dot, e.g. 1.0e-5"
    if not math.isfinite(x):
        return "a number within the float range (this one overflows to infinity)"
    mant, _, exp = f"{x:e}".partition("e")
    mant = mant.rstrip("0").rstrip(".")
    if "." not in mant:
        mant += ".0"
    return f"{mant}e{int(exp):+03d}".replace("e+0", "e+").replace("e-0", "e-")


Check = Callable[["Rule", Context], list[Finding]]


def builtin(rule_id: str) -> Callable[[Check], Check]:
    """Register a function of a module under :mod:`cfglint.check.builtins` as the check of
    the builtin rule ``rule_id``. The rule's YAML entry (rules/*.yaml) is its one definition
    (row, severity, message, docs, probe and fix fields); the code is only this function.
    Loading the rule files fails unless each builtin rule has exactly one registered check
    and each registered check a rule (:mod:`cfglint.check.rulebook`)."""

    def register(fn: Check) -> Check:
        fn.cfglint_rule = rule_id  # type: ignore[attr-defined]
        return fn

    return register


def not_checked(ctx: Context, rule: Rule, why: str) -> list[Finding]:
    ctx.not_checked.append((rule.row, f"{rule.id}: {why}"))
    return []


def finding(
    rule: Rule,
    detail: str,
    values: dict[str, Any],
    locs: list[Location],
    severity: str | None = None,
) -> Finding:
    f = make_finding(
        rule, render(rule.message, {"title": rule.title, "detail": detail}), values, locs
    )
    return f.model_copy(update={"severity": severity}) if severity else f


def locations_of(*pairs: tuple[Value | None, str]) -> list[Location]:
    out: list[Location] = []
    for v, side in pairs:
        out += value_locations(v, side)
    return out


def file_location(cfg: Config, *knobs: str, side: str | None = None) -> list[Location]:
    """Where a setting ``cfg`` leaves to its default would be written (an anchor): the
    line its section begins on (the deepest key of the first of ``knobs`` the file has a
    section for; a script's launch command for a flag), else the file's first line."""
    found = (_section_start(cfg, k) for k in knobs or ("",))
    line, column = next((f for f in found if f is not None), (1, 1))
    return [
        Location.model_construct(
            path=cfg.path, line=line, column=column, side=side or cfg.side, anchor=True
        )
    ]


def unset_knobs(v: Value | None) -> tuple[str, ...]:
    """The knobs whose section a value written nowhere points at: its own, then those of
    the values it is derived from (a model class's fixed value has no key of its own)."""
    return (v.knob, *(i.knob for i in v.inputs)) if v is not None else ()


def _section_start(cfg: Config, knob: str) -> tuple[int, int] | None:
    if not knob or knob.startswith("-"):  # a flag, or a setting with no name: the command
        return cfg.sections.get("")
    parts = [p.partition("[")[0] for p in knob.split(" ")[0].split(".")]
    found = (cfg.sections.get(".".join(parts[:end])) for end in range(len(parts) - 1, 0, -1))
    return next((f for f in found if f is not None), None)
