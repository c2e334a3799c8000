"""Dropout whose probability is written in the code."""

from __future__ import annotations

import ast
from typing import Any

from cfglint.evidence.scan.common import NO, call_arg, literal
from cfglint.evidence.scan.model import DropoutSite, SrcLoc


class DropoutMixin:
    """Part of the scanner's visitor (see :mod:`scanner`): dropout sites."""

    def _dropout(self, node: ast.Call, qual: str, style: str, line: int) -> None:
        how = "p"
        if style in ("module", "func", "torchfn"):
            expr = call_arg(node, 0 if style == "module" else 1, "p")
            if style != "module":
                flag = "train" if style == "torchfn" else "training"
                if literal(call_arg(node, 2, flag)) is False:
                    return  # dropout(..., training=False) does nothing
            if expr is None:
                if style == "torchfn":
                    return
                p: Any = 0.5
                how = "default"
            else:
                p = literal(expr)
        elif style == "ms_keep":
            p_expr = call_arg(node, 99, "p")
            if p_expr is not None:
                p = literal(p_expr)
            else:
                keep = call_arg(node, 0, "keep_prob")
                p = _keep_to_p(keep)
                how = "keep_prob" if keep is not None else "default"
        else:  # ms_prim
            keep = call_arg(node, 0, "keep_prob")
            p = _keep_to_p(keep)
            how = "keep_prob" if keep is not None else "default"
        if isinstance(p, bool) or not isinstance(p, (int, float)) or p == 0:
            return  # driven by a variable (config), or off
        self.dropouts.append(
            DropoutSite(
                loc=SrcLoc(line=line),
                api=qual,
                p=round(float(p), 6),
                text=self.code(node),
                how=how,  # type: ignore[arg-type]
                function=self.cur.summary.qualname,
            )
        )


def _keep_to_p(keep: ast.expr | None) -> Any:
    if keep is None:
        return 0.5
    v = literal(keep)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return 1.0 - v
    return NO
