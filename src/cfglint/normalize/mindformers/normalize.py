"""MindFormers YAML -> the normalized model, with MindFormers' own defaults and derivations.

Three layouts exist in the wild:

- legacy (``use_legacy`` absent or True): ``model.model_config.type: LlamaConfig`` and the
  class's keyword defaults; ``moe_config`` at top level with MoEConfig defaults;
- mcore (``use_legacy: False``): HF-style keys under ``model.model_config``, renamed to
  TransformerConfig fields; defaults per model class < MFModelConfig < TransformerConfig;
  the architecture may come from ``pretrained_model_dir/config.json``;
- v2 template (top-level ``model_config`` / ``training_args`` /
  ``distribute_parallel_config``): the mcore model with other section names.

Facts (defaults, formulas, template behaviour) are from the MindFormers versions recorded
in ``data/mindformers.yaml``.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from cfglint.load.mindformers_yaml import MindFormersYaml, load_mindformers_yaml
from cfglint.load.yamltree import Node, get
from cfglint.model.config import Config
from cfglint.model.errors import InputError
from cfglint.model.values import Loc, Value
from cfglint.normalize.mindformers.defaults import (
    REQUIRED,
    Component,
    MFDefaults,
    coerce,
    mf_defaults,
)

MAX_HF_CONFIG = 1024 * 1024


class MFView:
    """Lookups into one MindFormers config with positions and defaults."""

    def __init__(self, doc: MindFormersYaml, d: MFDefaults) -> None:
        self.doc, self.d, self.root = doc, d, doc.root
        self.warnings: list[str] = []
        self.v2 = "training_args" in self.root.value or (
            "model_config" in self.root.value and "model" not in self.root.value
        )
        legacy = self.node("use_legacy")
        self.mcore = self.v2 or (legacy is not None and legacy.value is False)
        self.model_path = "model_config" if self.v2 else "model.model_config"
        self.model_node = self.node(self.model_path)
        self.hf: dict[str, Value] = {}
        # set when the architecture lives in a config.json we cannot read
        self.hf_missing = ""
        if self.mcore:
            self.hf = self._load_hf_config()
        self.model_cls = self._model_class()

    # -- basic access -------------------------------------------------------------------
    def node(self, dotted: str) -> Node | None:
        return get(self.root, dotted)

    def value(self, node: Node, knob: str, kind: str | None = None) -> Value:
        loc = Loc(path=node.path, line=node.line, column=node.column)
        if node.yaml11_string:
            return Value.written(node.value, knob=knob, loc=loc, raw=node.raw, yaml11_string=True)
        v = coerce(node.plain(), kind)
        wrong = _wrong_type(v, kind)
        if wrong:
            self.warnings.append(f"{loc}: {knob} is {wrong}")
            return Value.unknown(knob, f"{wrong} as written", loc=loc)
        return Value.written(v, knob=knob, loc=loc, raw=node.raw)

    def key(
        self,
        dotted: str,
        comp: Component | None,
        default_key: str | None = None,
        kind: str | None = None,
        fallback: Any = REQUIRED,
    ) -> Value:
        """``dotted`` as written, else ``comp``'s default for it, else ``fallback``."""
        n = self.node(dotted)
        if n is not None:
            return self.value(n, dotted, kind)
        k = default_key or dotted.rsplit(".", 1)[-1]
        if comp is not None and comp.has(k):
            return Value.default(coerce(comp.defaults[k], kind), knob=dotted, source=comp.label)
        if fallback is not REQUIRED:
            return Value.default(fallback, knob=dotted, source="MindFormers")
        return Value.unknown(
            dotted, f"not set and {comp.label if comp else 'MindFormers'} has no default for it"
        )

    def comp(self, name: str, role: str) -> Component | None:
        return self.d.get(name, role)

    # -- model config --------------------------------------------------------------------
    def _model_class(self) -> Component | None:
        if self.mcore:
            mt = self.mcore_raw("model_type")
            return self.d.by_model_type.get(str(mt.value)) if mt is not None and mt.known else None
        t = self.node(f"{self.model_path}.type")
        return self.comp(str(t.value), "model_config_legacy") if t is not None else None

    def legacy(self, keys: list[str], kind: str | None) -> Value:
        for k in keys:
            n = self.node(f"{self.model_path}.{k}")
            if n is not None:
                return self.value(n, f"{self.model_path}.{k}", kind)
        cls = self.model_cls
        for k in keys:
            if cls is not None and k in cls.defaults:
                return Value.default(
                    coerce(cls.defaults[k], kind),
                    knob=f"{self.model_path}.{keys[0]}",
                    source=cls.label,
                )
        if cls is None:
            return Value.unknown(
                f"{self.model_path}.{keys[0]}",
                "not set, and the model class is not one cfglint knows",
            )
        return Value.unknown(f"{self.model_path}.{keys[0]}", f"{cls.name} has no such setting")

    def mcore_raw(self, field: str, kind: str | None = None) -> Value | None:
        """A TransformerConfig field as written in YAML or config.json (after renames)."""
        n = self.model_node
        hits: list[tuple[str, Node]] = []
        if n is not None and n.is_map:
            hits = [(k, v) for k, v in n.value.items() if self.d.canonical(k) == field]
        # the trainer flattens top-level moe_config items into the model arguments
        moe = self.node("moe_config")
        if moe is not None and moe.is_map:
            hits += [
                (f"moe_config.{k}", v) for k, v in moe.value.items() if self.d.canonical(k) == field
            ]
        if hits:
            if len(hits) > 1:
                names = ", ".join(k for k, _ in hits)
                self.warnings.append(
                    f"{self.doc.path}: {names} all set {field}; MindFormers "
                    "refuses two keys for the same field"
                )
            k, node = hits[-1]
            knob = k if k.startswith("moe_config.") else f"{self.model_path}.{k}"
            return self._transform(k, self.value(node, knob, kind))
        for k, v in self.hf.items():
            if self.d.canonical(k) == field:
                wrong = _wrong_type(coerce(v.value, kind), kind)
                if wrong:
                    return Value.unknown(v.knob, f"{wrong} in config.json", loc=v.loc)
                return self._transform(k, v)
        return None

    def mcore_field(self, field: str, kind: str | None = None) -> Value:
        v = self.mcore_raw(field)
        if v is not None:
            return (
                v.model_copy(update={"value": coerce(v.value, kind)}) if not v.yaml11_string else v
            )
        knob = f"{self.model_path}.{field}"
        if self.hf_missing:
            return Value.unknown(knob, self.hf_missing)
        chain = [
            self.model_cls,
            self.comp("MFModelConfig", "model_config"),
            self.comp("TransformerConfig", "model_config"),
        ]
        for comp in chain:
            if comp is None:
                continue
            for k, dv in comp.defaults.items():
                if self.d.canonical(k) == field and dv != REQUIRED:
                    return Value.default(
                        coerce(self._apply(k, dv), kind), knob=knob, source=comp.label
                    )
        return Value.unknown(knob, f"no default for TransformerConfig field {field}")

    def _transform(self, key: str, v: Value) -> Value:
        if v.yaml11_string or not v.known:
            return v
        return v.model_copy(update={"value": self._apply(key, v.value)})

    def _apply(self, key: str, value: Any) -> Any:
        fn = self.d.tc_transforms.get(key)
        if fn == "is_float_32":
            if isinstance(value, bool):
                return value
            return str(value).lower() in ("float32", "fp32")
        if fn == "is_use_gated_sigmoid" and isinstance(value, bool):
            return "sigmoid" if value else "softmax"
        if fn == "get_drop_policy" and isinstance(value, bool):
            return "position" if value else "probs"
        return value

    def model(self, field: str) -> Value | None:
        spec = self.d.knobs["model_fields"][field]
        kind = spec.get("as")
        if self.mcore:
            return None if spec.get("mcore") is None else self.mcore_field(spec["mcore"], kind)
        return self.legacy(spec["legacy"], kind)

    def _load_hf_config(self) -> dict[str, Value]:
        n = self.node("pretrained_model_dir")
        if n is None or not isinstance(n.value, str) or not n.value:
            return {}
        base = n.value
        candidates = [base, os.path.join(os.path.dirname(self.doc.path), base)]
        for d in candidates:
            path = os.path.join(d, "config.json")
            if os.path.isfile(path):
                return _read_hf_config(path)
        self.hf_missing = (
            f"not in the YAML; MindFormers reads it from {base}/config.json "
            f"(pretrained_model_dir, {n.path}:{n.line}), which is not available here"
        )
        self.warnings.append(
            f"{n.path}:{n.line}: pretrained_model_dir {base!r} is not here; the model settings "
            "MindFormers would read from its config.json are unknown"
        )
        return {}


