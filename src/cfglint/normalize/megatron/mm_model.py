"""MindSpeed-MM's model JSON: the model a MindSpeed-MM launch trains is not on its command
line but in the file ``--mm-model`` names (mindspeed_mm/configs/config.py:114-116 @ 57af0fd);
the language model is its ``text_decoder`` section. Read it, or say the model is unknown:
Megatron's own structure defaults never describe it.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from cfglint.model.record import Record
from cfglint.model.values import Loc, Value

# Megatron dests that describe the model: MindSpeed-MM takes them from the model JSON.
MODEL_DESTS = frozenset(
    {
        "num_layers",
        "hidden_size",
        "ffn_hidden_size",
        "num_attention_heads",
        "num_query_groups",
        "group_query_attention",
        "hidden_dropout",
        "attention_dropout",
        "normalization",
        "position_embedding_type",
        "rotary_base",
        "untie_embeddings_and_output_weights",
        "add_bias_linear",
        "add_qkv_bias",
        "init_method_std",
        "layernorm_epsilon",
        "norm_epsilon",
        "max_position_embeddings",
        "swiglu",
        "kv_channels",
        "qk_layernorm",
        "num_experts",
        "attention_softmax_in_fp32",
        "rotary_percent",
    }
)
# JSON key -> dest where the names differ
_RENAMED = {"rope_theta": "rotary_base"}
MAX_JSON = 4 << 20


class ModelFile(Record):
    __slots__ = ("path", "section", "text", "why")

    path: str | None
    section: dict[str, Any]
    text: str
    why: str  # why it could not be read

    def __init__(
        self,
        path: str | None,
        section: dict[str, Any] | None = None,
        text: str = "",
        why: str = "",
    ) -> None:
        self.path = path
        self.section = {} if section is None else section
        self.text = text
        self.why = why


def find_model_file(named: str, script: str) -> ModelFile:
    """``named`` as MindSpeed-MM opens it: relative to the working directory, which the
    scripts expect to be the repository root; tried next to the script and in the folders
    above it, then as given."""
    if os.path.isabs(named):
        tries = [named]
    else:
        here = os.path.dirname(os.path.abspath(script))
        tries = []
        for _ in range(6):
            tries.append(os.path.join(here, named))
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        tries.append(os.path.abspath(named))
    for p in tries:
        if os.path.isfile(p):
            return _read(p)
    return ModelFile(
        None, why=f"{named} was not found (looked relative to the script and above it)"
    )


def _read(path: str) -> ModelFile:
    if not path.endswith(".json"):
        return ModelFile(path, why=f"{path} is not a JSON model file; its settings are not read")
    try:
        if os.path.getsize(path) > MAX_JSON:
            return ModelFile(path, why=f"{path} is larger than {MAX_JSON >> 20} MiB")
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return ModelFile(path, why=f"{path} cannot be read: {' '.join(str(exc).split())[:120]}")
    section = data.get("text_decoder") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return ModelFile(path, why=f"{path} has no text_decoder section")
    return ModelFile(path, section, text)


def _line(text: str, key: str) -> int:
    """The line of ``"key":`` inside the text_decoder section (else its first line)."""
    start = text.find('"text_decoder"')
    m = re.compile(rf'"{re.escape(key)}"\s*:').search(text, max(start, 0))
    return text.count("\n", 0, m.start() if m else max(start, 0)) + 1


def model_value(mf: ModelFile, dest: str) -> Value | None:
    """The text decoder's setting for ``dest``; None when the JSON does not set it."""
    sec = mf.section
    keys = {_RENAMED.get(k, k): k for k in sec}
    assert mf.path is not None

    def at(key: str, value: Any) -> Value:
        loc = Loc.model_construct(path=mf.path, line=_line(mf.text, key), column=1)
        return Value.written(value, knob=f"text_decoder.{key}", loc=loc)

    if dest == "swiglu" and "activation_func" in sec:
        glu = bool(sec.get("gated_linear_unit")) and sec["activation_func"] == "silu"
        return at("activation_func", glu)
    if dest == "add_bias_linear" and "add_bias_linear" not in sec and "disable_bias_linear" in sec:
        return at("disable_bias_linear", not sec["disable_bias_linear"])
    if dest == "layernorm_epsilon" and "norm_epsilon" in sec and "layernorm_epsilon" not in sec:
        return at("norm_epsilon", sec["norm_epsilon"])
    key = keys.get(dest)
    if key is None:
        return None
    return at(key, sec[key])
