"""Which MindSpeed-LLM release a launch script is an example of, by its file name
(data/mindspeed_llm_examples.yaml). cfglint reads MindSpeed-LLM's defaults from one release's
argument table; a script named like an example that release no longer ships (the DeepSeek-V2
scripts end with v2.2.0) is an older release's, and its defaults are then said to be the
table's, not its own."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from cfglint.load.datacache import DATA_DIR, load_data
from cfglint.normalize.megatron.input import MegatronInput


@cache
def _examples() -> dict[str, Any]:
    return load_data(DATA_DIR / "mindspeed_llm_examples.yaml")


def older_example(m: MegatronInput) -> str | None:
    """An input warning for a MindSpeed-LLM script named like an example of older
    releases only; None otherwise (another kind, a dialect table of its own, a name the
    table's release ships or no example has)."""
    if m.kind != "mindspeed-script" or (
        m.dialect is not None and m.dialect.table != "mindspeed-llm"
    ):
        return None
    data = _examples()
    name = os.path.basename(m.path)
    shipped = data["scripts"].get(name)
    table = data["table_release"]
    if not shipped or table in shipped:
        return None
    return (
        f"{m.path}:1: named like MindSpeed-LLM's example {name}, which {', '.join(shipped)} "
        f"ship and {table} does not; cfglint's MindSpeed-LLM defaults are {table}'s, so a "
        f"default labelled {table} may differ in {shipped[-1]}"
    )
