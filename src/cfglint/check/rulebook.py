"""Loading the rule files: validated once per change of the files, cached after that.

Validation uses the rule schema (:mod:`cfglint.check.schema`); the rules a lint runs are
:mod:`cfglint.check.rule`'s records, built from the validated data. A lint that finds the
ready rule set an install ships (or a cached validation) never imports the schema."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cfglint.check.registry import declared, implementations
from cfglint.check.rule import PROFILES, Rule
from cfglint.load import datacache
from cfglint.load.datacache import cache_dir, content_key, read_entry, write_entry
from cfglint.load.datayaml import read_ready_rule_set, rules_ready_name

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic import TypeAdapter, ValidationError

    from cfglint.check.schema import Rule as ValidatedRule


class RuleFileError(Exception):
    pass


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
    """All rules, validated. The rule files' validation (expressions, each builtin rule's
    one registered check, unique ids) runs whenever they (or cfglint) change; its result
    is cached, tied to the files' bytes, and re-validated against the rule schema when
    read back (issue 20: a planted entry must never silence a rule)."""
    d = Path(directory) if directory else rules_dir()
    files = sorted(d.glob("*.yaml"))
    if not files:
        raise RuleFileError(f"no rule files found in {d}")
    if directory is None and not os.environ.get("CFGLINT_RULES_DIR"):
        ready = _ready_rules(files)
        if ready is not None:
            return ready
    # cfglint's own rule set must hold a rule for every registered check; a folder given
    # by name (a test's few rules) need not
    complete = directory is None
    key = _rules_key(files, complete)
    cached = _cache_path(key)
    hit = read_entry(cached, "rules", key, _parse_cached)
    if hit is not None:
        return hit
    validated = _with_checks(_validate(files), complete)
    write_entry(cached, "rules", key, _rules_adapter().dump_json(list(validated)).decode())
    return as_records(validated)


@cache
def _rules_adapter() -> TypeAdapter[list[ValidatedRule]]:
    # built when a rule set is validated or read back from the cache, never for a ready set
    # (nor is pydantic's type_adapter module, nor the rule schema, imported for one)
    from pydantic import TypeAdapter

    from cfglint.check.schema import Rule as Validated

    return TypeAdapter(list[Validated])


def as_records(validated: Sequence[ValidatedRule]) -> tuple[Rule, ...]:
    """The records a lint runs of validated rules: built from their JSON form, as those of
    a cached validation are (tests/check/test_ready_rules.py compares them with those of a
    ready set)."""
    return _records(_rules_adapter().dump_python(list(validated), mode="json"))


def _records(payload: Any) -> tuple[Rule, ...]:
    """The records of validated rules' JSON form (each holds its section and check); an
    empty set is never a valid rule set (the rule files hold rules, or loading fails)."""
    if not payload:
        raise ValueError("no rules")
    return tuple(Rule.from_data(data) for data in payload)


def _ready_rules(files: list[Path]) -> tuple[Rule, ...] | None:
    """The rules of the ready rule set an install ships (hatch_build.py), built without a
    validator; None when there is none for these rule files (one was edited, added or
    removed since the build) or its content does not match the hash it carries (damaged
    after the build): the rule files are then validated as before."""
    raws = [(f.name, f.read_bytes()) for f in files]
    path = datacache.DATA_DIR / datacache.READY / f"{rules_ready_name(raws)}.json"
    try:
        doc = read_ready_rule_set(path.read_bytes()) if path.is_file() else None
        if not isinstance(doc, dict):
            return None
        names = [name for name, _ in doc["files"]]
        if names != [name for name, _ in raws]:
            return None
        checks = declared()
        rules = [
            _ready_rule(r, data["title"], checks) for _, data in doc["files"] for r in data["rules"]
        ]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return tuple(rules) or None


def _ready_rule(data: dict[str, Any], title: str, checks: dict[str, list[str]]) -> Rule:
    """A ready set's rule; a builtin rule with its check, read from the builtin modules'
    source (a lint imports only the modules it runs): KeyError when it has none or several
    (validation then reports it)."""
    if data["kind"] != "builtin":
        return Rule.from_data(data, section=title)
    names = checks.get(data["id"], [])
    if len(names) != 1:
        raise KeyError(data["id"])
    return Rule.from_data(data, section=title, check=names[0])


def _rules_key(files: list[Path], complete: bool) -> str:
    chunks = [f.name.encode() + b"\0" + f.read_bytes() for f in files]
    return content_key(b"complete" if complete else b"partial", *chunks)


def _cache_path(key: str) -> Path:
    return cache_dir() / "rules" / f"rules-{key[:32]}.json"


def _parse_cached(payload: object) -> tuple[Rule, ...]:
    """The cached rule set, validated like the rule files are (same schema): the records
    are built from what validation gives, never from the entry as read."""
    from cfglint.check.schema import FROM_CACHE

    return as_records(_rules_adapter().validate_python(payload, context={FROM_CACHE: True}))


def _validate(files: list[Path]) -> tuple[ValidatedRule, ...]:
    from pydantic import ValidationError

    from cfglint.check.schema import RuleFile
    from cfglint.load.datacache import load_data

    out: list[ValidatedRule] = []
    seen: dict[str, str] = {}
    for f in files:
        try:
            data = load_data(f)
        except ValueError as exc:
            raise RuleFileError(str(exc)) from None
        try:
            rf = RuleFile.model_validate(data)
        except ValidationError as exc:
            raise RuleFileError(f"{f}: {_where(exc, data)}") from None
        for r in rf.rules:
            if r.id in seen:
                raise RuleFileError(f"{f}: rule id {r.id} already used in {seen[r.id]}")
            if r.row.split(".")[0] != rf.section:
                raise RuleFileError(f"{f}: rule {r.id} row {r.row} is not in section {rf.section}")
            seen[r.id] = str(f)
            out.append(r.model_copy(update={"section": rf.title}))
    for r in out:
        unknown = [x for x in r.superseded_by if x not in seen]
        if unknown:
            raise RuleFileError(f"{seen[r.id]}: rule {r.id}: superseded_by names no rule {unknown}")
    return tuple(out)


def _with_checks(rules: tuple[ValidatedRule, ...], complete: bool) -> tuple[ValidatedRule, ...]:
    """Each builtin rule with the one check registered for its id; a RuleFileError when a
    builtin rule has none or several, or (``complete``) a registered check has no rule."""
    impls = implementations()
    out: list[ValidatedRule] = []
    for r in rules:
        if r.kind == "builtin":
            names = impls.get(r.id, [])
            if len(names) != 1:
                raise RuleFileError(
                    f"builtin rule {r.id}: {len(names)} checks registered for it "
                    f'{names} (one function marked @builtin("{r.id}") under '
                    "cfglint/check/builtins is needed)"
                )
            r = r.model_copy(update={"check": names[0]})
        out.append(r)
    if complete:
        builtin_ids = {r.id for r in rules if r.kind == "builtin"}
        orphans = sorted(
            f"{n} ({rid})" for rid, ns in impls.items() if rid not in builtin_ids for n in ns
        )
        if orphans:
            raise RuleFileError(f"checks registered for no builtin rule: {', '.join(orphans)}")
        _check_named_rows(rules)
    return tuple(out)


def named_rows() -> tuple[str, ...]:
    """The checklist rows the code names: the migration standard's measurements and the
    accuracy guide's causes of a gap (a name ending in "." is a whole section)."""
    from cfglint.evidence.runs import guide
    from cfglint.model import standard

    return (
        *standard.ROWS,
        *guide.OPTIMIZER_AND_PRECISION,
        *guide.DATA_AND_OVERFLOW,
        *guide.LR,
        *guide.EARLY,
    )


