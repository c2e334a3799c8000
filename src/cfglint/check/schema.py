"""The rule schema: one model per rule kind, told apart by ``kind``, validated at load.

One YAML file per checklist section under ``rules/``. Each rule names exactly one checklist
row (``section.key``) and says how it is decided; the engine in :mod:`cfglint.check.engine`
is generic over these kinds:

``compare``      both sides configure ``field``; the normalized values must agree
``recommend``    ``field`` on the listed ``sides`` should satisfy ``expect``
``consistency``  ``check`` (an expression over ``cfg``) must hold on each listed side
``env``          the launch script should export ``env`` satisfying ``expect``
``builtin``      a function under :mod:`cfglint.check.builtins` registered by the rule's id
                 (learning-rate curves, source scan results, data files, ...) for what one
                 comparison cannot express; the YAML entry stays the rule's one definition

These models validate the rule files and are their contract (their JSON schema); what a
lint runs is :mod:`cfglint.check.rule`'s records, built from rule data validated here (a
lint does not import this module).
"""

# Field annotations are evaluated here, not kept as strings (no `from __future__ import
# annotations`): pydantic turns each string into a typing.ForwardRef, which Python 3.11
# compiles one by one at import (tests/model/test_model_schemas.py).
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from cfglint.check.expr import ExprError, compile_expr
from cfglint.check.rule import FIXABLE_OPS, PROFILES
from cfglint.model.config import Config
from cfglint.model.findings import SECTION_ORDER, RuleProbe, Severity
from cfglint.model.lazy_re import compile_on_use
from cfglint.model.trusted import TrustedModel
from cfglint.model.values import TOLERANCE

SideName = Literal["mindformers", "megatron"]
# validation context key: the rules come from the cache (checked when they were written)
FROM_CACHE = "from_cache"
ROW_SECTIONS = SECTION_ORDER
# the validators' patterns: a lint reads validated rules from the cache without them
_ID = compile_on_use(r"^[A-Z]{2,4}[0-9]{3}$")


