"""Fix texts in the dialect of the Megatron side: a rule's fix names Megatron-LM's flags;
a fork spells some settings otherwise (Megatron-DeepSpeed's --num-key-value-heads for
--group-query-attention --num-query-groups) or has no such flag at all. No fix may name a
flag its target does not have.
"""

from __future__ import annotations

from cfglint.load.dialects import get_dialect
from cfglint.model.findings import Finding
from cfglint.model.lazy_re import compile_on_use
from cfglint.normalize.megatron.args import load_table

_FLAG = compile_on_use(r"--[A-Za-z][A-Za-z0-9_-]*")


def respell(text: str, name: str) -> str:
    d = get_dialect(name)
    # rule texts are written for Megatron-LM and MindSpeed-LLM (naming both where they
    # differ); forks and other flavours get them in their own spelling
    if not d.modelled or not text or d.kind in ("megatron-lm", "mindspeed-llm"):
        return text
    out = text
    # longest spellings first: "--group-query-attention --num-query-groups" before its parts
    for k, v in sorted(d.spellings, key=lambda kv: -len(kv[0])):
        if k in out and v is not None:
            out = out.replace(k, v)
    flags = load_table(d.table).by_flag
    missing = list(dict.fromkeys(f for f in _FLAG.findall(out) if f not in flags))
    if missing:
        out += (
            f" ({d.project} has no {', '.join(missing)}: "
            "the setting cannot be changed there with that flag)"
        )
    return out


def respell_fixes(findings: list[Finding], name: str) -> list[Finding]:
    """``findings`` with their fix texts in dialect ``name`` (only those with a Megatron side)."""
    out = []
    for f in findings:
        if (f.fix and any(loc.side == "megatron" for loc in f.locations)) or "megatron" in f.values:
            fixed = respell(f.fix or "", name)
            if fixed != f.fix:
                f = f.model_copy(update={"fix": fixed})
        out.append(f)
    return out
