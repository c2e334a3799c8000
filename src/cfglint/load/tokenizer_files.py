"""Special-token ids from a Hugging Face tokenizer folder (JSON only, nothing executed)."""

from __future__ import annotations

import json
import os
from typing import Any

MAX_JSON = 64 * 1024 * 1024


class TokenizerError(Exception):
    pass


def _load(path: str) -> dict[str, Any]:
    """The top-level JSON object of a tokenizer file; anything else is a TokenizerError."""
    from cfglint.load.safeio import decode_text, read_bytes
    from cfglint.model.errors import InputError

    try:
        text = decode_text(read_bytes(path, max_bytes=MAX_JSON, what="JSON file"), path)
        data = json.loads(text)
    except InputError as exc:
        raise TokenizerError(exc.one_line()) from None
    except ValueError as exc:
        raise TokenizerError(f"{path}: not readable JSON ({exc})") from None
    except RecursionError:
        raise TokenizerError(f"{path}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise TokenizerError(
            f"{path}: top level is {type(data).__name__} in JSON terms, expected an object"
        )
    return data


def _name(tok: Any) -> str | None:
    if isinstance(tok, str):
        return tok
    if isinstance(tok, dict) and isinstance(tok.get("content"), str):
        return tok["content"]
    return None


_SPECIAL = ("bos", "eos", "pad")


def _ids_from_configs(folder: str, ids: dict[str, int], where: dict[str, str]) -> None:
    """``{k}_token_id`` of generation_config.json, then config.json (the first wins)."""
    for fname in ("generation_config.json", "config.json"):
        p = os.path.join(folder, fname)
        if not os.path.lexists(p):
            continue
        data = _load(p)
        for k in _SPECIAL:
            v = data.get(f"{k}_token_id")
            if isinstance(v, list) and v:
                v = v[0]
            if isinstance(v, int) and k not in ids:
                ids[k], where[k] = v, f"{p} {k}_token_id"


def _added_tokens(folder: str) -> dict[str, int]:
    """tokenizer.json's added tokens: content -> id."""
    vocab: dict[str, int] = {}
    tj = os.path.join(folder, "tokenizer.json")
    if os.path.lexists(tj):
        data = _load(tj)
        added = data.get("added_tokens")
        for t in added if isinstance(added, list) else []:
            if isinstance(t, dict) and isinstance(t.get("id"), int):
                vocab[str(t.get("content"))] = t["id"]
    return vocab


def _ids_from_tokenizer_config(
    folder: str, vocab: dict[str, int], ids: dict[str, int], where: dict[str, str]
) -> None:
    """tokenizer_config.json's ``{k}_token`` names, looked up among the added tokens."""
    tc = os.path.join(folder, "tokenizer_config.json")
    if not os.path.lexists(tc):
        return
    data = _load(tc)
    decoder = data.get("added_tokens_decoder")
    for sid, t in (decoder if isinstance(decoder, dict) else {}).items():
        if _name(t) is not None and str(sid).isdigit():
            vocab.setdefault(_name(t), int(sid))  # type: ignore[arg-type]
    for k in _SPECIAL:
        name = _name(data.get(f"{k}_token"))
        if name is not None and name in vocab and k not in ids:
            ids[k], where[k] = vocab[name], f"{tc} {k}_token {name!r}"


def special_ids(path: str) -> tuple[dict[str, int], dict[str, str]]:
    """{"bos": id, "eos": id, "pad": id} and where each came from."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    ids: dict[str, int] = {}
    where: dict[str, str] = {}
    _ids_from_configs(folder, ids, where)
    _ids_from_tokenizer_config(folder, _added_tokens(folder), ids, where)
    if not ids:
        raise TokenizerError(
            f"{path}: no special-token ids found (looked for config.json, "
            "generation_config.json, tokenizer_config.json, tokenizer.json)"
        )
    return ids, where
