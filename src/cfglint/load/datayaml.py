"""Our own YAML tables (src/cfglint/data/, rules/) as plain data, and their ready-made JSON.

This module imports no more than PyYAML: the package build (hatch_build.py) loads it to
write every table as JSON into the wheel (``cfglint/data/_ready/``), so an installed cfglint
reads JSON from its first run, with an empty cache (a fresh CI runner, a pre-commit or
GitHub Action run). A source checkout parses the YAML once and caches it (load/datacache.py).
"""

from __future__ import annotations

import itertools
import json
import re
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

# the wheel's folder (under cfglint/data/) of ready-made tables, one per YAML file, named by
# a checksum of the YAML's bytes: a table that changed after the build is simply not found
READY = "_ready"
# what begins the ready names of an argument table's flag table and argument index (each
# followed by the table's ready_name)
FLAGS = "flags-"
INDEXED = "indexed-"
# ... and of a table whose mappings of records are decoded a record at a time (keyed_table)
KEYED = "keyed-"


# A ready file's name says which bytes it was built from: their CRC-32 and length. It tells
# a table edited after the build from the one the build read (a change that keeps both
# passes one time in 2**32); it guards against nothing more, and needs to: whoever can
# rewrite a table in the installed package can rewrite its ready file beside it. A
# cryptographic hash bought nothing here and cost ~28 instructions a byte under callgrind
# (~2 ms CPU), for the ~1.5 MB of tables a pair lint names (bench/results/fresh_env.md).
def ready_name(raw: bytes | memoryview) -> str:
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
    return sealed(json.dumps({"files": files}).encode())


def read_ready_rule_set(raw: bytes) -> Any:
    """The content of a ready rule set's bytes; ValueError when they no longer match the
    checksum they carry (damaged after the build)."""
    return json.loads(raw[unsealed_at(raw, "the ready rule set") :])


def sealed(payload: bytes) -> bytes:
    """A ready file's bytes: the checksum of ``payload`` (:func:`ready_name`), a newline,
    ``payload``; read back with :func:`unsealed_at`."""
    return ready_name(payload).encode() + b"\n" + payload


def unsealed_at(raw: bytes, what: str) -> int:
    """Where a :func:`sealed` file's payload starts; ValueError naming ``what`` when the
    payload no longer matches its checksum (damaged after the build)."""
    at = raw.index(b"\n") + 1
    if ready_name(memoryview(raw)[at:]).encode() != raw[: at - 1]:
        raise ValueError(f"{what} does not match its checksum")
    return at


def flag_table_name(raw: bytes) -> str:
    """The ready name of an argument table's flag table (:func:`flag_table`): the table's
    YAML hash, so one built before the table changed is not found."""
    return FLAGS + ready_name(raw)


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
        groups[key]["flags"] += accepted_flags(e)
    return list(groups.values())


def accepted_flags(entry: dict[str, Any]) -> list[str]:
    """The flags an argument entry registers: its own, then a ``boolean_optional`` action's
    ``--no-`` forms (argparse's BooleanOptionalAction)."""
    flags: list[str] = entry["flags"]
    if entry.get("action", "store") == "boolean_optional":
        return flags + ["--no-" + f[2:] for f in flags]
    return flags


def indexed_table_name(raw: bytes) -> str:
    """The ready name of an argument table's index (:func:`indexed_table`): the table's
    YAML checksum, so one built before the table changed is not found."""
    return INDEXED + ready_name(raw)


# between two flags, entry numbers or dests on an index line
_SEP = " "
# an entry's end in the index's entry text: this many hex digits (up to 4 GiB)
_END_DIGITS = 8


class ArgList:
    """An argument list of an indexed table: ``flags[k]`` is registered by entry
    ``owners[k]`` (each entry's :func:`accepted_flags`, in order), entry ``i`` sets
    ``dests[i]``, and its table entry is decoded from the list's JSON text when
    :meth:`entry` asks for it."""

    __slots__ = ("dests", "ends", "flags", "owners", "start", "text")

    def __init__(
        self,
        flags: list[str],
        owners: list[int],
        dests: list[str],
        ends: str,
        text: bytes,
        start: int = 0,
    ) -> None:
        self.flags = flags
        self.owners = owners
        self.dests = dests
        # each entry's end, from ``start`` in ``text`` (_END_DIGITS hex digits each)
        self.ends = ends
        self.text = text
        self.start = start

    def __len__(self) -> int:
        return len(self.dests)

    def entry(self, i: int) -> Any:
        """Entry ``i``'s dict (its table entry), decoded now."""
        return _decode(self.text, self.start, self.ends, i)

    def by_flag(self, first: int) -> dict[str, int]:
        """Each flag's entry, counted from ``first``; a later entry's flag replaces an
        earlier one's, in the earlier one's place (as argparse's conflict resolution)."""
        owners = map(first.__add__, self.owners) if first else self.owners
        return dict(zip(self.flags, owners, strict=True))

    def by_dest(self, first: int) -> dict[str, int]:
        """Each dest's entry, counted from ``first`` (the later of two, as by_flag)."""
        return dict(zip(self.dests, range(first, first + len(self.dests)), strict=True))