class Expect(TrustedModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    op: Literal["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "truthy", "falsy", "set"]
    value: Any = None


class SideFix(TrustedModel):
    """How one side's setting is written when a fix moves that side.

    MindFormers: ``keys`` are the dotted key paths the setting may be written under (a
    value already in the file is edited where it is, whichever of them it came from); the
    first one is added when the setting is not written. Megatron: ``keys`` are the flag and
    its aliases (``--seq-length``); the first is added when missing. ``switch`` marks a
    store_true flag: true is the flag present, false the flag absent. ``values`` maps a
    normalized value to its spelling on this side (``adamw`` -> ``AdamW``); a value it does
    not list is written as it is, unless ``only_mapped`` (an enumeration whose other values
    have no spelling here: no fix is offered for them).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    keys: tuple[str, ...] = Field(min_length=1)
    switch: bool = False
    values: dict[str, Any] = Field(default_factory=dict)
    only_mapped: bool = False


class FixAction(TrustedModel):
    """Whether and how a finding of the rule is fixed (``--fix``, ``--diff``, the editor's
    code actions). ``safety``: ``safe`` fixes change only the finding's value; ``unsafe``
    ones change more of the run (the device layout, the data read, the model's shape) and
    need ``--unsafe-fixes``. A compare rule moves one side to the other's value; a recommend
    rule writes ``expect``'s value on the side it flags; an env rule exports ``export`` in
    the side's launch script. ``with_fields``: fields that must agree for this fix to make
    sense (a rotation dtype follows the compute dtype): while another rule reports one of
    them and the same run does not fix it, this fix is left out."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    safety: Literal["safe", "unsafe"]
    mindformers: SideFix | None = None
    megatron: SideFix | None = None
    export: str | None = None
    with_fields: tuple[str, ...] = ()
    # a compare fix copies the kept side's value only when this field of the kept side is
    # true: a MindFormers seed it never applies (seed 0) is no value to copy to Megatron
    copy_only_if: str | None = None

    @model_validator(mode="after")
    def _some(self) -> "FixAction":
        if self.mindformers is None and self.megatron is None and self.export is None:
            raise ValueError("fix_action needs mindformers, megatron or export")
        for side in (self.mindformers, self.megatron):
            if side is None:
                continue
            if side is self.megatron and not all(k.startswith("--") for k in side.keys):
                raise ValueError("megatron keys are flags (--name)")
            if side is self.mindformers and not all(_KEY_PATH.match(k) for k in side.keys):
                raise ValueError("mindformers keys are dotted paths (a.b[1].c)")
        return self


_KEY_PATH = compile_on_use(
    r"^[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?(\.[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?)*$"
)


class RuleBase(TrustedModel):
    """What every rule has, whatever decides it."""

    # validated when the rule files change; a lint reads the validated cache with
    # model_construct, so the validators are built only when they are needed
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: str
    row: str
    severity: Severity
    title: str
    message: str
    rationale: str
    fix: str
    profiles: tuple[str, ...] = ("default", "align")
    # rules that report the same cause more fully: this rule's finding is dropped when one
    # of theirs is reported (a recommendation beside the comparison of the same value)
    superseded_by: tuple[str, ...] = ()
    # extra fields whose locations a finding should point at
    locate: tuple[str, ...] = ()
    sides: tuple[SideName, ...] = ("mindformers", "megatron")
    when: str | None = None
    # how the runtime probe measures this rule's finding (its spec fields, or why not)
    probe: RuleProbe | None = None
    # Alignment advice (what the guide recommends before comparing curves), reported for a
    # pair and with --profile align; a single side at the default profile reports only what
    # is wrong in any run. Recommendations and environment rules are advice by their kind.
    advice: bool = False
    section: str = ""  # filled from the file
    fix_action: FixAction | None = None
    # a finding made of several settings (the learning-rate curve): each part that differs
    # is moved like a compare fix of that field (field -> how each side writes it); the
    # finding is fixed when every part that differs is
    fix_parts: dict[str, FixAction] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _ID.match(v):
            raise ValueError(f"rule id {v!r} must look like ABC123")
        return v

    @field_validator("row")
    @classmethod
    def _row(cls, v: str) -> str:
        sec, _, key = v.partition(".")
        if sec not in ROW_SECTIONS or not re.match(r"^[a-z0-9_]+$", key):
            raise ValueError(f"row {v!r} is not a checklist row key (section.key)")
        return v

    @field_validator("profiles")
    @classmethod
    def _profiles(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [p for p in v if p not in PROFILES]
        if bad:
            raise ValueError(f"unknown profile(s) {bad}; known: {list(PROFILES)}")
        return v

    @field_validator("when")
    @classmethod
    def _when(cls, v: str | None) -> str | None:
        return _expression(v)

    @field_validator("probe")
    @classmethod
    def _probe(cls, v: RuleProbe | None, info: ValidationInfo) -> RuleProbe | None:
        if v is None:
            return v
        if bool(v.knobs) == bool(v.why):
            raise ValueError("probe: give either knobs (the spec fields) or why (not probed)")
        if info.context and info.context.get(FROM_CACHE):
            # the cached set passed this check when the rule files were validated (the
            # entry is tied to their bytes), and nothing but the probe reads the knobs: a
            # lint does not import the probe's spec for it
            return v
        # the spec module imports no framework: safe to read at rule validation
        from cfglint.evidence.probe.spec import Spec

        bad = [k for k in v.knobs if k not in Spec.model_fields]
        if bad:
            raise ValueError(f"probe knob(s) {bad} are not fields of the probe's spec")
        return v

    @model_validator(mode="after")
    def _fields(self) -> "RuleBase":
        fields = set(Config.field_paths())
        bad_side = [x for x in self.locate if ":" in x and x.split(":")[0] not in ("mf", "mg")]
        if bad_side:
            raise ValueError(f"locate entries may be prefixed mf: or mg: only, not {bad_side}")
        named = (getattr(self, "field", None), *(x.rpartition(":")[2] for x in self.locate))
        for f in named:
            if f is not None and f not in fields:
                raise ValueError(f"field {f!r} is not in the normalized model")
        fa = self.fix_action
        if fa is not None:
            kind = getattr(self, "kind", "")
            if kind in ("consistency", "builtin"):
                raise ValueError(f"a {kind} rule has no single value to fix: no fix_action")
            if (fa.export is not None) != (kind == "env"):
                raise ValueError("fix_action.export is for env rules, and env rules need it")
            expect = getattr(self, "expect", None)
            if kind == "recommend" and expect is not None and expect.op not in FIXABLE_OPS:
                raise ValueError(
                    f"a recommend rule's fix writes expect's value: op must be one of {FIXABLE_OPS}"
                )
        return self


def _expression(text: str | None) -> str | None:
    if text:
        try:
            compile_expr(text)
        except ExprError as exc:
            raise ValueError(str(exc)) from None
    return text


class CompareRule(RuleBase):
    """Both sides configure ``field``; the normalized values must agree."""

    kind: Literal["compare"]
    field: str
    # relative tolerance for numeric comparison
    tolerance: float = Field(default=TOLERANCE, ge=0)


class RecommendRule(RuleBase):
    """``field`` on the listed ``sides`` should satisfy ``expect``."""

    kind: Literal["recommend"]
    field: str
    expect: Expect
    advice: bool = True


class ConsistencyRule(RuleBase):
    """``check``, an expression over ``cfg``, must hold on each listed side."""

    kind: Literal["consistency"]
    check: str

    @field_validator("check")
    @classmethod
    def _check(cls, v: str) -> str:
        return _expression(v) or v


class EnvRule(RuleBase):
    """The launch script should export ``env`` satisfying ``expect``."""

    kind: Literal["env"]
    env: str
    expect: Expect
    advice: bool = True
    # the device the launch script targets ("npu", "gpu") or any
    device: Literal["npu", "gpu", "any"] = "any"


class BuiltinRule(RuleBase):
    """A check written in Python: the function under :mod:`cfglint.check.builtins`
    registered with ``@builtin("ID")`` for this rule's id. Everything else about the rule is
    here, in its YAML entry; the loader pairs the two and fails when either is missing."""

    kind: Literal["builtin"]
    # the registered check's ``module.function``: filled in by the loader from the code (so
    # that a lint imports only the modules it runs), never written in a rule file
    check: str = ""
    # evidence the check needs; without it the row is "not checked" and the check's module
    # is never imported
    needs: tuple[Literal["sources"], ...] = ()

    @field_validator("check")
    @classmethod
    def _check(cls, v: str, info: ValidationInfo) -> str:
        if info.context and info.context.get(FROM_CACHE):
            if not v:
                raise ValueError("a cached builtin rule names its check")
            return v
        if v:
            raise ValueError(
                "a builtin rule names no check: its function is registered by the rule's id "
                '(@builtin("ID") under cfglint/check/builtins)'
            )
        return v


Rule = Annotated[
    CompareRule | RecommendRule | ConsistencyRule | EnvRule | BuiltinRule,
    Field(discriminator="kind"),
]
RULE_CLASSES: dict[str, type[RuleBase]] = {
    "compare": CompareRule,
    "recommend": RecommendRule,
    "consistency": ConsistencyRule,
    "env": EnvRule,
    "builtin": BuiltinRule,
}


class RuleFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    section: str
    title: str
    rules: list[Rule]

    @field_validator("section")
    @classmethod
    def _section(cls, v: str) -> str:
        if v not in ROW_SECTIONS:
            raise ValueError(f"unknown section {v!r}")
        return v
