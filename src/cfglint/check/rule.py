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
    the kinds (a field no kind of this rule's has keeps its default and is never read).
    Its fields are one dict, the rule data with the defaults of what it leaves out: no
    keyword per field to match (a lint builds some 170 rules)."""

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

    def __init__(self, **fields: Any) -> None:
        self.__dict__ = _rule_fields(fields)

    @classmethod
    def from_data(cls, data: dict[str, Any], **given: Any) -> Rule:
        """The rule of ``data`` (a rule file's entry as plain data, validated before) with
        ``given`` (the section's title, a builtin rule's check); KeyError for a kind that is
        none of :data:`KINDS`, TypeError for a field that is no rule field or a missing one."""
        rule = cls.__new__(cls)
        rule.__dict__ = _rule_fields({**data, **given})
        return rule

    @property
    def probe(self) -> RuleProbe | None:
        """The rule's probe block, built when first read (a lint reads the few of the
        rules it reports)."""
        block = self.__dict__["probe"]
        if block is None or isinstance(block, RuleProbe):
            return block
        built = self.__dict__["probe"] = _probe(block)
        return built

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


def _rule_fields(data: dict[str, Any]) -> dict[str, Any]:
    """A rule's fields from its data: every field in order, those it leaves out at their
    defaults; a list where the field is a tuple made one, a part made its record."""
    kind = data["kind"]
    if kind not in KINDS:
        raise KeyError(kind)
    # the template's keys stay (the names in the code, where the data's are equal strings
    # parsed from JSON): reading an attribute then finds its name by identity
    fields = {**_TEMPLATE, **KIND_DEFAULTS.get(kind, _NO_DEFAULTS), **data}
    if len(fields) != len(_TEMPLATE) or not data.keys() >= _REQUIRED:
        unknown, missing = data.keys() - _TEMPLATE.keys(), _REQUIRED - data.keys()
        raise TypeError(f"rule fields: unknown {sorted(unknown)}, missing {sorted(missing)}")
    for name in _TUPLES:
        fields[name] = tuple(fields[name])
    expect, fix, parts = fields["expect"], fields["fix_action"], fields["fix_parts"]
    fields["expect"] = None if expect is None else Expect(**expect)
    fields["fix_action"] = None if fix is None else FixAction(**fix)
    # a dict of its own (a default one is never shared), each part built
    fields["fix_parts"] = {k: FixAction(**v) for k, v in (parts or {}).items()}
    return fields


# what a rule may leave out: the required fields of every kind (id, row, ...) have no default
_DEFAULTS: dict[str, Any] = {
    "profiles": PROFILES,
    "superseded_by": (),
    "locate": (),
    "sides": ("mindformers", "megatron"),
    "when": None,
    "probe": None,  # the block as data: see Rule.probe
    "advice": False,
    "section": "",
    "fix_action": None,
    "fix_parts": None,  # a dict of its own: see _rule_fields
    "field": None,
    "tolerance": TOLERANCE,
    "expect": None,
    "check": "",
    "env": None,
    "device": "any",
    "needs": (),
}
_TEMPLATE = {name: _DEFAULTS.get(name) for name in Rule._fields}
_REQUIRED = frozenset(_TEMPLATE.keys() - _DEFAULTS.keys())
# the fields the data holds as lists
_TUPLES = ("profiles", "superseded_by", "locate", "sides", "needs")
