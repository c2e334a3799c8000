"""The YAML tree loader: YAML 1.1 values as MindFormers (PyYAML) reads them, positions,
anchors and merge keys, and the guards against hostile input."""

from __future__ import annotations

import pytest
import yaml

from cfglint.load.yamltree import Node, get, parse_yaml_text, resolve_plain_yaml11
from cfglint.model.errors import InputError


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1e-5", "1e-5"),  # no dot: a string for PyYAML
        ("1.0e5", "1.0e5"),  # unsigned exponent: a string too
        ("1.e-5", 1e-5),
        ("1.0e-5", 1e-5),
        (".5", 0.5),
        ("on", True),
        ("off", False),
        ("yes", True),
        ("010", 8),  # octal
        ("0x10", 16),
        ("1_000", 1000),
        ("~", None),
        ("1:30", 90),  # sexagesimal
        ("-.inf", float("-inf")),
    ],
)
def test_yaml11_resolution(text: str, value: object) -> None:
    assert resolve_plain_yaml11(text) == value


def test_positions_and_yaml12_disagreement() -> None:
    doc = parse_yaml_text("optimizer:\n  eps: 1e-8\n  beta2: 0.95\nflag: yes\n", "c.yaml")
    eps = get(doc.root, "optimizer.eps")
    assert eps is not None and eps.value == "1e-8" and eps.yaml11_string
    assert eps.yaml12_value == 1e-8
    assert (eps.line, eps.column, eps.key_line) == (2, 8, 2)
    flag = get(doc.root, "flag")
    assert flag is not None and flag.value is True and not flag.yaml11_string


def test_quoted_and_tagged_scalars_stay_strings() -> None:
    doc = parse_yaml_text("a: '1.0'\nb: !!str 3\nc: \"on\"\n", "c.yaml")
    assert [get(doc.root, k).value for k in "abc"] == ["1.0", "3", "on"]  # type: ignore[union-attr]


def test_anchors_are_shared_and_merge_keys_fill_in() -> None:
    doc = parse_yaml_text(
        "base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  y: 3\nlist: [&dp 4, *dp]\n", "c.yaml"
    )
    assert get(doc.root, "child").plain() == {"y": 3, "x": 1}  # type: ignore[union-attr]
    assert get(doc.root, "list[1]").value == 4  # type: ignore[union-attr]
    assert get(doc.root, "list[0]") is get(doc.root, "list[1]")


def test_duplicate_keys_warn_and_last_wins() -> None:
    doc = parse_yaml_text("seed: 1\nseed: 2\n", "c.yaml")
    assert get(doc.root, "seed").value == 2  # type: ignore[union-attr]
    assert any("duplicate key 'seed'" in w for w in doc.warnings)


def test_alias_bomb_is_refused() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    with pytest.raises(InputError, match="alias bomb"):
        parse_yaml_text("\n".join(lines) + "\n", "bomb.yaml")


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 20000 + "]" * 20000 + "\n",
        "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 300)),
    ],
    ids=["flow", "block"],
)
def test_deep_nesting_is_refused(text: str) -> None:
    with pytest.raises(InputError, match="nesting deeper"):
        parse_yaml_text(text, "deep.yaml")


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("- 1\n- 2\n", "top level is a list", 1),
        ("a: [1\nb: 2\n", "YAML syntax error", 2),
        ("", "empty YAML document", None),
        ("a: 1\n---\nb: 2\n", "several YAML documents", 2),
    ],
)
def test_shape_and_syntax_errors(text: str, message: str, line: int | None) -> None:
    with pytest.raises(InputError) as err:
        parse_yaml_text(text, "bad.yaml")
    assert message in str(err.value)
    assert err.value.line == line


def _tree(node: object) -> object:
    """Every fact a node carries, recursively, for comparing two parses."""
    from cfglint.load.yamltree import Node

    assert isinstance(node, Node)
    facts = (node.line, node.column, node.raw, node.yaml11_string, node.yaml12_value)
    facts += (node.key_line, node.key_column)
    if node.is_map:
        return facts, {k: _tree(v) for k, v in node.value.items()}
    if node.is_seq:
        return facts, [_tree(v) for v in node.value]
    return facts, repr(node.value)


