"""Placeholder paths of published recipes (normalize/placeholders.py): the pattern is tried
only on a text holding one of the parts a placeholder is made of, case-insensitively; these
cases pin that the gate drops no placeholder the pattern recognizes."""

from __future__ import annotations

import pytest

from cfglint.normalize.placeholders import placeholder_text


@pytest.mark.parametrize(
    "text",
    [
        "your data path",
        "YOUR MODEL CKPT PATH",
        "Your",
        "/Path/To/wiki103",
        "path/to/tokenizer.model",
        "<ckpt_dir>",
        "{CKPT_PATH}",
        "XXX",
        "TODO",
        "Tbd",
        "None",
        "NULL",
        "/data/xxx",
        "ckpt/XXXX/iter_1",
        "todo\n",  # `$` also matches before a final newline
    ],
)
def test_a_placeholder_is_recognized_in_any_case(text: str) -> None:
    assert placeholder_text(text) == text.strip().strip("'\"")


@pytest.mark.parametrize(
    "text",
    [
        "/data/llama2/wiki_text_document",
        "./tokenizer.model",
        "yours/data",  # "your" must end a word
        "a/path/tokens",  # "path/to" must end a word
        "nonexistent",
        "c\u212apt/data",  # the Kelvin sign folds to k, but no placeholder ends that way
        "\u0130your",  # a placeholder word must start the text
    ],
)
def test_a_real_looking_path_is_no_placeholder(text: str) -> None:
    assert placeholder_text(text) == ""


def test_a_word_split_placeholder_is_recognized() -> None:
    assert placeholder_text(["your", "model", "ckpt", "path"]) == "your model ckpt path"
    assert placeholder_text(["0.3", "/Path/To/a", "0.7", "/data/b"]) == "0.3 /Path/To/a 0.7 /data/b"
    assert placeholder_text(["0.3", "/data/a"]) == ""
