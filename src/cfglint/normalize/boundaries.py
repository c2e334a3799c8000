"""How a packed sample's document ends are treated, in one form for both frameworks."""

from __future__ import annotations

from cfglint.model.values import Value

# the three things a framework can do at an end-of-document token inside a packed sample,
# in the order both frameworks' dataset options name them
BOUNDARY_PARTS = (
    "attention stops at document ends",
    "positions restart per document",
    "end-of-document tokens left out of the loss",
)


def boundaries_value(parts: list[str], knob: str, how: str, inputs: list[Value | None]) -> Value:
    """The canonical value: the parts that apply joined with "; ", or "none"."""
    return Value.derived("; ".join(parts) or "none", knob, how, inputs)
