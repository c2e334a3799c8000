"""A rule as a lint runs it: plain records, built from rule data that was validated already.

The rule files are validated against the pydantic models of :mod:`cfglint.check.schema`
(their JSON schema is the rule files' contract) whenever they change; a lint reads rules
validated before (the ready set an install ships, checked against its hash, or the cache
of a validation) and validates nothing. Creating the schema's ten model classes cost more
than running every rule (~35 M instructions of a ~1,000 M pair lint, issue 29), so the
rules a lint runs are these records, built from the rule data, and a lint never imports
the schema. tests/check/test_rule_form.py keeps each record's fields and defaults those of
its schema model, and the rules built from the ready set those that validation gives.
"""

from __future__ import annotations

from typing import Any

from cfglint.model.findings import RuleProbe
from cfglint.model.record import Frozen
from cfglint.model.values import TOLERANCE, fmt

PROFILES = ("default", "align")
# the rule kinds (schema.RULE_CLASSES has one model for each)
KINDS = ("compare", "recommend", "consistency", "env", "builtin")
# a default that depends on the kind: recommendations and environment rules are advice
KIND_DEFAULTS: dict[str, dict[str, Any]] = {"recommend": {"advice": True}, "env": {"advice": True}}
_NO_DEFAULTS: dict[str, Any] = {}
# a fix's per-finding fields (see Rule.general_fix), as the rule reference words them
GENERAL_FIX_WORDS = {
    "fix_knob": "the setting",
    "fix_value": "the other side's value",
    "fix_side": "the side left at its default (either side when both are written)",
}
# a recommend rule's fix writes the value its expectation names
FIXABLE_OPS = ("eq", "truthy", "falsy")


class Expect(Frozen):
    """What a recommend or env rule expects of a value (schema.Expect)."""

    __slots__ = ("op", "value")

    op: str
    value: Any

    def __init__(self, op: str, value: Any = None) -> None:
        self.op = op
        self.value = value

    def holds(self, v: Any) -> bool:
        match self.op:
            case "truthy":
                return bool(v)
            case "falsy":
                return not v
            case "set":
                return v is not None
            case "in" | "not_in":
                inside = _norm(v) in [_norm(x) for x in self.value]
                return inside if self.op == "in" else not inside
        a, b = _norm(v), _norm(self.value)
        try:
            if self.op == "eq":
                return equal(a, b)
            if self.op == "ne":
                return not equal(a, b)
            return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[self.op]
        except TypeError:
            return False

    def describe(self) -> str:
        if self.op in ("in", "not_in"):
            vals = ", ".join(fmt(x) for x in self.value)
            return ("one of " if self.op == "in" else "none of ") + vals
        if self.op in ("truthy", "falsy", "set"):
            return _OP_WORDS[self.op]
        return _OP_WORDS[self.op] + fmt(self.value)


_OP_WORDS = {
    "eq": "",
    "ne": "not ",
    "lt": "< ",
    "le": "<= ",
    "gt": "> ",
    "ge": ">= ",
    "truthy": "enabled",
    "falsy": "disabled",
    "set": "set",
}


def _norm(v: Any) -> Any:
    return v.lower() if isinstance(v, str) else v


def equal(a: Any, b: Any, rel: float = TOLERANCE) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if a == b:
            return True
        try:
            return abs(a - b) <= rel * max(abs(a), abs(b))
        except OverflowError:  # an integer past float range (a 400-digit ffn size)
            return False
    return a == b


def same_value(a: Any, b: Any, rel: float = TOLERANCE) -> bool:
    """Two normalized values are the same setting: numbers within ``rel``, strings in any
    case."""
    return equal(_norm(a), _norm(b), rel)


class SideFix(Frozen):
    """How one side's setting is written when a fix moves that side (schema.SideFix says
    what each field means)."""

    __slots__ = ("keys", "only_mapped", "switch", "values")

    keys: tuple[str, ...]
    switch: bool
    values: dict[str, Any]
    only_mapped: bool

    def __init__(
        self,
        keys: Any,
        switch: bool = False,
        values: dict[str, Any] | None = None,
        only_mapped: bool = False,
    ) -> None:
        self.keys = tuple(keys)
        self.switch = switch
        self.values = {} if values is None else values
        self.only_mapped = only_mapped

    def spelling(self, v: Any) -> tuple[bool, Any]:
        """(writable, the value as this side writes it)."""
        key = _fix_key(v)
        if key in self.values:
            return True, self.values[key]
        return not self.only_mapped, v


def _fix_key(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v).lower() if isinstance(v, str) else str(v)