def _check_named_rows(rules: tuple[ValidatedRule, ...]) -> None:
    """A row the code names must be some rule's row: a renamed row fails the load instead
    of silently matching nothing."""
    rows = {r.row for r in rules}
    sections = {row.split(".")[0] + "." for row in rows}
    missing = sorted({n for n in named_rows() if n not in rows and n not in sections})
    if missing:
        raise RuleFileError(f"rows named in cfglint's code have no rule: {', '.join(missing)}")


def _where(exc: ValidationError, data: object) -> str:
    """The first problem, named by rule id and kind where it sits inside one rule."""
    first = exc.errors()[0]
    loc = list(first["loc"])
    if len(loc) >= 3 and loc[0] == "rules" and isinstance(loc[1], int) and isinstance(data, dict):
        rule = data["rules"][loc[1]]
        rid = rule.get("id", f"#{loc[1] + 1}") if isinstance(rule, dict) else f"#{loc[1] + 1}"
        rest = ".".join(str(p) for p in loc[3:]) or str(loc[2])
        return f"rule {rid} (kind {loc[2]}): {rest}: {first['msg']}"
    return f"{'.'.join(str(p) for p in loc)}: {first['msg']}"


def section_titles(directory: str | None = None) -> dict[str, str]:
    rules = load_rules(directory) if directory else load_rules()
    return {r.row.split(".")[0]: r.section for r in rules}


__all__ = ["PROFILES", "Rule", "RuleFileError", "load_rules", "section_titles"]
