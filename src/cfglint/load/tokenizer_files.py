"""Special-token ids from a Hugging Face tokenizer folder (JSON only, nothing executed)."""

from __future__ import annotations

import json
import os
from typing import Any

MAX_JSON = 64 * 1024 * 1024


class TokenizerError(Exception):
    pass


def _load(path: str) -> Any:
    if os.path.getsize(path) > MAX_JSON:
        raise TokenizerError(f"{path}: larger than {MAX_JSON} bytes")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise TokenizerError(f"{path}: not readable JSON ({exc})") from None


def _name(tok: Any) -> str | None:
    if isinstance(tok, str):
        return tok
    if isinstance(tok, dict) and isinstance(tok.get("content"), str):
        return tok["content"]
    return None


def special_ids(path: str) -> tuple[dict[str, int], dict[str, str]]:
    """{"bos": id, "eos": id, "pad": id} and where each came from."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    ids: dict[str, int] = {}
    where: dict[str, str] = {}
    for fname in ("generation_config.json", "config.json"):
        p = os.path.join(folder, fname)
        if os.path.isfile(p):
            data = _load(p)
            for k in ("bos", "eos", "pad"):
                v = data.get(f"{k}_token_id")
                if isinstance(v, list) and v:
                    v = v[0]
                if isinstance(v, int) and k not in ids:
                    ids[k], where[k] = v, f"{p} {k}_token_id"
    vocab: dict[str, int] = {}
    tj = os.path.join(folder, "tokenizer.json")
    if os.path.isfile(tj):
        data = _load(tj)
        for t in data.get("added_tokens") or []:
            if isinstance(t, dict) and isinstance(t.get("id"), int):
                vocab[str(t.get("content"))] = t["id"]
    tc = os.path.join(folder, "tokenizer_config.json")
    if os.path.isfile(tc):
        data = _load(tc)
        for sid, t in (data.get("added_tokens_decoder") or {}).items():
            if _name(t) is not None and str(sid).isdigit():
                vocab.setdefault(_name(t), int(sid))  # type: ignore[arg-type]
        for k in ("bos", "eos", "pad"):
            name = _name(data.get(f"{k}_token"))
            if name is not None and name in vocab and k not in ids:
                ids[k], where[k] = vocab[name], f"{tc} {k}_token {name!r}"
    if not ids:
        raise TokenizerError(
            f"{path}: no special-token ids found (looked for config.json, "
            "generation_config.json, tokenizer_config.json, tokenizer.json)"
        )
    return ids, where