def _yaml_files() -> list[object]:
    from conftest import CORPUS, FIXTURES

    files = sorted(FIXTURES.rglob("*.yaml"))
    if CORPUS.is_dir():
        files += sorted(CORPUS.glob("*.yaml"))
    return files


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.name)
def test_libyaml_and_ruamel_give_the_same_tree(path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the fast path (libyaml, as MindFormers reads YAML) and the deep-nesting fallback
    # (ruamel) must not be told apart by anything downstream
    import cfglint.load.yamltree as yt

    text = path.read_text(encoding="utf-8")
    assert yt.nesting_bound(text) <= yt.MAX_DEPTH  # real configs take the fast path
    fast = _tree(parse_yaml_text(text, str(path)).root)
    monkeypatch.setattr(yt, "nesting_bound", lambda _text: yt.MAX_DEPTH + 1)
    assert _tree(parse_yaml_text(text, str(path)).root) == fast


@pytest.mark.parametrize(
    "text",
    ["a: " + "[" * 150 + "]" * 150, "a:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 120))],
)
def test_deep_texts_never_reach_libyaml(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # libyaml's composer recurses in C without a limit: a deep text must take ruamel's path
    import cfglint.load.yamltree as yt

    assert yt.nesting_bound(text) > yt.MAX_DEPTH
    monkeypatch.setattr(yt, "_libyaml_loader", lambda _y: pytest.fail("reached libyaml"))
    with pytest.raises(InputError, match="nesting deeper"):
        parse_yaml_text(text, "deep.yaml")


def test_empty_values_sit_after_their_colon_on_both_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    # `arch:` with nothing after it: a finding about it must point at its own line, whichever
    # parser read the file (ruamel alone would mark the next key's line)
    import cfglint.load.yamltree as yt

    text = "model:\n  arch:\n  model_config:\n    type: X\nlast:\n"

    def positions() -> list[tuple[int, int]]:
        root = parse_yaml_text(text, "a.yaml").root
        return [(n.line, n.column) for n in (root.value["model"].value["arch"], root.value["last"])]

    assert positions() == [(2, 8), (5, 6)]
    monkeypatch.setattr(yt, "nesting_bound", lambda _text: yt.MAX_DEPTH + 1)
    assert positions() == [(2, 8), (5, 6)]


GET_TEXT = "a:\n  b:\n    c: 1\n  l: [x, {k: v}]\n  '': empty key\ns: text\n"


@pytest.mark.parametrize(
    ("dotted", "value"),
    [
        ("a.b.c", 1),
        ("a.b", {"c": 1}),
        ("a.l[1].k", "v"),
        ("a.l[0]", "x"),
        ("a.l[2]", None),
        ("a..b.c", 1),  # an empty part stays where it is
        ("s.t", None),  # through a scalar
        ("a.b.c.d", None),
        ("nope.b", None),
        ("a.l.k", None),  # a key of a list
    ],
)
def test_get_follows_keys_and_indices(dotted: str, value: object) -> None:
    doc = parse_yaml_text(GET_TEXT, "g.yaml")
    node = get(doc.root, dotted)
    assert (None if node is None else node.plain()) == value


def test_a_path_of_keys_is_followed_without_parsing_indices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nearly every lookup is a path of mapping keys: it goes from dict to dict, without
    asking each node what kind it is through its properties (issue 29: ~400 a pair lint)."""
    doc = parse_yaml_text(GET_TEXT, "g.yaml")
    asked: list[str] = []

    def is_map(n: Node) -> bool:
        asked.append(n.path)
        return isinstance(n.value, dict)

    monkeypatch.setattr(Node, "is_map", property(is_map))
    node = get(doc.root, "a.b.c")
    assert node is not None and node.value == 1
    assert asked == []


@pytest.mark.parametrize("scalar", ["0b_", "-0x_", "+0b__"])
def test_an_integer_with_no_digits_is_named_as_pyyaml_fails_on_it(scalar: str) -> None:
    """PyYAML's YAML 1.1 int pattern takes ``0b_`` and ``0x_``, then int("", 2) raises: the
    config does not load in MindFormers. Said as that, not as a number too long to read."""
    with pytest.raises(InputError) as err:
        parse_yaml_text(f"seed: 1\nlr: {scalar}\n", "c.yaml")
    assert err.value.line == 2
    assert f"{scalar!r} reads as a YAML 1.1 integer with no digits" in err.value.message
    with pytest.raises(ValueError):
        yaml.safe_load(f"lr: {scalar}")  # PyYAML fails on it too


def test_a_number_longer_than_int_accepts_is_too_long_to_read() -> None:
    with pytest.raises(InputError, match="a number with 5000 digits is too long to read"):
        parse_yaml_text("seed: " + "1" * 5000 + "\n", "c.yaml")