def indexed_table(data: Any) -> bytes | None:
    """An argument table indexed for a lint that builds few of its arguments (issue 29: a
    pair lint built ~120 of the ~800 a Megatron-LM table registers, and decoding every
    entry, then indexing each in Python, was ~12 M instructions). Its lines: a checksum of
    the rest (as the ready rule set's); the table without its argument lists, with each
    list's length; for each list the flags its entries register, the entry of each, their
    dests and where each entry's JSON ends; then each list's entries' JSON. Reading it
    decodes no entry and makes no object per entry. None for a file that is not an
    argument table."""
    if flag_table(data) is None:
        return None
    lists = {k: v for k, v in data.items() if k.endswith("args") and isinstance(v, list)}
    head = {"meta": {k: v for k, v in data.items() if k not in lists}}
    head["lists"] = {k: len(v) for k, v in lists.items()}
    lines, bodies = [json.dumps(head)], []
    for entries in lists.values():
        flags = [(f, i) for i, e in enumerate(entries) for f in _names(accepted_flags(e))]
        lines += [_SEP.join(f for f, _ in flags), _SEP.join(str(i) for _, i in flags)]
        lines.append(_SEP.join(_names([e["dest"] for e in entries])))
        texts = [json.dumps(e) for e in entries]  # ASCII: a character is a byte
        lines.append(_ends(texts))
        bodies.append("".join(texts))
    lines.append("".join(bodies))  # each list's entries, one after the other
    return sealed("\n".join(lines).encode("ascii"))


def _names(names: list[str]) -> list[str]:
    for n in names:
        if not n or not n.isascii() or any(c.isspace() for c in n):
            raise ValueError(f"{n!r}: an empty flag or dest, or one with a space")
    return names


def read_indexed_table(raw: bytes) -> tuple[dict[str, Any], dict[str, ArgList]]:
    """An indexed table's bytes: the table without its argument lists, and each list;
    ValueError when the bytes no longer match their checksum (damaged after the build) or
    are not an index (TypeError, KeyError: not one this cfglint writes). Nothing is copied
    but the index's lines: each entry is decoded from ``raw`` when asked for."""
    at = unsealed_at(raw, "the argument index")
    ends = _line_ends(raw, at, 1)
    head = json.loads(raw[at : ends[0]])
    meta, lists = head["meta"], head["lists"]
    if not isinstance(meta, dict) or not isinstance(lists, dict):
        raise ValueError("not an argument index")
    ends += _line_ends(raw, ends[0] + 1, 4 * len(lists))
    lines = [raw[a + 1 : b].decode("ascii") for a, b in itertools.pairwise(ends)]
    out: dict[str, ArgList] = {}
    start = ends[-1] + 1  # the lists' entries, one after the other
    for k, (key, n) in enumerate(lists.items()):
        out[key] = _arg_list(lines[4 * k : 4 * k + 4], n, raw, start)
        start += int(out[key].ends[-_END_DIGITS:], 16) if n else 0
    if start != len(raw):
        raise ValueError("the entries are not where the index says")
    return meta, out


def _line_ends(raw: bytes, at: int, n: int) -> list[int]:
    """Where the ``n`` lines from ``at`` end (each at a newline)."""
    ends = []
    for _ in range(n):
        ends.append(raw.index(b"\n", at))
        at = ends[-1] + 1
    return ends


def _arg_list(lines: list[str], n: int, raw: bytes, start: int) -> ArgList:
    """A list of ``n`` entries from its index lines; ValueError when they do not agree."""
    flags, owners, dests, ends = lines
    got = ArgList(_split(flags), list(map(int, _split(owners))), _split(dests), ends, raw, start)
    if len(got.dests) != n or len(ends) != n * _END_DIGITS or len(got.owners) != len(got.flags):
        raise ValueError("an index line of another length than its list")
    if got.owners and not 0 <= min(got.owners) <= max(got.owners) < n:
        raise ValueError("a flag of no entry of the list")
    return got


