"""Text edits: what a fix changes in one file, as character spans of the text it read.

A fix is planned against the exact text the lint read (``digest`` is that text's hash), so
that a file changed in between is refused rather than overwritten, and so that everything
outside the edited spans stays byte for byte as it was.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict


class TextEdit(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    path: str
    # character offsets into the text as read: [start, end) is replaced by ``text``;
    # start == end inserts
    start: int
    end: int
    text: str
    # 1-based line of the edit, for messages and the editor
    line: int


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """``text`` with the (non-overlapping) ``edits`` applied; later offsets first so that
    earlier ones stay valid. Insertions at one place keep the order they are given in."""
    out = text
    order = sorted(range(len(edits)), key=lambda i: (edits[i].start, edits[i].end, i))
    for i in reversed(order):
        e = edits[i]
        out = out[: e.start] + e.text + out[e.end :]
    return out


def overlaps(a: TextEdit, b: TextEdit) -> bool:
    """Two edits that touch the same characters (insertions at one place do not)."""
    if a.path != b.path:
        return False
    a_ins, b_ins = a.start == a.end, b.start == b.end
    if a_ins and b_ins:
        return False
    if a_ins:
        return b.start < a.start < b.end
    if b_ins:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end
