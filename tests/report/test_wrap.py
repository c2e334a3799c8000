"""The text report's line filling (report/text.py ``_wrap``) gives textwrap.fill's lines,
word for word: issue 29 replaced the call to textwrap, whose chunking was most of rendering a
pair lint's report, and the report's bytes must not change."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cfglint.report import text as text_report


def _textwrap(text: str, indent: str, width: int) -> str:
    return textwrap.fill(
        " ".join(text.split()),
        width=width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


WORDS = st.text(alphabet="ab-/.", min_size=1, max_size=30)
SPACE = st.sampled_from([" ", "  ", "\t", "\n", " \u00a0", "\u3000"])


@settings(max_examples=400, deadline=None)
@given(
    words=st.lists(st.tuples(WORDS, SPACE), max_size=40),
    lead=st.sampled_from(["", " ", "\n "]),
    indent=st.sampled_from(["", "  ", "    "]),
    width=st.integers(min_value=1, max_value=60),
)
def test_filling_gives_textwraps_lines(
    words: list[tuple[str, str]], lead: str, indent: str, width: int
) -> None:
    text = lead + "".join(w + s for w, s in words)
    assert text_report._wrap(text, indent, width) == _textwrap(text, indent, width)


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("", 20),
        ("   ", 20),
        ("exactly-ten", 15),  # 4 + 11 = 15: fits
        ("a see https://github.com/NVIDIA/Megatron-LM/blob/main/x.py#L12 b", 20),
        ("one two three four five six seven eight nine ten", 12),
        ("word", 3),  # the indent alone is wider than a line
    ],
)
def test_edges_give_textwraps_lines(text: str, width: int) -> None:
    assert text_report._wrap(text, "    ", width) == _textwrap(text, "    ", width)


def test_no_width_is_textwraps_error() -> None:
    with pytest.raises(ValueError):
        text_report._wrap("a b", "", 0)


def test_a_report_fills_without_textwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> str:
        raise AssertionError("textwrap called")

    monkeypatch.setattr(textwrap, "fill", refuse)
    assert text_report._wrap("a b c d e f", "  ", 7) == "  a b c\n  d e f"
