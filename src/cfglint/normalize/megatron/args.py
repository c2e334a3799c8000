"""Megatron-LM / MindSpeed-LLM argument tables and argparse-style resolution.

The tables under ``data/`` list every argument of a named release (flags, dest, type,
action, default). Resolution follows argparse as Megatron configures it: ``--flag value``
and ``--flag=value``, store_true / store_false / ``--no-*`` (BooleanOptionalAction),
``nargs``, type conversion, and the last occurrence wins. Abbreviated flags are not
accepted (Megatron builds its parser with ``allow_abbrev=False``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from itertools import repeat
from typing import Any

from cfglint.load.datayaml import ArgList
from cfglint.load.dialects import table_entries, table_index
from cfglint.load.shell.words import Word
from cfglint.model.record import Frozen, Record
from cfglint.model.values import Value


class ArgSpec(Frozen):
    """One argument of a table, as argparse registers it (a plain record: a NamedTuple's
    class cost ~0.85 M instructions to create at import)."""

    __slots__ = (
        "action",
        "choices",
        "const",
        "default",
        "dest",
        "flags",
        "nargs",
        "source",
        "type",
    )

    flags: tuple[str, ...]
    dest: str
    type: str
    action: str
    default: Any
    nargs: str | int | None
    choices: tuple[Any, ...] | None
    const: Any
    source: str  # "Megatron-LM core_v0.19.0" / "MindSpeed-LLM 2.1.0"

    def __init__(
        self,
        flags: tuple[str, ...],
        dest: str,
        type: str,
        action: str,
        default: Any = None,
        nargs: str | int | None = None,
        choices: tuple[Any, ...] | None = None,
        const: Any = None,
        source: str = "",
    ) -> None:
        self.flags = flags
        self.dest = dest
        self.type = type
        self.action = action
        self.default = default
        self.nargs = nargs
        self.choices = choices
        self.const = const
        self.source = source


class Specs(Mapping[str, ArgSpec]):
    """A table's arguments by flag or by dest, each ArgSpec built from its table entry when
    first asked: a lint asks for a few dozen of the ~800 a table registers (building every
    one was a visible part of a pair lint, bench/results/fresh_env.md). ``rows`` is shared
    by a table's two views, so both give the same ArgSpec for an argument."""

    __slots__ = ("index", "rows")

    def __init__(self, index: dict[str, int], rows: list[Any]) -> None:
        self.index = index  # flag or dest -> its row
        self.rows = rows  # an ArgSpec, or what it is built from (ArgTable.rows)

    def __getitem__(self, key: str) -> ArgSpec:
        i = self.index[key]
        row = self.rows[i]
        if type(row) is not ArgSpec:
            row = self.rows[i] = _spec(*row) if len(row) == 2 else _indexed_spec(*row)
        return row  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return key in self.index

    def __iter__(self) -> Iterator[str]:
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)

    def __repr__(self) -> str:
        return f"Specs({len(self.index)} arguments)"


class ArgTable(Record):
    __slots__ = ("by_dest", "by_flag", "label", "name", "rows")

    name: str  # what --megatron-version accepts
    label: str  # "Megatron-LM core_v0.19.0 (5be9626)"
    by_flag: Specs
    by_dest: Specs

    def __init__(self, name: str, label: str, table: ArgTable | None = None) -> None:
        """An empty table, or a copy of ``table`` to add to (with the specs it built)."""
        self.name = name
        self.label = label
        # an ArgSpec; or what it is built from: (a table entry, source), or (an indexed
        # list, the entry's place in it, source)
        self.rows: list[Any] = [] if table is None else list(table.rows)
        flags = {} if table is None else dict(table.by_flag.index)
        dests = {} if table is None else dict(table.by_dest.index)
        self.by_flag = Specs(flags, self.rows)
        self.by_dest = Specs(dests, self.rows)

    def add(self, spec: ArgSpec) -> None:
        self.add_row(spec, spec.flags, spec.dest, spec.action)

    def add_entry(self, entry: dict[str, Any], source: str) -> None:
        """A table entry, its ArgSpec built when first asked for."""
        self.add_row((entry, source), entry["flags"], entry["dest"], entry.get("action", "store"))

    def add_indexed(self, args: ArgList, source: str) -> None:
        """An indexed argument list (load/datayaml.py), each ArgSpec built, and its entry
        decoded, when first asked for; indexed at once (the list's own maps, built in C)."""
        first = len(self.rows)
        self.rows += zip(repeat(args), range(len(args)), repeat(source))
        self.by_flag.index.update(args.by_flag(first))
        self.by_dest.index.update(args.by_dest(first))

    def add_row(self, row: Any, flags: Iterable[str], dest: str, action: str) -> None:
        """A later definition of a flag or dest replaces an earlier one, as in argparse's
        conflict resolution (MindSpeed's parsers)."""
        i = len(self.rows)
        self.rows.append(row)
        by_flag = self.by_flag.index
        for f in flags:
            by_flag[f] = i
        if action == "boolean_optional":
            for f in flags:
                by_flag["--no-" + f[2:]] = i
        self.by_dest.index[dest] = i