class FixAction(Frozen):
    """Whether and how a finding of the rule is fixed (schema.FixAction says what each
    field means); each side's part is built from its data."""

    __slots__ = ("copy_only_if", "export", "megatron", "mindformers", "safety", "with_fields")

    safety: str
    mindformers: SideFix | None
    megatron: SideFix | None
    export: str | None
    with_fields: tuple[str, ...]
    copy_only_if: str | None

    def __init__(
        self,
        safety: str,
        mindformers: dict[str, Any] | None = None,
        megatron: dict[str, Any] | None = None,
        export: str | None = None,
        with_fields: Any = (),
        copy_only_if: str | None = None,
    ) -> None:
        self.safety = safety
        self.mindformers = None if mindformers is None else SideFix(**mindformers)
        self.megatron = None if megatron is None else SideFix(**megatron)
        self.export = export
        self.with_fields = tuple(with_fields)
        self.copy_only_if = copy_only_if


class Rule(Frozen):
    """One rule of any kind: the fields every rule has (schema.RuleBase), then those of
    the kinds (a field no kind of this rule's has keeps its default and is never read)."""

    __slots__ = (
        "advice",
        "check",
        "device",
        "env",
        "expect",
        "field",
        "fix",
        "fix_action",
        "fix_parts",
        "id",
        "kind",
        "locate",
        "message",
        "needs",
        "probe",
        "profiles",
        "rationale",
        "row",
        "section",
        "severity",
        "sides",
        "superseded_by",
        "title",
        "tolerance",
        "when",
    )

    id: str
    row: str
    severity: str
    title: str
    message: str
    rationale: str
    fix: str
    profiles: tuple[str, ...]
    superseded_by: tuple[str, ...]
    locate: tuple[str, ...]
    sides: tuple[str, ...]
    when: str | None
    probe: RuleProbe | None
    advice: bool
    section: str
    fix_action: FixAction | None
    fix_parts: dict[str, FixAction]
    kind: str
    field: str | None
    tolerance: float
    expect: Expect | None
    check: str
    env: str | None
    device: str
    needs: tuple[str, ...]

    def __init__(
        self,
        *,
        id: str,
        row: str,
        severity: str,
        title: str,
        message: str,
        rationale: str,
        fix: str,
        kind: str,
        profiles: Any = PROFILES,
        superseded_by: Any = (),
        locate: Any = (),
        sides: Any = ("mindformers", "megatron"),
        when: str | None = None,
        probe: dict[str, Any] | None = None,
        advice: bool = False,
        section: str = "",
        fix_action: dict[str, Any] | None = None,
        fix_parts: dict[str, dict[str, Any]] | None = None,
        field: str | None = None,
        tolerance: float = TOLERANCE,
        expect: dict[str, Any] | None = None,
        check: str = "",
        env: str | None = None,
        device: str = "any",
        needs: Any = (),
    ) -> None:
        self.id, self.row, self.severity, self.title = id, row, severity, title
        self.message, self.rationale, self.fix, self.kind = message, rationale, fix, kind
        self.profiles, self.superseded_by = tuple(profiles), tuple(superseded_by)
        self.locate, self.sides, self.needs = tuple(locate), tuple(sides), tuple(needs)
        self.when, self.advice, self.section, self.field = when, advice, section, field
        self.tolerance, self.check, self.env, self.device = tolerance, check, env, device
        self.probe = None if probe is None else _probe(probe)
        self.expect = None if expect is None else Expect(**expect)
        self.fix_action = None if fix_action is None else FixAction(**fix_action)
        self.fix_parts = {k: FixAction(**v) for k, v in (fix_parts or {}).items()}

    @classmethod
    def from_data(cls, data: dict[str, Any], **given: Any) -> Rule:
        """The rule of ``data`` (a rule file's entry, validated before) with ``given`` (the
        section's title, a builtin rule's check); KeyError for a kind that is none of
        :data:`KINDS`, TypeError for a field that is no rule field or a missing one."""
        kind = data["kind"]
        if kind not in KINDS:
            raise KeyError(kind)
        return cls(**{**KIND_DEFAULTS.get(kind, _NO_DEFAULTS), **data, **given})

    @property
    def general_fix(self) -> str:
        """The fix as the rule reference states it: a compare rule's fix may name the side
        to change from a finding's values (``{fix_side}``, ``{fix_knob}``, ``{fix_value}``);
        without a finding those are said in general words."""
        text = self.fix
        for field_name, words in GENERAL_FIX_WORDS.items():
            text = text.replace(f"{{{field_name}}}", words)
        return text


def _probe(data: dict[str, Any]) -> RuleProbe:
    knobs = data.get("knobs")
    fields = data if knobs is None else {**data, "knobs": tuple(knobs)}
    return RuleProbe.model_construct(**fields)