def _split(line: str) -> list[str]:
    return line.split(_SEP) if line else []


def _decode(text: bytes, start: int, ends: str, i: int) -> Any:
    """Item ``i`` of JSON texts laid one after the other from ``start`` in ``text``, each
    ending where ``ends`` says (_END_DIGITS hex digits each, counted from ``start``)."""
    width = _END_DIGITS
    end = start + int(ends[i * width : (i + 1) * width], 16)
    start += int(ends[(i - 1) * width : i * width], 16) if i else 0
    return json.loads(text[start:end])


def _ends(texts: list[str]) -> str:
    return "".join(f"{end:0{_END_DIGITS}x}" for end in itertools.accumulate(map(len, texts)))


# a mapping of fewer records than this is decoded whole (its index would save little)
_KEYED_MIN = 32


def keyed_table_name(raw: bytes) -> str:
    """The ready name of a keyed table (:func:`keyed_table`): the table's YAML checksum, so
    one built before the table changed is not found."""
    return KEYED + ready_name(raw)


def keyed_table(data: Any) -> bytes | None:
    """A table whose mappings of records (a top-level mapping of at least _KEYED_MIN
    mappings, such as data/mindformers_releases.yaml's classes) are decoded a record at a
    time, when one is asked for by key (issue 29: a pair lint asks 15 of its 69 classes). Its
    lines: a checksum of the rest (as the ready rule set's); the table without those
    mappings, with their names; for each, its keys and where each record's JSON ends; then
    the records' JSON. None for a table without such a mapping."""
    if not isinstance(data, dict):
        return None
    keyed = [
        k
        for k, v in data.items()
        if isinstance(v, dict)
        and len(v) >= _KEYED_MIN
        and all(isinstance(r, dict) for r in v.values())
    ]
    if not keyed:
        return None
    head = {"meta": {k: v for k, v in data.items() if k not in keyed}, "keyed": keyed}
    head["order"] = list(data)
    lines, bodies = [json.dumps(head)], []
    for k in keyed:
        texts = [json.dumps(r) for r in data[k].values()]  # ASCII: a character is a byte
        lines += [json.dumps(list(data[k])), _ends(texts)]
        bodies.append("".join(texts))
    lines.append("".join(bodies))  # each mapping's records, one after the other
    return sealed("\n".join(lines).encode("ascii"))


class Records(Mapping[str, Any]):
    """A keyed table's mapping of records: each decoded when first asked for by key, then
    kept (the same object each time, as a dict gives)."""

    __slots__ = ("_at", "_done", "_ends", "_start", "_text")

    def __init__(self, keys: list[str], ends: str, text: bytes, start: int) -> None:
        self._at = dict(zip(keys, range(len(keys)), strict=True))
        self._done: dict[str, Any] = {}
        self._ends, self._text, self._start = ends, text, start

    def __getitem__(self, key: str) -> Any:
        got = self._done.get(key)
        if got is None:
            got = self._done[key] = _decode(self._text, self._start, self._ends, self._at[key])
        return got

    def __contains__(self, key: object) -> bool:
        return key in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


def read_keyed_table(raw: bytes) -> dict[str, Any]:
    """A keyed table's bytes as the table, its keyed mappings :class:`Records`; ValueError
    when the bytes no longer match their checksum (damaged after the build) or are not a
    keyed table (TypeError, KeyError: not one this cfglint writes)."""
    at = unsealed_at(raw, "the keyed table")
    ends = _line_ends(raw, at, 1)
    head = json.loads(raw[at : ends[0]])
    meta, keyed, order = head["meta"], head["keyed"], head["order"]
    ends += _line_ends(raw, ends[0] + 1, 2 * len(keyed))
    lines = [raw[a + 1 : b] for a, b in itertools.pairwise(ends)]
    start, records = ends[-1] + 1, {}
    for k, name in enumerate(keyed):
        keys, where = json.loads(lines[2 * k]), lines[2 * k + 1].decode("ascii")
        if not isinstance(keys, list) or len(where) != len(keys) * _END_DIGITS or not keys:
            raise ValueError(f"{name}: its records are not where the index says")
        records[name] = Records(keys, where, raw, start)
        start += int(where[-_END_DIGITS:], 16)
    if start != len(raw) or sorted(order) != sorted([*meta, *records]):
        raise ValueError("the records are not where the index says")
    return {k: records[k] if k in records else meta[k] for k in order}


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