def _indexed_spec(args: ArgList, i: int, source: str) -> ArgSpec:
    """Entry ``i`` of an indexed list (the index's checksum was checked when it was read)."""
    return _spec(args.entry(i), source)


def _spec(entry: dict[str, Any], source: str) -> ArgSpec:
    ch = entry.get("choices")
    return ArgSpec(
        flags=tuple(entry["flags"]),
        dest=entry["dest"],
        type=entry.get("type", "str"),
        action=entry.get("action", "store"),
        default=entry.get("default"),
        nargs=entry.get("nargs"),
        choices=tuple(ch) if ch else None,
        const=entry.get("const"),
        source=source,
    )


# distinct unknown flags one script gets a suggestion for: each costs a fuzzy match against
# every flag the table knows (about 0.5 ms), so a generated or hostile script that repeats or
# invents thousands of flags would otherwise take minutes (fuzz seed 12, case 1770: 20,000)
SUGGESTED_FLAGS = 200


def _closest_flag(flag: str, table: ArgTable, memo: dict[str, str]) -> str:
    """``did you mean --hidden-dropout?`` for a misspelt flag, or nothing; ``memo`` holds
    this script's answers so far."""
    if flag in memo:
        return memo[flag]
    if len(memo) >= SUGGESTED_FLAGS:
        return ""
    import difflib

    close = difflib.get_close_matches(flag, list(table.by_flag), n=1, cutoff=0.8)
    memo[flag] = f"did you mean {close[0]}?" if close else ""
    return memo[flag]


@cache
def load_table(name: str = "megatron-lm") -> ArgTable:
    """``megatron-lm`` (the newest Megatron-LM table), a release such as ``core_v0.12.1``,
    or ``mindspeed-llm``: MindSpeed-LLM's additions and default overrides layered on the
    Megatron-LM release it pins (or the closest one we have)."""
    indexed = table_index(name)
    if indexed is not None:
        table = ArgTable(name=name, label=indexed[0])
        table.add_indexed(indexed[2], indexed[1])
        return table
    label, entries = table_entries(name)
    table = ArgTable(name=name, label=label)
    for e, src in entries:
        table.add_entry(e, src)
    return table


def with_fork_flags(table: ArgTable, defs: list[tuple[Any, str]]) -> ArgTable:
    """``table`` with the flags a repository's own parser registers (``FlagDef``s read by
    load/tree_parser.py): a flag the table lacks, or one the fork types otherwise (a float
    where upstream has an int), is read as the fork's code reads it."""
    out = ArgTable(table.name, table.label, table)
    for d, source in defs:
        out.add(
            ArgSpec(
                flags=tuple(d.flags),
                dest=d.dest,
                type=d.type,
                action=d.action,
                default=d.default,
                nargs=d.nargs,
                choices=d.choices,
                const=d.const,
                source=source,
            )
        )
    return out


class Resolved(Record):
    __slots__ = ("opaque", "table", "unknown", "values", "warnings")

    values: dict[str, Value]  # dest -> value (only what the command line set)
    unknown: list[Value]
    warnings: list[str]
    table: ArgTable
    # words that cannot be read and may stand for any arguments (``$@``, a variable a
    # sourced file that was not followed may set): a flag not written may be among them
    opaque: list[Value]

    def __init__(
        self,
        values: dict[str, Value],
        unknown: list[Value],
        warnings: list[str],
        table: ArgTable,
        opaque: list[Value] | None = None,
    ) -> None:
        self.values = values
        self.unknown = unknown
        self.warnings = warnings
        self.table = table
        self.opaque = [] if opaque is None else opaque


def _looks_like_flag(text: str | None) -> bool:
    if not text or not text.startswith("-") or text == "-":
        return False
    try:
        float(text)  # negative numbers are values (Megatron has no numeric-looking flags)
        return False
    except ValueError:
        return True


