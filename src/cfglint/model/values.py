"""A configuration value together with where it came from.

Every value cfglint reasons about is a :class:`Value`: the effective value, plus its
provenance. A value is written in a file (``loc``), a framework default (``detail``
names the project and version), derived from other values (``inputs``), or unknown
because it cannot be known without running something (``detail`` says why).
"""

# Field annotations are evaluated here, not kept as strings (no `from __future__ import
# annotations`): pydantic turns each string into a typing.ForwardRef, which Python 3.11
# compiles one by one at import (tests/model/test_model_schemas.py).
from enum import StrEnum
from typing import Any

from pydantic import ConfigDict

from cfglint.model.trusted import TrustedModel

# the relative tolerance within which two numbers are the same setting: the default of every
# comparison (compare rules, expectations, ``isclose`` in rule expressions, ``cfglint show``)
TOLERANCE = 1e-6


class Origin(StrEnum):
    FILE = "file"
    DEFAULT = "default"
    DERIVED = "derived"
    UNKNOWN = "unknown"


# Loc and Value are made by the hundred on every lint, from our own loaders' and
# normalizers' typed arguments. They are built with ``model_construct`` (the named
# constructors below, ``Loc.model_construct`` at the call sites) and pydantic's validator is
# built only when something validates one (JSON input, a test): building it, and the plugin
# loader it imports, costs more than all the values of a lint together (see bench/).
# tests/model/test_construct.py checks that every value of the fixture pairs equals its
# validated copy, type for type.
class Loc(TrustedModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    path: str
    line: int
    column: int = 1

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


class Value(TrustedModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    value: Any = None
    origin: Origin
    # The knob as the user knows it: "optimizer.betas[1]", "--adam-beta2", "seed".
    knob: str = ""
    loc: Loc | None = None
    # Further places that shaped the value: the line that defined a shell variable
    # used by a flag, a base_config file that was overridden, ...
    via: tuple[Loc, ...] = ()
    # "default of Megatron-LM core_v0.13.0", "derived from A and B", or why unknown.
    detail: str = ""
    raw: str | None = None
    # MindFormers reads YAML with PyYAML (YAML 1.1); a plain `1e-5` is a string there.
    yaml11_string: bool = False
    # Assigned inside an `if`/`case` branch of a launch script: may or may not apply.
    conditional: bool = False
    # One of several values that sibling branches of an if/case set, whose condition
    # cannot be decided statically (`if [ $MODEL_SIZE = 7B ]` with MODEL_SIZE=$2): the run
    # uses one of them and cfglint cannot tell which. ``alternatives`` holds every
    # branch's value when each is known; empty when a branch leaves the setting out.
    branch_choice: bool = False
    alternatives: tuple["Value", ...] = ()
    inputs: tuple["Value", ...] = ()

    # -- constructors (unvalidated, see above) ------------------------------------------
    # The named constructors below give ``origin`` as a member and build the value in one
    # call of ``model_construct`` (through ``make`` it would be a second frame and a second
    # copy of the keywords, ~400 values a pair lint); only ``via`` may need converting.
    @classmethod
    def make(cls, **fields: Any) -> "Value":
        """A value from trusted fields, with the conversions the validator would make."""
        # a member is kept as it is: Origin(member) is an enum lookup, ~500 a pair lint
        if "origin" in fields and fields["origin"].__class__ is not Origin:
            fields["origin"] = Origin(fields["origin"])
        return cls.model_construct(**_via_tuple(fields))

    @classmethod
    def written(cls, value: Any, knob: str, loc: Loc, **kw: Any) -> "Value":
        if kw:
            _via_tuple(kw)
        return cls.model_construct(value=value, origin=Origin.FILE, knob=knob, loc=loc, **kw)

    @classmethod
    def default(cls, value: Any, knob: str, source: str, **kw: Any) -> "Value":
        if kw:
            _via_tuple(kw)
        return cls.model_construct(
            value=value, origin=Origin.DEFAULT, knob=knob, detail=f"default of {source}", **kw
        )

    @classmethod
    def derived(cls, value: Any, knob: str, how: str, inputs: "list[Value | None]") -> "Value":
        ins = tuple(v for v in inputs if v is not None)
        unknown = [v for v in ins if v.origin is Origin.UNKNOWN]
        if unknown:
            return cls.unknown(
                knob, f"depends on {unknown[0].knob}, which is unknown: {unknown[0].detail}"
            )
        return cls.model_construct(
            value=value,
            origin=Origin.DERIVED,
            knob=knob,
            detail=how,
            inputs=ins,
            conditional=any(v.conditional for v in ins),
            branch_choice=any(v.branch_choice for v in ins),
        )

    @classmethod
    def unknown(cls, knob: str, why: str, loc: Loc | None = None, **kw: Any) -> "Value":
        if kw:
            _via_tuple(kw)
        return cls.model_construct(
            value=None, origin=Origin.UNKNOWN, knob=knob, detail=why, loc=loc, **kw
        )

    # -- queries ----------------------------------------------------------------------
    @property
    def known(self) -> bool:
        return self.origin is not Origin.UNKNOWN

    def locations(self, with_via: bool = True) -> list[Loc]:
        """Every file position behind this value (its own, then its inputs'). Without
        ``via``: only where values were typed, which is where a fix goes."""
        out: list[Loc] = []
        if self.loc is not None:
            out.append(self.loc)
        if with_via:
            out.extend(self.via)
        for v in self.inputs:
            for loc in v.locations(with_via):
                if loc not in out:
                    out.append(loc)
        return out

    def where(self) -> str:
        """Human wording of the provenance, for messages."""
        if self.origin is Origin.FILE and self.loc is not None:
            text = f"{self.knob} at {self.loc}" if self.knob else str(self.loc)
            if self.via:
                text += " (via " + ", ".join(str(v) for v in self.via) + ")"
            if self.branch_choice:
                text += ", " + self.choice_note()
            elif self.conditional:
                text += ", inside a conditional branch"
            return text
        if self.origin is Origin.DEFAULT:
            return f"{self.detail}, {self.knob} not set" if self.knob else self.detail
        if self.origin is Origin.DERIVED:
            parts = []
            for v in self.inputs:
                parts.append(f"{v.knob}={fmt(v.value)} ({v.short_where()})")
            return f"{self.detail}: " + ", ".join(parts) if parts else self.detail
        return f"unknown: {self.detail}"

    def choice_note(self) -> str:
        """How a branch-chosen value depends on the branch the script takes."""
        if self.alternatives:
            alts = ", ".join(
                f"{fmt(a.value)} (line {a.loc.line})" if a.loc else fmt(a.value)
                for a in self.alternatives
            )
            return f"one of the branch values {alts}; which one runs is not known statically"
        return (
            "set in one branch of an if/case that is not decided statically"
            " (another branch sets something else or nothing)"
        )

    def brief(self) -> str:
        """Compact provenance for tables: ``file:line`` / the default / the derivation."""
        import os

        def at(loc: Loc) -> str:
            return f"{os.path.basename(loc.path)}:{loc.line}"

        if self.origin is Origin.FILE and self.loc is not None:
            text = f"{self.knob} @ {at(self.loc)}" if self.knob else at(self.loc)
            return f"{text}; {self.choice_note()}" if self.branch_choice else text
        if self.origin is Origin.DERIVED:
            locs = ", ".join(at(loc) for loc in self.locations()[:3])
            return f"{self.detail} ({locs})" if locs else self.detail
        return self.detail

    def short_where(self) -> str:
        if self.loc is not None:
            return str(self.loc)
        if self.origin is Origin.DEFAULT:
            return self.detail
        if self.origin is Origin.DERIVED:
            return "derived"
        return "unknown"


def _via_tuple(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with ``via`` a tuple, as the validator makes it (callers pass lists)."""
    if "via" in fields:
        fields["via"] = tuple(fields["via"])
    return fields


def fmt(v: Any) -> str:
    """Compact rendering for messages: floats without noise, bools lower-case."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}"
    if v is None:
        return "none"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v)