def _int(v: Value | None) -> int | None:
    """The value when it is a usable integer (not a bool, not a PyYAML string), else None."""
    if v is None or not v.known or isinstance(v.value, bool) or not isinstance(v.value, int):
        return None
    return v.value


def _wrong_type(v: Any, kind: str | None) -> str:
    """Why ``v`` cannot be the ``kind`` a setting needs ("" when it can)."""
    if v is None or kind is None:
        return ""
    if kind in ("int", "float") and (isinstance(v, bool) or not isinstance(v, (int, float))):
        return f"{v!r}, not a number"
    if kind == "int" and isinstance(v, float) and not math.isfinite(v):
        return f"{v!r}, not a finite number"
    if kind == "bool" and not isinstance(v, bool):
        return f"{v!r}, not true or false"
    if kind == "dtype" and not isinstance(v, str):
        return f"{v!r}, not a dtype name"
    return ""


def _read_hf_config(path: str) -> dict[str, Value]:
    from cfglint.load.safeio import read_text

    text = read_text(path, max_bytes=MAX_HF_CONFIG, what="HF config.json")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputError(path, f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(path, "config.json must hold an object")
    lines = text.splitlines()
    out: dict[str, Value] = {}
    for k, v in data.items():
        if isinstance(v, (dict, list)) and k != "architectures":
            continue
        line = next((i for i, ln in enumerate(lines, 1) if f'"{k}"' in ln), 1)
        out[k] = Value.written(v, knob=f"config.json {k}", loc=Loc(path=path, line=line))
    return out


# ---------------------------------------------------------------------------------------
def load_mindformers(path: str) -> Config:
    doc = load_mindformers_yaml(path)
    view = MFView(doc, mf_defaults())
    cfg = Config(
        side="mindformers",
        path=path,
        kind="mindformers-mcore" if view.mcore else "mindformers-legacy",
        files=list(doc.files),
    )
    cfg.warnings.extend(doc.warnings)
    cls = view.model_cls
    cfg.model_class = cls.name if cls else ""
    cfg.defaults_from = cls.label if cls else f"MindFormers {view.d.project_version}"
    if not view.mcore and view.model_node is not None and cls is None:
        t = view.node(f"{view.model_path}.type")
        if t is not None:
            cfg.warnings.append(
                f"{t.path}:{t.line}: model class {t.value} is not in cfglint's "
                "MindFormers tables; its defaults are unknown"
            )
    for field in view.d.knobs["model_fields"]:
        v = view.model(field)
        if v is not None:
            cfg.set(field, v)
    _parallel(view, cfg)
    _structure(view, cfg)
    _moe(view, cfg)
    _optimizer(view, cfg)
    _precision(view, cfg)
    _other(view, cfg)
    cfg.warnings.extend(view.warnings)
    return cfg


def _bool(v: Value) -> bool:
    return bool(v.value) if v.known else False


def _parallel(view: MFView, cfg: Config) -> None:
    p = cfg.parallel
    tp_comp = view.comp("TransformerOpParallelConfig", "parallel_config")
    if view.v2:
        sec = "distribute_parallel_config"
        names = {
            "data_parallel": None,
            "tensor_parallel": "tensor_model_parallel_size",
            "pipeline_parallel": "pipeline_model_parallel_size",
            "context_parallel": "context_parallel_size",
            "expert_parallel": "expert_model_parallel_size",
            "sequence_parallel": "sequence_parallel",
        }
        for field, key in names.items():
            if key is None:
                continue
            setattr(
                p,
                field,
                view.key(
                    f"{sec}.{key}",
                    None,
                    kind="int" if field != "sequence_parallel" else "bool",
                    fallback=False if field == "sequence_parallel" else 1,
                ),
            )
        p.micro_batch_interleave = view.key(
            f"{sec}.micro_batch_interleave_num", None, kind="int", fallback=1
        )
        p.distributed_optimizer = view.key(
            f"{sec}.optimizer_parallel_config.enable_parallel_optimizer",
            None,
            kind="bool",
            fallback=False,
        )
        p.virtual_pipeline = view.key(
            f"{sec}.pipeline_parallel_config.virtual_pipeline_model_parallel_size",
            None,
            kind="int",
            fallback=1,
        )
        p.micro_batch_num = Value.default(1, "micro_batch_num", "MindFormers v2 template")
    else:
        p.data_parallel = view.key("parallel_config.data_parallel", tp_comp, kind="int")
        p.tensor_parallel = view.key("parallel_config.model_parallel", tp_comp, kind="int")
        p.pipeline_parallel = view.key("parallel_config.pipeline_stage", tp_comp, kind="int")
        p.context_parallel = view.key("parallel_config.context_parallel", tp_comp, kind="int")
        ep = view.node("parallel_config.expert_parallel")
        if ep is None and view.node("moe_config.expert_model_parallel") is not None:
            p.expert_parallel = view.key("moe_config.expert_model_parallel", None, kind="int")
        else:
            p.expert_parallel = view.key("parallel_config.expert_parallel", tp_comp, kind="int")
        p.sequence_parallel = view.key("parallel_config.use_seq_parallel", tp_comp, kind="bool")
        p.micro_batch_num = view.key("parallel_config.micro_batch_num", tp_comp, kind="int")
        p.micro_batch_interleave = view.key(
            "micro_batch_interleave_num", view.comp("GeneralConfig", "top_level"), kind="int"
        )
        p.distributed_optimizer = view.key(
            "parallel.enable_parallel_optimizer",
            view.comp("MsParallelConfig", "parallel"),
            kind="bool",
        )
        p.virtual_pipeline = view.key(
            "model.model_config.pp_interleave_num", view.model_cls, kind="int", fallback=1
        )
    if p.data_parallel is None:
        p.data_parallel = Value.unknown(
            "data_parallel", "v2 template derives it from the device count"
        )
    # Outside (semi-)auto parallel MindFormers resets every parallel size to 1.
    use_par = view.key("use_parallel", view.comp("GeneralConfig", "top_level"), kind="bool")
    if use_par.known and use_par.value is False and not view.v2:
        for field in (
            "data_parallel",
            "tensor_parallel",
            "pipeline_parallel",
            "context_parallel",
            "expert_parallel",
        ):
            cur = getattr(p, field)
            if cur is not None and cur.known and cur.value not in (1, None):
                setattr(
                    p,
                    field,
                    Value.derived(
                        1,
                        cur.knob,
                        "reset to 1 by MindFormers because use_parallel is False",
                        [cur, use_par],
                    ),
                )
        cur = p.sequence_parallel
        if cur is not None and cur.value:
            p.sequence_parallel = Value.derived(
                False,
                cur.knob,
                "reset by MindFormers because use_parallel is False",
                [cur, use_par],
            )
    dims = [p.data_parallel, p.tensor_parallel, p.pipeline_parallel, p.context_parallel]
    if all(d is not None and d.known and isinstance(d.value, int) for d in dims):
        p.world_size = Value.derived(
            math.prod(d.value for d in dims),
            "device count",  # type: ignore[union-attr]
            "MindFormers needs data_parallel x model_parallel x pipeline_stage x context_parallel "
            "devices",
            dims,
        )


def _structure(view: MFView, cfg: Config) -> None:
    s = cfg.structure
    hidden, heads = s.hidden_size, s.num_heads
    # FFN size
    if view.mcore:
        ffn = view.mcore_raw("ffn_hidden_size", "int")
        if ffn is None and _int(hidden) is not None:
            ffn = Value.derived(
                4 * hidden.value,
                "ffn_hidden_size",
                "TransformerConfig default: 4 x hidden size",
                [hidden],
            )
        s.ffn_hidden_size = ffn or Value.unknown("ffn_hidden_size", "hidden size unknown")
    else:
        s.ffn_hidden_size = _legacy_ffn(view, hidden)
    # attention heads and groups
    if view.mcore:
        g = view.mcore_raw("num_query_groups", "int")
        s.num_query_groups = g or Value.derived(
            heads.value, "num_query_groups", "defaults to the number of attention heads", [heads]
        )
        hd = view.mcore_raw("kv_channels", "int")
    else:
        s.num_query_groups = _legacy_kv_heads(view, heads)
        hd = None
        for k in ("head_dim", "kv_channels"):
            n = view.node(f"{view.model_path}.{k}")
            if n is not None:
                hd = view.value(n, f"{view.model_path}.{k}", "int")
                break
    if hd is None and _int(hidden) and _int(heads):
        hd = Value.derived(
            hidden.value // heads.value,
            "head_dim",
            "derived as hidden size / attention heads",
            [hidden, heads],
        )
    s.head_dim = hd
    # class-fixed properties and dialect-specific keys
    facts = view.d.knobs["legacy_classes"].get(cfg.model_class, {}) if not view.mcore else {}
    if view.mcore:
        s.normalization = view.mcore_field("normalization")
        s.hidden_dropout = view.mcore_field("hidden_dropout", "float")
        s.attention_dropout = view.mcore_field("attention_dropout", "float")
        s.position_embedding_type = view.mcore_field("position_embedding_type")
        s.rotary_percent = view.mcore_field("rotary_percent", "float")
        if s.rotary_percent is not None and not s.rotary_percent.known:
            s.rotary_percent = view.mcore_field("partial_rotary_factor", "float")
        s.add_bias_linear = view.mcore_field("add_bias_linear", "bool")
        s.activation = _mcore_activation(view)
        tie = view.mcore_field("tie_word_embeddings", "bool")
        s.tied_embeddings = tie
        s.seq_length = _first_written(
            view,
            [f"{view.model_path}.seq_length", "train_dataset.data_loader.config.seq_length"],
            "int",
        ) or view.mcore_field("seq_length", "int")
        if (
            cfg.model_class in ("Qwen3Config", "Qwen3MoeConfig")
            and s.qk_norm is not None
            and s.qk_norm.origin.value != "file"
        ):
            s.qk_norm = Value.default(
                True,
                "qk_layernorm",
                f"{view.model_cls.label} "  # type: ignore[union-attr]
                "(Qwen3 always builds q/k layernorm)",
            )
    else:
        s.normalization = _class_fact(view, facts, "normalization", "normalization")
        s.activation = _class_fact(view, facts, "activation", "hidden_act")
        if s.activation.known and s.activation.value in ("silu", "swish"):
            s.activation = s.activation.model_copy(update={"value": "swiglu"})
        s.position_embedding_type = _class_fact(view, facts, "position", "position_embedding_type")
        rp = facts.get("rotary_percent")
        s.rotary_percent = _fixed(view, float(rp), "rotary fraction") if rp is not None else None
        s.seq_length = view.legacy(["seq_length"], "int")
        s.tied_embeddings = view.legacy(["tie_word_embeddings", "share_embedding_weight"], "bool")
        lb = facts.get("linear_bias")
        if isinstance(lb, dict):
            s.add_bias_linear = view.legacy([lb["key"]], "bool")
        elif lb is not None:
            s.add_bias_linear = _fixed(view, bool(lb), "linear bias")
        else:
            s.add_bias_linear = view.legacy(["add_bias_linear", "has_bias"], "bool")
        s.hidden_dropout, s.attention_dropout = _legacy_dropout(view, facts)
        if s.qk_norm is not None and not s.qk_norm.known:
            s.qk_norm = _fixed(view, False, "qk norm")
    if s.add_qkv_bias is not None and not s.add_qkv_bias.known and s.add_bias_linear is not None:
        s.add_qkv_bias = s.add_bias_linear
    if (
        s.rope_theta is not None
        and s.position_embedding_type is not None
        and s.position_embedding_type.value not in ("rope", "yarn", "partial_rope", "llama3")
    ):
        s.rope_theta = None
    if s.max_position_embeddings is not None and (
        not s.max_position_embeddings.known or not s.max_position_embeddings.value
    ):
        s.max_position_embeddings = Value.derived(
            s.seq_length.value if s.seq_length else None,
            "max_position_embedding",
            "falls back to seq_length",
            [s.seq_length],
        )
    rc = view.node("recompute_config.recompute")
    sel = view.node("recompute_config.select_recompute")
    recomp = [x for x in (rc, sel) if x is not None and x.plain()]
    if recomp:
        s.recompute = view.value(
            recomp[0],
            "recompute_config." + ("recompute" if recomp[0] is rc else "select_recompute"),
        )
        s.recompute = s.recompute.model_copy(update={"value": True})
    elif rc is not None:
        s.recompute = view.value(rc, "recompute_config.recompute", "bool")
    else:
        s.recompute = Value.default(False, "recompute_config.recompute", "MindFormers template")


def _first_written(view: MFView, keys: list[str], kind: str) -> Value | None:
    for k in keys:
        n = view.node(k)
        if n is not None:
            return view.value(n, k, kind)
    return None


def _fixed(view: MFView, value: Any, what: str) -> Value:
    cls = view.model_cls
    return Value.default(
        value, knob=what, source=f"{cls.label if cls else 'MindFormers'} (fixed by the model class)"
    )


def _class_fact(view: MFView, facts: dict[str, Any], fact: str, knob: str) -> Value:
    spec = facts.get(fact)
    if spec is None:
        return Value.unknown(knob, "not set, and the model class is not one cfglint knows")
    if isinstance(spec, dict):
        v = view.legacy([spec["key"]], None)
        if not v.known:
            return v
        if "true" in spec:
            mapped = spec["true"] if v.value else spec["false"]
            return v.model_copy(update={"value": mapped})
        return v
    return _fixed(view, spec, knob)


def _legacy_dropout(view: MFView, facts: dict[str, Any]) -> tuple[Value, Value]:
    spec = facts.get("dropout")
    if spec == "none" or spec is None:
        cls = view.model_cls
        why = f"{cls.label if cls else 'MindFormers'} (the legacy model has no dropout)"
        return (
            Value.default(0.0, "hidden_dropout", why),
            Value.default(0.0, "attention_dropout", why),
        )
    return (view.legacy(spec["hidden"], "float"), view.legacy(spec["attention"], "float"))


def _legacy_ffn(view: MFView, hidden: Value) -> Value:
    for k in ("intermediate_size", "ffn_hidden_size"):
        n = view.node(f"{view.model_path}.{k}")
        if n is not None and n.value is not None:
            return view.value(n, f"{view.model_path}.{k}", "int")
    ratio_key = (
        view.d.knobs["legacy_classes"]
        .get(view.model_cls.name if view.model_cls else "", {})
        .get("ffn_ratio")
    )
    if ratio_key:
        ratio = view.legacy([ratio_key], "int")
        if (
            hidden.known
            and ratio.known
            and isinstance(ratio.value, int)
            and isinstance(hidden.value, int)
        ):
            return Value.derived(
                hidden.value * ratio.value,
                "ffn size",
                f"hidden size x {ratio_key}",
                [hidden, ratio],
            )
        return Value.derived(None, "ffn size", "", [hidden, ratio])
    mult = view.legacy(["multiple_of"], "int")
    fdm = view.legacy(["ffn_dim_multiplier"], "float")
    if not (hidden.known and isinstance(hidden.value, int)) or not mult.known or not mult.value:
        return Value.unknown(
            "intermediate_size", "cannot derive: hidden_size or multiple_of unknown"
        )
    if isinstance(fdm.value, str) or isinstance(mult.value, str):
        return Value.unknown("intermediate_size", "ffn_dim_multiplier / multiple_of is a string")
    h = 4 * hidden.value
    if fdm.known and fdm.value is not None:
        h = int((fdm.value + 0.01) * h)
    h = int(2 * h / 3)
    h = mult.value * math.ceil(h / mult.value)
    return Value.derived(
        h,
        "intermediate_size",
        "derived like LlamaFeedForward: 2/3 x 4 x hidden (x ffn_dim_multiplier), "
        "rounded up to multiple_of",
        [hidden, mult, fdm],
    )


def _legacy_kv_heads(view: MFView, heads: Value) -> Value:
    n = view.node(f"{view.model_path}.n_kv_heads")
    if n is not None and n.value is not None:
        return view.value(n, f"{view.model_path}.n_kv_heads", "int")
    mqa = view.node(f"{view.model_path}.multi_query_attention")
    grp = view.node(f"{view.model_path}.multi_query_group_num")
    if mqa is not None and mqa.value and grp is not None:
        return view.value(grp, f"{view.model_path}.multi_query_group_num", "int")
    for k in ("num_key_value_heads", "num_query_groups"):
        n = view.node(f"{view.model_path}.{k}")
        if n is not None and n.value is not None:
            return view.value(n, f"{view.model_path}.{k}", "int")
    return Value.derived(
        heads.value, "n_kv_heads", "n_kv_heads unset: every head is its own group", [heads]
    )


def _mcore_activation(view: MFView) -> Value:
    act = view.mcore_field("hidden_act")
    glu = view.mcore_field("gated_linear_unit", "bool")
    if not act.known:
        return act
    name = str(act.value).lower()
    if name in ("swiglu", "fusedswiglu") or (name in ("silu", "swish") and _bool(glu)):
        return Value.derived("swiglu", "hidden_act", "SiLU with a gated linear unit", [act, glu])
    if name == "gelu" and _bool(glu):
        return Value.derived("geglu", "hidden_act", "GeLU with a gated linear unit", [act, glu])
    return act.model_copy(update={"value": name})


def _moe(view: MFView, cfg: Config) -> None:
    e = cfg.moe
    if view.mcore:
        _moe_mcore(view, cfg)
        return
    mc = view.comp("MoEConfig", "moe_config")
    if view.node("moe_config") is None:
        e.num_experts = Value.default(
            None, "moe_config.expert_num", "MindFormers (no moe_config: dense)"
        )
        return
    e.num_experts = view.key("moe_config.expert_num", mc, kind="int")
    cfg.is_moe = (
        e.num_experts.known and isinstance(e.num_experts.value, int) and e.num_experts.value > 1
    )
    e.router_topk = view.key("moe_config.num_experts_chosen", mc, kind="int")
    cf = view.key("moe_config.capacity_factor", mc, kind="float")
    if cf.known and isinstance(cf.value, (int, float)) and cf.value <= 0:
        cf = cf.model_copy(
            update={"value": None, "detail": cf.detail or "capacity_factor <= 0 means dropless"}
        )
    e.capacity_factor = cf
    types = view.node("moe_config.aux_loss_types")
    if types is not None and types.plain():
        factors = view.node("moe_config.aux_loss_factors")
        e.aux_loss_coeff = (
            view.value(factors, "moe_config.aux_loss_factors")
            if factors is not None
            else view.key("moe_config.aux_loss_factor", mc, kind="float")
        )
        if e.aux_loss_coeff.known and isinstance(e.aux_loss_coeff.value, list):
            e.aux_loss_coeff = e.aux_loss_coeff.model_copy(
                update={
                    "value": sum(x for x in e.aux_loss_coeff.value if isinstance(x, (int, float)))
                }
            )
        e.load_balancing_type = view.value(types, "moe_config.aux_loss_types")
    else:
        e.aux_loss_coeff = view.key("moe_config.aux_loss_factor", mc, kind="float")
        e.load_balancing_type = Value.default(
            "aux_loss", "moe_config.aux_loss_types", "MindFormers MoEConfig (one global aux loss)"
        )
    e.enable_sdrop = view.key("moe_config.enable_sdrop", mc, kind="bool")
    e.token_drop_policy = (
        e.enable_sdrop.model_copy(update={"value": "position" if e.enable_sdrop.value else "probs"})
        if e.enable_sdrop.known
        else None
    )
    e.router_dtype = view.key("moe_config.router_dense_type", mc, kind="dtype")
    e.use_fused_ops_topkrouter = view.key("moe_config.use_fused_ops_topkrouter", mc, kind="bool")
    e.shared_expert_gate = view.key("moe_config.use_shared_expert_gating", mc, kind="bool")
    e.num_shared_experts = view.key("moe_config.shared_expert_num", mc, kind="int")
    e.expert_ffn_size = (
        view.key("moe_config.moe_intermediate_size", mc, kind="int")
        if view.node("moe_config.moe_intermediate_size") is not None
        else Value.derived(
            cfg.structure.ffn_hidden_size.value,
            "expert FFN size",
            "experts use the model's intermediate size",
            [cfg.structure.ffn_hidden_size],
        )
    )
    if e.num_shared_experts.known and e.expert_ffn_size.known:
        e.shared_expert_ffn_size = Value.derived(
            (_int(e.num_shared_experts) or 0) * (_int(e.expert_ffn_size) or 0),
            "shared expert FFN size",
            "shared_expert_num x expert FFN size",
            [e.num_shared_experts, e.expert_ffn_size],
        )
    e.router_pre_softmax = Value.default(
        True,
        "moe_config.routing_policy",
        "MindFormers MoEConfig (softmax over all experts before top-k)",
    )
    e.norm_topk_prob = view.key("moe_config.norm_topk_prob", mc, kind="bool")
    e.topk_scaling_factor = view.key("moe_config.routed_scaling_factor", mc, kind="float")
    sig = view.key("moe_config.use_gating_sigmoid", mc, kind="bool")
    e.score_function = (
        sig.model_copy(update={"value": "sigmoid" if sig.value else "softmax"})
        if sig.known
        else sig
    )
    e.expert_bias = view.key("moe_config.balance_via_topk_bias", mc, kind="bool")
    fk = view.key("moe_config.first_k_dense_replace", mc)
    if fk.known and isinstance(fk.value, bool):
        fk = fk.model_copy(update={"value": int(fk.value)})
    e.first_k_dense = fk


def _moe_mcore(view: MFView, cfg: Config) -> None:
    e = cfg.moe
    f = view.mcore_field
    e.num_experts = f("num_moe_experts", "int")
    cfg.is_moe = (
        e.num_experts.known and isinstance(e.num_experts.value, int) and e.num_experts.value > 1
    )
    e.router_topk = f("moe_router_topk", "int")
    e.capacity_factor = f("moe_expert_capacity_factor", "float")
    e.aux_loss_coeff = f("moe_aux_loss_coeff", "float")
    dropped = view.node(f"{view.model_path}.router_aux_loss_coef")
    if dropped is not None and cfg.model_class == "Qwen3MoeConfig":
        view.warnings.append(
            f"{dropped.path}:{dropped.line}: Qwen3MoeConfig drops "
            "router_aux_loss_coef; only moe_aux_loss_coeff sets the aux-loss weight"
        )
    e.token_drop_policy = f("moe_token_drop_policy")
    e.enable_sdrop = (
        e.token_drop_policy.model_copy(update={"value": e.token_drop_policy.value == "position"})
        if e.token_drop_policy.known
        else e.token_drop_policy
    )
    e.router_dtype = f("moe_router_dtype", "dtype")
    e.use_fused_ops_topkrouter = f("use_fused_ops_topkrouter", "bool")
    e.shared_expert_gate = f("use_shared_expert_gating", "bool")
    e.num_shared_experts = f("shared_expert_num", "int")
    e.expert_ffn_size = view.mcore_raw("moe_ffn_hidden_size", "int") or Value.derived(
        cfg.structure.ffn_hidden_size.value,
        "moe_ffn_hidden_size",
        "defaults to ffn_hidden_size",
        [cfg.structure.ffn_hidden_size],
    )
    sh = view.mcore_raw("moe_shared_expert_intermediate_size", "int")
    if sh is None and e.num_shared_experts.known:
        sh = Value.derived(
            (_int(e.num_shared_experts) or 0) * (_int(e.expert_ffn_size) or 0),
            "moe_shared_expert_intermediate_size",
            "shared_expert_num x moe_ffn_hidden_size",
            [e.num_shared_experts, e.expert_ffn_size],
        )
    e.shared_expert_ffn_size = sh
    e.router_pre_softmax = f("moe_router_pre_softmax", "bool")
    e.norm_topk_prob = f("norm_topk_prob", "bool")
    sf = f("moe_router_topk_scaling_factor", "float")
    if sf.known and sf.value is None:
        sf = sf.model_copy(update={"value": 1.0, "detail": sf.detail + " (no scaling)"})
    e.topk_scaling_factor = sf
    e.score_function = f("moe_router_score_function")
    lb = f("moe_router_load_balancing_type")
    # MindFormers' name for Megatron's global-batch auxiliary loss
    if lb.known and lb.value == "gbs_aux_loss":
        lb = lb.model_copy(update={"value": "global_aux_loss", "raw": "gbs_aux_loss"})
    e.load_balancing_type = lb
    e.expert_bias = f("moe_router_enable_expert_bias", "bool")
    fk = f("first_k_dense_replace", "int")
    if fk.known and fk.value is None:
        fk = fk.model_copy(update={"value": 0, "detail": fk.detail + " (every layer is MoE)"})
    e.first_k_dense = fk


def _optimizer(view: MFView, cfg: Config) -> None:
    o = cfg.optimizer
    d = view.d
    sec = view.node("optimizer")
    tmpl = view.comp("OptimizerConfig", "optimizer")
    if sec is None or not sec.plain():
        o.type = Value.default(
            "adamw",
            "optimizer.type",
            f"{tmpl.label} (no optimizer section)" if tmpl else "MindFormers template",
        )
        comp = view.comp("AdamW", "optimizer")
        info = d.knobs["optimizers"]["AdamW"]
        name = "AdamW"
        defaults_from = tmpl
    else:
        tnode = view.node("optimizer.type")
        name = str(tnode.value) if tnode is not None else "AdamW"
        info = d.knobs["optimizers"].get(name, {"rule": name.lower(), "betas": "list"})
        comp = view.comp(info.get("class", name), "optimizer")
        o.type = (
            view.value(tnode, "optimizer.type")
            if tnode is not None
            else Value.unknown("optimizer.type", "optimizer section without type")
        )
        if o.type.known:
            o.type = o.type.model_copy(update={"value": info["rule"], "raw": name})
        defaults_from = comp
    o.eps = view.key("optimizer.eps", defaults_from if sec is None else comp, kind="float")
    o.weight_decay = view.key(
        "optimizer.weight_decay", defaults_from if sec is None else comp, kind="float"
    )
    src = defaults_from if sec is None else comp
    betas = view.node("optimizer.betas")
    if betas is not None and betas.is_seq and len(betas.value) == 2:
        o.beta1 = view.value(betas.value[0], "optimizer.betas[0]", "float")
        o.beta2 = view.value(betas.value[1], "optimizer.betas[1]", "float")
        if info.get("betas") == "split":
            view.warnings.append(
                f"{betas.path}:{betas.line}: {name} takes beta1/beta2, not betas; "
                "MindFormers would fail with an unexpected keyword"
            )
    elif view.node("optimizer.beta1") is not None or view.node("optimizer.beta2") is not None:
        o.beta1 = view.key("optimizer.beta1", src, kind="float")
        o.beta2 = view.key("optimizer.beta2", src, kind="float")
        b = view.node("optimizer.beta1") or view.node("optimizer.beta2")
        if info.get("betas") == "list" and b is not None:
            view.warnings.append(
                f"{b.path}:{b.line}: {name} takes betas: [b1, b2], not "
                "beta1/beta2; MindFormers would fail with an unexpected keyword"
            )
    elif src is not None and src.has("betas"):
        bl = src.defaults["betas"]
        o.beta1 = Value.default(float(bl[0]), "optimizer.betas[0]", src.label)
        o.beta2 = Value.default(float(bl[1]), "optimizer.betas[1]", src.label)
    elif src is not None:
        o.beta1 = view.key("optimizer.beta1", src, kind="float")
        o.beta2 = view.key("optimizer.beta2", src, kind="float")
    o.wd_to_qk_layernorm = Value.default(
        False, "weight decay grouping", "MindFormers (1-D parameters and biases get no decay)"
    )
    _schedule(view, cfg)
    _clip(view, cfg)
    _batch(view, cfg)


def _schedule(view: MFView, cfg: Config) -> None:
    o = cfg.optimizer
    sec = view.node("lr_schedule")
    if sec is None:
        grouped = view.node("grouped_lr_schedule.default")
        if grouped is not None:
            sec = grouped
            prefix = "grouped_lr_schedule.default"
        else:
            prefix = "lr_schedule"
    else:
        prefix = "lr_schedule"
    tmpl = view.comp("LrScheduleConfig", "lr_schedule")
    if sec is None or not sec.plain():
        name = tmpl.defaults.get("type", "CosineWithWarmUpLR") if tmpl else "CosineWithWarmUpLR"
        comp = view.comp(name, "lr_schedule")
        o.lr_decay_style = Value.default(
            view.d.knobs["lr_schedules"].get(name, name),
            "lr_schedule.type",
            f"{tmpl.label if tmpl else 'MindFormers'} (no lr_schedule section)",
        )
        block: dict[str, Value] = {}
        src = tmpl
    else:
        tnode = get(view.root, f"{prefix}.type")
        name = str(tnode.value) if tnode is not None else ""
        comp = view.comp(name, "lr_schedule")
        style = view.d.knobs["lr_schedules"].get(name)
        o.lr_decay_style = (
            view.value(tnode, f"{prefix}.type").model_copy(
                update={"value": style or name, "raw": name}
            )
            if tnode is not None
            else Value.unknown(f"{prefix}.type", "lr_schedule without type")
        )
        block = {k: view.value(n, f"{prefix}.{k}") for k, n in sec.value.items() if not n.is_map}
        src = comp
    o.lr = block.get("learning_rate") or _dflt(src, "learning_rate", f"{prefix}.learning_rate")
    if view.d.knobs["lr_schedules"].get(name) == "constant":
        o.min_lr = Value.derived(
            o.lr.value, f"{prefix}.learning_rate", "a constant schedule never decays", [o.lr]
        )
    elif name in ("LinearWithWarmUpLR", "linear"):
        o.min_lr = Value.default(
            0.0, f"{prefix}.lr_end", f"{comp.label if comp else name} (decays to 0)"
        )
    else:
        o.min_lr = (
            block.get("lr_end") or block.get("eta_min") or _dflt(src, "lr_end", f"{prefix}.lr_end")
        )
    o.lr_warmup_init = block.get("warmup_lr_init") or _dflt(
        src, "warmup_lr_init", f"{prefix}.warmup_lr_init"
    )
    extra = dict(block)
    extra["type"] = (
        Value.written(name, knob=f"{prefix}.type", loc=Loc(path=view.doc.path, line=1))
        if "type" not in extra
        else extra["type"]
    )
    o.lr_extra = extra
    # total steps: the block's own value, else what the trainer would compute
    total = block.get("total_steps")
    derived_total = _train_steps(view, cfg)
    if total is None or (total.known and total.value in (-1, None)):
        o.train_steps = derived_total
    else:
        o.train_steps = total
    ratio = block.get("warmup_ratio")
    steps = block.get("warmup_steps")
    if ratio is not None and ratio.known and ratio.value is not None:
        t = o.train_steps
        if (
            t is not None
            and t.known
            and isinstance(t.value, int)
            and isinstance(ratio.value, (int, float))
        ):
            o.lr_warmup_steps = Value.derived(
                int(t.value * ratio.value),
                f"{prefix}.warmup_ratio",
                "warmup_ratio x total steps (warmup_ratio wins over warmup_steps)",
                [ratio, t],
            )
        else:
            o.lr_warmup_steps = Value.derived(None, f"{prefix}.warmup_ratio", "", [ratio, t])
            if t is None or not t.known:
                o.lr_warmup_steps = Value.unknown(
                    f"{prefix}.warmup_ratio",
                    "warmup_ratio needs the total step count, which depends on the dataset size",
                )
    elif steps is not None:
        o.lr_warmup_steps = steps
    else:
        o.lr_warmup_steps = _dflt(src, "warmup_steps", f"{prefix}.warmup_steps", fallback=0)
    ds = block.get("decay_steps")
    o.lr_decay_steps = ds if ds is not None and ds.value is not None else o.train_steps


def _dflt(comp: Component | None, key: str, knob: str, fallback: Any = REQUIRED) -> Value:
    if comp is not None and comp.has(key) and comp.defaults[key] is not None:
        return Value.default(comp.defaults[key], knob=knob, source=comp.label)
    if fallback is not REQUIRED:
        return Value.default(fallback, knob=knob, source=comp.label if comp else "MindFormers")
    if comp is not None and comp.defaults.get(key, REQUIRED) is None:
        return Value.default(None, knob=knob, source=comp.label)
    return Value.unknown(knob, f"not set and {comp.label if comp else 'the schedule'} requires it")


def _train_steps(view: MFView, cfg: Config) -> Value:
    """total_steps -1: epochs x batches per epoch, known when a Megatron-style dataset
    gives its sample count (data_loader.sizes[0])."""
    if view.v2:
        stop = view.node("training_args.stop_step")
        if stop is not None and isinstance(stop.value, int) and stop.value > 0:
            return view.value(stop, "training_args.stop_step", "int")
    sizes = view.node("train_dataset.data_loader.sizes")
    epochs = view.key(
        "training_args.epochs" if view.v2 else "runner_config.epochs",
        view.comp("RunnerConfig", "runner_config"),
        kind="int",
        fallback=1,
    )
    gbs = cfg.optimizer.global_batch_size
    if (
        sizes is not None
        and sizes.is_seq
        and sizes.value
        and isinstance(sizes.value[0].value, int)
        and gbs is not None
        and gbs.known
        and isinstance(gbs.value, int)
        and gbs.value > 0
        and epochs.known
        and isinstance(epochs.value, int)
    ):
        samples = view.value(sizes.value[0], "train_dataset.data_loader.sizes[0]", "int")
        return Value.derived(
            epochs.value * (samples.value // gbs.value),
            "total_steps",
            "epochs x (dataset samples // global batch size)",
            [epochs, samples, gbs],
        )
    return Value.unknown(
        "lr_schedule.total_steps",
        "total_steps is -1: MindFormers takes it from the dataset size at run time",
    )


def _clip(view: MFView, cfg: Config) -> None:
    sec = view.node("runner_wrapper")
    tmpl = view.comp("WrapperConfig", "runner_wrapper")
    if sec is None or not sec.plain():
        use = Value.default(
            True,
            "runner_wrapper.use_clip_grad",
            f"{tmpl.label if tmpl else 'MindFormers template'} (no runner_wrapper section)",
        )
        wrapper = "MFTrainOneStepCell"
        mx = Value.default(1.0, "runner_wrapper.max_grad_norm", "MindFormers MFTrainOneStepCell")
    else:
        t = view.node("runner_wrapper.type")
        wrapper = str(t.value) if t is not None else "MFTrainOneStepCell"
        pp, ga = (
            cfg.parallel.pipeline_parallel,
            view.node("runner_config.gradient_accumulation_steps"),
        )
        switched = (pp is not None and pp.known and isinstance(pp.value, int) and pp.value > 1) or (
            ga is not None and isinstance(ga.value, int) and ga.value > 1
        )
        if switched and wrapper in ("MFTrainOneStepCell", "mf_wrapper"):
            wrapper = "MFPipelineWithLossScaleCell"
        comp = view.comp(wrapper, "runner_wrapper")
        use = view.key("runner_wrapper.use_clip_grad", comp, kind="bool", fallback=False)
        mx = view.key("runner_wrapper.max_grad_norm", comp, kind="float", fallback=1.0)
        if switched and view.node("runner_wrapper.use_clip_grad") is None:
            use = Value.derived(
                use.value,
                "runner_wrapper.use_clip_grad",
                f"default of {comp.label if comp else wrapper}, which MindFormers "
                "uses when pipeline_stage or gradient accumulation is above 1",
                [pp],
            )
    if use.known and not use.value and not use.yaml11_string:
        cfg.optimizer.clip_grad = Value.derived(
            0.0, "runner_wrapper.use_clip_grad", "gradient clipping is off", [use]
        )
    elif use.known and mx.known and not mx.yaml11_string:
        inputs = [use, mx]
        cfg.optimizer.clip_grad = Value.derived(
            mx.value, "runner_wrapper.max_grad_norm", f"{wrapper} clips to max_grad_norm", inputs
        )
        if mx.origin.value == "file" and use.origin.value == "file":
            cfg.optimizer.clip_grad = mx
    else:
        cfg.optimizer.clip_grad = mx if mx.yaml11_string else use


def _batch(view: MFView, cfg: Config) -> None:
    o, p = cfg.optimizer, cfg.parallel
    if view.v2:
        o.global_batch_size = view.key(
            "training_args.global_batch_size", None, kind="int", fallback=None
        )
        o.micro_batch_size = view.key(
            "training_args.micro_batch_size", None, kind="int", fallback=1
        )
        return
    rc = view.comp("RunnerConfig", "runner_config")
    bs = view.key("runner_config.batch_size", rc, kind="int")
    ga = view.key("runner_config.gradient_accumulation_steps", rc, kind="int")
    o.micro_batch_size = bs
    dp, pp, mbn, mbi = (
        p.data_parallel,
        p.pipeline_parallel,
        p.micro_batch_num,
        p.micro_batch_interleave,
    )
    use_par = view.key("use_parallel", view.comp("GeneralConfig", "top_level"), kind="bool")
    vals = [bs, dp, pp, mbn, mbi, ga]
    if not all(v is not None and v.known and isinstance(v.value, int) for v in vals):
        o.global_batch_size = Value.derived(None, "global batch size", "", [v for v in vals if v])
        return
    if not use_par.value:
        o.global_batch_size = Value.derived(
            bs.value * ga.value,
            "global batch size",
            "batch_size x gradient_accumulation_steps (single device, use_parallel False)",
            [bs, ga],
        )
    elif pp.value > 1:
        o.global_batch_size = Value.derived(
            bs.value * dp.value * mbn.value * mbi.value,
            "global batch size",
            "batch_size x data_parallel x micro_batch_num x micro_batch_interleave_num "
            "(pipeline_stage > 1)",
            [bs, dp, mbn, mbi],
        )
    else:
        o.global_batch_size = Value.derived(
            bs.value * dp.value * mbi.value * ga.value,
            "global batch size",
            "batch_size x data_parallel x micro_batch_interleave_num x gradient_accumulation_steps",
            [bs, dp, mbi, ga],
        )


def _precision(view: MFView, cfg: Config) -> None:
    pr, w, s = cfg.precision, cfg.weight, cfg.structure
    if view.mcore:
        soft = view.mcore_raw("attention_softmax_in_fp32")
        if soft is not None and soft.known and not soft.yaml11_string:
            pr.softmax_dtype = soft.model_copy(
                update={
                    "value": "float32"
                    if soft.value
                    else (pr.compute_dtype.value if pr.compute_dtype else None)
                }
            )
        else:
            pr.softmax_dtype = Value.default(
                "float32", "softmax_compute_dtype", "MindFormers TransformerConfig"
            )
        # LanguageModelEmbedding casts the looked-up rows to compute_dtype
        w.embedding_dtype = Value.derived(
            pr.compute_dtype.value if pr.compute_dtype else None,
            "compute_dtype",
            "the embedding output is cast to compute_dtype before the first layer",
            [pr.compute_dtype],
        )
        fp32res = view.mcore_field("fp32_residual_connection", "bool")
        if fp32res.known and fp32res.value:
            pr.residual_dtype = fp32res.model_copy(update={"value": "float32"})
        elif fp32res.known:
            pr.residual_dtype = Value.derived(
                pr.compute_dtype.value if pr.compute_dtype else None,
                "compute_dtype",
                "without fp32_residual_connection residual adds run in compute_dtype",
                [pr.compute_dtype, fp32res],
            )
        else:
            pr.residual_dtype = fp32res
    else:
        pr.softmax_dtype = view.legacy(["softmax_compute_type", "softmax_compute_dtype"], "dtype")
        emb = view.legacy(["embedding_init_type"], "dtype")
        w.embedding_dtype = emb if emb.known and emb.value is not None else w.param_dtype
        res = view.legacy(["residual_dtype"], "dtype")
        if res.known and res.value is None:
            res = Value.derived(
                pr.compute_dtype.value if pr.compute_dtype else None,
                "residual_dtype",
                "residual_dtype unset: residual adds run in compute_dtype",
                [pr.compute_dtype],
            )
        fp32 = view.node(f"{view.model_path}.fp32_residual_connection")
        if fp32 is not None and fp32.value:
            res = view.value(fp32, f"{view.model_path}.fp32_residual_connection").model_copy(
                update={"value": "float32"}
            )
        pr.residual_dtype = res
    if (
        s.use_flash_attention is not None
        and s.use_flash_attention.known
        and s.use_flash_attention.value
    ):
        # the fused kernel computes softmax internally in float32
        pr.softmax_dtype = Value.derived(
            "float32",
            "use_flash_attention",
            "flash attention computes softmax in float32 inside the kernel",
            [s.use_flash_attention],
        )
    # gradients are reduced in the weight dtype on MindSpore
    if w.param_dtype is not None:
        w.grad_reduce_dtype = Value.derived(
            w.param_dtype.value,
            "param_init_type",
            "MindSpore communicates gradients in the parameter dtype",
            [w.param_dtype],
        )
    pr.loss_dtype = Value.default(
        "float32", "loss", "MindFormers (logits cast to float32 before cross entropy)"
    )
    pm = view.node("context.ascend_config.precision_mode")
    pr.precision_mode = (
        view.value(pm, "context.ascend_config.precision_mode")
        if pm is not None
        else Value.default(
            None, "context.ascend_config.precision_mode", "MindSpore (CANN default mode)"
        )
    )
    w.load_checkpoint = _first_written(
        view, ["load_checkpoint", "checkpoint_config.load_checkpoint"], "str"
    ) or Value.default("", "load_checkpoint", "MindFormers template")


def _other(view: MFView, cfg: Config) -> None:
    o = cfg.other
    ctx = view.comp("ContextConfig", "context")
    o.enable_graph_kernel = view.key(
        "context.enable_graph_kernel", ctx, kind="bool", fallback=False
    )
    gk = view.node("context.graph_kernel_flags")
    o.graph_kernel_flags = view.value(gk, "context.graph_kernel_flags") if gk is not None else None
    eod = _first_written(view, ["train_dataset.data_loader.config.eod"], "int")
    o.eod_token_id = eod
    dp = _first_written(
        view,
        ["train_dataset.data_loader.config.data_path", "train_dataset.data_loader.dataset_dir"],
        "str",
    )
    o.data_path = dp
    tok = _first_written(
        view,
        [
            "processor.tokenizer.vocab_file",
            "processor.tokenizer.tokenizer_file",
            "pretrained_model_dir",
        ],
        "str",
    )
    o.tokenizer_path = tok
    rm = view.node("run_mode")
    if rm is not None and isinstance(rm.value, str):
        o.training_stage = view.value(rm, "run_mode").model_copy(
            update={"value": "sft" if rm.value == "finetune" else "pretrain"}
        )
    else:
        o.training_stage = Value.default("pretrain", "run_mode", "MindFormers (run_mode train)")
    d = cfg.determinism
    if view.v2:
        d.seed = view.key("training_args.training_seed", None, kind="int", fallback=None)
    else:
        d.seed = view.key("seed", view.comp("GeneralConfig", "top_level"), kind="int")
    use_par = view.key("use_parallel", view.comp("GeneralConfig", "top_level"), kind="bool")
    mode = view.key("parallel.parallel_mode", view.comp("MsParallelConfig", "parallel"), kind="int")
    if d.seed is not None and d.seed.known and not d.seed.value:
        d.seed_applied = Value.derived(
            False, "seed", "MindFormers skips set_seed when seed is 0", [d.seed]
        )
    elif use_par.known and use_par.value and mode.known and mode.value in (1, 2):
        d.seed_applied = Value.derived(
            False,
            "seed",
            "MindFormers does not call set_seed in semi-auto / auto parallel runs "
            "(use_parallel True, parallel_mode 1 or 2); the seed only reaches the dataset",
            [use_par, mode],
        )
    else:
        d.seed_applied = Value.derived(True, "seed", "MindFormers applies the seed", [d.seed])
    sync = view.node("train_precision_sync") or view.node("context.train_precision_sync")
    det = view.node("context.deterministic")
    if sync is not None and sync.value:
        d.deterministic = view.value(sync, "train_precision_sync", "bool")
    elif det is not None:
        v = view.value(det, "context.deterministic")
        d.deterministic = (
            v.model_copy(update={"value": str(v.value).upper() == "ON"}) if v.known else v
        )
    elif sync is not None:
        d.deterministic = view.value(sync, "train_precision_sync", "bool")
    else:
        d.deterministic = Value.default(
            False, "train_precision_sync", "MindFormers template (deterministic computation off)"
        )
    cfg.launch.device = Value.default("npu", "context.device_target", "MindFormers (Ascend)")
