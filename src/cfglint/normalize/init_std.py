"""Initialization formulas both sides share (Megatron's, and MindFormers' port of it)."""

from __future__ import annotations

import math
from typing import Any

from cfglint.model.values import Value


def scaled_std(std: Any, num_layers: Any) -> float | None:
    """init_method_std / sqrt(2 x num_layers), the std of the layers that write into the
    residual stream; None when either input is not a usable number. Rounded to 6
    significant digits so that both sides' identical formulas compare equal in print."""
    if isinstance(std, bool) or isinstance(num_layers, bool):
        return None
    if not isinstance(std, int | float) or not isinstance(num_layers, int) or num_layers < 1:
        return None
    return float(f"{std / math.sqrt(2.0 * num_layers):.6g}")


def scaled_output_std(std: Value, layers: Value, who: str) -> Value:
    """The derived std of the output projections of a model that scales by depth."""
    return Value.derived(
        scaled_std(std.value, layers.value) if std.known and layers.known else None,
        "init_method_std",
        f"{who} initialize linear_proj and linear_fc2 with init_method_std / sqrt(2 x num_layers)",
        [std, layers],
    )
