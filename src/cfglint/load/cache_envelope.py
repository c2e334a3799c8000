"""What every cache file holds (load/datacache.py): the envelope naming which part wrote it,
for which cfglint, derived from which content, around the payload.

A module of its own, imported when an entry is written: a lint that only reads its cache
checks an envelope in plain code against :data:`cfglint.load.datacache.ENVELOPE_FIELDS`,
and creating this pydantic class cost ~1 M instructions at import
(bench/results/fresh_env.md).
"""

# Annotations are evaluated here, not kept as strings (no `from __future__ import
# annotations`): pydantic turns each string field annotation into a typing.ForwardRef,
# which Python 3.11 compiles one by one (tests/model/test_model_schemas.py).
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class Envelope(BaseModel):
    """What every cache file holds: which part wrote it, for which cfglint, derived from
    which content (``key``), and the payload (validated by the reader's own schema)."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    format: Literal[1]
    part: str
    tool: str
    key: str
    payload: Any
