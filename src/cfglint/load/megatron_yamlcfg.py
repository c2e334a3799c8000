"""Megatron's experimental ``--yaml-cfg`` file.

Top-level keys are argparse dest names; ``language_model:`` holds TransformerConfig
fields and ``model_parallel:`` ModelParallelConfig fields, both flattened into the same
namespace by Megatron after validation. Megatron loads it with PyYAML ``safe_load``
(YAML 1.1), which our tree loader follows.
"""

from __future__ import annotations

from cfglint.load.yamltree import Node, load_yaml
from cfglint.model.values import Loc, Value

NESTED = ("language_model", "model_parallel")


def load_yaml_cfg(path: str) -> tuple[dict[str, Value], str]:
    doc = load_yaml(path)
    out: dict[str, Value] = {}

    def put(key: str, node: Node) -> None:
        if node.is_map:
            loc = Loc.model_construct(path=path, line=node.line, column=node.column)
            out[key] = Value.unknown(key, "a mapping where a value belongs", loc=loc)
            return
        out[key] = Value.written(
            node.plain(),
            knob=key,
            loc=Loc.model_construct(path=path, line=node.line, column=node.column),
            raw=node.raw,
            yaml11_string=node.yaml11_string,
        )

    for key, node in doc.root.value.items():
        if key in NESTED and node.is_map:
            for k2, n2 in node.value.items():
                put(k2, n2)
        else:
            put(key, node)
    return out, doc.text
