"""Rule files: the declarative schema, validated when loaded.

One YAML file per checklist section under ``rules/``. Each rule names exactly one
checklist row (``section.key``) and says how it is decided; the engine in
:mod:`cfglint.check.engine` is generic over these kinds:

``compare``      both sides configure ``field``; the normalized values must agree
``recommend``    ``field`` on the listed ``sides`` should satisfy ``expect``
``consistency``  ``check`` (an expression over ``cfg``) must hold on each listed side
``env``          the launch script should export ``env`` satisfying ``expect``
``builtin``      a named check in :mod:`cfglint.check.builtins.core` (learning-rate curves, source
                 scan results, data files, ...) for what one comparison cannot express
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cfglint.check.expr import ExprError, compile_expr
from cfglint.model.config import SECTIONS, Config
from cfglint.model.findings import SECTION_ORDER, Severity

RuleKind = Literal["compare", "recommend", "consistency", "env", "builtin"]
SideName = Literal["mindformers", "megatron"]
PROFILES = ("default", "align")
ROW_SECTIONS = SECTION_ORDER
_ID = re.compile(r"^[A-Z]{2,4}[0-9]{3}$")


class RuleFileError(Exception):
    pass


class Expect(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Literal["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "truthy", "falsy", "set"]
    value: Any = None

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
                return _equal(a, b)
            if self.op == "ne":
                return not _equal(a, b)
            return {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[self.op]
        except TypeError:
            return False

    def describe(self) -> str:
        from cfglint.model.values import fmt

        words = {
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
        if self.op in ("in", "not_in"):
            vals = ", ".join(fmt(x) for x in self.value)
            return ("one of " if self.op == "in" else "none of ") + vals
        if self.op in ("truthy", "falsy", "set"):
            return words[self.op]
        return words[self.op] + fmt(self.value)


def _norm(v: Any) -> Any:
    return v.lower() if isinstance(v, str) else v


def _equal(a: Any, b: Any, rel: float = 1e-6) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= rel * max(abs(a), abs(b)) or a == b
    return a == b


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    row: str
    severity: Severity
    title: str
    kind: RuleKind
    message: str
    rationale: str
    fix: str
    profiles: tuple[str, ...] = ("default", "align")
    field: str | None = None
    # extra fields whose locations a finding should point at
    locate: tuple[str, ...] = ()
    sides: tuple[SideName, ...] = ("mindformers", "megatron")
    expect: Expect | None = None
    when: str | None = None
    check: str | None = None
    env: str | None = None
    # relative tolerance for numeric comparison
    tolerance: float = Field(default=1e-6, ge=0)
    # only for `env`: the device the launch script targets ("npu", "gpu") or any
    device: Literal["npu", "gpu", "any"] = "any"
    section: str = ""  # filled from the file

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

    @model_validator(mode="after")
    def _shape(self) -> Rule:
        fields = set(Config.field_paths())
        bad_side = [x for x in self.locate if ":" in x and x.split(":")[0] not in ("mf", "mg")]
        if bad_side:
            raise ValueError(f"locate entries may be prefixed mf: or mg: only, not {bad_side}")
        for f in (self.field, *(x.rpartition(":")[2] for x in self.locate)):
            if f is not None and f not in fields:
                raise ValueError(f"field {f!r} is not in the normalized model")
        need = {
            "compare": ["field"],
            "recommend": ["field", "expect"],
            "consistency": ["check"],
            "env": ["env", "expect"],
            "builtin": ["check"],
        }[self.kind]
        missing = [n for n in need if getattr(self, n) in (None, "")]
        if missing:
            raise ValueError(f"kind {self.kind!r} needs {', '.join(missing)}")
        for text in (self.when, self.check if self.kind == "consistency" else None):
            if text:
                try:
                    compile_expr(text)
                except ExprError as exc:
                    raise ValueError(str(exc)) from None
        if self.kind == "builtin":
            from cfglint.check.builtins.core import BUILTINS

            if self.check not in BUILTINS:
                raise ValueError(f"no builtin check named {self.check!r}")
        return self


class RuleFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    section: str
    title: str
    rules: list[Rule]

    @field_validator("section")
    @classmethod
    def _section(cls, v: str) -> str:
        if v not in ROW_SECTIONS:
            raise ValueError(f"unknown section {v!r}")
        return v


def rules_dir() -> Path:
    env = os.environ.get("CFGLINT_RULES_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent  # the cfglint package
    packaged = here / "rules"  # wheel: rules/ is force-included into the package
    if packaged.is_dir():
        return packaged
    return here.parent.parent / "rules"  # source checkout / editable install


@cache
def load_rules(directory: str | None = None) -> tuple[Rule, ...]:
    """All rules, validated. Validation runs whenever the rule files (or cfglint) change;
    the validated result is cached so that every other run skips it."""
    d = Path(directory) if directory else rules_dir()
    files = sorted(d.glob("*.yaml"))
    if not files:
        raise RuleFileError(f"no rule files found in {d}")
    cached = _validated_cache(files)
    hit = _read_cache(cached)
    if hit is not None:
        return hit
    rules = _validate(files)
    _write_cache(cached, rules)
    return rules


def _validated_cache(files: list[Path]) -> Path:
    import hashlib

    from cfglint import __version__
    from cfglint.load.datacache import cache_dir

    h = hashlib.sha256(__version__.encode())
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return cache_dir() / "rules" / f"rules-{h.hexdigest()[:32]}.json"


def _read_cache(path: Path) -> tuple[Rule, ...] | None:
    from cfglint.load.datacache import read_json

    data = read_json(path)
    if not isinstance(data, list):
        return None
    out = []
    for d in data:
        if d.get("expect") is not None:
            d["expect"] = Expect.model_construct(**d["expect"])
        for k in ("profiles", "locate", "sides"):
            d[k] = tuple(d[k])
        out.append(Rule.model_construct(**d))  # validated when the cache was written
    return tuple(out)


def _write_cache(path: Path, rules: tuple[Rule, ...]) -> None:
    from cfglint.load.datacache import write_json

    write_json(path, [r.model_dump() for r in rules])


def _validate(files: list[Path]) -> tuple[Rule, ...]:
    from cfglint.load.datacache import load_data

    out: list[Rule] = []
    seen: dict[str, str] = {}
    for f in files:
        try:
            data = load_data(f)
        except ValueError as exc:
            raise RuleFileError(str(exc)) from None
        try:
            rf = RuleFile.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise RuleFileError(f"{f}: {loc}: {first['msg']}") from None
        for r in rf.rules:
            if r.id in seen:
                raise RuleFileError(f"{f}: rule id {r.id} already used in {seen[r.id]}")
            if r.row.split(".")[0] != rf.section:
                raise RuleFileError(f"{f}: rule {r.id} row {r.row} is not in section {rf.section}")
            seen[r.id] = str(f)
            out.append(r.model_copy(update={"section": rf.title}))
    return tuple(out)


def section_titles(directory: str | None = None) -> dict[str, str]:
    rules = load_rules(directory) if directory else load_rules()
    return {r.row.split(".")[0]: r.section for r in rules}


__all__ = ["PROFILES", "SECTIONS", "Expect", "Rule", "RuleFileError", "load_rules"]