def _may_hold_arguments(reason: str) -> bool:
    """An unreadable word that may expand to flags. The caller's inputs (a variable nothing
    in the script sets, ``"$@"``) are read as the empty hooks they are when the script is
    run as written; what the script itself computes out of sight (a command substitution,
    a variable an unread ``source`` or eval may set) may add any flag."""
    from cfglint.load.shell import from_the_caller

    return not from_the_caller(reason)


def resolve(tokens: list[Any], table: ArgTable) -> Resolved:
    values: dict[str, Value] = {}
    unknown: list[Value] = []
    opaque: list[Value] = []
    warnings: list[str] = []
    suggested: dict[str, str] = {}
    last_flag = ""
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        text = tok.text
        i += 1
        if text is None:
            warnings.append(f"{tok.loc}: an argument cannot be known statically ({tok.unknown})")
            if _may_hold_arguments(tok.unknown):
                opaque.append(Value.unknown("arguments", tok.unknown, loc=tok.loc))
            continue
        if not _looks_like_flag(text):
            i = _stray_values(tokens, i, last_flag, warnings)
            continue
        flag = text.partition("=")[0]
        last_flag = flag
        spec = table.by_flag.get(flag)
        if spec is None:
            got, i = _unknown_flag(tokens, i, table, suggested)
            unknown.append(got)
            continue
        args, i = _flag_args(tokens, i, spec, warnings)
        if args is None:
            continue
        v = _convert(spec, flag, tok, args, warnings)
        prev = values.get(spec.dest)
        if prev is not None and prev.loc is not None and not tok.conditional:
            warnings.append(
                f"{tok.loc}: {flag} is also set at {prev.loc}; the last one wins, as in argparse"
            )
        values[spec.dest] = v
    return Resolved(values=values, unknown=unknown, warnings=warnings, table=table, opaque=opaque)


def _stray_values(tokens: list[Any], i: int, last_flag: str, warnings: list[str]) -> int:
    """Warn about the value at ``i - 1`` that no flag takes; return the next index.

    The words of one unquoted expansion ("your checkpoint load path" after --load) share a
    position: one warning for all of them, not one per word."""
    tok = tokens[i - 1]
    words = [tok.text]
    while (
        i < len(tokens)
        and tokens[i].text is not None
        and not _looks_like_flag(tokens[i].text)
        and (tokens[i].loc.path, tokens[i].loc.line, tokens[i].via)
        == (tok.loc.path, tok.loc.line, tok.via)
    ):
        words.append(tokens[i].text)
        i += 1
    if len(words) == 1:
        warnings.append(f"{tok.loc}: stray value {tok.text!r} (no flag before it)")
    else:
        after = f" after {last_flag}" if last_flag else ""
        warnings.append(
            f"{tok.loc}: stray values {' '.join(words)!r}{after} (no flag of their own: "
            "an unquoted expansion split into words? quote it)"
        )
    return i


def _unknown_flag(
    tokens: list[Any], i: int, table: ArgTable, suggested: dict[str, str]
) -> tuple[Value, int]:
    """The flag at ``i - 1`` that the table lacks, with the values after it (they belong to
    it); and the next index."""
    tok = tokens[i - 1]
    flag, eq, inline = tok.text.partition("=")
    vals = []
    while i < len(tokens) and not _looks_like_flag(tokens[i].text):
        vals.append(tokens[i].text)
        i += 1
    got = Value.written(
        " ".join(v for v in vals if v is not None) or (inline if eq else True),
        knob=flag,
        loc=tok.loc,
        via=tok.via,
        conditional=tok.conditional,
        detail=_closest_flag(flag, table, suggested),
    )
    return got, i


def _flag_args(
    tokens: list[Any], i: int, spec: ArgSpec, warnings: list[str]
) -> tuple[list[Any] | None, int]:
    """The value tokens of the flag at ``i - 1`` (its ``=value`` or the words after it) and
    the next index; None when a value it needs is missing."""
    tok = tokens[i - 1]
    flag, eq, inline = tok.text.partition("=")
    if eq:
        alts = tuple(getattr(tok, "alternatives", ()))
        if not all(t.partition("=")[0] == flag for t, _ in alts):
            alts = ()  # a branch spells another flag: no single setting's values
        alts = tuple((t.partition("=")[2], at) for t, at in alts)
        choice = getattr(tok, "choice", False)
        # the value after "=" is a word of its own, typed where the flag was
        return [Word(inline, tok.loc, tok.via, "", tok.conditional, choice, alts)], i
    args: list[Any] = []
    want = _arity(spec)
    while i < len(tokens) and len(args) < want[1] and (not _looks_like_flag(tokens[i].text)):
        args.append(tokens[i])
        i += 1
    if len(args) < want[0]:
        warnings.append(f"{tok.loc}: {flag} expects a value")
        return None, i
    return args, i


