"""Loading the rule files: validated once per change of the files, cached after that."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from cfglint.check.registry import exists
from cfglint.check.schema import PROFILES, RULE_CLASSES, Expect, FixAction, Rule, RuleFile, SideFix


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
        if d.get("fix_action") is not None:
            d["fix_action"] = _fix_action(d["fix_action"])
        out.append(
            RULE_CLASSES[d["kind"]].model_construct(**d)
        )  # validated when the cache was written
    return tuple(out)


def _fix_action(d: dict) -> FixAction:
    for side in ("mindformers", "megatron"):
        if d.get(side) is not None:
            d[side] = SideFix.model_construct(**{**d[side], "keys": tuple(d[side]["keys"])})
    return FixAction.model_construct(**d)


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
            raise RuleFileError(f"{f}: {_where(exc, data)}") from None
        for r in rf.rules:
            if r.kind == "builtin" and not exists(r.check):
                raise RuleFileError(
                    f"{f}: rule {r.id}: no builtin check named {r.check!r} "
                    "(module.function under cfglint/check/builtins)"
                )
            if r.id in seen:
                raise RuleFileError(f"{f}: rule id {r.id} already used in {seen[r.id]}")
            if r.row.split(".")[0] != rf.section:
                raise RuleFileError(f"{f}: rule {r.id} row {r.row} is not in section {rf.section}")
            seen[r.id] = str(f)
            out.append(r.model_copy(update={"section": rf.title}))
    return tuple(out)


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
