"""Placeholder paths of published recipes.

Official launch scripts and configs ship with paths for the user to fill in:
``CKPT_LOAD_DIR="your model ckpt path"`` (MindSpeed-LLM), ``"/path/to/wiki103..."``
(MindFormers), ``path/to/tokenizer.model``. Such a path names no real file: reading it as a
loaded checkpoint or a dataset would invent a difference (or hide one). Unquoted in a
command line, ``"your model ckpt path"`` word-splits into ``--load your`` and stray words,
so the first word alone must be recognized too.
"""

from __future__ import annotations

import re

from cfglint.model.lazy_re import compile_on_use
from cfglint.model.values import Value

_PLACEHOLDER = compile_on_use(
    r"""^(
        your\b.*                      # "your data path", "your model ckpt path", "your"
      | .*\bpath/to\b.*               # /path/to/..., path/to/tokenizer.model
      | <[^>]*>                       # <ckpt_dir>
      | \{[^}]*\}                     # {CKPT_PATH} left unexpanded
      | (xxx+|todo|tbd|none|null)     # obvious fillers
      | /?(data|ckpt|model)?/?xxx.*
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
# what any placeholder above holds, lowercased (its letters have no case-insensitive match
# outside ASCII, so str.lower keeps every one): most paths hold none of them, and the
# pattern (~2 M instructions to compile) is compiled only for a text that might match
_PLACEHOLDER_PARTS = ("your", "path/to", "xxx", "todo", "tbd", "none", "null")


def _is_placeholder(text: str) -> bool:
    low = text.lower()
    if not (text.startswith(("<", "{")) or any(part in low for part in _PLACEHOLDER_PARTS)):
        return False
    return _PLACEHOLDER.match(text) is not None


def placeholder_text(value: object) -> str:
    """The placeholder as written ("" when ``value`` is a real-looking path)."""
    if isinstance(value, (list, tuple)):
        words = [str(x) for x in value if x is not None]
        joined = " ".join(words)
        # a word-split placeholder ("your", "data", "path") or a blend weight list
        if words and (
            _is_placeholder(joined) or any(_is_placeholder(w) for w in words if "/" in w)
        ):
            return joined
        return ""
    if not isinstance(value, str):
        return ""
    text = value.strip().strip("'\"")
    return text if text and _is_placeholder(text) else ""


def as_placeholder(v: Value | None, what: str) -> Value | None:
    """``v`` turned unknown when it is a placeholder path, else ``v`` unchanged."""
    if v is None or not v.known:
        return v
    text = placeholder_text(v.value)
    if not text:
        return v
    split = (
        ' (an unquoted placeholder such as "your model ckpt path" splits into words)'
        if text.lower() == "your"
        else ""
    )
    return Value.unknown(
        v.knob,
        f"{what} {text!r} is a placeholder of the published recipe, to be replaced by a real "
        f"path{split}",
        loc=v.loc,
        via=v.via,
        raw=text,
    )
