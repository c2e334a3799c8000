"""Published architectures of well-known models (data/reference_models.yaml) and whether a
name (a file, a checkpoint or model directory, a model class) names one of them.

The normalizer reads them where MindFormers itself would read a published config.json it
cannot see here (an HF-style config's ``pretrained_model_dir`` that names the model); the
upstream-diff rule (evidence/reference.py) compares a config against them.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from cfglint.load.datacache import DATA_DIR, load_data

DATA = DATA_DIR / "reference_models.yaml"


def norm_name(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _tokens(s: str) -> list[str]:
    """Identity tokens: runs of letters and runs of digits, separators dropped, so that
    ``Qwen2.5-7B``, ``qwen2_5_7b`` and ``qwen2.5-7b`` agree (qwen 2 5 7 b) while
    ``qwen2_57b`` (qwen 2 57 b) does not."""
    return re.findall(r"[a-z]+|[0-9]+", s.lower())


def names_model(text: str, alias: str) -> bool:
    """``alias`` names the whole model in ``text``: its tokens appear in a row, and the
    match is not part of a longer identity (no number right after it, as in gpt2 in
    gpt2_13b, and no letters or number right before it glued to the name)."""
    return _names_tokens(_tokens(text), _tokens(alias))


def _names_tokens(t: list[str], a: list[str]) -> bool:
    """:func:`names_model` on the two names' tokens."""
    n = len(a)
    if not n or a[0] not in t:
        return False
    for i in range(len(t) - n + 1):
        if t[i : i + n] != a:
            continue
        after = t[i + n] if i + n < len(t) else ""
        if a[-1].isdigit() and (after.isdigit() or after in ("b", "m", "k")):
            # a name ending in a version continues: gpt2 in gpt2_13b, qwen2 in qwen2_7b
            continue
        return True
    return False


@cache
def models() -> list[dict[str, Any]]:
    if not DATA.exists():
        return []
    return list(load_data(DATA).get("models") or [])


def named_model(text: str) -> tuple[dict[str, Any], str] | None:
    """The published model ``text`` names (the longest matching alias wins) and that alias."""
    best = longest_alias(text)
    return (best[1], best[2]) if best else None


def longest_alias(text: str) -> tuple[int, dict[str, Any], str] | None:
    """(length of the alias's normalized name, the model, the alias) of the longest alias
    ``text`` names (the first of equal length, in the table's order), or None. ``text`` is
    tokenized once and each alias once per run: two lints ask about ~400 aliases (issue 29)."""
    t = _tokens(text)
    best: tuple[int, dict[str, Any], str] | None = None
    for m, alias, a, tokens in _aliases():
        if a and _names_tokens(t, tokens) and (best is None or len(a) > best[0]):
            best = (len(a), m, alias)
    return best


@cache
def _aliases() -> list[tuple[dict[str, Any], str, str, list[str]]]:
    """Each published model's names: (model, alias, normalized alias, alias tokens)."""
    return [
        (m, alias, norm_name(alias), _tokens(alias))
        for m in models()
        for alias in [m["name"], *(m.get("aliases") or [])]
    ]
