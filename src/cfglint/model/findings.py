"""What a rule reports."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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


class Finding(BaseModel):
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

    def sort_key(self) -> tuple:
        loc = self.locations[0] if self.locations else None
        return (
            -SEVERITY_RANK[self.severity],
            self.row,
            self.rule,
            loc.path if loc else "",
            loc.line if loc else 0,
        )


class InputProblem(BaseModel):
    """An input error (or a warning about an input) as it appears in reports."""

    model_config = _DEFERRED

    path: str
    message: str
    line: int | None = None
    level: Literal["error", "warning", "note"] = "error"


class InputRef(BaseModel):
    model_config = _DEFERRED

    path: str
    # "launch": the MindFormers side's own launch script (msrun), read with its config
    kind: Literal["mindformers", "megatron", "source", "launch"]


class Report(BaseModel):
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
