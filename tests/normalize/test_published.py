"""Which published model a name names (normalize/published.py): the longest alias wins, the
first of equal length in the table's order. Issue 29: a pair lint asked ~400 aliases, each
time tokenizing the name and the alias again; each is now tokenized once."""

from __future__ import annotations

from typing import Any

import pytest

from cfglint.evidence.reference import claimed_model
from cfglint.model.config import Config
from cfglint.normalize import published
from cfglint.normalize.published import longest_alias, models, names_model, norm_name

NAMES = [
    "pretrain_llama2_7b.yaml",
    "llama2_13b",
    "Qwen2.5-7B-Instruct",
    "qwen2_57b_a14b",
    "deepseek_v3",
    "DeepSeek-V3-Base",
    "gpt2_13b",
    "mixtral_8x7b",
    "glm4_9b",
    "no model at all",
    "",
]


def _reference(text: str) -> tuple[int, dict[str, Any], str] | None:
    """The loop the callers had: every alias of every model, tokenized on each call."""
    best: tuple[int, dict[str, Any], str] | None = None
    for m in models():
        for alias in [m["name"], *(m.get("aliases") or [])]:
            a = norm_name(alias)
            if a and names_model(text, alias) and (best is None or len(a) > best[0]):
                best = (len(a), m, alias)
    return best


@pytest.mark.parametrize("text", NAMES)
def test_the_longest_alias_is_the_one_every_alias_gives(text: str) -> None:
    assert longest_alias(text) == _reference(text)


def test_a_claim_tokenizes_each_alias_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = published._tokens
    monkeypatch.setattr(published, "_tokens", lambda s: calls.append(s) or real(s))
    published._aliases.cache_clear()
    cfg = Config.create(side="mindformers", path="configs/llama2/pretrain_llama2_7b.yaml")
    found, _ = claimed_model(cfg)
    assert found is not None and found["name"].lower().startswith("llama")
    aliases = sum(1 + len(m.get("aliases") or []) for m in models())
    assert len(calls) == aliases + 1  # each alias, and the file name
    calls.clear()
    claimed_model(cfg)
    assert calls == ["pretrain_llama2_7b.yaml"]
