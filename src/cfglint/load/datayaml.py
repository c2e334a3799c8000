"""Our own YAML tables (src/cfglint/data/, rules/) as plain data, and their ready-made JSON.

This module imports no more than PyYAML: the package build (hatch_build.py) loads it to
write every table as JSON into the wheel (``cfglint/data/_ready/``), so an installed cfglint
reads JSON from its first run, with an empty cache (a fresh CI runner, a pre-commit or
GitHub Action run). A source checkout parses the YAML once and caches it (load/datacache.py).
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

# the wheel's folder (under cfglint/data/) of ready-made tables, one per YAML file, named by
# a checksum of the YAML's bytes: a table that changed after the build is simply not found
READY = "_ready"


# A ready file's name says which bytes it was built from: their CRC-32 and length. It tells
# a table edited after the build from the one the build read (a change that keeps both
# passes one time in 2**32); it guards against nothing more, and needs to: whoever can
# rewrite a table in the installed package can rewrite its ready file beside it. A
# cryptographic hash bought nothing here and cost ~28 instructions a byte under callgrind
# (~2 ms CPU), for the ~1.5 MB of tables a pair lint names (bench/results/fresh_env.md).
def ready_name(raw: bytes) -> str:
    return f"{zlib.crc32(raw):08x}-{len(raw):x}"


def _files_hash(tag: bytes, files: list[tuple[str, bytes]]) -> str:
    """The checksum of named files (each name and its bytes, length-prefixed so that no two
    lists of files sum alike), under ``tag`` so that two kinds of ready file never share one."""
    crc, size = zlib.crc32(tag + b"\0"), 0
    for name, raw in files:
        for chunk in (name.encode(), raw):
            crc = zlib.crc32(chunk, zlib.crc32(len(chunk).to_bytes(8, "little"), crc))
            size += len(chunk)
    return f"{crc:08x}-{size:x}"


def dialect_index_name(tables: list[tuple[str, bytes]]) -> str:
    """The ready name of the dialect index: a hash of every dialect table's name and bytes
    (``(stem, YAML bytes)``), so an index built before any of them changed is not found."""
    return "dialects-" + _files_hash(b"dialect-index", tables)


def rules_ready_name(files: list[tuple[str, bytes]]) -> str:
    """The ready name of the rule set: a hash of every rule file's name and bytes, so a set
    built before any of them changed (or one was added or removed) is not found."""
    return "rules-" + _files_hash(b"rule-set", files)


def ready_rule_set(files: Any) -> bytes:
    """The ready rule set's bytes (``files``: each rule file's name and plain data): the
    checksum of its JSON (:func:`ready_name`), a newline, the JSON. Reading it back sums the
    bytes read, so a set damaged after the build is found without encoding every rule again
    (issue 29). A checksum, as for a ready name: a sha256 of the ~130 KB cost ~3.3 M
    instructions a lint and guarded against nothing more (whoever can rewrite the set in
    the installed package can rewrite its hash too)."""
    body = json.dumps({"files": files}).encode()
    return ready_name(body).encode() + b"\n" + body


def read_ready_rule_set(raw: bytes) -> Any:
    """The content of a ready rule set's bytes; ValueError when they no longer match the
    checksum they carry (damaged after the build)."""
    digest, _, body = raw.partition(b"\n")
    if ready_name(body).encode() != digest:
        raise ValueError("the ready rule set does not match its checksum")
    return json.loads(body)


def flag_table_name(raw: bytes) -> str:
    """The ready name of an argument table's flag table (:func:`flag_table`): the table's
    YAML hash, so one built before the table changed is not found."""
    return "flags-" + ready_name(raw)


def flag_table(data: Any) -> Any:
    """An argument table with its argument lists (``args``, ``base_args``, ...) cut to
    their flag names: one entry per ``from`` and ``scope`` (what says which layer registers
    a flag), holding its entries' flags with a ``boolean_optional`` action's ``--no-`` forms.
    Detecting a launch's dialect asks several tables their flag names and reads one table
    whole. None for a file that is not an argument table."""
    if not isinstance(data, dict) or not any(
        k.endswith("args") and isinstance(v, list) for k, v in data.items()
    ):
        return None
    return {
        k: _flag_groups(v) if k.endswith("args") and isinstance(v, list) else v
        for k, v in data.items()
    }


def _flag_groups(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[Any, Any], dict[str, Any]] = {}
    for e in entries:
        key = (json.dumps(e.get("from")), json.dumps(e.get("scope")))  # a list names several
        if key not in groups:
            groups[key] = {"flags": [], **{k: e[k] for k in ("from", "scope") if k in e}}
        groups[key]["flags"] += e["flags"]
        if e.get("action", "store") == "boolean_optional":
            groups[key]["flags"] += ["--no-" + f[2:] for f in e["flags"]]
    return list(groups.values())


def dialect_index(tables: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each table of data/dialects/ by its stem, without its argument lists (``args``,
    ``base_args``, ...): what telling a Megatron table from a dialect and scoring a launch
    against each dialect's ``detect`` signs ask, without reading every dialect's ~800
    arguments (a plain Megatron-LM launch needs none of them)."""
    return {
        stem: {k: v for k, v in data.items() if not k.endswith("args")}
        for stem, data in sorted(tables.items())
    }


# YAML 1.2's core schema, for the scalars PyYAML (YAML 1.1) resolves otherwise: `1e-5` is a
# float and `yes`/`on`/`010` are not booleans or octal. Our data files are YAML 1.2 (unlike
# user configs, which MindFormers reads as 1.1); tests/load/test_datacache.py checks that
# every shipped table reads the same here as with ruamel (a YAML 1.2 parser).
_CORE_RESOLVERS: tuple[tuple[str, str, list[str | None]], ...] = (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^[-+]?[0-9]+$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
    # None: the empty scalar
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", [*"~nN", None]),
)


def _data_loader() -> Any:
    """PyYAML's libyaml loader (C: ten times ruamel's pure-Python one, which is what an empty
    cache paid at start-up) with the YAML 1.2 core schema's implicit types."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class CoreSchemaLoader(base):  # type: ignore[misc,valid-type]
        yaml_implicit_resolvers: dict[Any, list[tuple[str, Any]]] = {}  # noqa: RUF012

    for tag, pattern, first in _CORE_RESOLVERS:
        CoreSchemaLoader.add_implicit_resolver(tag, re.compile(pattern), first)
    # decimal, whatever the leading zeros (YAML 1.1 reads `010` as octal)
    CoreSchemaLoader.add_constructor(
        "tag:yaml.org,2002:int", lambda loader, node: int(loader.construct_scalar(node), 10)
    )
    return CoreSchemaLoader


def parse_data_yaml(raw: bytes, name: str) -> Any:
    import yaml

    try:
        return yaml.load(raw.decode("utf-8"), Loader=_data_loader())
    except yaml.YAMLError as exc:
        raise ValueError(f"{name}: {' '.join(str(exc).split())}") from None
