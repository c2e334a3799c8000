"""Weight-decay grouping policies: classification, wording and comparison.

A policy says which parameters an optimizer does *not* decay. The two frameworks'
defaults, read from their sources:

- MindFormers ``mindformers/trainer/optimizer_grouped_parameters.py``,
  ``get_optimizer_grouped_parameters`` (v1.3.0 to v1.7.0): no decay for a parameter when
  ``len(param.shape) == 1 or param.name.endswith(".bias")``, unless the model defines
  ``no_weight_decay()`` / ``no_weight_decay_keywords()``.
- Megatron-LM ``megatron/core/optimizer/__init__.py``: ``_get_param_groups`` at core_v0.13.0
  (``no_wd = name.endswith(".bias") or len(param.shape) == 1``), and
  ``get_standard_config_overrides`` at core_v0.19.0 (``wd_mult=0`` for ``*.bias`` and
  ``len(param.shape) == 1``; with ``apply_wd_to_qk_layernorm`` the q/k layernorm weights
  are decayed again).
- MindSpore ``nn.Optimizer`` given a plain parameter list (no groups) decays only the
  parameters whose names contain neither ``beta`` nor ``gamma``.
"""

from __future__ import annotations

from typing import Literal

from cfglint.evidence.scan.model import Evidence, GroupEvidence
from cfglint.model.values import fmt

MINDFORMERS_DEFAULT = (
    "MindFormers default policy (no decay for 1-D parameters and names ending in .bias; "
    "get_optimizer_grouped_parameters)"
)
MEGATRON_DEFAULT = (
    "Megatron default policy (no decay for 1-D parameters and names ending in .bias; "
    "megatron/core/optimizer)"
)
MINDSPORE_UNGROUPED = ["beta", "gamma"]

Comparison = Literal["same", "differ", "unclear"]


def classify(g: GroupEvidence) -> tuple[str | None, list[str], list[Evidence], str]:
    """(policy, name fragments, evidence, detail) read from a group-building function."""
    if g.module_types:
        types = list(dict.fromkeys(g.module_types))
        bias = ["bias"] if any("bias" in n.lower() for n in g.names) else []
        detail = "grouped by module type: " + ", ".join(bias + [f"{t} weights" for t in types])
        return "exclude_module_types", bias + types, g.module_evidence + g.name_evidence, detail
    if g.shape:
        names = sorted(set(g.names))
        extra = f" (and names containing {', '.join(names)})" if names else ""
        return "exclude_1d", names, g.shape + g.name_evidence, f"1-D parameters skipped{extra}"
    if g.names:
        names = sorted(set(g.names))
        if all("bias" in n.lower() for n in names):
            return "exclude_bias", names, g.name_evidence, "biases skipped by name"
        return "exclude_by_name", names, g.name_evidence, "skipped by name: " + ", ".join(names)
    if g.group_decays:
        vals = ", ".join(
            fmt(a.value) if a.kind == "literal" else (a.text or "?") for a in g.group_decays
        )
        return "explicit_groups", [], g.group_evidence, f"hand-built groups, weight_decay {vals}"
    return None, [], [], ""


def describe(policy: str | None, names: list[str] | None = None) -> str:
    names = names or []
    match policy:
        case "decay_all":
            return "every parameter is decayed, biases and norm weights included"
        case "exclude_bias":
            return "biases are not decayed; norm weights and other 1-D parameters are"
        case "exclude_1d":
            return "1-D parameters (biases, norm weights) are not decayed"
        case "exclude_by_name":
            return (
                "parameters whose names contain "
                + ", ".join(repr(n) for n in names)
                + " are not decayed"
            )
        case "explicit_groups":
            return "parameter groups are built by hand"
        case "exclude_module_types":
            types = [n for n in names if n != "bias"]
            what = "biases and " if "bias" in names else ""
            return (
                f"{what}the weights of {', '.join(types)} modules are not decayed "
                "(grouped by module type)"
            )
    return "unknown"


def _covers(policy: str, names: list[str]) -> set[str] | None:
    """Which kinds of parameters escape decay: "bias", "norm" (norm weights, 1-D)."""
    if policy == "decay_all":
        return set()
    if policy == "exclude_bias":
        return {"bias"}
    if policy in ("exclude_1d", "default"):
        return {"bias", "norm"}
    if policy == "exclude_module_types":
        out = {"bias"} if "bias" in names else set()
        for n in names:
            low = n.lower()
            if "norm" in low:
                out.add("norm")
            elif "embed" in low:
                out.add("embedding")
            elif n != "bias":
                out.add(low)
        return out
    if policy == "exclude_by_name":
        low = [n.lower() for n in names]
        out = set()
        if any("bias" in n for n in low):
            out.add("bias")
        if any(k in n for n in low for k in ("norm", "ln_", "ln.", "gamma", "beta")):
            out.add("norm")
        return out
    return None


def compare(a: str, a_names: list[str], b: str, b_names: list[str]) -> Comparison:
    """Whether two policies decay the same parameters ("default" = shape + .bias rule)."""
    ca, cb = _covers(a, a_names), _covers(b, b_names)
    if ca is None or cb is None:
        return "unclear"
    if ca == cb:
        # name lists only approximate the shape rule: say so instead of claiming a match
        return "unclear" if "exclude_by_name" in (a, b) and a != b else "same"
    if "exclude_by_name" in (a, b):
        return "unclear"
    return "differ"
