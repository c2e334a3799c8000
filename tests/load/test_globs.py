"""glob_match (cfglint.load.globs) is fnmatch.fnmatchcase without compiling a regular
expression for patterns whose only wildcard is ``*``."""

from __future__ import annotations

import fnmatch

from hypothesis import given, settings
from hypothesis import strategies as st

from cfglint.load.globs import glob_match
from conftest import examples

TEXT = st.text(alphabet="ab/._", max_size=8)
PATTERN = st.text(alphabet="ab/._*?[]!", max_size=7)


@settings(max_examples=examples(300, 3000), deadline=None)
@given(TEXT, PATTERN)
def test_matches_as_fnmatchcase_matches(text: str, pattern: str) -> None:
    assert glob_match(text, pattern) == fnmatch.fnmatchcase(text, pattern)


def test_star_patterns_of_the_tables() -> None:
    cases = [
        ("pretrain_gpt.py", "pretrain_*.py", True),
        ("pretrain_.py", "pretrain_*.py", True),
        ("pretrain.py", "pretrain_*.py", False),
        ("a/tools/retro/main.py", "*retro/main.py", True),
        ("aXa", "a*a", True),
        ("a", "a*a", False),  # the two ends may not overlap
        ("convert_ckpt.py", "*convert*.py", True),
        ("ckpt_convert.PY", "*convert*.py", False),  # case-sensitive, as fnmatchcase
        ("x/y.py", "*.py", True),  # * matches a slash, as fnmatchcase
        ("a1b", "a?b", True),  # other wildcards: fnmatch's own
    ]
    for text, pattern, want in cases:
        assert glob_match(text, pattern) is want, (text, pattern)
        assert fnmatch.fnmatchcase(text, pattern) is want, (text, pattern)