def _arity(spec: ArgSpec) -> tuple[int, int]:
    if spec.action in ("store_true", "store_false", "store_const", "count", "boolean_optional"):
        return (0, 0)
    n = spec.nargs
    if n is None:
        return (1, 1)
    if n == "?":
        return (0, 1)
    if n == "*":
        return (0, 10**9)
    if n == "+":
        return (1, 10**9)
    return (int(n), int(n))


def _convert(spec: ArgSpec, flag: str, tok: Any, args: list[Any], warnings: list[str]) -> Value:
    loc, via, cond = tok.loc, tuple(tok.via), tok.conditional
    if args:
        # the value's own position matters most: it is what the user edits
        loc = args[-1].loc
        via = tuple(dict.fromkeys((*via, *(v for a in args for v in a.via))))
        cond = cond or any(a.conditional for a in args)
    choice = any(getattr(t, "choice", False) for t in (tok, *args))
    kw: dict[str, Any] = {"knob": flag, "via": via, "conditional": cond or choice}
    if choice:
        kw["branch_choice"] = True
    got = _without_value(spec, flag, loc, kw)
    if got is not None:
        return got
    if not args:
        return Value.written(spec.const, loc=loc, raw=flag, **kw)
    bad = [a for a in args if a.text is None]
    if bad:
        return Value.unknown(flag, bad[0].unknown or "not known statically", loc=loc, via=via)
    return _typed_values(spec, flag, args, loc, kw, warnings)


def _without_value(spec: ArgSpec, flag: str, loc: Any, kw: dict[str, Any]) -> Value | None:
    """What a flag whose action takes no value stores; None for the other actions."""
    if spec.action == "store_true":
        return Value.written(True, loc=loc, raw=flag, **kw)
    if spec.action == "store_false":
        # "--disable-bias-linear=false" would read as "biases on": name the setting
        kw["knob"] = f"{spec.dest} ({flag})"
        return Value.written(False, loc=loc, raw=flag, **kw)
    if spec.action == "boolean_optional":
        return Value.written(not flag.startswith("--no-"), loc=loc, raw=flag, **kw)
    if spec.action == "store_const":
        return Value.written(spec.const, loc=loc, raw=flag, **kw)
    if spec.action == "count":
        return Value.written(1, loc=loc, raw=flag, **kw)
    return None


def _typed_values(
    spec: ArgSpec, flag: str, args: list[Any], loc: Any, kw: dict[str, Any], warnings: list[str]
) -> Value:
    """The flag's values read with its type (and checked against its choices)."""
    try:
        items = [_typed(spec, a.text) for a in args]
    except ValueError:
        warnings.append(
            f"{loc}: {flag} {' '.join(a.text for a in args)!r} is not a valid {spec.type}"
        )
        return Value.unknown(
            flag,
            f"{' '.join(a.text for a in args)!r} is not a valid {spec.type}",
            loc=loc,
            via=kw["via"],
        )
    raw = " ".join(a.text for a in args)
    value: Any = items if spec.nargs not in (None, "?") else items[0]
    if spec.choices and not all(
        x in spec.choices for x in (items if isinstance(value, list) else [value])
    ):
        warnings.append(f"{loc}: {flag} {raw!r} is not one of {', '.join(map(str, spec.choices))}")
    if kw.get("branch_choice") and len(args) == 1 and spec.nargs in (None, "?"):
        kw["alternatives"] = _alternatives(spec, flag, args[0])
    return Value.written(value, loc=loc, raw=raw, **kw)


def _alternatives(spec: ArgSpec, flag: str, arg: Any) -> tuple[Value, ...]:
    """Each branch's value of a one-value flag, typed; () when one cannot be read (the
    value is then only known to be a branch's choice)."""
    out = []
    for text, at in getattr(arg, "alternatives", ()):
        try:
            out.append(Value.written(_typed(spec, text), knob=flag, loc=at, raw=text))
        except ValueError:
            return ()
    return tuple(out)


def _typed(spec: ArgSpec, text: str) -> Any:
    if spec.type == "int":
        return int(text)
    if spec.type == "float":
        return float(text)
    if spec.type == "bool":
        low = text.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        raise ValueError(text)
    return text
