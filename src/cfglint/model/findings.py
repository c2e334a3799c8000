"""What a rule reports."""

# Field annotations are evaluated here, not kept as strings (no `from __future__ import
# annotations`): pydantic turns each string into a typing.ForwardRef, which Python 3.11
# compiles one by one at import (tests/model/test_model_schemas.py).
from typing import Any, Literal

from pydantic import ConfigDict, Field

from cfglint.model.trusted import TrustedModel
from cfglint.model.values import Loc

Severity = Literal["error", "warning", "note"]
# the checklist's sections, in the order reports list them
SECTION_ORDER = (
    "structure",
    "moe",
    "optimizer",
    "weight",
    "precision",
    "parallel",
    "other",
    "alignment",
    "determinism",
    "source",
    "standard",
)
SEVERITY_RANK: dict[str, int] = {"note": 0, "warning": 1, "error": 2}
# what --fail-on accepts: a severity, or never
FAIL_ON = (*sorted(SEVERITY_RANK, key=SEVERITY_RANK.__getitem__, reverse=True), "never")
LocSide = Literal["mindformers", "megatron", "source"]

# Findings and reports are assembled by our own engine and pipeline from typed fields, so
# they are built with ``model_construct``; pydantic's validator (and the plugin loader it
# imports) is built only when something validates one. Serializing one (JSON, SARIF) builds
# the schema, which a plain text lint never needs (see bench/ and the note in values.py).
_DEFERRED = ConfigDict(defer_build=True)


class Location(Loc):
    """A position (:class:`~cfglint.model.values.Loc`) on one side of a finding."""

    side: LocSide
    # a stand-in position (the file's first line) for a setting that is not written
    anchor: bool = Field(default=False, exclude=True)


class RuleProbe(TrustedModel):
    """How the runtime probe measures a rule's finding (the ``probe:`` block of a rule):
    the probe's spec fields that express the rule, or why the probe cannot measure it.
    A rule is confirmed only by its own knobs."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    knobs: tuple[str, ...] = ()
    why: str = ""


class Finding(TrustedModel):
    model_config = _DEFERRED

    rule: str
    row: str
    severity: Severity
    message: str
    # {"mindformers": 0.95, "megatron": 0.999}; only the sides that have a value
    values: dict[str, Any] = Field(default_factory=dict)
    # first location is the primary one (where the fix goes)
    locations: list[Location] = Field(default_factory=list)
    # long-form explanation and fix, from the rule; kept out of JSON findings
    rationale: str = Field(default="", exclude=True)
    fix: str = Field(default="", exclude=True)
    # the rule's probe block: what the runtime probe aligns to measure this finding
    probe: RuleProbe | None = Field(default=None, exclude=True)

    def sort_key(self) -> tuple:
        loc = self.locations[0] if self.locations else None
        return (
            -SEVERITY_RANK[self.severity],
            self.row,
            self.rule,
            loc.path if loc else "",
            loc.line if loc else 0,
        )


class InputProblem(TrustedModel):
    """An input error (or a warning about an input) as it appears in reports."""

    model_config = _DEFERRED

    path: str
    message: str
    line: int | None = None
    level: Literal["error", "warning", "note"] = "error"


class InputRef(TrustedModel):
    model_config = _DEFERRED

    path: str
    # "launch": the MindFormers side's own launch script (msrun), read with its config
    kind: Literal["mindformers", "megatron", "source", "launch"]


class Report(TrustedModel):
    model_config = _DEFERRED

    inputs: list[InputRef] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    errors: list[InputProblem] = Field(default_factory=list)
    warnings: list[InputProblem] = Field(default_factory=list)
    # (row, reason) for rows that could not be decided from what was given
    not_checked: list[tuple[str, str]] = Field(default_factory=list)
    suppressed: int = 0
    # files given or found that are not training inputs, each with what it was taken for
    skipped: list[InputProblem] = Field(default_factory=list)
    # the runtime probe's result (--probe, ``cfglint probe``): every format renders it
    probe: dict[str, Any] | None = None
